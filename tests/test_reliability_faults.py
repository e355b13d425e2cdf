"""The fault suite of issue 12: real servers, real faults, real kills.

Games of bots are played by mail through Dovecot (IMAP) and an SMTP relay
on 127.0.0.1, with `pbem poll` and `pbem daemon` as real subprocesses; a
fault is injected (the SQLite database locked past its busy timeout, a
disk full, PostgreSQL stopped and restarted, SIGKILL at random moments,
three workers on one database, the IMAP server unreachable), and after
recovery `exactly_once` checks the promise:

- every order mail has one row, one outcome, at most one log entry, and
  one answer (a reply whose In-Reply-To is its Message-ID);
- every outbox row was sent, and arrived once at its recipient; a
  duplicate (same Message-ID) is allowed only for a kill (of the worker,
  or of the database) between the server's acceptance and the commit, so
  at most one per kill;
- the GM got no alert storm (no alert at all, unless the test expects one).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.config import load_config
from pbem.store import init_db
from pbem.testing.mailservers import MailServers, free_port
from pbem.vocab import InboundStatus, OutboxStatus
from tests.fixtures_pg import SERVER_USER, _find_bindir, _Server
from tests.mailloop_helpers import (
    MailPlayer,
    MailWorld,
    kind,
    message_ids,
    parse,
    replies_to,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.integration

NAMES = ["ada", "brook", "cyrus"]
AUTO = {"placement": "auto"}
# Short leases and no backoff: a dead worker's mail is free again at once.
POLL = "[poll]\nclaim_lease_seconds = 2\nretry_base_seconds = 0\n"

Games = dict[str, dict[str, MailPlayer]]


# ------------------------------------------------------------------ the world
def make_world(servers: MailServers, directory: Path, database_url: str | None = None) -> MailWorld:
    """A MailWorld whose config has the [poll] table above (and maybe PostgreSQL)."""
    from datetime import UTC, datetime

    from pbem.service.clock import ManualClock

    game_address = servers.new_user("game")
    gm_address = servers.new_user("gm")
    path = write_config(directory / "pbem.toml", servers, game_address, gm_address)
    text = path.read_text(encoding="utf-8")
    url = database_url or f"sqlite:///{directory / 'pbem.db'}"
    text = text.replace('database_url = "sqlite:///pbem.db"', f'database_url = "{url}"')
    path.write_text(text + "\n" + POLL, encoding="utf-8")
    config = load_config(path, env={})
    engine = init_db(config.database_url)
    clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
    return MailWorld(servers, directory, path, config, engine, clock, game_address, gm_address)


def worker_config(world: MailWorld, name: str) -> Path:
    """The world's config for one more worker: its own state folder and name."""
    folder = world.directory / name
    folder.mkdir(exist_ok=True)
    text = world.config_path.read_text(encoding="utf-8")
    text = text.replace('state_dir = "."', f'state_dir = "{folder}"')
    text = text.replace("[poll]\n", f'[poll]\nworker_id = "{name}"\n', 1)
    path = folder / "pbem.toml"
    path.write_text(text, encoding="utf-8")
    return path


def new_games(world: MailWorld, count: int) -> Games:
    return {
        f"g{i}": world.new_game(f"g{i}", NAMES, overrides=AUTO, bots=True, seed=10 * i)
        for i in range(count)
    }


def answer_all(world: MailWorld, games: Games) -> int:
    """Every player reads their mail and answers what asks for orders."""
    return sum(p.answer(world, name) for name, players in games.items() for p in players.values())


def sent_by_players(games: Games) -> list[str]:
    return [mid for players in games.values() for p in players.values() for mid in p.sent]


def all_answered(world: MailWorld, games: Games) -> bool:
    """Every order mail has its outcome and the outbox is empty."""
    sent = set(sent_by_players(games))
    done = {
        r.message_id
        for r in world.inbound()
        if r.status in (InboundStatus.PROCESSED, InboundStatus.REJECTED)
    }
    return sent <= done and all(r.status == OutboxStatus.SENT for r in world.outbox())


