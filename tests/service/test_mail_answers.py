"""Who may send what, tokens, answers that name the real cause, subjects (issue 29,
points 2, 3, 5, 7 and 10).

Each test sends a real MIME mail into a game's inbox (the local Maildir
transport, `run_cycle`) and reads the answers as the player's mail program
would: the parsed headers, the plain text, and where it matters the raw bytes.
"""

from __future__ import annotations

from dataclasses import replace

from pbem.mail.maildir import spool_mailbox
from pbem.report.subjects import TOKEN_RE
from pbem.service.context import Context
from tests.longgame_helpers import GM_ADDRESS, Mail, Seat, Table, World, new_table

PLAYERS = ["ann", "bob", "cat"]
IMPOSTOR = "someone may be trying to play in your name"


def quiet(tmp_path, name: str = "g", **kwargs):  # noqa: ANN001, ANN003, ANN201
    """A running game whose players write only what the test says; the one to move."""
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS, **kwargs)
    table.silence()
    table.read_all()
    table.gm.clear()
    return world, table, table[table.mover()]


def token_in(mail: Mail) -> str:
    found = TOKEN_RE.search(mail.subject)
    assert found is not None, mail.subject
    return found.group(1)


def new_mail(table: Table, seat: Seat) -> list[Mail]:
    """What the seat got since it last read; the GM's mail gathered too."""
    return table.read_all()[seat.name]


def no_auth_alert(table: Table) -> bool:
    return not [m for m in table.gm if "Authentication failed" in m.subject]


def play_turn(world: World, table: Table) -> Seat:
    """The player to move replies to their "Your turn" mail with the bot's orders."""
    table.read_all()
    mover = table[table.mover()]
    orders = mover.bot.write_turn(world.state(table.game))  # type: ignore[union-attr]
    mover.reply(mover.latest("your_turn"), orders)
    world.poll()
    return mover


