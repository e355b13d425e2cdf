"""Fault suite (issue 12): what the GM does after a fault, and outages told once.

Real Dovecot, SMTP relay and PostgreSQL; `pbem poll` as a subprocess where
the command itself is what is tested:

- a mail held after failing, moved back into the inbox by the GM (as a
  mail client does: IMAP MOVE, a new UID), is tried afresh and answered
  once; its history stays in the row; one never moved out (the worker died
  between the commit and the move: its old UID) is only moved;
- `pbem poll` with the database down exits 2 (as `pbem status` does),
  records the outage (so does a daemon waiting for it), and two workers
  with state folders of their own alert the GM once for it, and once when
  it is over.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.mail.imap import ImapInbox
from pbem.service.intake import mailflow
from pbem.testing.mailservers import MailServers
from pbem.vocab import InboundStatus
from tests.fault_helpers import (
    check_exactly_once,
    gm_alerts,
    make_world,
    new_game,
    start_daemon,
    status_json,
    stop,
    worker_config,
)
from tests.fixtures_pg import _Server
from tests.mailloop_helpers import wait_until

pytestmark = pytest.mark.integration

HELD_FOLDER = "pbem-held"  # the default [mail.imap] held_folder


def test_a_held_mail_the_gm_moves_back_is_tried_afresh_and_answered_once(
    mail_servers: MailServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(mail_servers, tmp_path, max_attempts=2)
    players = new_game(world, "g0")
    mover, raw = world.turn_mail("g0", players)
    mid = mover.send(world.game_address, raw)
    wait_until(lambda: world.folder("INBOX") == [mid], 10, "the order mail in the inbox")
    real = mailflow._handle

    def buggy(*args: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(mailflow, "_handle", buggy)
    assert world.poll().retrying == 1
    held = world.poll()
    assert [(m.message_id, m.status) for m in held.mails] == [(mid, "held")]
    assert world.folder(HELD_FOLDER) == [mid] and world.folder("INBOX") == []
    monkeypatch.setattr(mailflow, "_handle", real)  # the GM had the bug fixed

    # The GM moves it back with a mail client: IMAP MOVE gives it a new UID.
    client = mail_servers.dovecot.imap(world.game_address)
    try:
        client.select_folder(HELD_FOLDER)
        client.move(client.search(["ALL"]), "INBOX")
    finally:
        client.logout()
    assert world.folder("INBOX") == [mid]

    again = world.poll()
    assert [(m.message_id, m.status) for m in again.mails] == [(mid, "processed")]
    assert world.poll().mails == []  # answered once: nothing left to do
    assert world.folder("INBOX") == [] and world.folder(HELD_FOLDER) == []
    (row,) = [r for r in world.inbound() if r.message_id == mid]
    assert (row.status, row.attempts, row.last_error) == (
        InboundStatus.PROCESSED,
        1,  # counted afresh: the attempt that succeeded
        "RuntimeError: a bug",
    )
    assert row.outcome.endswith(
        "(put back into the inbox by the GM; before that: "
        "held after 2 failed attempts: RuntimeError: a bug)"
    ), row.outcome
    figures = check_exactly_once(world, {"g0": players}, alerts=1)
    assert gm_alerts(world) == ["[pbem] GM alert: A mail is held: it could not be processed"]
    assert (figures.mails, figures.answers, figures.applied) == (1, 1, 1)


def test_a_held_mail_never_moved_out_is_only_moved_not_tried_again(
    mail_servers: MailServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker died between the commit that held the mail and its move:
    the mail is in the inbox under its old UID. It is moved, not retried,
    and the GM is not told twice."""
    world = make_world(mail_servers, tmp_path, max_attempts=1)
    players = new_game(world, "g0")
    mover, raw = world.turn_mail("g0", players)
    mid = mover.send(world.game_address, raw)
    wait_until(lambda: world.folder("INBOX") == [mid], 10, "the order mail in the inbox")

    def buggy(*args: object) -> object:
        raise RuntimeError("a bug")

    def dies(self: ImapInbox, key: str, folder: str) -> None:
        raise OSError("the worker died here")

    monkeypatch.setattr(mailflow, "_handle", buggy)
    monkeypatch.setattr(ImapInbox, "move", dies)
    (error,) = world.poll().errors
    assert error.startswith("cannot read the inbox: the worker died here")
    (row,) = [r for r in world.inbound() if r.message_id == mid]
    assert (row.status, row.attempts) == (InboundStatus.HELD, 1)
    monkeypatch.undo()
    again = world.poll()
    assert [(m.message_id, m.status) for m in again.mails] == [(mid, "duplicate")]
    assert world.folder(HELD_FOLDER) == [mid] and world.folder("INBOX") == []
    (row,) = [r for r in world.inbound() if r.message_id == mid]
    assert (row.status, row.attempts) == (InboundStatus.HELD, 1)
    assert gm_alerts(world) == ["[pbem] GM alert: A mail is held: it could not be processed"]


def test_poll_with_the_database_down_exits_2_and_two_workers_alert_the_gm_once(
    mail_servers: MailServers, tmp_path: Path, own_postgresql: _Server
) -> None:
    world = make_world(mail_servers, tmp_path, database_url=own_postgresql.url("faults"))
    workers = [worker_config(world, name) for name in ("w0", "w1")]
    start = datetime.now(UTC).replace(microsecond=0)
    own_postgresql.kill()
    # A daemon started now waits for the database, and records the outage meanwhile.
    daemon = start_daemon(world, workers[0], interval=0.5)
    try:
        wait_until(lambda: list((tmp_path / "outages").glob("database-*.json")), 30, "the file")
        recorded_by = datetime.now(UTC)  # the first failure is no later than this
    finally:
        assert stop(daemon) == 0
    for minutes in (0, 20, 31, 45):  # the alert is due after 30 minutes
        now = (start + timedelta(minutes=minutes)).isoformat()
        for config in workers:
            done = world.pbem("--now", now, "poll", config=config)
            assert done.returncode == 2, done.stdout + done.stderr
            assert done.stderr.startswith("error: the database cannot be used: "), done.stderr
            assert "Traceback" not in done.stdout + done.stderr
    code, found = status_json(world, workers[1])
    assert code == 2
    since = datetime.fromisoformat(found["outages"]["database"]["since"])
    # the first failure, the daemon's (not a later poll's, 20 minutes on): no
    # fixed bound, a loaded machine may take seconds to start the daemon
    assert start <= since <= recorded_by
    assert found["outages"]["database"]["alerted"] is True
    assert gm_alerts(world) == ["[pbem] GM alert: Outage: the database"]

    own_postgresql.start_again()
    later = (start + timedelta(minutes=60)).isoformat()
    for config in workers:
        done = world.pbem("--now", later, "poll", config=config)
        assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(gm_alerts(world)) == [
        "[pbem] GM alert: Back to normal: the database",
        "[pbem] GM alert: Outage: the database",
    ]
    assert status_json(world, workers[0])[0] == 0
