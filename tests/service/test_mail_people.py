"""Mail people do not have to fight (issue 13, the points built so far).

Each test plays a player's mail through the real mail path (the local
Maildir transport, `run_cycle`) and reads the reply the player gets. The
stale-token and "GM alert only to the GM" points are in
tests/service/test_mailloop_guard.py and tests/service/test_longgames_*.py.
"""

from __future__ import annotations

import re
from datetime import timedelta

from pbem.report.subjects import TOKEN_RE, fit
from tests.longgame_helpers import World, new_table

PLAYERS = ["ann", "bob", "cat"]


def quiet_game(tmp_path, name: str):  # noqa: ANN001, ANN201
    """A game whose players write only what the test says; the one to move."""
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS)
    table.silence()
    table.read_all()
    return world, table, table[table.mover()]


def test_greetings_and_sign_offs_are_ignored_and_said_so(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet_game(tmp_path, "hi")
    state = world.state("hi")
    orders = mover.bot.write_turn(state)  # type: ignore[union-attr]
    mover.reply(mover.latest("your_turn"), f"Hi GM,\n\n{orders}\n\nThanks,\nAnn\n")
    world.poll()
    receipt = [m for m in mover.read() if m.kind == "receipt"]
    assert len(receipt) == 1, [m.kind for m in mover.received]
    assert 'Not read as orders (a greeting or a signature): line 1 "Hi GM,", line' in (
        receipt[0].flat
    )
    assert world.game("hi").turn == state.turn + 1  # the orders were played


def test_a_mail_of_nothing_but_prose_gets_a_plain_answer(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet_game(tmp_path, "prose")
    mover.reply(mover.latest("your_turn"), "Hello GM, I will send my orders tonight.\n")
    world.poll()
    answer = [m for m in mover.read() if m.kind == "error_reply"]
    assert len(answer) == 1
    assert "There are no orders in your mail: nothing was applied." in answer[0].flat


def test_press_is_relayed_only_from_an_applied_mail_and_once(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet_game(tmp_path, "press")
    other = next(n for n in PLAYERS if n != mover.name)
    state = world.state("press")
    orders = mover.bot.write_turn(state)  # type: ignore[union-attr]
    press = f"PRESS TO {other}\nShall we share Asia?\nENDPRESS\n"
    mover.reply(mover.latest("your_turn"), "PLACE 99 Kamchatca\n" + press)  # refused
    world.poll()
    refused = [m for m in mover.read() if m.kind == "error_reply"]
    assert len(refused) == 1
    assert table[other].read() == [] or not [m for m in table[other].received if m.kind == "press"]
    mover.reply(mover.latest("your_turn"), orders + press)  # corrected: applied
    world.poll()
    relayed = [m for m in table[other].read() if m.kind == "press"]
    assert len(relayed) == 1 and "Shall we share Asia?" in relayed[0].flat


def test_a_player_of_two_games_who_names_none_is_told_which(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    new_table(world, "east", PLAYERS)
    table = new_table(world, "west", PLAYERS)
    table.read_all()
    world.send("ann@players.test", "STATUS\n", "a question")  # no [game], no GAME line
    world.poll()
    answer = [m for m in table["ann"].read() if m.kind == "error_reply"]
    assert len(answer) == 1
    assert (
        "Your mail does not say which game it is for, and you play in 2: [east], [west]. "
        "Put the game's name in the subject, like [east], or a line GAME east above your "
        "orders, and send it again." in answer[0].flat
    )


def test_a_long_subject_keeps_its_token_whole() -> None:
    """Issue 13: a subject with a token is folded, never cut (this test once
    accepted a subject cut short around its token), and a shorter candidate
    without the token is never taken instead."""
    subject = (
        "[world-1] Not applied, 3 problems: Re: [world-1] Your turn 14 (token 7f3a9c0d11) "
        "and the rest of a very long subject line"
    )
    assert fit([subject, "[world-1] Your mail was not applied: 3 problems"]) == subject
    found = TOKEN_RE.search(fit([subject]))
    assert found is not None and found.group(1) == "7f3a9c0d11"
    plain = "[world-1] " + "word " * 30
    assert fit([plain]) == plain[:75].rstrip() + "..."  # without a token: still cut


def test_a_reply_to_a_long_error_reply_is_the_players_own(tmp_path) -> None:  # noqa: ANN001
    """The issue's trial: a game with a long name, an error reply whose subject
    no longer fits one line, and the player's answer to it is played (no
    impostor alert): the token went out whole in a folded header."""
    name = "world-championship-final-2024"
    world, table, mover = quiet_game(tmp_path, name)
    state = world.state(name)
    mover.reply(mover.latest("your_turn"), "PLACE 99 Kamchatca\n")
    world.poll()
    refused = [m for m in mover.read() if m.kind == "error_reply"]
    assert len(refused) == 1
    token = TOKEN_RE.search(mover.latest("your_turn").subject)
    assert token is not None
    assert refused[0].subject == (
        f"[{name}] Not applied, 1 problem: turn {state.turn} ({token.group(0)[1:-1]})"
    )
    orders = mover.bot.write_turn(state)  # type: ignore[union-attr]
    mover.reply(refused[0], orders)
    world.poll()
    assert [m.kind for m in mover.read()] == ["turn_report", "receipt"]
    assert world.game(name).turn == state.turn + 1
    table.read_all()
    assert not [m for m in table.gm if "Authentication failed" in m.subject]


def test_join_takes_its_line_and_leaves_the_signature(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    world.open_game("open1", 3)
    world.send("dan@players.test", "JOIN open1 AS dan\n\nDan Smith\nsent from my phone\n")
    world.poll()
    asked = [m for m in world.take("dan@players.test") if "Confirm joining" in m.subject]
    assert len(asked) == 1


def test_every_problem_of_a_mail_comes_in_one_reply(tmp_path) -> None:  # noqa: ANN001
    """Grammar and validation problems together: no second round trip."""
    world, table, mover = quiet_game(tmp_path, "pass")
    state = world.state("pass")
    seat = state.current
    theirs = next(t for t, owner in enumerate(state.owner) if owner != seat)
    name = state.board.territories[theirs].name
    body = f"PLACE {state.reinforcements} {name}\nATACK Alaska -> Kamchatka\n"
    mover.reply(mover.latest("your_turn"), body)
    world.poll()
    answer = [m for m in mover.read() if m.kind == "error_reply"]
    assert len(answer) == 1
    text = answer[0].flat
    assert "Your mail was not applied: 2 problems" in text
    assert f"Line 1: PLACE {state.reinforcements} {name} {name} is not yours" in text
    assert "ATACK: no such order; did you mean ATTACK?" in text  # line 2: grammar
    assert world.game("pass").turn == state.turn  # nothing applied


def test_set_timezone_shows_deadlines_in_the_players_own_zone(tmp_path) -> None:  # noqa: ANN001
    """Issue 13: SET TIMEZONE by mail; deadlines in the game's zone and UTC, and
    in the player's own zone."""
    world = World(tmp_path)
    table = new_table(world, "tz", PLAYERS, settings={"timezone": "Europe/Paris"})
    table.read_all()
    table["ann"].write("SET TIMEZONE America/New_York\n")
    world.poll()
    table.read_all()
    assert [m for m in table.mails("ann") if "also shown in America/New_York" in m.flat]
    table.clear()
    table.run(lambda: world.state("tz").players[world.state("tz").current].name == "ann")
    table.read_all()
    notice = table["ann"].latest("your_turn").flat
    assert "CET" in notice and "UTC)" in notice and "; for you " in notice
    assert "EST" in notice.split("; for you ")[1]
    other = next(n for n in PLAYERS if n != "ann")
    assert all("; for you " not in m.flat for m in table.mails(other))


def test_join_and_confirm_take_the_first_matching_line_only(tmp_path) -> None:  # noqa: ANN001
    """Issue 13: a signature (even one that reads like an order) or the same
    line twice spoils neither JOIN nor CONFIRM, and nobody joins twice."""
    world = World(tmp_path)
    world.open_game("open2", 3)
    fay = "fay@players.test"
    world.send(fay, "Hi!\nJOIN open2 AS fay\nJOIN open2 AS fay2\n--\nFay\n12 Place des Vosges\n")
    world.poll()
    asked = world.take(fay)
    assert [m.subject for m in asked] == ["[open2] Confirm joining as fay"]
    assert asked[0].text.startswith("Confirm joining as fay\n")  # no "GM alert:" to a player
    token = re.search(r"CONFIRM (\w+)", asked[0].text)
    assert token is not None
    world.send(
        fay,
        f"CONFIRM {token.group(1)}\nCONFIRM {token.group(1)}\n\n"
        "Thanks,\nFay\nAttack is the best defence\n",
        f"Re: {asked[0].subject}",
    )
    world.poll()
    answers = world.take(fay)
    assert [m.subject for m in answers] == ["[open2] You are in, as fay"]
    assert "You have seat 1 of 3 in open2 as fay." in answers[0].flat


def test_another_players_resignation_keeps_the_deadline(tmp_path) -> None:  # noqa: ANN001
    """Issue 13: RESIGN by mail from a player who is not to move leaves the
    mover's deadline as it was; the mover resigning starts the next one's."""
    world = World(tmp_path)
    four = [*PLAYERS, "dan"]
    table = new_table(world, "quit", four)
    table.silence()
    table.read_all()
    mover = table[table.mover()]
    deadline = world.game("quit").deadline
    assert deadline is not None
    others = [n for n in four if n != mover.name]
    world.advance(hours=10)
    table[others[0]].write("RESIGN\n")
    world.poll()
    assert world.player("quit", others[0]).status == "resigned"
    assert world.game("quit").deadline == deadline
    assert table.mover() == mover.name
    table.read_all()
    assert [m.untokened for m in table.mails(mover.name) if m.kind == "notice"] == [
        f"[quit] {others[0]} has resigned"
    ]
    world.advance(hours=2)
    mover.write("RESIGN\n")
    world.poll()
    assert table.mover() in others[1:]
    assert world.game("quit").deadline == world.clock.now() + timedelta(hours=48)
