"""Fault suite (issue 12): mail that is not what it seems, through the real path.

Each mail goes player -> SMTP relay (or straight into Dovecot over LMTP, as
a second MX would) -> IMAP -> `pbem poll`, and each answer back through
the relay into the player's own mailbox:

- a mail without Message-ID delivered twice (with other trace headers each
  time) is one mail: processed once, answered once, no false alarm;
- a second mail reusing a Message-ID with other content is a new mail:
  both are answered;
- a delivery report at the top level (message/delivery-status, from an
  ordinary-looking sender) is a bounce: never answered;
- a multipart nested 5,000 deep gets the plain "too deeply nested" reply,
  with nothing of Python's recursion in it or in the log.
"""

from __future__ import annotations

from email import policy
from email.parser import BytesHeaderParser
from email.utils import make_msgid
from pathlib import Path

import pytest

from pbem.mail.identity import identify
from pbem.testing.mailservers import MailServers
from pbem.vocab import InboundStatus
from tests.fault_helpers import check_exactly_once, gm_alerts, make_world, new_game
from tests.mailloop_helpers import REJECTED_FOLDER, kind, order_mail, plain_text, replies_to

pytestmark = pytest.mark.integration

# What one turn sends: the report to 3 players and the GM, the next player's
# notice, and the receipt to the player who moved.
MAILS_PER_TURN = 6


def without_message_id(raw: bytes) -> bytes:
    head, sep, body = raw.partition(b"\n\n")
    lines = [line for line in head.split(b"\n") if not line.lower().startswith(b"message-id:")]
    return b"\n".join(lines) + sep + body