def exactly_once(world: MailWorld, games: Games, kills: int = 0, alerts: int = 0) -> int:
    """Check the promise; returns the number of duplicate deliveries seen."""
    sent = sent_by_players(games)
    assert len(sent) == len(set(sent))
    rows = Counter(r.message_id for r in world.inbound())
    assert all(rows[mid] == 1 for mid in sent), {m: rows[m] for m in sent if rows[m] != 1}
    statuses = {r.message_id: r.status for r in world.inbound()}
    assert {statuses[mid] for mid in sent} <= {InboundStatus.PROCESSED}, statuses
    assert world.folder("INBOX") == []
    for name in games:
        logged = Counter(e.message_id for e in world.order_log(name) if e.message_id)
        assert all(count == 1 for count in logged.values()), logged
        assert set(logged) <= set(sent)
    duplicates = 0
    boxes: dict[str, Counter[str]] = {}
    for players in games.values():
        for player in players.values():
            mailbox = player.mailbox()
            boxes[player.address] = message_ids(mailbox)
            for mid in player.sent:
                answers = replies_to(mailbox, mid)
                assert len({str(m["Message-ID"]) for m in answers}) == 1, (mid, answers)
    gm_mail = [parse(m.raw) for m in world.servers.read_mailbox(world.gm_address)]
    boxes[world.gm_address] = message_ids(gm_mail)
    expected: dict[str, Counter[str]] = {address: Counter() for address in boxes}
    for row in world.outbox():
        assert row.status == OutboxStatus.SENT, (row.message_id, row.status, row.last_error)
        expected.setdefault(row.recipient, Counter())[row.message_id] += 1
    for address, got in boxes.items():
        want = expected[address]
        assert set(got) == set(want), address
        duplicates += sum(got[mid] - 1 for mid in got)
    assert duplicates <= kills, f"{duplicates} duplicates for {kills} kills"
    gm_alerts = [m for m in gm_mail if kind(m) == "gm_alert"]
    assert len(gm_alerts) == alerts, [str(m["Subject"]) for m in gm_alerts]
    return duplicates


def play_rounds(world: MailWorld, games: Games, rounds: int, step: object) -> None:
    """``rounds`` times: everyone answers, then ``step()`` (polls, faults, ...)."""
    for _ in range(rounds):
        answer_all(world, games)
        step()  # type: ignore[operator]


def wait_answered(world: MailWorld, games: Games, timeout: float = 60) -> None:
    wait_until(lambda: all_answered(world, games), timeout, "every order mail answered")


def poll_ok(world: MailWorld, config: Path | None = None) -> None:
    done = world.pbem("poll", config=config)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------ SQLite
def test_a_database_locked_past_its_busy_timeout_loses_nothing(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, 3)
    assert answer_all(world, games) == 3
    wait_until(lambda: len(world.folder("INBOX")) == 3, 10, "3 mails in the inbox")
    lock = sqlite3.connect(tmp_path / "pbem.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    try:
        locked = world.pbem("poll")
    finally:
        lock.rollback()
        lock.close()
    assert locked.returncode == 2
    assert "the database cannot be used" in locked.stderr and "busy" in locked.stderr
    assert len(world.folder("INBOX")) == 3  # nothing moved, nothing lost
    poll_ok(world)
    play_rounds(world, games, 2, lambda: poll_ok(world))
    assert exactly_once(world, games) == 0


@pytest.mark.parametrize("room", [0, 48 * 1024], ids=["no-room", "room-for-some"])
def test_a_full_disk_mid_poll_loses_nothing(
    mail_servers: MailServers, tmp_path: Path, room: int
) -> None:
    """The poll may not grow any file past its current size (+ ``room``): the
    disk is full for it (RLIMIT_FSIZE, as a small full file system would be)."""
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, 4)
    assert answer_all(world, games) == 4
    wait_until(lambda: len(world.folder("INBOX")) == 4, 10, "4 mails in the inbox")
    files = [tmp_path / name for name in ("pbem.db", "pbem.db-wal")]
    limit = max(f.stat().st_size for f in files if f.exists()) + room if room else 4096
    full = FULL_DISK.replace("MAX_BYTES", str(limit))
    failed = world.pbem("poll", script=full)
    assert failed.returncode == 2, failed.stderr
    assert "the database cannot be used" in failed.stderr
    time.sleep(2.1)  # the dead run's claims expire
    poll_ok(world)
    play_rounds(world, games, 1, lambda: poll_ok(world))
    assert exactly_once(world, games) == 0


FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_BYTES, MAX_BYTES))
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


