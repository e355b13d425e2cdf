"""Benchmark of the daemon's memory (issue 16): peak RSS of a poll cycle with N active games.

    python scripts/bench/memory.py                 # 1,000 active games, 5 order mails
    python scripts/bench/memory.py --games 100 --orders 3

It creates N running games (four players each, auto placement: every game
is playing, its first deadline set) through the service API into a fresh
SQLite file (no start mails: they are not what is measured), puts a few
order mails (the greedy bot's turn for the player to move, with the GAME
line and a PASSWORD line) into a local Maildir inbox, and runs one cycle of
`pbem daemon --cycles 1` as a real subprocess: it fetches, adjudicates,
renders and sends the reports (into local Maildirs), then runs the
deadlines and the outbox over every game. The subprocess reports its own
peak RSS (VmHWM of /proc/self/status, read at exit: a fresh process image,
so unlike wait4's ru_maxrss it does not start at this script's size).

The baseline is the same daemon cycle on a fresh database with no game and
an empty inbox. The difference is what the games and the mails cost. Exits
1 when an order mail was not played as a turn.

Set-up is not measured: the passwords are hashed with a small scrypt cost
(2**4 instead of 2**14; verifying reads the cost from the stored hash), or
creating 4,000 players would take five minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.config import load_config  # noqa: E402
from pbem.mail.maildir import spool_mailbox  # noqa: E402
from pbem.orders import TextBot  # noqa: E402
from pbem.rules.bots import make_bot  # noqa: E402
from pbem.service.clock import SystemClock  # noqa: E402
from pbem.service.context import Context  # noqa: E402
from pbem.service.play import passwords, schedule
from pbem.service.play.games import PlayerSpec, create_game, load, players_of  # noqa: E402
from pbem.store import init_db, session_scope  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GAME_ADDRESS = "pbem@bench.test"
PLAYERS = 4
PER_TRANSACTION = 50  # games created per transaction
PLAYED = re.compile(r" processed: turn \d+ played$", re.MULTILINE)
PEAK = re.compile(r"^PEAK_RSS_KB (\d+)$", re.MULTILINE)

# The daemon, unchanged, in a process that prints its own peak RSS as it exits.
RUN_DAEMON = """
import atexit, re, sys
def _peak():
    status = open("/proc/self/status").read()
    kb = re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)
    print(f"PEAK_RSS_KB {kb}", file=sys.stderr)
atexit.register(_peak)
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


@dataclass
class DaemonRun:
    peak_mb: float
    seconds: float
    played: int


def write_config(directory: Path) -> Path:
    """A pbem.toml with a SQLite file and local Maildirs, all inside ``directory``."""
    path = directory / "pbem.toml"
    path.write_text(
        f"""state_dir = "."
database_url = "sqlite:///{directory / "pbem.db"}"
[mail]
transport = "maildir"
maildir_root = "{directory / "mail"}"
game_address = "{GAME_ADDRESS}"
gm_address = "gm@bench.test"
reply_budget_per_hour = 1000
""",
        encoding="utf-8",
    )
    return path


def create_games(directory: Path, games: int, orders: int) -> int:
    """N running games; the first ``orders`` get an order mail in the inbox. Returns how many."""
    config = load_config(directory / "pbem.toml", env={})
    ctx = Context(config, SystemClock(), config.mail.own_addresses)
    engine = init_db(config.database_url)
    passwords._N = 2**4  # set-up only: see the module's doc
    inbox = spool_mailbox(directory / "mail", GAME_ADDRESS)
    mails = 0
    try:
        for start in range(0, games, PER_TRANSACTION):
            with session_scope(engine) as session:
                for g in range(start, min(games, start + PER_TRANSACTION)):
                    specs = [PlayerSpec(f"p{s}", f"g{g}-p{s}@players.test") for s in range(PLAYERS)]
                    created = create_game(
                        session,
                        f"bench-{g}",
                        specs,
                        overrides={"placement": "auto"},
                        settings={"timezone": "UTC"},
                    )
                    game = created.game
                    state = load(session, game).state
                    # the first turn's deadline, as the start mails set it (none are sent)
                    schedule.start_period(session, ctx, game, state)
                    if g < orders:
                        player = players_of(session, game)[state.current]
                        body = TextBot(make_bot("greedy", g)).write_turn(state)
                        password = created.passwords[player.name]
                        inbox.add(order_mail(player.address, game.name, password, body))
                        mails += 1
    finally:
        engine.dispose()
    return mails


def order_mail(sender: str, game: str, password: str, orders: str) -> bytes:
    mail = EmailMessage(policy=policy.SMTP)
    mail["From"] = sender
    mail["To"] = GAME_ADDRESS
    mail["Subject"] = f"orders [{game}]"
    mail["Message-ID"] = make_msgid("bench", "players.test")
    mail.set_content(f"PASSWORD {password}\n{orders}")  # the bot writes the GAME line
    return bytes(mail)


def run_daemon(directory: Path) -> DaemonRun:
    """One cycle of `pbem daemon` in a fresh process; its peak RSS and the turns it played."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(REPO)
    config = str(directory / "pbem.toml")
    command = [sys.executable, "-c", RUN_DAEMON, "daemon", "--cycles", "1", "--config", config]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=directory, env=env, capture_output=True, text=True, timeout=1800
    )
    seconds = time.perf_counter() - started
    peak = PEAK.search(done.stderr)
    if done.returncode != 0 or peak is None:
        raise SystemExit(f"pbem daemon failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return DaemonRun(int(peak.group(1)) / 1024, seconds, len(PLAYED.findall(done.stdout)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="active games (default 1,000)")
    parser.add_argument("--orders", type=int, default=5, help="order mails in the inbox")
    parser.add_argument("--dir", type=Path, help="work here (kept) instead of a temporary folder")
    args = parser.parse_args()
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        return run(args.dir, args)
    with tempfile.TemporaryDirectory(prefix="pbem-memory-") as tmp:
        return run(Path(tmp), args)


def run(directory: Path, args: argparse.Namespace) -> int:
    empty, full = directory / "empty", directory / "games"
    for folder in (empty, full):
        folder.mkdir()
        write_config(folder)
    init_db(f"sqlite:///{empty / 'pbem.db'}").dispose()
    baseline = run_daemon(empty)
    print(
        f"baseline: `pbem daemon --cycles 1`, no game, empty inbox: peak RSS "
        f"{baseline.peak_mb:.1f} MB ({baseline.seconds:.1f} s)"
    )
    started = time.perf_counter()
    mails = create_games(full, args.games, min(args.orders, args.games))
    print(
        f"set-up: {args.games} running games x {PLAYERS} players, {mails} order mails in the "
        f"inbox ({time.perf_counter() - started:.1f} s, not counted)"
    )
    measured = run_daemon(full)
    print(
        f"with {args.games} games: peak RSS {measured.peak_mb:.1f} MB "
        f"({measured.seconds:.1f} s), {measured.played} turns played   (target < 150 MB)"
    )
    extra = measured.peak_mb - baseline.peak_mb
    print(
        f"ratio to the baseline: {measured.peak_mb / baseline.peak_mb:.2f}x "
        f"(+{extra:.1f} MB, {1024 * extra / max(args.games, 1):.1f} KB per game)"
    )
    if measured.played != mails:
        print(f"error: {mails} order mails, {measured.played} turns played", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