def test_a_mail_without_message_id_delivered_twice_is_processed_and_answered_once(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    players = new_game(world, "g0")
    mover, raw = world.turn_mail("g0", players)
    raw = without_message_id(raw)
    stand_in = identify(raw).message_id
    # Once through the relay, once straight into the mailbox: other trace headers.
    mover.send(world.game_address, raw)
    mover.sent[-1] = stand_in  # the player's client knows no Message-ID for it
    mail_servers.dovecot.lmtp_deliver(mover.address, world.game_address, raw)
    assert world.folder("INBOX") == ["None", "None"]  # no Message-ID in either copy

    report = world.poll()
    assert [(m.message_id, m.status) for m in report.mails] == [
        (stand_in, "processed"),
        (stand_in, "duplicate"),
    ]
    assert report.sent == MAILS_PER_TURN
    assert [(r.message_id, r.status) for r in world.inbound()] == [
        (stand_in, InboundStatus.PROCESSED)
    ]
    assert [(e.turn, e.message_id) for e in world.order_log("g0")] == [(1, stand_in)]
    assert world.game("g0").turn == 2
    # One receipt, threaded under the stand-in; no authentication alert anywhere.
    assert [kind(m) for m in replies_to(mover.mailbox(), stand_in)] == ["receipt"]
    assert all(kind(m) != "auth_alert" for p in players.values() for m in p.mailbox())
    assert gm_alerts(world) == []
    check_exactly_once(world, {"g0": players})


def test_a_reused_message_id_with_other_content_is_a_new_mail_and_both_are_answered(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    players = new_game(world, "g0")
    mover, orders = world.turn_mail("g0", players)
    mid = mover.send(world.game_address, orders)
    assert world.poll().mails[0].status == "processed"

    # A careless client sends another mail under the same Message-ID.
    again = order_mail(
        mover.address,
        world.game_address,
        "[g0] a question",
        f"PASSWORD {mover.password}\nHELP\n",
        message_id=mid,
    )
    mover.send(world.game_address, again)
    report = world.poll()
    assert [(m.message_id, m.status) for m in report.mails] == [(mid, "processed")]

    rows = world.inbound()
    assert [(r.message_id, r.status) for r in rows] == [(mid, InboundStatus.PROCESSED)] * 2
    assert rows[0].content_hash != rows[1].content_hash
    answers = replies_to(mover.mailbox(), mid)
    assert [kind(m) for m in answers] == ["receipt", "help"]
    assert len({str(m["Message-ID"]) for m in answers}) == 2
    assert [(e.turn, e.message_id) for e in world.order_log("g0")] == [(1, mid)]  # applied once
    assert world.folder("INBOX") == []
    assert world.processed() == [mid, mid]
    assert gm_alerts(world) == []


DELIVERY_STATUS = """\
From: {sender}
To: {game}
Subject: Delivery Status Notification
Message-ID: {mid}
MIME-Version: 1.0
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.players.test

Final-Recipient: rfc822; {game}
Action: failed
Status: 5.1.1
"""


def test_a_top_level_delivery_status_report_is_a_bounce_and_is_not_answered(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    players = new_game(world, "g0")
    mover = world.to_move("g0", players)
    before = len(mover.mailbox())
    rows_before = len(world.outbox())
    mid = make_msgid("dsn", "players.test")
    report_mail = DELIVERY_STATUS.format(sender=mover.address, game=world.game_address, mid=mid)
    # From a player's own address and envelope: only the content type tells.
    mover.send(world.game_address, report_mail.replace("\n", "\r\n").encode())

    done = world.poll()
    assert [(m.message_id, m.status, m.outcome) for m in done.mails] == [
        (mid, "rejected", "not answered (a delivery or read report (message/delivery-status))")
    ]
    assert done.sent == 0
    assert len(world.outbox()) == rows_before
    assert len(mover.mailbox()) == before
    assert world.rejected() == [mid]
    assert world.order_log("g0") == []
    assert gm_alerts(world) == []


def nested_multipart(sender: str, to: str, mid: str, depth: int) -> bytes:
    """A mail whose parts sit ``depth`` deep inside one another."""
    head = (
        f"From: {sender}\r\nTo: {to}\r\nSubject: [g0] orders\r\nMessage-ID: {mid}\r\n"
        "MIME-Version: 1.0\r\n"
    )
    opening = "".join(
        f'Content-Type: multipart/mixed; boundary="b{n}"\r\n\r\n--b{n}\r\n' for n in range(depth)
    )
    closing = "".join(f"\r\n--b{n}--\r\n" for n in reversed(range(depth)))
    return (
        head + opening + "Content-Type: text/plain\r\n\r\nPLACE 3 Alaska\r\n" + closing
    ).encode()


def header_ids(servers: MailServers, address: str, folder: str) -> list[str]:
    """Message-IDs of a folder, read from the headers only (the test's own
    parser would recurse into a hostile body)."""
    parser = BytesHeaderParser(policy=policy.default)
    return [
        str(parser.parsebytes(m.raw)["Message-ID"]) for m in servers.read_mailbox(address, folder)
    ]


def test_a_multipart_5000_deep_gets_a_plain_too_deeply_nested_reply(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = make_world(mail_servers, tmp_path)
    players = new_game(world, "g0")
    mover = world.to_move("g0", players)
    mid = make_msgid("deep", "players.test")
    deep = nested_multipart(mover.address, world.game_address, mid, 5000)
    mail_servers.deliver(world.game_address, deep, sender=mover.address)  # over SMTP

    polled = world.pbem("poll")
    assert polled.returncode == 0, polled.stderr
    assert f"{mid} game=- rejected: undecodable: This mail is too deeply nested" in polled.stdout
    assert "recursion" not in (polled.stdout + polled.stderr).lower()
    assert "Traceback" not in polled.stderr

    (answer,) = replies_to(mover.mailbox(), mid)
    assert kind(answer) == "error_reply"
    text = plain_text(answer)
    assert "This mail is too deeply nested (more than 30 parts inside one another)" in text
    assert "recursion" not in text.lower() and "Traceback" not in text
    assert [(r.message_id, r.status) for r in world.inbound()] == [(mid, InboundStatus.REJECTED)]
    assert header_ids(mail_servers, world.game_address, REJECTED_FOLDER) == [mid]
    assert header_ids(mail_servers, world.game_address, "INBOX") == []
    assert world.order_log("g0") == [] and world.game("g0").turn == 1
    assert gm_alerts(world) == []
