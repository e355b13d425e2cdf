"""Fault suite (issue 12): a send batch killed, servers stopped mid-work.

Real Dovecot, SMTP relay and PostgreSQL; `pbem poll` and `pbem daemon` as
subprocesses. After each fault and its recovery ``check_exactly_once``
(tests/fault_helpers.py) checks the promise and returns the figures, which
each test prints on one line ("FIGURES ...") for docs/RELIABILITY.md:

- SIGKILL at random points of a send batch: every outbox row is sent, at
  most one duplicate per kill, and a duplicate carries the same Message-ID;
- the SMTP server stopped mid-batch and started again: nothing lost, the
  GM told once (the outage setting passed while it was down);
- Dovecot stopped mid-poll and started again: every order mail answered
  once, no alert for an outage shorter than the setting;
- PostgreSQL killed and restarted mid-poll under 3 workers: every order
  applied and answered once.
"""

from __future__ import annotations

import random
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.testing.mailservers import DovecotServer, MailServers, SmtpRelay
from pbem.vocab import InboundStatus
from tests.fault_helpers import (
    Figures,
    answer_all,
    check_exactly_once,
    gm_alerts,
    make_world,
    new_games,
    outbox_sent,
    poll_ok,
    queued_games,
    start_command,
    start_daemon,
    status_json,
    stop,
    wait_answered,
    worker_config,
)
from tests.fixtures_pg import _Server
from tests.mailloop_helpers import MailWorld, wait_until

pytestmark = pytest.mark.integration

LEASE = 2.1  # FAST_POLL's claim_lease_seconds, and a little more


def report(test: str, kills: int, figures: Figures) -> None:
    print(
        f"FIGURES {test}: kills={kills} mails={figures.mails} answers={figures.answers} "
        f"applied={figures.applied} rows={figures.rows} delivered={figures.delivered} "
        f"duplicates={figures.duplicates} gm_alerts={figures.gm_alerts}"
    )


