"""Issue 5: exactly once, against the real servers on loopback.

A mail delivered twice is adjudicated once and answered once; a poll killed
between its commit and the move is finished by the next one without a
second adjudication; each poll reads on from the (UIDVALIDITY, last UID)
checkpoint the one before stored; reports that cannot be sent while the SMTP
server is down wait in the outbox (with backoff) and each arrives once when
it is back.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from pbem.mail.imap import ImapInbox
from pbem.mail.transport import Checkpoint, FetchedMail
from pbem.testing.mailservers import MailServers
from tests.mailloop_helpers import (
    CRASH_AFTER_COMMIT,
    MailPlayer,
    MailWorld,
    kind,
    message_ids,
    parse,
    replies_to,
)

pytestmark = pytest.mark.integration

NAMES = ["ada", "brook", "cyrus"]
AUTO = {"placement": "auto"}  # dealt and placed at creation: turn 1 waits for orders
# What one turn sends: the report to 3 players and the GM, the next player's
# notice, and the receipt to the player who moved.
MAILS_PER_TURN = 6


def mailboxes(world: MailWorld, players: dict[str, MailPlayer]) -> dict[str, Counter[str]]:
    """Message-ID counts in every mailbox pbem writes to."""
    boxes = {p.address: message_ids(p.mailbox()) for p in players.values()}
    boxes[world.gm_address] = message_ids(
        [parse(m.raw) for m in world.servers.read_mailbox(world.gm_address)]
    )
    return boxes


def assert_each_arrived_once(world: MailWorld, players: dict[str, MailPlayer]) -> None:
    """Every outbox row is at its recipient exactly once, and nothing else came."""
    boxes = mailboxes(world, players)
    expected: dict[str, Counter[str]] = {address: Counter() for address in boxes}
    for row in world.outbox():
        assert row.status == "sent", (row.message_id, row.status, row.last_error)
        expected[row.recipient][row.message_id] += 1
    assert boxes == expected


def test_the_same_mail_twice_is_adjudicated_once_and_answered_once(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("twice", NAMES, overrides=AUTO, bots=True)
    mover, raw = world.turn_mail("twice", players)
    mid = mover.send(world.game_address, raw)
    mover.send(world.game_address, raw)  # the same bytes again (a resend, a second MX)

    report = world.poll()
    assert [(m.message_id, m.status) for m in report.mails] == [
        (mid, "processed"),
        (mid, "duplicate"),
    ]
    assert report.sent == MAILS_PER_TURN

    mover.send(world.game_address, raw)  # and once more, after it was answered
    report = world.poll()
    assert [(m.status, m.outcome) for m in report.mails] == [("duplicate", "already processed")]
    assert report.sent == 0

    log = world.order_log("twice")
    assert [(e.kind, e.turn, e.message_id) for e in log] == [("turn", 1, mid)]
    assert world.game("twice").turn == 2
    assert [m.message_id for m in world.inbound()] == [mid]
    assert world.folder("INBOX") == []
    assert world.processed() == [mid, mid, mid]
    assert [kind(m) for m in replies_to(mover.mailbox(), mid)] == ["receipt"]
    assert_each_arrived_once(world, players)


def test_a_poll_killed_after_the_commit_is_finished_by_the_next_one(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("crash", NAMES, overrides=AUTO, bots=True)
    mover, raw = world.turn_mail("crash", players)
    mid = mover.send(world.game_address, raw)

    killed = world.pbem("poll", script=CRASH_AFTER_COMMIT)
    assert killed.returncode == 9, killed.stderr
    # The transaction is in: the turn is played and its mails queued...
    assert [(e.turn, e.message_id) for e in world.order_log("crash")] == [(1, mid)]
    assert [(m.message_id, m.status) for m in world.inbound()] == [(mid, "processed")]
    queued = [row for row in world.outbox() if row.status == "pending"]
    assert len(queued) == MAILS_PER_TURN
    # ... but the mail was not moved and nothing was sent.
    assert world.folder("INBOX") == [mid]
    assert world.processed() == []
    assert replies_to(mover.mailbox(), mid) == []

    rerun = world.pbem("poll")
    assert rerun.returncode == 0, rerun.stderr
    assert f"{mid} game=- duplicate: already processed" in rerun.stdout
    assert f"1 mails; {MAILS_PER_TURN} sent, 0 deferred, 0 failed" in rerun.stdout
    assert [(e.turn, e.message_id) for e in world.order_log("crash")] == [(1, mid)]
    assert world.game("crash").turn == 2
    assert world.folder("INBOX") == []
    assert world.processed() == [mid]
    assert [kind(m) for m in replies_to(mover.mailbox(), mid)] == ["receipt"]
    assert_each_arrived_once(world, players)


def test_each_poll_starts_from_the_checkpoint_the_last_one_stored(
    mail_servers: MailServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("mark", NAMES, overrides=AUTO, bots=True)
    calls: list[tuple[Checkpoint | None, Checkpoint | None]] = []
    fetch = ImapInbox.fetch_new

    def spy(
        inbox: ImapInbox, checkpoint: Checkpoint | None, limit: int | None = None
    ) -> tuple[list[FetchedMail], Checkpoint | None]:
        mails, new = fetch(inbox, checkpoint, limit)
        calls.append((checkpoint, new))
        return mails, new

    monkeypatch.setattr(ImapInbox, "fetch_new", spy)
    world.play("mark", players, 2)  # two polls, one order mail each
    (first_asked, first_got), (second_asked, second_got) = calls
    assert first_asked is None  # nothing stored before the first poll
    assert first_got is not None and first_got.last_uid == 1
    assert second_asked == first_got  # read back from the database
    # Keyed by server, user and folder: two accounts' INBOXes never share one.
    assert (
        first_got.mailbox
        == f"imap://{world.config.mail.imap.user}@127.0.0.1:{world.config.mail.imap.port}/INBOX"
    )
    assert second_got == Checkpoint(first_got.mailbox, first_got.uidvalidity, 2)


def test_reports_wait_while_smtp_is_down_and_each_arrives_once(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("down", NAMES, overrides=AUTO, bots=True)
    mover, raw = world.turn_mail("down", players)
    start = world.clock.now()
    with mail_servers.smtp.stopped():
        # The order still arrives (delivered straight into Dovecot, as another MX would).
        mail_servers.dovecot.lmtp_deliver(mover.address, world.game_address, raw)
        report = world.poll()
        assert [m.status for m in report.mails] == ["processed"]
        assert (report.sent, report.deferred, report.failed) == (0, MAILS_PER_TURN, 0)
        assert "cannot connect" in report.errors[0]
        waiting = [r for r in world.outbox() if r.status == "pending"]
        assert len(waiting) == MAILS_PER_TURN
        assert {(r.attempts, r.next_attempt_at) for r in waiting} == {
            (1, start + timedelta(seconds=60))
        }
        world.clock.advance(seconds=60)  # due again, still down: the backoff doubles
        report = world.poll()
        assert (report.sent, report.deferred) == (0, MAILS_PER_TURN)
        assert {
            (r.attempts, r.next_attempt_at) for r in world.outbox() if r.status == "pending"
        } == {(2, start + timedelta(seconds=60 + 120))}

    report = world.poll()  # the server is back, but the backoff is not over yet
    assert (report.sent, report.deferred) == (0, 0)
    world.clock.advance(seconds=120)
    report = world.poll()
    assert (report.sent, report.deferred, report.failed) == (MAILS_PER_TURN, 0, 0)
    assert world.poll().sent == 0
    assert [kind(m) for m in replies_to(mover.mailbox(), str(parse(raw)["Message-ID"]))] == [
        "receipt"
    ]
    assert_each_arrived_once(world, players)


def test_pbem_poll_with_smtp_down_exits_2_and_outbox_retry_sends_every_mail(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("retry", NAMES, overrides=AUTO, bots=True)
    mover, raw = world.turn_mail("retry", players)
    with mail_servers.smtp.stopped():
        mail_servers.dovecot.lmtp_deliver(mover.address, world.game_address, raw)
        down = world.pbem("poll")
        assert down.returncode == 2
        assert f"1 mails; 0 sent, {MAILS_PER_TURN} deferred, 0 failed" in down.stdout
        assert "error: cannot send mail: cannot connect to SMTP server" in down.stderr
        listed = world.pbem("outbox", "--json")
        assert listed.returncode == 0, listed.stderr
        rows = json.loads(listed.stdout)
        assert [(r["status"], r["attempts"]) for r in rows] == [("pending", 1)] * MAILS_PER_TURN
        assert all("cannot connect" in r["last_error"] for r in rows)
    retried = world.pbem("outbox", "--retry")
    assert retried.returncode == 0, retried.stderr
    assert retried.stdout.splitlines() == [
        f"{MAILS_PER_TURN} sent, 0 deferred, 0 failed",
        "the outbox is empty",
    ]
    assert world.pbem("outbox", "--retry").stdout.splitlines()[0] == "0 sent, 0 deferred, 0 failed"
    assert_each_arrived_once(world, players)
