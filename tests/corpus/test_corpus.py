"""Records and databases made by earlier pbem versions still mean what they meant (issue 31).

Every folder of tests/corpus/ holds what one earlier version made with its own
code (scripts/make_corpus.py; see its README). For every record: `pbem verify`
accepts it, `pbem import` stores it and the stored game replays to the record's
hashes, and scripts/verify_dice.py checks what the format lets it check. For
every database (SQLite, and PostgreSQL from its dump): it upgrades in place,
every game replays to its stored hashes with exactly the options it was stored
with, a running game plays on to the hashes the old version itself reached
(continuations/), and `pbem export` of every game gives a record that verifies.

The commands are run in-process (typer's CliRunner) and the rest through the
Python API, so the whole corpus takes seconds, not a process per check.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url
from sqlmodel import select
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.archive import archived_map_text
from pbem.orderlog.records import Record, read_record, secret_to_verify, verify_record
from pbem.rules.options import Options
from pbem.rules.ruleversions import stored_rules_version
from pbem.service.play import archive
from pbem.service.play.archive import export_record, replay_game
from pbem.service.play.games import find_game, log_of, players_of, submit
from pbem.store import (
    Game,
    PendingOrders,
    TurnResult,
    current_revision,
    head_revision,
    init_db,
    session_scope,
)
from tests.fixtures_pg import _find_bindir

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent.parent
VERSIONS = sorted(p.parent.name for p in CORPUS.glob("*/corpus.json"))
# The versions made before options carried rules_version: their games are rules 1.
BEFORE_RULES_VERSIONS = {"95b4065"}
runner = CliRunner()


def manifest(version: str) -> dict[str, Any]:
    return json.loads((CORPUS / version / "corpus.json").read_text(encoding="utf-8"))


def _records() -> list[Any]:
    out = []
    for version in VERSIONS:
        for folder in ("records", "continuations"):
            for path in sorted((CORPUS / version / folder).glob("*.pgn")):
                out.append(pytest.param(path, id=f"{version}/{folder}/{path.stem}"))
    return out


def _database_games() -> list[Any]:
    out = []
    for version in VERSIONS:
        made = manifest(version)
        for engine in ("sqlite", "postgresql"):
            if engine == "postgresql" and not (CORPUS / version / "pbem.pg.sql.gz").exists():
                continue
            marks = [pytest.mark.integration] if engine == "postgresql" else []
            for game in made[engine]:
                param = (version, engine, game["name"])
                out.append(pytest.param(*param, id="-".join(param), marks=marks))
    return out


RECORDS = _records()
DATABASE_GAMES = _database_games()


def cli(*args: str | Path) -> tuple[int, str]:
    """`pbem ARGS` in this process: (exit code, everything it printed)."""
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def write_config(folder: Path, url: str) -> Path:
    config = folder / "pbem.toml"
    config.write_text(f'database_url = "{url}"\n', encoding="utf-8")
    return config


# ------------------------------------------------------------------ records
def test_the_corpus_has_every_version_it_promises() -> None:
    assert {"95b4065", "a4bcc7c"} <= set(VERSIONS)
    for version in VERSIONS:
        made = manifest(version)
        assert made["commit"].startswith(version)
        files = {Path(g["file"]).name for g in made["records"]}
        assert files == {p.name for p in (CORPUS / version / "records").glob("*.pgn")}


def test_the_corpus_has_the_games_of_the_issue() -> None:
    """A 6-player game with a card trade forced by an elimination, an expert re-roll."""
    made = {g["name"]: g for g in manifest("95b4065")["records"]}
    six = made["rec-classic-6"]
    assert six["spec"]["players"] == 6 and six["forced_trades"], six
    assert made["rec-expert"]["rerolls"] > 0


@pytest.mark.parametrize("path", RECORDS)
def test_record_verifies(path: Path) -> None:
    secret = re.search(r'^\[Secret "([0-9a-f]+)"\]$', path.read_text(encoding="utf-8"), re.M)
    assert secret is not None, f"{path}: the corpus keeps the secret in every record"
    code, output = cli("verify", path, "--secret", secret.group(1))  # as the issue ran it
    assert code == 0 and "every roll matches" in output, output


@pytest.fixture(scope="module")
def import_config(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One fresh SQLite database per corpus version to import its records into."""
    configs = {}
    for version in VERSIONS:
        folder = tmp_path_factory.mktemp(f"import-{version}")
        configs[version] = write_config(folder, f"sqlite:///{folder / 'pbem.db'}")
    return configs


