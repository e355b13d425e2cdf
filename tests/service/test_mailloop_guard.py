"""Issue 5: mail that must not move armies or start a mail loop, on real servers.

Forged, wrongly signed or stale mail changes nothing and alerts the
registered address (never the sender); auto-replies and bounces get no
answer; unknown senders get no answer by default and their mail is kept
in the rejected folder.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pbem.testing.mailservers import MailServers
from tests.mailloop_helpers import MailPlayer, MailWorld, kind, order_mail, plain_text

pytestmark = pytest.mark.integration

NAMES = ["ada", "brook", "cyrus"]
AUTO = {"placement": "auto"}


def counts(world: MailWorld, *players: MailPlayer) -> list[int]:
    """How many mails each of these mailboxes (and the GM's) holds."""
    addresses = [p.address for p in players] + [world.gm_address]
    return [len(world.servers.read_mailbox(a)) for a in addresses]


def test_forged_from_wrong_password_and_old_token_change_nothing_and_alert_the_player(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("auth", NAMES, overrides=AUTO, bots=True)
    world.play("auth", players, 3)  # a whole round: the first player moves again, turn 4
    mover = world.to_move("auth", players)
    assert world.game("auth").turn == 4
    mallory = MailPlayer("mallory", mail_servers.new_user("mallory"), mail_servers)
    old_notice, live_notice = [m for m in mover.mailbox() if kind(m) == "your_turn"]
    assert "Your turn 1 (token " in str(old_notice["Subject"])
    orders = mover.bot.write_turn(world.state("auth"))  # type: ignore[union-attr]
    before = (world.state("auth").state_hash(), len(world.order_log("auth")))
    boxes_before = counts(world, *players.values(), mallory)

    # mallory writes in the name of the player to move; answers would go to mallory
    forged = order_mail(
        mover.address,
        world.game_address,
        "[auth] orders",
        orders,
        headers={"Reply-To": mallory.address},
    )
    forged_id = mallory.send(world.game_address, forged, envelope_from=mallory.address)
    wrong_id = mover.send(
        world.game_address,
        order_mail(
            mover.address,
            world.game_address,
            "[auth] orders",
            "PASSWORD wrong-wrong-wrong-00\n" + orders,
        ),
    )
    stale_id = mover.send(
        world.game_address, mover.reply_mail(world.game_address, old_notice, orders)
    )

    report = world.poll()
    assert [(m.message_id, m.status, m.outcome) for m in report.mails] == [
        # issue 27: no password and no token is a player's mistake (a forwarded or
        # empty mail): the registered address is told what is missing, no alert
        (forged_id, "processed", "no password or turn token"),
        (wrong_id, "rejected", f"authentication failed for {mover.name}"),
        # issue 13: a registered sender with last round's token is a player, not an impostor
        (stale_id, "processed", "stale token of turn 1"),
    ]
    assert (world.state("auth").state_hash(), len(world.order_log("auth"))) == before
    assert world.rejected() == [wrong_id]

    # The mail without proof is answered to the registered address (never to the
    # Reply-To); the wrong password alerts it and the GM; the stale reply is
    # answered to its sender only; nothing to anyone else.
    after = counts(world, *players.values(), mallory)
    expected = [3 if p is mover else 0 for p in players.values()] + [0, 1]
    assert [a - b for a, b in zip(after, boxes_before, strict=True)] == expected
    alerts = mover.mailbox()[-3:]
    assert [kind(m) for m in alerts] == ["error_reply", "answer", "answer"]
    assert alerts[0]["To"].addresses[0].addr_spec == mover.address
    assert "neither a line PASSWORD your-password" in " ".join(plain_text(alerts[0]).split())
    alert = alerts[1]
    assert "Not applied: the password is wrong (token " in str(alert["Subject"])  # issue 29
    assert "GM alert" not in str(alert["Subject"])  # alerts to the GM only say that
    assert f"Message-ID: {wrong_id}" in plain_text(alert)
    assert alert["To"].addresses[0].addr_spec == mover.address
    stale_answer = " ".join(plain_text(alerts[2]).split())
    assert (  # issue 29: no list of problems, and the answer carries the current token
        "Turn 1 is over; your current turn is 4. Nothing in your mail was applied" in stale_answer
    )
    assert "Turn 1 is over: your turn is 4 (token " in str(alerts[2]["Subject"])

    # The alerts are rate limited per address (5 an hour): five more forgeries with
    # a wrong password, four alerts.
    for n in range(5):
        mallory.send(
            world.game_address,
            order_mail(
                mover.address,
                world.game_address,
                f"[auth] orders {n}",
                "PASSWORD wrong-wrong-wrong-01\n" + orders,
            ),
        )
    assert [m.status for m in world.poll().mails] == ["rejected"] * 5
    assert [len(world.servers.read_mailbox(a)) for a in (mover.address, mallory.address)] == [
        boxes_before[list(players.values()).index(mover)] + 7,
        0,
    ]

    # The same orders, answering the live notice, are played: only the proof was wrong.
    good_id = mover.send(
        world.game_address, mover.reply_mail(world.game_address, live_notice, orders)
    )
    assert [(m.message_id, m.status) for m in world.poll().mails] == [(good_id, "processed")]
    assert [e.message_id for e in world.order_log("auth")][-1] == good_id
    assert world.game("auth").turn == 5


BOUNCE = """\
From: Mail Delivery System <MAILER-DAEMON@players.test>
To: {game}
Subject: Undelivered Mail Returned to Sender
Message-ID: <bounce-1@players.test>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="b0und"

--b0und
Content-Type: text/plain

This is the mail system at host players.test. Your message could not be delivered.

--b0und
Content-Type: message/delivery-status

Reporting-MTA: dns; players.test
Final-Recipient: rfc822; {player}
Action: failed
Status: 5.2.2

--b0und
Content-Type: message/rfc822

From: pbem <{game}>
To: {player}
Subject: [guard] Your turn 1 (token 0123456789)

Your turn.

--b0und--
"""


def test_auto_replies_and_bounces_get_no_answer(mail_servers: MailServers, tmp_path: Path) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("guard", NAMES, overrides=AUTO, bots=True)
    mover = world.to_move("guard", players)
    notice = mover.latest("your_turn")
    rows_before = len(world.outbox())
    boxes_before = counts(world, *players.values())

    vacation = order_mail(  # an out-of-office answer to the notice, token and all
        mover.address,
        world.game_address,
        f"Automatic reply: {notice['Subject']}",
        "I am away until Monday and will read your mail then.",
        in_reply_to=str(notice["Message-ID"]),
        headers={"Auto-Submitted": "auto-replied"},
    )
    vacation_id = mover.send(world.game_address, vacation)
    bounce = BOUNCE.format(game=world.game_address, player=mover.address).encode()
    mover.send(world.game_address, bounce.replace(b"\n", b"\r\n"), envelope_from="")

    report = world.poll()
    assert [(m.message_id, m.status, m.outcome) for m in report.mails] == [
        (
            vacation_id,
            "rejected",
            "not answered (an automatic mail (Auto-Submitted: auto-replied))",
        ),
        ("<bounce-1@players.test>", "rejected", "not answered (a bounce (empty Return-Path))"),
    ]
    assert report.sent == 0
    assert len(world.outbox()) == rows_before
    assert counts(world, *players.values()) == boxes_before
    assert world.rejected() == [vacation_id, "<bounce-1@players.test>"]
    assert world.game("guard").turn == 1 and world.order_log("guard") == []

    # The guard does not depend on the empty envelope: a MAILER-DAEMON From alone is enough.
    relayed = bounce.replace(b"Message-ID: <bounce-1@", b"Message-ID: <bounce-2@")
    mover.send(world.game_address, relayed.replace(b"\n", b"\r\n"))
    assert [m.outcome for m in world.poll().mails] == [
        "not answered (a delivery or read report (multipart/report))"
    ]
    assert len(world.outbox()) == rows_before


def test_unknown_senders_get_no_answer_and_their_mail_is_kept(
    mail_servers: MailServers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pbem.poll")
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("known", NAMES, overrides=AUTO, bots=True)
    stranger = MailPlayer("stranger", mail_servers.new_user("stranger"), mail_servers)
    rows_before = len(world.outbox())
    mover = world.to_move("known", players)
    orders = mover.bot.write_turn(world.state("known"))  # type: ignore[union-attr]

    lost_id = stranger.send(
        world.game_address,
        order_mail(stranger.address, world.game_address, "my orders", "PLACE 3 Alaska"),
    )
    # Even with the live token of the notice (leaked or forwarded), a stranger moves nothing.
    token_id = stranger.send(
        world.game_address,
        stranger.reply_mail(world.game_address, mover.latest("your_turn"), orders),
    )
    report = world.poll()
    assert [(m.status, m.outcome) for m in report.mails] == [
        ("rejected", f"no game for {stranger.address}"),
        ("rejected", f"{stranger.address} does not play in known"),
    ]
    log_lines = [r.getMessage() for r in caplog.records if r.name == "pbem.poll"]
    assert log_lines == [
        f"{lost_id} game=- rejected: no game for {stranger.address}",
        f"{token_id} game=known rejected: {stranger.address} does not play in known",
    ]
    assert world.rejected() == [lost_id, token_id]
    assert [(m.message_id, m.status) for m in world.inbound()] == [
        (lost_id, "rejected"),
        (token_id, "rejected"),
    ]
    assert len(world.outbox()) == rows_before and report.sent == 0
    assert stranger.mailbox() == []
    assert world.game("known").turn == 1 and world.order_log("known") == []


def test_unknown_senders_are_answered_once_when_configured(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path, reply_to_unknown=True)
    stranger = MailPlayer("stranger", mail_servers.new_user("stranger"), mail_servers)
    lost_id = stranger.send(
        world.game_address,
        order_mail(stranger.address, world.game_address, "my orders", "PLACE 3 Alaska"),
    )
    report = world.poll()
    assert [m.status for m in report.mails] == ["rejected"] and report.sent == 1
    [answer] = stranger.mailbox()
    assert answer["In-Reply-To"] == lost_id
    assert answer["Auto-Submitted"] == "auto-generated"
    assert "Put the game's name in the subject" in " ".join(plain_text(answer).split())
    assert world.rejected() == [lost_id]
