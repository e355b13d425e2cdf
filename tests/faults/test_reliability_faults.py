"""The fault suite of issue 12: real servers, real faults, real kills.

Games of bots are played by mail through Dovecot (IMAP) and an SMTP relay
on 127.0.0.1, with `pbem poll` and `pbem daemon` as real subprocesses; a
fault is injected (the SQLite database locked past its busy timeout, a
disk full, SIGKILL at random moments, three workers on one database, the
IMAP server unreachable; PostgreSQL restarted, servers stopped and a send
batch killed are in tests/faults/test_faults_servers.py), and after
recovery `check_exactly_once` (tests/fault_helpers.py) checks the promise:

- every order mail has one row, one outcome, at most one log entry, and
  one answer (a reply whose In-Reply-To is its Message-ID);
- every outbox row was sent, and arrived once at its recipient; a
  duplicate (same Message-ID) is allowed only for a kill (of the worker,
  or of the database) between the server's acceptance and the commit, so
  at most one per kill;
- the GM got no alert storm (no alert at all, unless the test expects one).
"""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from pbem.testing.mailservers import MailServers, free_port
from pbem.vocab import OutboxStatus
from tests.fault_helpers import (
    Games,
    answer_all,
    check_exactly_once,
    make_world,
    new_games,
    play_rounds,
    poll_ok,
    start_daemon,
    stop,
    wait_answered,
    worker_config,
)
from tests.fixtures_pg import _Server
from tests.mailloop_helpers import MailWorld, wait_until

pytestmark = pytest.mark.integration


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
    assert check_exactly_once(world, games).duplicates == 0


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
    assert check_exactly_once(world, games).duplicates == 0


FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_BYTES, MAX_BYTES))
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


# ------------------------------------------------------------------ kills
def kill_at_random_then_finish(world: MailWorld, games: Games, seed: int) -> int:
    """Six rounds, each polled by a daemon SIGKILLed somewhere in a poll or a
    send; then one daemon plays three more rounds to the end. The kills."""
    chance = random.Random(seed)
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
    return kills


def test_sigkill_at_random_moments_loses_nothing_and_duplicates_at_most_one_per_kill(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, 4)
    kills = kill_at_random_then_finish(world, games, seed=1204)
    check_exactly_once(world, games, kills=kills)


def test_sigkill_with_three_smtp_connections_duplicates_at_most_three_per_kill(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    """``[mail.smtp] connections = 3``: each connection commits its row sent
    before it sends another, so a kill finds at most one accepted, unmarked
    row per connection (docs/RELIABILITY.md, section 3)."""
    world = make_world(mail_servers, tmp_path, smtp_connections=3)
    assert world.config.mail.smtp.connections == 3
    games = new_games(world, 4)
    kills = kill_at_random_then_finish(world, games, seed=2611)
    figures = check_exactly_once(world, games, kills=kills, per_kill=3)
    assert figures.rows > 0 and figures.answers == figures.mails


def test_sigkill_on_postgresql_with_three_smtp_connections_duplicates_at_most_three_per_kill(
    mail_servers: MailServers, tmp_path: Path, own_postgresql: _Server
) -> None:
    """The same on PostgreSQL (leases taken FOR UPDATE SKIP LOCKED)."""
    url = own_postgresql.url("faults")
    world = make_world(mail_servers, tmp_path, database_url=url, smtp_connections=3)
    games = new_games(world, 4)
    kills = kill_at_random_then_finish(world, games, seed=2612)
    figures = check_exactly_once(world, games, kills=kills, per_kill=3)
    assert figures.rows > 0 and figures.answers == figures.mails


# ------------------------------------------------------------------ PostgreSQL
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
    check_exactly_once(world, games)
    logs = [(world.directory / f"w{i}.log").read_text(errors="replace") for i in range(workers)]
    assert all("Traceback" not in log for log in logs), logs


def test_three_workers_on_one_postgresql_divide_the_mail_without_a_trace(
    mail_servers: MailServers, tmp_path: Path, pg_db_url: str
) -> None:
    # No server is killed here: a fresh database on the session's PostgreSQL
    # does (no server of the test's own to start).
    world = make_world(mail_servers, tmp_path, database_url=pg_db_url)
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
    check_exactly_once(world, games, alerts=1)  # the GM's copy of the pause announcement