@pytest.fixture
def quick_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    """Import seats each player with a new scrypt-hashed password (0.1 s each): not
    what these tests are about, so a cheap stand-in hash."""
    monkeypatch.setattr(archive, "hash_password", lambda password: f"test${password}")


@pytest.mark.parametrize("path", RECORDS)
def test_record_imports_and_replays_to_its_hashes(
    path: Path, import_config: dict[str, Path], quick_passwords: None
) -> None:
    version = path.parent.parent.name
    config = import_config[version]
    code, output = cli("import", path, "--config", config)
    assert code == 0, output
    record = read_record(path.read_text(encoding="utf-8"), str(path))
    from pbem.config import load_config

    engine = init_db(load_config(config).database_url)
    with session_scope(engine, write=False) as session:
        game = find_game(session, record.game)
        report = replay_game(session, game)
        assert report.ok, report.message
        stored = _stored_hashes(session, game)
        rows = log_of(session, game)
        assert len(rows) == len(record.entries)
        for row, expected in zip(rows, record.hashes, strict=True):
            if expected is not None:
                assert stored.get(row.seq) == expected, f"turn {row.turn}: {row.text!r}"
        if record.result:  # a finished game (continuations/ hold running ones)
            assert game.phase == "over" and game.winner_seat is not None
            assert players_of(session, game)[game.winner_seat].name == record.result
    engine.dispose()