# ------------------------------------------------------------------- HELP
def test_a_players_plain_help_is_answered_without_password_or_alert(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    other = table[next(n for n in PLAYERS if n != mover.name)]
    world.send(other.address, "HELP\n", "help")  # no game named, no token, no password
    world.poll()
    got = new_mail(table, other)
    assert [m.kind for m in got] == ["help"]
    token = token_in(got[0])
    assert got[0].subject == f"[g] Help: the order language (token {token})"
    assert got[0].flat.startswith("For example, on your own territories in g as the board ")
    assert (
        " Your games here: [g]. A mail to one names it in its subject, like [g], or in a "
        "line GAME g. THE ORDER LANGUAGE A mail is applied completely or not at all"
    ) in got[0].flat
    assert IMPOSTOR not in got[0].flat
    assert table.gm == []  # no "Authentication failed" alert
    assert world.player("g", other.name).wrong_passwords == 0


def test_a_players_help_naming_no_game_lists_their_games(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    new_table(world, "east", PLAYERS)
    table = new_table(world, "west", PLAYERS)
    table.read_all()
    world.take("ann@players.test")
    world.send("ann@players.test", "help\n\n> an old mail, quoted\n-- \nAnn\n", "question")
    world.poll()
    got = world.take("ann@players.test")
    assert [m.kind for m in got] == ["help"]
    assert got[0].flat.startswith("For example, on your own territories in east as the board ")
    assert (
        " Your games here: [east], [west]. A mail to one names it in its subject, like "
        "[east], or in a line GAME east. THE ORDER LANGUAGE"
    ) in got[0].flat
    assert world.take(GM_ADDRESS) == []


def test_a_strangers_help_says_how_to_join_an_open_game(tmp_path) -> None:  # noqa: ANN001
    world, table, _ = quiet(tmp_path)
    world.open_game("open1", 3)
    world.send("dan@else.test", "HELP\n", "help")
    world.send("eve@else.test", "help\n", "[g] help")  # to a running game she is not in
    world.poll()
    for address in ("dan@else.test", "eve@else.test"):
        got = world.take(address)
        assert [(m.kind, m.subject) for m in got] == [("help", "[pbem] How to join a game here")]
        assert got[0].flat.startswith(
            "This address runs games of Risk by mail, and your address plays in none of "
            "them. Games open for players now: [open1], 3 of 3 seats free. To join an "
            "open game, send a mail with the line JOIN open1 AS yourname and answer the "
            "mail that asks you to confirm. Once the game starts, a mail with the word "
            "HELP brings the order language. --"
        ), got[0].text
        assert "    JOIN open1 AS yourname\n" in got[0].text
    table.read_all()
    assert table.gm == []


def test_a_strangers_help_is_within_the_budgets_of_strangers(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    mail = replace(world.config.mail, reply_budget_per_hour=3, stranger_budget_per_hour=5)
    world.config = replace(world.config, mail=mail)
    world.ctx = Context(world.config, world.clock, world.config.mail.own_addresses)
    for n in range(10):
        world.send("forger@else.test", "HELP\n", f"help {n}")
    for n in range(10):
        world.send(f"victim{n}@else.test", "HELP\n", "help")
    world.poll()
    assert len(world.take("forger@else.test")) == 3  # the address's budget
    answered = sum(len(world.take(f"victim{n}@else.test")) for n in range(10))
    assert answered == 2  # the budget of all strangers (5) holds the rest


# ------------------------------------------------- replies to pbem's answers
def test_a_reply_to_a_check_answer_and_to_a_problem_reply_is_played(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    state = world.state("g")
    orders = mover.bot.write_turn(state)  # type: ignore[union-attr]
    mover.reply(mover.latest("your_turn"), "CHECK\n" + orders)
    world.poll()
    checked = new_mail(table, mover)
    assert [m.kind for m in checked] == ["receipt"]
    assert "Send them again without CHECK to play them." in checked[0].flat
    token = token_in(mover.latest("your_turn"))
    assert checked[0].subject == f"[g] CHECK: your orders for turn 1 are valid (token {token})"
    mover.reply(checked[0], orders)  # "send them again without CHECK": a reply does
    world.poll()
    assert [m.kind for m in new_mail(table, mover)] == ["turn_report", "receipt"]
    assert world.game("g").turn == 2
    # the next player: a mistake, then a reply to the problem reply
    second = table[table.mover()]
    table.read_all()
    second.reply(second.latest("your_turn"), "PLACE 99 Kamchatca\n")
    world.poll()
    refused = new_mail(table, second)
    assert [m.kind for m in refused] == ["error_reply"]
    second.reply(refused[0], second.bot.write_turn(world.state("g")))  # type: ignore[union-attr]
    world.poll()
    assert [m.kind for m in new_mail(table, second)] == ["turn_report", "receipt"]
    assert world.game("g").turn == 3
    assert no_auth_alert(table)


def test_a_reply_to_a_receipt_replaces_the_orders_held(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path, settings={"adjudicate": "deadline"})
    state = world.state("g")
    orders = mover.bot.write_turn(state)  # type: ignore[union-attr]
    mover.reply(mover.latest("your_turn"), orders)
    world.poll()
    receipt = new_mail(table, mover)
    assert [m.kind for m in receipt] == ["receipt"]
    assert token_in(receipt[0]) == token_in(mover.latest("your_turn"))
    mover.reply(receipt[0], orders + "# my second thoughts\n")  # a new mail
    world.poll()
    again = new_mail(table, mover)
    assert [m.kind for m in again] == ["receipt"]
    assert "These orders replace the ones you sent earlier" in again[0].flat
    assert no_auth_alert(table)


def test_a_stale_token_is_told_the_turn_is_over_and_its_answer_works(tmp_path) -> None:  # noqa: ANN001
    world, table, first = quiet(tmp_path)
    old = first.latest("your_turn")
    for _ in range(3):  # a whole round: the first player moves again, turn 4
        play_turn(world, table)
    assert world.game("g").turn == 4 and table.mover() == first.name
    table.read_all()
    orders = first.bot.write_turn(world.state("g"))  # type: ignore[union-attr]
    first.reply(old, orders)
    world.poll()
    answer = new_mail(table, first)
    assert [m.kind for m in answer] == ["answer"]  # a player's answer, no GM alert
    current = token_in(first.latest("your_turn"))
    assert answer[0].subject == f"[g] Turn 1 is over: your turn is 4 (token {current})"
    assert answer[0].flat.startswith(
        "Turn 1 is over: your turn is 4 ============================== Turn 1 is over; "
        "your current turn is 4. Nothing in your mail was applied: it answers a mail of "
        "the game from then. Reply to this mail with your orders for turn 4 (its subject "
        "carries your current token). --"
    ), answer[0].flat
    assert "fix them all" not in answer[0].flat and "problem" not in answer[0].subject
    assert world.game("g").turn == 4
    first.reply(answer[0], orders)
    world.poll()
    assert [m.kind for m in new_mail(table, first)] == ["turn_report", "receipt"]
    assert world.game("g").turn == 5
    assert no_auth_alert(table)


# ------------------------------------------------------ the real cause named
def test_a_wrong_password_is_named_with_how_to_get_a_new_one(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    world.send(mover.address, "PASSWORD 0000-0000-0000\nPLACE 3 Alaska\n", "[g] orders")
    world.poll()
    got = new_mail(table, mover)
    assert [m.kind for m in got] == ["answer"]
    token = token_in(mover.latest("your_turn"))
    assert got[0].subject == f"[g] Not applied: the password is wrong (token {token})"
    assert (
        "If you sent it: the password is wrong. Your password came with the first mail of "
        "g (case, blanks and hyphens do not matter). A reply to this mail needs no "
        "password: its subject carries your token. If the password is lost, ask the GM "
        f"({GM_ADDRESS}) for a new one: the GM runs `pbem new-password g {mover.name}`, "
        "and it comes to this address." in got[0].flat
    )
    assert "without your password" not in got[0].flat and "your turn" not in got[0].flat
    # a wrong password is still a signal: counted, and the GM alerted as before
    assert world.player("g", mover.name).wrong_passwords == 1
    gm = [m.subject for m in table.gm]
    assert gm == [f"[g] GM alert: Authentication failed for {mover.name}"]


def test_a_reply_with_the_token_and_a_wrong_password_line_is_played(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    orders = mover.bot.write_turn(world.state("g"))  # type: ignore[union-attr]
    mover.reply(mover.latest("your_turn"), "PASSWORD 0000-0000-0000\n" + orders)
    world.poll()
    got = new_mail(table, mover)
    assert [m.kind for m in got] == ["turn_report", "receipt"]
    assert (
        "  # The PASSWORD line of your mail is wrong; the token of the mail you replied\n"
        "    to was enough (a reply needs no password). Your password came with the\n"
        "    first mail of g; if it is lost, ask the GM for a new one.\n"
        "  # turn 1 played\n" in got[1].text
    )
    assert world.game("g").turn == 2
    assert no_auth_alert(table)


def test_in_the_setup_no_answer_speaks_of_a_your_turn_mail(tmp_path) -> None:  # noqa: ANN001
    world, table, _ = quiet(tmp_path, "s", overrides={"placement": "blind"})
    ann = table["ann"]
    assert world.state("s").phase == "place"
    world.send(ann.address, "PASSWORD 0000-0000-0000\nPLACE 1 Alaska\n", "[s] setup")
    world.send(ann.address, "PLACE 1 Alaska\n", "[s] setup")  # no password at all
    world.poll()
    wrong, missing = new_mail(table, ann)
    assert "If you sent it: the password is wrong." in wrong.flat
    assert (
        "Reply to this mail with your orders: its subject carries your token. Or add the "
        "line PASSWORD your-password (it came with the first mail of s)." in missing.flat
    )
    for mail in (wrong, missing):
        assert "your turn" not in mail.flat.lower(), mail.flat
    token = token_in(missing)
    assert missing.subject == f"[s] Not applied, 1 problem: setup orders (token {token})"
    # and that answer's token works: setup orders by a reply, no password
    state = world.state("s")
    ann.reply(missing, ann.bot.write_setup(state, ann.seat_no(state)))  # type: ignore[union-attr]
    world.poll()
    assert [m.kind for m in new_mail(table, ann)] == ["receipt"]


# ------------------------------------------------------------------ subjects
def test_subjects_do_not_grow_with_retries(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    token = token_in(mover.latest("your_turn"))
    answered = mover.latest("your_turn")
    subjects = []
    for _ in range(3):
        mover.reply(answered, "PLACE 99 Kamchatca\n")
        world.poll()
        (answered,) = new_mail(table, mover)
        subjects.append(str(answered.msg["Subject"]))
    assert subjects == [f"[g] Not applied, 1 problem: turn 1 (token {token})"] * 3


def test_a_long_subject_is_not_folded_right_after_its_name(tmp_path) -> None:  # noqa: ANN001
    name = "world-championship-final-2024"
    world, table, mover = quiet(tmp_path, name)
    mover.reply(mover.latest("your_turn"), "PLACE 99 Kamchatca\n")
    world.poll()
    box = spool_mailbox(world.root, mover.address)
    raws = [box.get_bytes(key) for key in box.keys()]
    (raw,) = [r for r in raws if b"X-Pbem-Kind: error_reply" in r]
    token = token_in(mover.latest("your_turn"))
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    subject = head.split(b"\nSubject:", 1)[1].split(b"\nDate:", 1)[0]
    assert subject == f" [{name}] Not applied, 1 problem: turn 1\n (token {token})".encode()