# ------------------------------------------------------------------ kills
def start_daemon(
    world: MailWorld, config: Path | None = None, log: str = "daemon"
) -> subprocess.Popen[bytes]:
    out = open(world.directory / f"{log}.log", "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        world.command("daemon", "--interval", "0.5", config=config),
        cwd=world.directory,
        env=world.env(),
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
    process.wait(timeout=30)


def test_sigkill_at_random_moments_loses_nothing_and_duplicates_at_most_one_per_kill(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, 4)
    chance = random.Random(1204)
    kills = 0
    for _ in range(6):
        answer_all(world, games)
        daemon = start_daemon(world)
        time.sleep(chance.uniform(0.3, 1.5))  # somewhere in a poll or a send
        stop(daemon, signal.SIGKILL)
        kills += 1
    time.sleep(2.1)  # the last claims and leases expire
    daemon = start_daemon(world)
    try:
        for _ in range(3):
            wait_answered(world, games)
            answer_all(world, games)
        wait_answered(world, games)
    finally:
        stop(daemon)
    exactly_once(world, games, kills=kills)


# ------------------------------------------------------------------ PostgreSQL
@pytest.fixture
def own_postgresql() -> Iterator[_Server]:
    """A PostgreSQL server of this test's own, to stop and restart."""
    bindir = _find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (scripts/install-system-deps.sh)")
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            pytest.skip(f"running as root, and there is no {SERVER_USER!r} user")
    server = _Server(bindir)
    server.start()
    with server.connect_admin() as admin:
        admin.execute("CREATE DATABASE faults")
    try:
        yield server
    finally:
        server.stop()


def pg_ctl(server: _Server, *args: str) -> None:
    options = (
        f"-c listen_addresses=127.0.0.1 -p {server.port} "
        f"-c unix_socket_directories={server.socket_dir} -c fsync=off"
    )
    done = server.run(
        str(server.bindir / "pg_ctl"), "-D", str(server.data), "-l", str(server.log),
        "-o", options, "-w", "-t", "60", *args,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_postgresql_stopped_and_restarted_mid_poll_loses_nothing(
    mail_servers: MailServers, tmp_path: Path, own_postgresql: _Server
) -> None:
    world = make_world(mail_servers, tmp_path, own_postgresql.url("faults"))
    games = new_games(world, 4)
    daemon = start_daemon(world)
    try:
        for pause in (0.2, 0.6, 1.0):
            answer_all(world, games)
            time.sleep(pause)  # the daemon is busy with the mail
            pg_ctl(own_postgresql, "-m", "immediate", "stop")
            time.sleep(1.0)
            pg_ctl(own_postgresql, "start")
            wait_answered(world, games, timeout=90)
        world.engine.dispose()  # the test's own pool saw the server die too
    finally:
        stop(daemon)
    # A restart between the SMTP server's acceptance of a mail and the commit
    # that marks it sent is a kill of that commit: one duplicate at most each.
    exactly_once(world, games, kills=3)


def run_workers(world: MailWorld, games: Games, workers: int, rounds: int) -> None:
    """``workers`` daemons, each with its own state folder, play ``rounds`` rounds."""
    running = [start_daemon(world, worker_config(world, f"w{i}"), f"w{i}") for i in range(workers)]
    try:
        for _ in range(rounds):
            answer_all(world, games)
            wait_answered(world, games, timeout=90)
    finally:
        for worker in running:
            stop(worker)
    exactly_once(world, games)
    logs = [(world.directory / f"w{i}.log").read_text(errors="replace") for i in range(workers)]
    assert all("Traceback" not in log for log in logs), logs


def test_three_workers_on_one_postgresql_divide_the_mail_without_a_trace(
    mail_servers: MailServers, tmp_path: Path, own_postgresql: _Server
) -> None:
    world = make_world(mail_servers, tmp_path, own_postgresql.url("faults"))
    run_workers(world, new_games(world, 6), workers=3, rounds=4)


def test_two_workers_on_one_sqlite_divide_the_mail_without_a_trace(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    run_workers(world, new_games(world, 4), workers=2, rounds=3)


# ------------------------------------------------------------------ IMAP down
def test_an_unreachable_imap_server_holds_back_neither_sending_nor_deadlines(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, 1)
    closed = tmp_path / "closed.toml"
    text = world.config_path.read_text(encoding="utf-8")
    port = f"port = {mail_servers.dovecot.imap_port}"
    closed.write_text(text.replace(port, f"port = {free_port()}"), encoding="utf-8")
    paused = world.pbem("pause", "g0")  # announced to the players: mail to send
    assert paused.returncode == 0, paused.stderr
    waiting = sum(1 for r in world.outbox() if r.status == OutboxStatus.PENDING)
    assert waiting == 4
    down = world.pbem("poll", config=closed)
    assert down.returncode == 2
    assert f"0 mails; {waiting} sent" in down.stdout
    assert down.stderr.startswith("error: cannot read the inbox: cannot connect to IMAP server")
    assert "(settings: [mail.imap] host, port, user)" in down.stderr
    exactly_once(world, games, alerts=1)  # the GM's copy of the pause announcement
