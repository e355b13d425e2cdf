"""Make a corpus of records and databases with an earlier pbem (issue 31).

    python scripts/make_corpus.py [COMMIT] [--out tests/corpus/SHORT] [--no-postgresql]

COMMIT (default 95b4065) is checked out into a temporary ``git worktree``
(removed at the end) and THAT version's own code makes everything, run by the
current venv's python with PYTHONPATH at the old checkout and PBEM_NATIVE=0:

- ``records/*.pgn``: games played to the end by greedy bots, one per rules
  preset of that version and per map, written by that version's
  ``python -m pbem export NAME --with-secret``;
- ``pbem.sqlite``: a database made by that version (a finished game, a game in
  its setup, games mid-play with cards in hand, and the mails ``pbem new``
  queues); its schema is made by that version's ``python -m pbem init``;
- ``pbem.pg.sql``: the same on a throwaway PostgreSQL (127.0.0.1), dumped by
  ``pg_dump --no-owner --no-privileges``;
- ``continuations/*.pgn``: the running games of the databases played 6 turns on
  by the same version, exported: what today's pbem must reproduce;
- ``corpus.json`` (what the test reads) and ``README.md`` (what a person reads).

Playing a game of a few hundred turns through the CLI would cost a process per
turn, so the bots' orders are entered by DRIVER below: a short script run by
the old version, using only what its own ``pbem adjudicate`` uses
(``create_game``, ``submit``) and its text bot (``TextBot``), with a fixed dice
secret and bot seed per game.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_COMMIT = "95b4065"

# Runs inside the old checkout: python DRIVER SPEC.json -> one JSON line per game.
DRIVER = r'''
import hashlib, json, sys
spec = json.load(open(sys.argv[1]))
try:
    from pbem.service.games import PlayerSpec, create_game, find_game, load, players_of, submit
except ImportError:  # after the service was split into packages
    from pbem.service.play.games import (
        PlayerSpec, create_game, find_game, load, players_of, submit)
from pbem.orders.textbot import TextBot
from pbem.rules.bots import make_bot
from pbem.store import init_db, session_scope

def announce(session, row, passwords):
    """The game-start mails `pbem new` queues (outbox rows)."""
    from pbem.config import load_config
    from pbem.service.clock import SystemClock
    from pbem.service.context import Context
    try:
        from pbem.service.notify import game_start
    except ImportError:
        from pbem.service.play.notify import game_start
    game_start(session, Context(load_config(None), SystemClock()), row, passwords)

def count(summary, step):
    for event in step.events:
        data = event.to_dict()
        kind = data["kind"]
        summary["events"][kind] = summary["events"].get(kind, 0) + 1
        if kind == "traded" and data.get("forced"):
            summary["forced_trades"].append(step.turn)
        for roll in data.get("rolls") or ():
            if roll.get("rerolled"):
                summary["rerolls"] += 1
            if roll.get("commander"):
                summary["commander"] += 1

engine = init_db(spec["url"])
for g in spec["games"]:
    name, n = g["name"], g["players"]
    secret = hashlib.sha256(f"pbem-corpus {name} {g['seed']}".encode()).digest()
    specs = [PlayerSpec(f"p{i + 1}", f"p{i + 1}@corpus.invalid") for i in range(n)]
    with session_scope(engine) as session:
        created = create_game(session, name, specs, preset=g["preset"], map_name=g["map"],
                              secret=secret, settings={"timezone": "UTC"})
        if g.get("announce"):
            announce(session, created.game, created.passwords)
    bots = [TextBot(make_bot("greedy", g["seed"] * 10 + i)) for i in range(n)]
    summary = {"name": name, "events": {}, "forced_trades": [], "rerolls": 0, "commander": 0}
    setup_seats = g.get("setup_seats")  # stop in the setup after these seats' orders
    while True:
        with session_scope(engine) as session:
            game = find_game(session, name)
            state = load(session, game).state
            players = players_of(session, game)
            if game.phase == "over" or state.turn >= (g["max_turn"] or 10**6):
                break
            if game.phase == "setup":
                seats = state.order if setup_seats is None else state.order[:setup_seats]
                for seat in seats:
                    out = submit(session, game, players[seat], bots[seat].write_setup(state, seat))
                    assert out.accepted, out.problems
                    for step in out.steps:
                        count(summary, step)
                if setup_seats is not None:
                    break
            else:
                seat = state.current
                out = submit(session, game, players[seat], bots[seat].write_turn(state))
                assert out.accepted, (name, state.turn, out.problems)
                for step in out.steps:
                    count(summary, step)
    with session_scope(engine) as session:
        game = find_game(session, name)
        state = load(session, game).state
        summary.update(
            phase=game.phase, turn=game.turn, winner=game.winner_seat,
            secret=secret.hex(), hands=[len(p.cards) for p in state.players],
            alive=[p.alive for p in state.players])
    print(json.dumps(summary), flush=True)
'''

# Runs inside the old checkout: python DEMO_DRIVER FOLDER -> `pbem demo`'s game by
# mail (bots answering through a local Maildir, inbox and outbox rows), stopped
# after a few turns; its database is FOLDER/pbem.db. One JSON line.
DEMO_DRIVER = r"""
import json, sys
from pathlib import Path
try:
    from pbem.service.demo import run_demo
