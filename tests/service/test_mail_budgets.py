"""Answers within budgets, no forged text, no crash in the handler (issue 27, H3).

Each test plays mail through the real mail path (the Maildir transport,
`run_cycle`) unless it says it runs on the real servers (MailWorld: Dovecot
and SMTP on loopback), and reads what each address was sent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlmodel import select
from typer.testing import CliRunner

from pbem.cli import app
from pbem.mail.decode import decode_mail
from pbem.mail.maildir import spool_mailbox
from pbem.service.context import Context
from pbem.service.intake import mailcheck, mailflow
from pbem.service.play.games import create_game
from pbem.store import InboundMessage, JoinRequest, session_scope
from pbem.testing.mailservers import MailServers
from pbem.vocab import InboundStatus
from tests.longgame_helpers import GAME_ADDRESS, GM_ADDRESS, World, new_table
from tests.mailloop_helpers import MailPlayer, MailWorld, order_mail, wait_until

PLAYERS = ["ann", "bob", "cat"]


def quiet(tmp_path, name: str = "g"):  # noqa: ANN001, ANN201
    """A running game whose players write only what the test says; the one to move."""
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS)
    table.silence()
    table.read_all()
    mover = table[table.mover()]
    table.gm.clear()
    return world, table, mover


def raw_mail(sender: bytes, subject: bytes, body: bytes, message_id: bytes) -> bytes:
    """A mail as bytes, for the headers no mail program would write."""
    return (
        b"From: " + sender + b"\r\nTo: " + GAME_ADDRESS.encode() + b"\r\nSubject: " + subject
        + b"\r\nMessage-ID: <" + message_id + b"@odd.test>\r\n\r\n" + body
    )  # fmt: skip


def drop(world: World, raw: bytes) -> None:
    spool_mailbox(world.root, GAME_ADDRESS).add(raw)


def outcomes(world: World) -> list[tuple[str, str]]:
    with world.session(write=False) as session:
        rows = session.exec(select(InboundMessage)).all()
        return [(str(r.status), r.outcome) for r in rows]


def no_failures(report) -> None:  # noqa: ANN001
    assert (report.held, report.retrying) == (0, 0), report


# ------------------------------------------------------------ routing cost
def test_a_subject_of_many_tags_is_routed_with_one_query(tmp_path) -> None:  # noqa: ANN001
    world, _, _ = quiet(tmp_path)
    tags = "".join(f"[x{n}]" for n in range(5_000))  # 340,000: refused by the mail layer
    raw = raw_mail(b"stranger@else.test", tags.encode(), b"hello\r\n", b"tags")
    mail = decode_mail(raw, max_bytes=10**7)
    statements: list[str] = []
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(world.engine, "before_cursor_execute", listen)
    try:
        with world.session(write=False) as session:
            assert mailflow._find_game(session, mail) is None
    finally:
        event.remove(world.engine, "before_cursor_execute", listen)
    assert len([s for s in statements if s.startswith("SELECT")]) == 1, statements
    assert mailcheck.named_games(mail) == ["x0", "x1", "x2", "x3", "x4"]


def test_the_game_is_found_among_the_first_tags_and_a_game_line_wins(tmp_path) -> None:  # noqa: ANN001
    world, _, _ = quiet(tmp_path)
    with world.session(write=False) as session:
        early = decode_mail(raw_mail(b"a@b.test", b"[no][g] orders", b"x\r\n", b"e"))
        assert mailflow._find_game(session, early).name == "g"  # type: ignore[union-attr]
        late = decode_mail(raw_mail(b"a@b.test", b"[a][b][c][d][e][g]", b"x\r\n", b"l"))
        assert mailflow._find_game(session, late) is None  # the sixth tag is not read
        line = decode_mail(raw_mail(b"a@b.test", b"[nothing]", b"GAME g\r\n", b"g"))
        assert mailflow._find_game(session, line).name == "g"  # type: ignore[union-attr]


# ------------------------------------------------- no exception, any input
def test_absent_at_the_end_of_the_calendar_is_refused_with_its_line(tmp_path) -> None:  # noqa: ANN001
    world, _, mover = quiet(tmp_path)
    turn = world.game("g").turn
    orders = mover.bot.write_turn(world.state("g"))  # type: ignore[union-attr]
    mover.reply(mover.latest("your_turn"), f"ABSENT FROM 9999-12-30 TO 9999-12-31\n{orders}")
    no_failures(world.poll())
    answer = [m for m in mover.read() if m.kind == "error_reply"]
    assert len(answer) == 1, [m.kind for m in mover.received]
    assert "Line 1: ABSENT FROM 9999-12-30 TO 9999-12-31" in answer[0].flat
    assert "9999-12-31 is more than 366 days ahead" in answer[0].flat
    assert world.game("g").turn == turn  # the orders below it were not played either
    assert world.player("g", mover.name).absence_days_used == 0
    assert world.player("g", mover.name).absent_to is None


@pytest.mark.parametrize(
    "line",
    [
        "ABSENT FROM 2024-03-05 TO 9999-12-31",  # millions of days: refused before counting
        "ABSENT FROM 9000-01-01 TO 9000-01-02",
    ],
)
def test_far_absences_are_refused_and_change_nothing(tmp_path, line: str) -> None:  # noqa: ANN001
    world, _, mover = quiet(tmp_path)
    mover.reply(mover.latest("your_turn"), f"STATUS\n{line}\n")
    no_failures(world.poll())
    kinds = [m.kind for m in mover.read()]
    assert kinds == ["error_reply"], kinds  # not the STATUS either: nothing was done
    assert f"Line 2: {line}" in mover.received[-1].flat
    assert "days ahead; announce an absence within the coming year" in mover.received[-1].flat
    assert world.player("g", mover.name).absence_days_used == 0


def test_an_8bit_byte_in_the_from_address_is_refused_and_its_owner_told(tmp_path) -> None:  # noqa: ANN001
    world, _, mover = quiet(tmp_path)
    turn = world.game("g").turn
    drop(world, raw_mail(b"\xe9" + mover.address.encode(), b"[g] orders", b"STATUS\r\n", b"8b"))
    no_failures(world.poll())
    assert outcomes(world)[-1] == (
        InboundStatus.REJECTED,
        f"unreadable From address ?{mover.address}",
    )
    answer = mover.read()
    assert [m.kind for m in answer] == ["error_reply"]
    assert "The From line of a mail to g is not readable" in answer[0].flat
    assert "Nothing in the mail was applied." in answer[0].flat
    assert world.game("g").turn == turn


def test_an_8bit_byte_in_the_display_name_is_no_problem(tmp_path) -> None:  # noqa: ANN001
    world, _, mover = quiet(tmp_path)
    sender = b"\xe9 <" + mover.address.encode() + b">"
    body = b"PASSWORD " + mover.password.encode() + b"\r\nSTATUS\r\n"
    drop(world, raw_mail(sender, b"[g] status", body, b"dn"))
    no_failures(world.poll())
    assert [m.kind for m in mover.read()] == ["status"]


def gm_world(tmp_path):  # noqa: ANN001, ANN201
    world = World(tmp_path)
    table = new_table(world, "gx", PLAYERS)
    table.silence()
    table.clear()
    result = CliRunner().invoke(app, ["gm-password", "gx", "--config", str(world.config_path)])
    return world, result.stdout.split("GM password of gx: ")[1].split()[0]


def test_a_gm_extend_beyond_a_year_is_refused_not_raised(tmp_path) -> None:  # noqa: ANN001
    world, password = gm_world(tmp_path)
    before = world.game("gx").deadline
    world.send(GM_ADDRESS, f"PASSWORD {password}\nEXTEND 1e400\n", "[gx] commands")
    no_failures(world.poll())
    answer = [m for m in world.take(GM_ADDRESS) if "GM commands" in m.subject]
    assert len(answer) == 1
    assert 'line 2 "EXTEND 1e400": EXTEND takes at most 8784 hours (a year)' in answer[0].flat
    assert world.game("gx").deadline == before


def test_a_gm_mail_of_long_lines_is_answered_short(tmp_path) -> None:  # noqa: ANN001
    world, password = gm_world(tmp_path)
    lines = "\n".join(f"foo{n} bar" for n in range(5000))
    world.send(GM_ADDRESS, f"PASSWORD {password}\nKICK {'z' * 5000}\n{lines}\n", "[gx] cmd")
    no_failures(world.poll())
    [answer] = [m for m in world.take(GM_ADDRESS) if "GM commands" in m.subject]
    assert 'line 2 "KICK ' + "z" * 54 + '\u2026": game gx has no player ' in answer.flat
    assert 'line 22 "foo19 bar" and 4980 more.' in answer.flat
    assert len(answer.text) < 3000
    assert [p.status for p in world.players("gx")] == ["active"] * 3


# ------------------------------------------ a player's mistake, no impostor
@pytest.mark.parametrize(
    ("subject", "body"),
    [
        ("Fwd: [g] my orders", "---------- Forwarded message ---------\nPLACE 3 Alaska\n"),
        ("[g]", ""),
        ("[g] orders", "PLACE 3 Alaska\n"),
    ],
    ids=["forwarded", "empty", "fresh-without-password"],
)
def test_a_players_mail_without_proof_is_a_mistake_not_an_alert(
    tmp_path,  # noqa: ANN001
    subject: str,
    body: str,
) -> None:
    world, table, mover = quiet(tmp_path)
    world.send(mover.address, body, subject)
    no_failures(world.poll())
    answer = table.read_all()[mover.name]
    assert [m.kind for m in answer] == ["error_reply"], answer
    assert "Nothing was applied: your mail carries neither a line PASSWORD your-password" in (
        answer[0].flat
    )
    # issue 29: the answer carries the seat's token, so replying to it is enough
    assert "Reply to this mail with your orders: its subject carries your token." in (
        answer[0].flat
    )
    token = mover.latest("your_turn").subject.rsplit("(token ", 1)[1]
    assert answer[0].subject == f"[g] Not applied, 1 problem: turn 1 (token {token}"
    assert "someone may be trying" not in answer[0].flat
    assert table.gm == []  # no GM alert
    assert outcomes(world)[-1] == (InboundStatus.PROCESSED, "no password or turn token")


@pytest.mark.parametrize(
    "proof",
    [("PASSWORD wrong-wrong-wrong-11\nPLACE 3 Alaska\n", "[g] orders"),
     ("PLACE 3 Alaska\n", "Re: [g] Your turn 1 (token 0123456789)")],
    ids=["wrong-password", "token-of-no-turn"],
)  # fmt: skip
def test_a_wrong_password_or_foreign_token_still_alerts(tmp_path, proof) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    body, subject = proof
    world.send(mover.address, body, subject)
    no_failures(world.poll())
    new = table.read_all()
    token = mover.latest("your_turn").subject.rsplit("(token ", 1)[1]
    # issue 29: the answer names the cause, and carries the seat's current token
    title = (
        "Not applied: the password is wrong"
        if "PASSWORD" in body
        else ("A mail in your name was refused")
    )
    assert [m.subject for m in new[mover.name]] == [f"[g] {title} (token {token}"]
    gm = [m.subject for m in table.gm]
    assert gm == [f"[g] GM alert: Authentication failed for {mover.name}"]


# ------------------------------------------------------------- quotes capped
def test_a_forged_long_subject_is_quoted_short_in_the_alert(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    forged = "[g] " + "A" * 3000
    world.send(mover.address, "PASSWORD wrong-wrong-wrong-11\n", forged)
    no_failures(world.poll())
    alert = [m for m in mover.read() if m.kind == "answer"]
    assert len(alert) == 1
    quoted = alert[0].flat.split("Subject: ", 1)[1].split(" Message-ID:", 1)[0]
    assert quoted.replace(" ", "") == "[g]" + "A" * 195 + "\u2026"
    assert "A" * 200 not in alert[0].text


def test_control_characters_of_a_subject_never_reach_a_header(tmp_path) -> None:  # noqa: ANN001
    world, _, mover = quiet(tmp_path)
    for n, tail in enumerate((b"", b"x" * 500)):
        subject = b"[g] a\x00b\x1bc\x7fd \x0bv" + tail
        drop(world, raw_mail(mover.address.encode(), subject, b"PLACE 3 Nowhere\r\n", b"c%d" % n))
        no_failures(world.poll())
    box = spool_mailbox(world.root, mover.address)
    raws = [box.get_bytes(key) for key in sorted(box.keys())]
    raws = [r for r in raws if b"X-Pbem-Kind: error_reply" in r]
    assert len(raws) == 2
    for raw in raws:
        head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
        assert not any(ch in head for ch in (b"\x00", b"\x1b", b"\x7f", b"\x0b")), head
    replies = [m for m in mover.read() if m.kind == "error_reply"]
    token = mover.latest("your_turn").subject.rsplit("(token ", 1)[1]
    # issue 29: a reply's subject is the game's and the turn's, never the sender's
    assert [m.subject for m in replies] == [
        f"[g] Not applied, 1 problem: turn 1 (token {token}"
    ] * 2
    quoted = replies[0].flat.split('Nothing in your mail ("', 1)[1].split('")', 1)[0]
    assert quoted == "[g] a b c d v"  # the blanks as the reader shows them
    long = replies[1]
    quoted = long.flat.split('Nothing in your mail ("', 1)[1].split('")', 1)[0]
    assert quoted.replace(" ", "") == "[g]abcdv" + "x" * 186 + "\u2026"


# ------------------------------------------------------------------ budgets
def budgets(world: World, *, reply: int = 20, strangers: int = 100, alerts: int = 5) -> None:
    """The world's [mail] budgets as a test wants them (the file says 1000)."""
    mail = replace(
        world.config.mail,
        reply_budget_per_hour=reply,
        stranger_budget_per_hour=strangers,
        alert_budget_per_hour=alerts,
    )
    world.config = replace(world.config, mail=mail)
    world.ctx = Context(world.config, world.clock, world.config.mail.own_addresses)