@pytest.mark.parametrize("path", RECORDS)
def test_verify_dice_checks_what_the_format_allows(path: Path) -> None:
    """scripts/verify_dice.py (standard library only) checks every draw written in
    the record (a4bcc7c writes them); of a record without draws sections (95b4065
    writes none) it checks the secret and says the draws are left to `pbem verify`
    (exit 3)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "verify_dice.py"), str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if "=== draws" in path.read_text(encoding="utf-8"):
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("ok: ") and "every one as pbem-dice-v" in done.stdout
    else:  # it checks what it can (the secret) and says plainly what it cannot
        assert done.returncode == 3, done.stdout + done.stderr
        assert done.stdout.splitlines() == [
            "checked: the secret matches the commitment published at the start",
            "not checked: the draws: the record has no '=== draws' sections (it was written "
            "before pbem wrote them, or exported without the secret); use `pbem verify FILE`, "
            "which replays the orders with the rules engine",
        ]


# ---------------------------------------------------------------- databases
@dataclass
class Database:
    """An upgraded copy of a corpus database, and the options its games had before."""

    url: str
    config: Path
    stored_options: dict[str, str]  # game name -> options_json as the old version wrote it


def _sqlite_copy(version: str, folder: Path) -> str:
    target = folder / "pbem.db"
    target.write_bytes(gzip.decompress((CORPUS / version / "pbem.sqlite.gz").read_bytes()))
    return f"sqlite:///{target}"


_pg_numbers = iter(range(1, 10_000))


def _postgresql_copy(version: str, pg_url: str, folder: Path) -> str:
    """A new database on the test server, loaded from the version's plain-SQL dump."""
    server = make_url(pg_url)
    name = f"corpus_{version}_{next(_pg_numbers)}"
    admin = {"host": server.host, "port": server.port, "user": server.username}
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    dump = folder / "dump.sql"
    dump.write_bytes(gzip.decompress((CORPUS / version / "pbem.pg.sql.gz").read_bytes()))
    bindir = _find_bindir()
    assert bindir is not None
    loaded = subprocess.run(
        [str(bindir / "psql"), "-h", str(server.host), "-p", str(server.port),
         "-U", str(server.username), "-d", name, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(dump)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr
    return server.set(database=name).render_as_string(hide_password=False)


def _options_before_upgrade(url: str) -> dict[str, str]:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    with engine.connect() as connection:
        rows = connection.execute(sqlalchemy.text("SELECT name, options_json FROM game"))
        found = {name: options for name, options in rows}
    engine.dispose()
    return found


def upgraded_copy(version: str, engine: str, request: pytest.FixtureRequest, folder: Path):
    """A copy of the version's database, upgraded in place by `pbem init`."""
    if engine == "sqlite":
        url = _sqlite_copy(version, folder)
    else:
        url = _postgresql_copy(version, request.getfixturevalue("pg_url"), folder)
    before = _options_before_upgrade(url)
    config = write_config(folder, url)
    code, output = cli("init", "--config", config)
    assert code == 0, output
    return Database(url, config, before)


_databases: dict[tuple[str, str], Database] = {}  # read only
_playing: dict[tuple[str, str], Database] = {}  # the running games play on here


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The upgraded copy of (version, engine), made once and read by the tests
    that change nothing (the playing test makes a copy of its own)."""
    params = request.node.callspec.params
    key = version, engine = params["version"], params["engine"]
    if key not in _databases:
        folder = tmp_path_factory.mktemp(f"db-{version}-{engine}")
        _databases[key] = upgraded_copy(version, engine, request, folder)
    return _databases[key]


@pytest.fixture
def engine_of() -> Iterator[Any]:
    made: list[Any] = []

    def open_(url: str) -> Any:
        made.append(init_db(url))
        return made[-1]

    yield open_
    for engine in made:
        engine.dispose()


def _stored_hashes(session: Any, game: Game) -> dict[int, str]:
    rows = session.exec(select(TurnResult).where(TurnResult.game_id == game.id))
    return {r.seq: r.state_hash for r in rows}


@pytest.mark.parametrize(("version", "engine", "game_name"), DATABASE_GAMES)
def test_database_upgrades_in_place(
    version: str, engine: str, game_name: str, database: Database, engine_of: Any
) -> None:
    db = engine_of(database.url)
    assert current_revision(db) == head_revision()
    with session_scope(db, write=False) as session:
        find_game(session, game_name)


@pytest.mark.parametrize(("version", "engine", "game_name"), DATABASE_GAMES)
def test_database_game_replays_to_its_stored_hashes(
    version: str, engine: str, game_name: str, database: Database, engine_of: Any
) -> None:
    with session_scope(engine_of(database.url), write=False) as session:
        report = replay_game(session, find_game(session, game_name))
    assert report.ok, report.message


@pytest.mark.parametrize(("version", "engine", "game_name"), DATABASE_GAMES)
def test_database_game_keeps_its_stored_options(
    version: str, engine: str, game_name: str, database: Database, engine_of: Any
) -> None:
    """No silent new options: the stored JSON is untouched by the upgrade, and the
    game plays by what it names (a name it lacks: the behaviour before it existed)."""
    from pbem.service.play.loading import definition_of

    old = database.stored_options[game_name]
    with session_scope(engine_of(database.url), write=False) as session:
        game = find_game(session, game_name)
        assert game.options_json == old
        options = definition_of(session, game).options
    assert options == Options.from_stored(json.loads(old))
    read_back = options.to_dict()
    assert {name: read_back[name] for name in json.loads(old)} == json.loads(old)
    if version in BEFORE_RULES_VERSIONS:
        assert "rules_version" not in json.loads(old)
        assert options.rules_version == 1
    else:
        assert options.rules_version == stored_rules_version(json.loads(old))


@pytest.mark.parametrize(("version", "engine", "game_name"), DATABASE_GAMES)
def test_database_game_exports_a_record_that_verifies(
    version: str, engine: str, game_name: str, database: Database, engine_of: Any
) -> None:
    with session_scope(engine_of(database.url), write=False) as session:
        text = export_record(session, find_game(session, game_name), True, force=True)
    record = read_record(text, f"export of {game_name}")
    report = verify_record(record, secret_to_verify(record, None))
    assert report.ok, report.message


def _continuation(version: str, game_name: str) -> Record | None:
    """The old version's record of the game played further: only its orders and
    hashes are used (the game's map is the one stored in the database), so the
    map it names is embedded from the archive when the shipped one has changed."""
    path = CORPUS / version / "continuations" / f"{game_name}.pgn"
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    named = re.search(r'^\[MapSHA256 "([0-9a-f]{64})"\]$', text, re.MULTILINE)
    if "\n=== map" not in text and named:
        archived = archived_map_text(named.group(1))
        assert archived is not None, f"{path}: its map is not in the archive"
        text = text.rstrip("\n") + "\n\n=== map\n" + archived
    return read_record(text, str(path))


@pytest.mark.parametrize(("version", "engine", "game_name"), DATABASE_GAMES)
def test_running_game_plays_on_as_the_old_version_did(
    version: str,
    engine: str,
    game_name: str,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    engine_of: Any,
) -> None:
    """The old version's own next orders (continuations/), entered after the upgrade,
    reach the old version's own hashes (a game with no continuation, the demo's, plays
    on with today's bots); then the game exports a record that verifies."""
    made = {g["name"]: g for g in manifest(version)[engine]}[game_name]
    if made["phase"] == "over":
        pytest.skip(f"{game_name} is over: nothing to play on")
    key = (version, engine)
    if key not in _playing:  # one copy for all its running games: each plays on its own game
        folder = tmp_path_factory.mktemp(f"playing-{version}-{engine}")
        _playing[key] = upgraded_copy(version, engine, request, folder)
    db = engine_of(_playing[key].url)
    further = _continuation(version, game_name)
    if further is None:
        assert made.get("demo"), f"{game_name} runs but has no continuation"
        _play_with_bots(db, game_name, turns=4)
    else:
        _play_as_recorded(db, game_name, further, version)
    with session_scope(db, write=False) as session:
        text = export_record(session, find_game(session, game_name), True, force=True)
    record = read_record(text, f"export of {game_name}")
    report = verify_record(record, secret_to_verify(record, None))
    assert report.ok, report.message


def _play_as_recorded(db: Any, game_name: str, further: Record, version: str) -> None:
    """Enter the continuation's orders after the database's log; compare every hash."""
    with session_scope(db) as session:
        game = find_game(session, game_name)
        logged = [(r.kind, r.seat, r.turn, r.text.rstrip("\n")) for r in log_of(session, game)]
        expected = [(e.kind, e.seat, e.turn, e.text.rstrip("\n")) for e in further.entries]
        assert logged == expected[: len(logged)], "the database is not where the old game was"
        pending = {
            p.seat: p.text
            for p in session.exec(select(PendingOrders).where(PendingOrders.game_id == game.id))
        }
    for entry in further.entries[len(logged) :]:
        if entry.kind == "setup" and pending.get(entry.seat, "").rstrip("\n") == entry.text:
            continue  # sent before the upgrade, waiting for the others
        with session_scope(db) as session:
            game = find_game(session, game_name)
            player = players_of(session, game)[entry.seat]
            outcome = submit(session, game, player, entry.text, source="gm")
            assert outcome.accepted, (entry.turn, entry.text, outcome.problems)
    with session_scope(db, write=False) as session:
        game = find_game(session, game_name)
        rows = log_of(session, game)
        stored = _stored_hashes(session, game)
        assert len(rows) == len(further.entries)
        for row, old_hash in zip(rows, further.hashes, strict=True):
            if old_hash is not None and stored.get(row.seq) != old_hash:
                pytest.fail(
                    f"turn {row.turn} (seat {row.seat}) plays differently from {version}: "
                    f"hash {stored.get(row.seq)} != {old_hash}; orders:\n{row.text}"
                )


def _play_with_bots(db: Any, game_name: str, turns: int) -> None:
    """``turns`` turns of today's greedy bots, entered as the GM enters orders."""
    from pbem.orders import TextBot
    from pbem.rules.bots import make_bot
    from pbem.service.play.games import load

    for _ in range(turns):
        with session_scope(db) as session:
            game = find_game(session, game_name)
            state = load(session, game).state
            assert game.phase == "playing", game.phase
            bot = TextBot(make_bot("greedy", 100 + state.current))
            player = players_of(session, game)[state.current]
            outcome = submit(session, game, player, bot.write_turn(state), source="gm")
            assert outcome.accepted, (state.turn, outcome.problems)


def teardown_module() -> None:
    _databases.clear()
    _playing.clear()  # the copies live in pytest's temporary folders