def test_sigkill_mid_send_batch_sends_every_row_with_at_most_one_duplicate_per_kill(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    games = queued_games(world, 25)
    rows = len(world.outbox())
    assert rows == 100
    chance = random.Random(1206)
    kills = 0
    while kills < 5 and outbox_sent(world) < rows:
        before = outbox_sent(world)
        run = start_command(world, "poll")
        # Kill it once it is sending: somewhere between two rows, or in one.
        wait_until(lambda b=before, r=run: outbox_sent(world) > b or r.poll() is not None, 60)
        time.sleep(chance.uniform(0.0, 0.3))
        if run.poll() is None:
            stop(run, signal.SIGKILL)
            kills += 1
        time.sleep(LEASE)  # the dead run's leases expire
    poll_ok(world)
    assert outbox_sent(world) == rows
    assert kills >= 3, f"only {kills} kills landed in the batch"
    figures = check_exactly_once(world, games, kills=kills)
    assert (figures.rows, figures.delivered - figures.duplicates) == (rows, rows)
    report("sigkill-send-batch", kills, figures)


def test_smtp_stopped_mid_batch_loses_nothing_and_the_gm_is_told_once(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    # The outage setting, 3 seconds here (30 minutes by default).
    world = make_world(mail_servers, tmp_path, outage_alert_minutes=0.05)
    games = queued_games(world, 20)
    rows = len(world.outbox())
    daemon = start_daemon(world, interval=0.3)
    try:
        wait_until(lambda: outbox_sent(world) >= 10, 60, "the batch under way")
        with mail_servers.smtp.stopped():
            stopped_at = outbox_sent(world)

            def told() -> bool:
                found = status_json(world)[1]["outages"].get("smtp", {})
                return bool(found.get("alerted"))

            wait_until(told, 30, "the SMTP outage past its setting")
            assert status_json(world)[0] == 2  # critical, for a monitoring check
            assert outbox_sent(world) - stopped_at <= 1  # at most the one in flight
        wait_until(lambda: outbox_sent(world) == rows, 60, "every row sent")
        wait_until(lambda: gm_alerts(world), 30, "the note that sending works again")
        assert status_json(world)[0] == 0
    finally:
        stop(daemon)
    log = (tmp_path / "daemon.log").read_text(errors="replace")
    assert log.count("ALERT: sending mail has failed") == 1, log
    # Told once: SMTP was down, so the alert itself is in the log and `pbem
    # status`; the GM's mail says it is over and since when it had failed.
    assert gm_alerts(world) == ["[pbem] GM alert: Back to normal: sending mail"]
    figures = check_exactly_once(world, games, kills=1, alerts=1)
    assert figures.rows == rows + 1  # the games' mail and the note
    report("smtp-stopped", 1, figures)


@pytest.fixture
def own_mail_servers() -> Iterator[MailServers]:
    """Dovecot (its mail kept across a stop: a folder of our own, outside
    tmp_path, which Dovecot's unprivileged users cannot reach) and a relay."""
    folder = Path(tempfile.mkdtemp(prefix="pbem-faults-dovecot-"))
    dovecot = DovecotServer(folder)
    dovecot.start()
    relay = SmtpRelay(dovecot)
    relay.start()
    servers = MailServers(dovecot, relay)
    try:
        yield servers
    finally:
        servers.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_imap_server_stopped_mid_poll_answers_every_mail_once(
    own_mail_servers: MailServers, tmp_path: Path
) -> None:
    (tmp_path / "world").mkdir()
    world = make_world(own_mail_servers, tmp_path / "world")
    games = new_games(world, 8)
    daemon = start_daemon(world, interval=0.3)
    try:
        assert answer_all(world, games) == 8
        wait_until(lambda: processed(world) >= 1, 60, "the poll under way")
        own_mail_servers.dovecot.stop()  # IMAP and delivery both gone
        time.sleep(1.5)
        own_mail_servers.dovecot.start()
        wait_answered(world, games, timeout=90)
        assert answer_all(world, games) == 8  # and the next round goes as usual
        wait_answered(world, games, timeout=90)
    finally:
        stop(daemon)
    figures = check_exactly_once(world, games, kills=1)
    assert (figures.mails, figures.answers, figures.applied) == (16, 16, 16)
    report("imap-stopped", 1, figures)


def processed(world: MailWorld) -> int:
    return sum(1 for r in world.inbound() if r.status == InboundStatus.PROCESSED)


def test_postgresql_restarted_mid_poll_under_three_workers_loses_nothing(
    mail_servers: MailServers, tmp_path: Path, own_postgresql: _Server
) -> None:
    world = make_world(mail_servers, tmp_path, database_url=own_postgresql.url("faults"))
    games = new_games(world, 6)
    workers = [start_daemon(world, worker_config(world, f"w{i}"), f"w{i}") for i in range(3)]
    chance = random.Random(1207)
    restarts = 0
    try:
        for _ in range(2):
            done = processed(world)
            # 6 or more: a bot answers a duplicate "your turn" again (a stale order).
            assert answer_all(world, games) >= 6
            wait_until(lambda d=done: processed(world) > d, 60, "the workers under way")
            time.sleep(chance.uniform(0.0, 0.3))
            own_postgresql.kill()
            restarts += 1
            time.sleep(1.0)
            own_postgresql.start_again()
            world.engine.dispose()  # the test's own pool saw the server die too
            wait_answered(world, games, timeout=90)
    finally:
        for worker in workers:
            stop(worker)
    # A worker whose commit of "sent" died with the server sends that one row
    # again when its lease expires: one duplicate per worker and restart at most.
    figures = check_exactly_once(world, games, kills=3 * restarts)
    assert figures.applied == 12 and figures.answers == figures.mails >= 12
    report("postgresql-restarted-3-workers", 3 * restarts, figures)