def token_of(mail) -> str:  # noqa: ANN001
    return mail.flat.split("CONFIRM ", 1)[1].split()[0]


def join_requests(world: World) -> int:
    with world.session(write=False) as session:
        return len(session.exec(select(JoinRequest)).all())


def test_thirty_joins_and_thirty_hellos_from_one_address_get_three_answers(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    budgets(world)
    world.open_game("open", 3)
    for n in range(30):
        world.send("forger@else.test", "JOIN open AS mallory\n", f"join {n}")
        world.send("forger@else.test", "hello\n", f"[open] hello {n}")
    no_failures(world.poll())
    answers = world.take("forger@else.test")
    assert [m.subject for m in answers] == ["[open] Confirm joining as mallory"] * 3
    assert len({token_of(m) for m in answers}) == 1  # the one pending request, again
    assert join_requests(world) == 1
    said = [outcome for _, outcome in outcomes(world)]
    assert said.count("join request from forger@else.test as mallory") == 3
    assert said.count("JOIN from forger@else.test (not answered: a reply budget is spent)") == 27
    assert said.count(
        "no JOIN in a mail to an open game (not answered: reply_to_unknown is off)"
    ) == 30  # fmt: skip


def test_joins_stop_at_the_address_budget_until_the_next_hour(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    budgets(world, reply=2)
    world.open_game("open", 3)
    for n in range(3):
        world.send("forger@else.test", f"JOIN open AS m{n}\n", f"join {n}")
    no_failures(world.poll())
    assert [m.subject for m in world.take("forger@else.test")] == [
        "[open] Confirm joining as m0",
        "[open] Confirm joining as m1",
    ]
    assert join_requests(world) == 1  # one pending request per address, renamed
    world.advance(hours=1)  # a new hour: a new budget
    world.send("forger@else.test", "JOIN open AS again\n", "join again")
    no_failures(world.poll())
    assert [m.subject for m in world.take("forger@else.test")] == [
        "[open] Confirm joining as again"
    ]


def test_a_join_under_another_name_gets_a_new_code(tmp_path) -> None:  # noqa: ANN001
    """The code mailed for one name never joins under a later JOIN's name
    (found by a newcomer's trial: both codes were the same, and CONFIRM of
    "eve1"'s mail joined as "eve3")."""
    world = World(tmp_path)
    budgets(world)
    world.open_game("open", 3)
    world.send("eve@else.test", "JOIN open AS eve1\n", "join 1")
    no_failures(world.poll())
    (first,) = world.take("eve@else.test")
    world.send("eve@else.test", "JOIN open AS eve2\n", "join 2")
    no_failures(world.poll())
    (second,) = world.take("eve@else.test")
    assert second.subject == "[open] Confirm joining as eve2"
    assert token_of(first) != token_of(second)
    world.send("eve@else.test", f"CONFIRM {token_of(first)}\n", "[open] confirm old")
    no_failures(world.poll())
    assert [m.subject for m in world.take("eve@else.test")] == ["[open] Confirmation refused"]
    world.send("eve@else.test", f"CONFIRM {token_of(second)}\n", "[open] confirm new")
    no_failures(world.poll())
    assert "eve2" in world.take("eve@else.test")[0].flat
    assert join_requests(world) == 1


def test_many_forged_addresses_stop_at_the_budget_of_all_strangers(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    budgets(world, strangers=25)
    world.open_game("open", 3)
    senders = [f"f{n}@else.test" for n in range(40)]
    for sender in senders:
        world.send(sender, "JOIN open AS x\n", "join")
        world.send(sender, "JOIN nowhere AS x\n", "[nowhere] join")  # no such game
    no_failures(world.poll())
    answered = [s for s in senders if world.take(s)]
    assert len(answered) == 25  # every stranger's answer counted, none past the cap
    assert join_requests(world) == 25  # a JOIN not answered leaves no request behind


def test_reply_to_unknown_still_answers_a_hello_to_an_open_game(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    budgets(world)
    world.config = replace(
        world.config, mail=replace(world.config.mail, reply_to_unknown=True)
    )  # fmt: skip
    world.ctx = Context(world.config, world.clock, world.config.mail.own_addresses)
    world.open_game("open", 3)
    world.send("curious@else.test", "hello\n", "[open] what is this")
    no_failures(world.poll())
    assert [m.subject for m in world.take("curious@else.test")] == ["[open] How to join"]


def test_gm_alerts_past_the_budget_are_folded_into_one_digest(tmp_path) -> None:  # noqa: ANN001
    world, table, _ = quiet(tmp_path)
    budgets(world, alerts=5)
    for name in PLAYERS:  # 3 alerts each: within each player's own alert budget
        for n in range(3):
            world.send(f"{name}@players.test", "PASSWORD wrong-wrong-wrong-11\n", f"[g] try {n}")
    no_failures(world.poll())
    table.read_all()
    alerts = [m for m in table.gm if "Authentication failed" in m.subject]
    assert len(alerts) == 5
    assert not [m for m in table.gm if "Digest" in m.subject]
    world.advance(minutes=30)
    world.poll()  # the same hour: the digest waits
    table.read_all()
    assert not [m for m in table.gm if "Digest" in m.subject]
    world.advance(hours=1)
    world.poll()
    table.read_all()
    digest = [m for m in table.gm if "Digest" in m.subject]
    assert [m.subject for m in digest] == ["[pbem] GM alert: Digest of 4 alerts"]
    listed = [line for line in digest[0].text.splitlines() if "Authentication failed" in line]
    assert len(listed) == 4
    world.advance(hours=1)
    world.poll()
    table.read_all()
    assert len([m for m in table.gm if "Digest" in m.subject]) == 1  # sent once


# ------------------------------------------------------- on the real servers
def test_an_open_game_answers_a_flood_from_one_address_thrice_on_real_servers(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    """The issue's case, through Dovecot and SMTP on loopback with the
    default reply budget: 30 JOIN and 30 "hello" mails in one poll get the
    three JOIN answers of an hour, not 60."""
    world = MailWorld.create(mail_servers, tmp_path, reply_budget=20)
    with session_scope(world.engine) as session:
        create_game(
            session, "open", [], gm_address=world.gm_address, open_seats=3, settings={}
        )  # fmt: skip
    forger = MailPlayer("forger", mail_servers.new_user("forger"), mail_servers)
    for n in range(30):
        for subject, body in ((f"join {n}", "JOIN open AS mallory"), (f"[open] hi {n}", "hello")):
            forger.send(
                world.game_address, order_mail(forger.address, world.game_address, subject, body)
            )
    wait_until(lambda: len(world.folder()) == 60, what="the 60 mails in the game's inbox")
    report = world.poll()
    assert (report.held, report.retrying, len(report.mails)) == (0, 0, 60)
    answers = wait_until(lambda: len(forger.mailbox()) >= 3 and forger.mailbox(), what="answers")
    assert [str(m["Subject"]) for m in answers] == ["[open] Confirm joining as mallory"] * 3
    assert world.servers.read_mailbox(world.gm_address) == []  # nobody alerted the GM


def test_an_address_in_utf8_is_readable_and_an_8bit_byte_is_not() -> None:
    assert mailcheck.readable_address("josé@example.test")
    assert not mailcheck.readable_address("\udce9ann@players.test")
    assert not mailcheck.readable_address("ann\x00@players.test")
    assert mailcheck.kept_address("\udce9ann@players.test") == "ann@players.test"
    assert mailcheck.shown_address("\udce9ann@players.test") == "\\xe9ann@players.test"


def test_unknown_sender_answers_count_against_the_budget_of_all_strangers(tmp_path) -> None:  # noqa: ANN001
    world, table, _ = quiet(tmp_path)
    budgets(world, strangers=10)
    world.config = replace(
        world.config, mail=replace(world.config.mail, reply_to_unknown=True)
    )  # fmt: skip
    world.ctx = Context(world.config, world.clock, world.config.mail.own_addresses)
    senders = [f"u{n}@else.test" for n in range(15)]
    for sender in senders:
        world.send(sender, "PLACE 3 Alaska\n", "[g] orders")  # a game they do not play in
    no_failures(world.poll())
    assert sum(1 for s in senders if world.take(s)) == 10
    table.read_all()
    player = table[PLAYERS[0]]
    world.send(player.address, "STATUS\n", "which game?")  # a player: no stranger
    world.send(player.address, "hello\n", "[nowhere] hi")
    no_failures(world.poll())
    assert len(player.read()) == 2


def test_mails_forged_in_a_players_name_cannot_silence_the_players_receipts(
    tmp_path,  # noqa: ANN001
) -> None:
    """Anyone can write a player's From line: answers to mails without proof
    spend one budget, answers to the player's proven mails another."""
    world, table, mover = quiet(tmp_path)
    budgets(world, reply=3)
    for n in range(5):  # forged: no password, no token
        world.send(mover.address, "PLACE 3 Alaska\n", f"[g] orders {n}")
    no_failures(world.poll())
    forged = table.read_all()[mover.name]
    assert len(forged) == 3  # the budget of answers to unproven mails, spent
    world.send(mover.address, f"PASSWORD {mover.password}\n", "[g] orders")
    no_failures(world.poll())
    real = table.read_all()[mover.name]
    assert [m.kind for m in real] == ["error_reply"]
    assert "There are no orders in your mail" in real[0].flat