except ImportError:
    from pbem.service.ops.demo import run_demo
try:
    from pbem.service.games import find_game, load
except ImportError:
    from pbem.service.play.games import find_game, load
from pbem.store import init_db, session_scope
folder = Path(sys.argv[1])
result = run_demo(folder, seed=DEMO_SEED, max_turns=DEMO_TURNS, say=lambda line: None)
engine = init_db(f"sqlite:///{folder / 'pbem.db'}")
with session_scope(engine) as session:
    game = find_game(session, result.game)
    state = load(session, game).state
    print(json.dumps({
        "name": game.name, "phase": game.phase, "turn": game.turn, "winner": game.winner_seat,
        "secret": game.secret, "hands": [len(p.cards) for p in state.players],
        "events": {}, "forced_trades": [], "rerolls": 0, "commander": 0}))
"""
DEMO_SEED, DEMO_TURNS = 7, 3


@dataclass
class GameSpec:
    """One game the old version plays: name, rules, map, players, bot seed."""

    name: str
    preset: str
    map: str
    players: int
    seed: int
    max_turn: int | None = None  # stop once this turn is reached (a running game)
    setup_seats: int | None = None  # stop in the setup after this many seats' orders
    announce: bool = False  # queue the game-start mails, as `pbem new` does


def record_games(checkout: Path) -> list[GameSpec]:
    """A game per preset that version ships, one per other map, one long 6-player game."""
    presets = sorted(p.stem for p in (checkout / "config/rules").glob("*.toml"))
    maps = sorted(p.stem for p in (checkout / "config/maps").glob("*.toml"))
    players = {"two-player": 2, "2016": 5}
    games = [GameSpec(f"rec-{p}", p, "classic", players.get(p, 4), 11) for p in presets]
    games.append(GameSpec("rec-classic-3", "classic", "classic", 3, 13))
    games.append(GameSpec("rec-classic-6", "classic", "classic", 6, LONG_SEED))
    games += [GameSpec(f"rec-map-{m}", "classic", m, 4, 17) for m in maps if m != "classic"]
    return games


# 6-player classic: chosen (by trying seeds with 95b4065) for a long game with a
# card trade forced by an elimination.
LONG_SEED = 1


def database_games() -> list[GameSpec]:
    return [
        GameSpec("db-finished", "classic", "classic", 3, 13),
        GameSpec("db-setup", "secret-mission", "classic", 4, 21, setup_seats=2, announce=True),
        GameSpec("db-classic", "classic", "classic", 4, 22, max_turn=24, announce=True),
        GameSpec("db-mission", "secret-mission", "classic", 4, 23, max_turn=20),
        GameSpec("db-expert", "expert", "classic", 4, 24, max_turn=24),
    ]


def continuations() -> list[GameSpec]:
    """The running games of the databases played further by the same version (same
    secrets, same bots): what the test must get when it plays them on after an upgrade."""
    return [
        replace(g, max_turn=(g.max_turn or 0) + 6, setup_seats=None, announce=False)
        for g in database_games()
        if g.max_turn is not None or g.setup_seats is not None
    ]


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _old_env(checkout: Path, url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(checkout), PBEM_NATIVE="0", PBEM_DATABASE_URL=url)
    env.pop("PBEM_CONFIG", None)
    return env


def run_old(checkout: Path, url: str, *args: str) -> str:
    """Run the old version (``python ARGS``) in its checkout; its stdout."""
    done = subprocess.run(
        [sys.executable, *args], cwd=checkout, env=_old_env(checkout, url),
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the old pbem failed: {' '.join(args)}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def play(checkout: Path, url: str, games: list[GameSpec], work: Path) -> list[dict]:
    """The old version plays ``games`` into ``url``; one summary per game."""
    spec = work / "spec.json"
    spec.write_text(json.dumps({"url": url, "games": [asdict(g) for g in games]}))
    driver = work / "corpus_driver.py"
    driver.write_text(DRIVER)
    run_old(checkout, url, "-m", "pbem", "init")  # the schema, by the old command
    out = run_old(checkout, url, str(driver), str(spec))
    summaries = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for g, s in zip(games, summaries, strict=True):
        s["spec"] = asdict(g)
    return summaries


def demo_game(checkout: Path, work: Path) -> dict:
    """`pbem demo`'s game by mail, stopped after DEMO_TURNS turns: the mail rows."""
    driver = work / "demo_driver.py"
    driver.write_text(
        DEMO_DRIVER.replace("DEMO_SEED", str(DEMO_SEED)).replace("DEMO_TURNS", str(DEMO_TURNS))
    )
    out = run_old(checkout, f"sqlite:///{work / 'demo/pbem.db'}", str(driver), str(work / "demo"))
    summary: dict = json.loads(out.strip().splitlines()[-1])
    summary["spec"] = asdict(
        GameSpec(summary["name"], "classic", "classic", 4, DEMO_SEED, DEMO_TURNS, announce=True)
    )
    summary["demo"] = True
    return summary


