"""Work division: the same order mails polled by one worker and by three on
one PostgreSQL (issue 12).

    python scripts/bench/workers.py                 # 100 games, 10 rounds: 1,000 order mails
    python scripts/bench/workers.py --games 20 --rounds 3 --workers 3
    python scripts/bench/workers.py --mode daemon   # long-running daemons, no start-up cost

Dovecot (IMAP + LMTP), the SMTP relay and a PostgreSQL server are started on
127.0.0.1 (as the tests do). For each worker count, a fresh database gets
the games (four bots each, placement automatic) and, round by round, the
player to move in every game answers their notice (straight into Dovecot
over LMTP); then N `pbem poll` subprocesses, each with its own state folder
and worker name, run at once on the one database and divide the mail by
their claims. A round's time is the wall time until the last of them ends
(a game's next orders depend on the turn just played). With ``--mode
daemon`` N `pbem daemon` processes run for the whole measure (as a server
would run them) and a round's time is from the delivery until every mail
is played and every outbox row sent: Python's start-up, paid once per
`pbem poll`, is out of the figure. Afterwards every
mail must have been played once and every outbox row sent once, or the
script exits 1. Everything stays on loopback; every server is stopped.
It prints figures; it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mail import PLAYED, REPO, Bench  # noqa: E402
from sqlmodel import select  # noqa: E402

from pbem.store import InboundMessage, OrderEntry, Outbox, session_scope  # noqa: E402
from pbem.testing.mailservers import MailServers  # noqa: E402
from tests.fixtures_pg import _find_bindir, _Server  # noqa: E402


def worker_configs(bench: Bench, count: int) -> list[Path]:
    """The bench's config once per worker: own state folder, own name."""
    text = bench.config_path.read_text(encoding="utf-8")
    paths = []
    for n in range(count):
        folder = bench.directory / f"worker-{n}"
        folder.mkdir(exist_ok=True)
        path = folder / "pbem.toml"
        path.write_text(
            text.replace('state_dir = "."', f'state_dir = "{folder}"')
            + f'\n[poll]\nworker_id = "worker-{n}"\n',
            encoding="utf-8",
        )
        paths.append(path)
    return paths


def worker_env() -> dict[str, str]:
    """This environment without PBEM_ settings, with this checkout's pbem first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(REPO)
    return env


def poll_at_once(bench: Bench, configs: list[Path]) -> tuple[float, int]:
    """One `pbem poll` per config, all started together; (wall seconds, turns played)."""
    env = worker_env()
    started = time.perf_counter()
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "pbem", "poll", "--config", str(path)],
            cwd=bench.directory,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in configs
    ]
    played = 0
    for run in runs:
        out, err = run.communicate(timeout=600)
        if run.returncode != 0:
            raise SystemExit(f"pbem poll failed ({run.returncode}):\n{out}\n{err}")
        played += len(PLAYED.findall(out))
    return time.perf_counter() - started, played


def start_daemons(bench: Bench, configs: list[Path]) -> list[subprocess.Popen[str]]:
    env = worker_env()
    return [
        subprocess.Popen(
            [sys.executable, "-m", "pbem", "daemon", "--interval", "2", "--config", str(path)],
            cwd=bench.directory,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for path in configs
    ]


def wait_until_started(configs: list[Path], daemons: list[subprocess.Popen[str]]) -> None:
    """Until every daemon has run its first cycle (its poll lock file exists)."""
    deadline = time.perf_counter() + 120
    while not all((path.parent / "poll.lock").exists() for path in configs):
        if time.perf_counter() > deadline or any(d.poll() is not None for d in daemons):
            raise SystemExit("the pbem daemons did not start")
        time.sleep(0.1)


def stop_daemons(daemons: list[subprocess.Popen[str]]) -> None:
    for daemon in daemons:
        daemon.terminate()
    for daemon in daemons:
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def wait_until_done(bench: Bench, daemons: list[subprocess.Popen[str]]) -> float:
    """Seconds until every delivered mail is played and nothing waits to be sent."""
    started = time.perf_counter()
    while time.perf_counter() - started < 600:
        with session_scope(bench.engine, write=False) as session:
            done = Counter(session.exec(select(InboundMessage.status)).all())["processed"]
            pending = Counter(session.exec(select(Outbox.status)).all())["pending"]
        if done >= bench.delivered and pending == 0:
            return time.perf_counter() - started
        if any(d.poll() is not None for d in daemons):
            raise SystemExit("a pbem daemon stopped during the benchmark")
        time.sleep(0.05)
    raise SystemExit("the daemons did not play the round within 600 s")


def check(bench: Bench) -> str:
    """Every order mail played once, every outbox row sent once; a line to print."""
    with session_scope(bench.engine, write=False) as session:
        inbound = Counter(session.exec(select(InboundMessage.status)).all())
        logged = Counter(
            m for m in session.exec(select(OrderEntry.message_id)).all() if m is not None
        )
        outbox = Counter(session.exec(select(Outbox.status)).all())
    if inbound != Counter({"processed": bench.delivered}) or any(c > 1 for c in logged.values()):
        raise SystemExit(f"not every mail was played once: {inbound}, {len(logged)} logged")
    if set(outbox) != {"sent"}:
        raise SystemExit(f"not every mail was sent: {outbox}")
    return f"{bench.delivered} mails played once each, {outbox['sent']} outbox rows sent"


def measure(servers: MailServers, server: _Server, workers: int, args: argparse.Namespace) -> float:
    database = f"bench_{workers}"
    with server.connect_admin() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {database}")
        admin.execute(f"CREATE DATABASE {database}")
    with tempfile.TemporaryDirectory(prefix="pbem-workers-") as tmp:
        bench = Bench(servers, Path(tmp), args.games, 4, database_url=server.url(database))
        bench.setup()
        configs = worker_configs(bench, workers)
        daemons = start_daemons(bench, configs) if args.mode == "daemon" else []
        total = 0.0
        try:
            if daemons:  # a `pbem poll` per round needs no waiting
                wait_until_started(configs, daemons)
            for r in range(args.rounds):
                delivered = bench.deliver_round()
                if daemons:
                    seconds, played = wait_until_done(bench, daemons), delivered
                else:
                    seconds, played = poll_at_once(bench, configs)
                total += seconds
                print(
                    f"  {workers} worker(s), round {r + 1:>2}: {played} turns in {seconds:6.2f} s"
                )
        finally:
            stop_daemons(daemons)
        print(f"  {check(bench)}")
        bench.engine.dispose()
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument(
        "--mode",
        choices=("poll", "daemon"),
        default="poll",
        help="a `pbem poll` per worker and round, or long-running `pbem daemon`s",
    )
    args = parser.parse_args()
    bindir = _find_bindir()
    if bindir is None:
        print(
            "scripts/bench/workers.py needs PostgreSQL (scripts/install-system-deps.sh)",
            file=sys.stderr,
        )
        return 2
    servers = MailServers.start()
    server = _Server(bindir)
    try:
        server.start()
        one = measure(servers, server, 1, args)
        many = measure(servers, server, args.workers, args)
    finally:
        server.stop()
        servers.stop()
    mails = args.games * args.rounds
    print(
        f"\n{mails} order mails over {args.games} games, mode {args.mode},"
        " polling time only (set-up not counted):"
    )
    print(f"  1 worker:  {one:7.1f} s  ({mails / one:5.1f} mails/s)")
    print(f"  {args.workers} workers: {many:7.1f} s  ({mails / many:5.1f} mails/s)")
    print(f"  ratio: {one / many:.2f}x faster with {args.workers} workers ({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