def export_records(checkout: Path, url: str, games: list[dict], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for game in games:
        path = folder / f"{game['name']}.pgn"
        args = ["-m", "pbem", "export", game["name"], "--with-secret", "-o", str(path)]
        if game["phase"] != "over" and export_needs_force(checkout):
            args.append("--force")  # later versions guard a running game's secret
        run_old(checkout, url, *args)
        game["file"] = f"{folder.name}/{path.name}"
        lines = path.read_text(encoding="utf-8").splitlines()
        game["entries"] = sum(1 for line in lines if line.startswith("=== "))


def compress(path: Path) -> Path:
    """``path`` gzipped beside it (reproducibly: no time stamp), the original removed."""
    target = path.with_name(path.name + ".gz")
    target.write_bytes(gzip.compress(path.read_bytes(), compresslevel=9, mtime=0))
    path.unlink()
    return target


def export_needs_force(checkout: Path) -> bool:
    """Does this version's `pbem export --with-secret` want --force on a running game?"""
    done = subprocess.run(
        [sys.executable, "-m", "pbem", "export", "--help"], cwd=checkout,
        env=_old_env(checkout, "sqlite://"), capture_output=True, text=True,
    )  # fmt: skip
    return "--force" in done.stdout


def trim_sqlite(path: Path) -> None:
    """One file (no WAL), no free pages, then gzipped."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("VACUUM")
    db.close()
    compress(path)


def postgresql_dump(checkout: Path, games: list[GameSpec], work: Path, out: Path) -> list[dict]:
    """The same database games on a throwaway PostgreSQL, dumped as plain SQL."""
    sys.path.insert(0, str(REPO))
    from tests.fixtures_pg import _find_bindir, _Server

    bindir = _find_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL installed (scripts/install-system-deps.sh)")
    server = _Server(bindir)
    try:
        server.start()
        with server.connect_admin() as admin:
            admin.execute("CREATE DATABASE corpus")
        summaries = play(checkout, server.url("corpus"), games, work)
        dump = server.run(
            str(bindir / "pg_dump"), "--no-owner", "--no-privileges", "-h", "127.0.0.1",
            "-p", str(server.port), "-U", "postgres", "corpus",
        )  # fmt: skip
        if dump.returncode != 0:
            raise SystemExit(f"pg_dump failed: {dump.stderr}")
        sql = out.with_suffix("")  # pbem.pg.sql.gz -> pbem.pg.sql
        sql.write_text(dump.stdout, encoding="utf-8")
        compress(sql)
        return summaries
    finally:
        server.stop()


def lacks(records: Path) -> list[str]:
    """What this version's records do not have, that later formats carry."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(records.glob("*.pgn")))
    missing = []
    if "=== map" not in text:
        missing.append("the map text (a record names its map by [MapSHA256] only)")
    if "[HashVersion" not in text:
        missing.append("[HashVersion] (its hash= values are the plain state hash, version 1)")
    if "=== draws" not in text:
        missing.append("draws sections (verify_dice.py cannot check the dice from the spec alone)")
    if "[RulesVersion" not in text and "rules_version" not in text:
        missing.append("a rules version (the options carry no rules_version)")
    return missing


def _events(game: dict) -> str:
    events = game["events"]
    parts = [f"eliminations: {events.get('eliminated', 0)}"]
    if events.get("traded"):
        parts.append(f"{events['traded']} card trades")
    if game["forced_trades"]:
        turns = ", ".join(str(t) for t in game["forced_trades"])
        parts.append(f"trade forced by an elimination on turn {turns}")
    if game["rerolls"]:
        parts.append(f"{game['rerolls']} card re-rolls")
    if game["commander"]:
        parts.append(f"{game['commander']} commander dice")
    return "; ".join(parts)


def _table(games: list[dict], with_file: bool) -> list[str]:
    rows = [
        "| " + ("file | " if with_file else "") + "game | preset | map | players | bot seeds "
        "| turn | phase | winner | cards in hand | events |",
        "|" + "---|" * (11 if with_file else 10),
    ]
    for g in games:
        spec = g["spec"]
        first = spec["seed"] if g.get("demo") else spec["seed"] * 10
        seeds = f"{first}..{first + spec['players'] - 1}"
        winner = f"p{g['winner'] + 1}" if g["winner"] is not None else "-"
        stop = ""
        if spec["max_turn"]:
            stop = f" (stopped as turn {spec['max_turn']} began: its orders not sent)"
        if g.get("demo"):
            stop = f" (`pbem demo` by mail, stopped as turn {g['turn']} began)"
        if spec["setup_seats"] is not None:
            stop = f" ({spec['setup_seats']} seats sent setup orders, the rest wait)"
        rows.append(
            "| " + (f"`{g['file']}` | " if with_file else "") + f"{g['name']} | {spec['preset']} "
            f"| {spec['map']} | {spec['players']} | {seeds} | {g['turn']} | {g['phase']}{stop} "
            f"| {winner} | {g['hands']} | {_events(g)} |"
        )
    return rows


def readme(made: dict) -> str:
    """The corpus README: who made it, how, and what each file holds."""
    short = made["commit"][:7]
    lines = [
        f"# Corpus of pbem {short}",
        "",
        f"Made by pbem at commit {made['commit']} ({made['date']}: {made['subject']}),",
        "run from a temporary git worktree of that commit with PBEM_NATIVE=0, by:",
        "",
        f"    {made['command']}",
        "",
        "Everything is made by that version's own code. Dice: each game's secret is",
        '`sha256("pbem-corpus NAME SEED")` (the [Secret] of its record); the bots are',
        "that version's greedy bots, seat i seeded with SEED*10+i (listed as bot seeds).",
        "Players are p1..pN at pN@corpus.invalid, in seat order.",
        "",
        "## Records (`records/*.pgn`)",
        "",
        "Games played to the end, exported by that version's `pbem export NAME --with-secret`.",
        "",
        *_table(made["records"], True),
        "",
        "## Databases",
        "",
        "`pbem.sqlite.gz`: a SQLite database (gzip) whose schema was made by that version's",
        "`pbem init`; the games were played into it by that version. Mails: the games",
        "announced as `pbem new` does have their game-start mails queued in the outbox;",
        f"the game of `pbem demo` (greedy bots seeded {DEMO_SEED}+seat answering by mail",
        "through a local Maildir, a random dice secret) has its inbox and outbox rows,",
        f"stopped after {DEMO_TURNS} turns (a whole demo game stores 20 MB of mail).",
        "",
        *_table(made["sqlite"], False),
        "",
    ]
    if "postgresql" in made:
        lines += [
            "`pbem.pg.sql.gz`: the same games played by that version on a throwaway",
            "PostgreSQL, dumped with `pg_dump --no-owner --no-privileges` (plain SQL, gzip);",
            "all but the demo game (`pbem demo` makes its own SQLite database).",
            "",
        ]
    else:
        lines += [f"No PostgreSQL dump: {made.get('postgresql_note', 'not made')}.", ""]
    if "continuations" in made:
        lines += [
            "`continuations/*.pgn`: each running game of the databases played on by the same",
            "version (same secret, same bots) to 6 turns past where the database stops, then",
            "exported: the orders and hashes the test must reproduce when it plays the upgraded",
            "games on.",
            "",
            *_table(made["continuations"], True),
            "",
        ]
    lines += ["## What this version lacks", ""]
    lines += [f"- {item}" for item in made["lacks"]] or ["- nothing the test knows of"]
    lines += ["", "`corpus.json`: all of the above, for tests/corpus/test_corpus.py.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", nargs="?", default=DEFAULT_COMMIT)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-postgresql", action="store_true")
    parser.add_argument("--only-records", action="store_true", help="skip the databases")
    args = parser.parse_args()
    full = _git("rev-parse", f"{args.commit}^{{commit}}")
    short = full[:7]
    out = args.out or REPO / "tests" / "corpus" / short
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pbem-corpus-"))
    checkout = work / "checkout"
    _git("worktree", "add", "--detach", str(checkout), full)
    try:
        made: dict = {
            "commit": full,
            "date": _git("show", "-s", "--format=%cI", full),
            "subject": _git("show", "-s", "--format=%s", full),
            "command": f"python scripts/make_corpus.py {args.commit}",
        }
        specs = record_games(checkout)
        scratch = f"sqlite:///{work / 'records.db'}"
        made["records"] = play(checkout, scratch, specs, work)
        export_records(checkout, scratch, made["records"], out / "records")
        if not args.only_records:  # each running game of the databases, 6 turns further
            made["continuations"] = play(checkout, scratch, continuations(), work)
            export_records(checkout, scratch, made["continuations"], out / "continuations")
        if not args.only_records:
            db = out / "pbem.sqlite"
            made["sqlite"] = [demo_game(checkout, work)]  # its database, then the games
            made["sqlite"] += play(checkout, f"sqlite:///{work / 'demo/pbem.db'}",
                                   database_games(), work)  # fmt: skip
            shutil.copyfile(work / "demo/pbem.db", db)
            trim_sqlite(db)
            if not args.no_postgresql:
                made["postgresql"] = postgresql_dump(
                    checkout, database_games(), work, out / "pbem.pg.sql.gz"
                )
        made["lacks"] = lacks(out / "records")
        if args.no_postgresql:
            made["postgresql_note"] = "not made (--no-postgresql)"
        (out / "corpus.json").write_text(json.dumps(made, indent=1, sort_keys=True) + "\n")
        (out / "README.md").write_text(readme(made), encoding="utf-8")
        print(f"corpus of {short} written to {out}")
    finally:
        _git("worktree", "remove", "--force", str(checkout))
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
