"""The mail side of long games: orders held for the deadline, joining by mail,
press between players, and a GM's rollback.

Everything goes through the whole pipeline on the Maildir transport: the
players' mails are written into the game's inbox, a poll (at the test
clock's time) handles them, and the answers are read from each player's
own Maildir.
"""

from __future__ import annotations

import re
from datetime import timedelta

from typer.testing import CliRunner

from pbem.cli import app
from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.service.play import gm
from pbem.service.play.games import definition_of, find_game
from tests.longgame_helpers import START, Mail, Seat, World, new_table

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24, 6]}
TOKEN = re.compile(r"CONFIRM ([0-9a-f]{8})")


def token_of(mail: Mail) -> str:
    found = TOKEN.search(mail.text)
    assert found is not None, mail.text
    return found.group(1)


# ----------------------------------------------------------- deadline mode
def test_deadline_mode_plays_the_latest_orders_at_the_deadline(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "dl", PLAYERS, settings={**TIMING, "adjudicate": "deadline"})
    table.silence()
    table.step()
    mover = table[table.mover()]
    state = world.state("dl")
    due = state.reinforcements
    own = sorted(state.territories_of(state.current))
    first, second = (state.board.territories[t].name for t in own[:2])
    turn_mail = mover.latest("your_turn")
    table.clear()

    mover.reply(turn_mail, f"PLACE {due} {first}")
    world.advance(hours=1)
    world.poll()
    assert world.log("dl") == []
    mover.read()
    receipt = mover.received[-1]
    assert receipt.kind == "receipt"
    assert f"PLACE {due} {first}" in receipt.flat
    assert "They will be played when the turn is adjudicated" in receipt.flat
    assert "replace the ones you sent earlier" not in receipt.flat

    later = mover.reply(turn_mail, f"PLACE {due} {second}")
    world.advance(hours=1)
    world.poll()
    assert world.log("dl") == []
    mover.read()
    receipt = mover.received[-1]
    assert f"PLACE {due} {second}" in receipt.flat
    assert (
        "# These orders replace the ones you sent earlier; they will be played at the "
        "deadline." in receipt.flat
    )

    # no reminder to a player whose orders are in; at the deadline the latest are played
    world.poll_until(START + timedelta(hours=47, minutes=59))
    assert world.log("dl") == []
    world.poll_until(START + timedelta(hours=48))
    log = world.log("dl")
    assert [(e.kind, e.turn, e.seat, e.source, e.message_id) for e in log] == [
        ("turn", 1, state.current, "mail", later)
    ]
    assert log[0].text == f"PLACE {due} {second}\n"
    after = world.state("dl")
    placed = own[1]
    assert after.armies[placed] == state.armies[placed] + due
    table.read_all()
    assert [m.kind for m in table.mails(mover.name)] == ["receipt", "receipt", "turn_report"]
    for name in PLAYERS:
        assert len(table.mails(name, "turn_report")) == 1
        assert table.mails(name, "notice") == []  # nobody was late


# ----------------------------------------------------------------- joining
def join_and_confirm(world: World, names: list[str], game: str) -> dict[str, list[Mail]]:
    """Each name asks to join and answers the confirmation; returns their mail."""
    for name in names:
        world.send(f"{name}@players.test", f"JOIN {game} AS {name}", "join please")
    world.poll()
    got: dict[str, list[Mail]] = {}
    for name in names:
        asks = world.take(f"{name}@players.test")
        assert [m.subject for m in asks] == [f"[{game}] Confirm joining as {name}"]
        got[name] = asks
    for name in names:
        world.send(
            f"{name}@players.test",
            f"CONFIRM {token_of(got[name][0])}",
            f"Re: {got[name][0].subject}",
            in_reply_to=got[name][0].message_id,
        )
        world.poll()
    for name in names:
        got[name] += world.take(f"{name}@players.test")
    return got


def test_join_fills_a_game_and_the_setup_begins_by_mail(tmp_path) -> None:
    world = World(tmp_path)
    world.open_game("j1", 3, settings=TIMING)  # classic: blind placement by mail
    assert world.game("j1").phase == "open"

    # a wrong token changes nothing
    world.send("ann@players.test", "JOIN j1 AS ann", "join")
    world.poll()
    ask = world.take("ann@players.test")[0]
    world.send("ann@players.test", "CONFIRM 0badc0de", f"Re: {ask.subject}")
    world.poll()
    refused = world.take("ann@players.test")
    assert [m.subject for m in refused] == ["[j1] Confirmation refused"]
    assert world.players("j1") == []

    mails = join_and_confirm(world, ["bob", "ann", "cat"], "j1")
    assert [m.subject for m in mails["bob"][1:2]] == ["[j1] You are in, as bob"]
    assert "You have seat 1 of 3 in j1 as bob" in mails["bob"][1].flat
    assert [m.subject for m in mails["ann"][1:2]] == ["[j1] You are in, as ann"]
    game = world.game("j1")
    assert (game.phase, game.status) == ("setup", "running")
    assert [(p.seat, p.name, p.address) for p in world.players("j1")] == [
        (0, "bob", "bob@players.test"),
        (1, "ann", "ann@players.test"),
        (2, "cat", "cat@players.test"),
    ]
    assert game.deadline == START + timedelta(hours=72)  # the setup phase's length
    seats = {}
    for i, name in enumerate(["bob", "ann", "cat"]):
        starts = [m for m in mails[name] if m.kind == "game_start"]
        assert len(starts) == 1, name
        assert starts[0].subject.startswith(f"[j1] The game begins: you are {name}")
        seat = Seat(world, "j1", name, bot=TextBot(make_bot("greedy", 3 + i)))
        seat.received = starts
        seat.unanswered = starts
        seat.password = re.search(r"password[^:\n]*:\s*(\S+)", starts[0].text, re.I).group(1)
        seats[name] = seat
    assert world.state("j1").phase == "place"

    # the setup orders come by mail (with the password of the game-start mail);
    # cat sends none, and gets the default setup once the setup deadline and grace pass
    for name in ("bob", "ann"):
        assert seats[name].answer() == 1
    world.poll()
    assert world.log("j1") == [] and world.state("j1").phase == "place"
    world.poll_until(START + timedelta(hours=72))
    late = [m for m in world.take("ann@players.test") if m.kind == "notice"]
    assert [m.untokened for m in late] == ["[j1] Deadline passed, waiting for cat"]
    assert "The deadline for setup orders has passed; still waiting for cat." in late[0].flat
    world.poll_until(START + timedelta(hours=96))
    log = world.log("j1")
    assert [(e.kind, e.seat, e.source) for e in log] == [
        ("setup", 0, "mail"),
        ("setup", 1, "mail"),
        ("setup", 2, "default"),
    ]
    state = world.state("j1")
    assert state.phase not in ("place", "claim")
    first = state.players[state.current].name
    seats[first].read()
    assert "your_turn" in seats[first].kinds()

    # the game is full: a late JOIN is not taken
    world.send("dan@players.test", "JOIN j1 AS dan", "join")
    report = world.poll()
    assert [m.status for m in report.mails] == ["rejected"]
    assert len(world.players("j1")) == 3


def test_pbem_new_open_then_join_starts_with_automatic_setup(tmp_path) -> None:
    world = World(tmp_path)
    result = CliRunner().invoke(
        app,
        [
            "new",
            "j2",
            "--open",
            "--seats",
            "2",
            "--option",
            "placement=auto",
            "--config",
            str(world.config_path),
        ],
    )
    assert result.exit_code == 0, result.stdout
    assert "game j2 open for 2 players" in result.stdout
    mails = join_and_confirm(world, ["ann", "bob"], "j2")
    assert world.game("j2").phase == "playing"
    state = world.state("j2")
    first = state.players[state.current].name
    for name in ("ann", "bob"):
        kinds = [m.kind for m in mails[name]]
        expected = ["answer", "game_start"] + (["your_turn"] if name == first else [])
        if name == "ann":
            expected.insert(1, "answer")  # "You are in" before bob confirmed
        assert kinds == expected, name
        assert re.search(r"password", mails[name][kinds.index("game_start")].text, re.I)
    assert world.log("j2") == []  # the automatic setup needs no orders


def test_join_refuses_a_taken_or_reserved_name(tmp_path) -> None:
    world = World(tmp_path)
    world.open_game("j3", 2)
    join_and_confirm(world, ["ann"], "j3")
    world.send("other@players.test", "JOIN j3 AS Ann", "join")
    world.send("third@players.test", "JOIN j3 AS all", "join")
    world.poll()
    taken = world.take("other@players.test")
    assert [m.subject for m in taken] == ["[j3] Joining refused"]
    assert "the name Ann is taken in j3" in taken[0].flat
    reserved = world.take("third@players.test")
    assert "the name all is reserved" in reserved[0].flat
    assert [p.name for p in world.players("j3")] == ["ann"]


# ------------------------------------------------------------------- press
def test_press_reaches_only_its_addressee_with_the_senders_name(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "pr", PLAYERS, settings={**TIMING, "press_per_hour": 3})
    table.silence()
    table.step()
    table.clear()
    ann = table["ann"]
    ann.write("PRESS TO bob\nShall we split Asia?\nENDPRESS")
    world.poll()
    table.read_all()
    press = table.mails("bob", "press")
    assert [m.untokened for m in press] == ["[pr] Press from ann"]
    assert "ann writes to you:" in press[0].flat
    assert "Shall we split Asia?" in press[0].flat
    assert table.mails("cat") == []
    assert table.gm == []
    assert [m.kind for m in table.mails("ann")] == ["receipt"]
    assert "Your press to bob was relayed." in table.mails("ann")[0].flat
    # a mail of press alone is no orders: not "Orders accepted ... will be played"
    assert table.mails("ann")[0].untokened == "[pr] Noted"
    assert "Your mail had no orders; this is what it did:" in table.mails("ann")[0].flat
    table.clear()

    ann.write("PRESS TO ALL\nPeace in our time.\nENDPRESS")
    world.poll()
    table.read_all()
    assert [m.untokened for m in table.mails("bob", "press")] == ["[pr] Press from ann"]
    assert [m.untokened for m in table.mails("cat", "press")] == ["[pr] Press from ann"]
    assert "ann writes to all players:" in table.mails("cat", "press")[0].flat
    assert table.mails("ann", "press") == []
    table.clear()

    ann.write("PRESS TO nobody\nHello?\nENDPRESS")
    ann.write("PRESS TO cat\nThe fourth this hour.\nENDPRESS")
    world.poll()
    table.read_all()
    notes = [m.flat for m in table.mails("ann")]
    assert any(
        "Your press to nobody was not relayed: no other player named nobody" in n for n in notes
    )
    assert any(
        "Your press to cat was not relayed: too many press messages this hour" in n for n in notes
    )
    assert table.mails("cat", "press") == []
    table.clear()

    world.advance(hours=1)  # a new hour, a new budget
    ann.write("PRESS TO cat\nNow it goes.\nENDPRESS")
    world.poll()
    table.read_all()
    assert [m.untokened for m in table.mails("cat", "press")] == ["[pr] Press from ann"]
    assert table.mails("bob", "press") == []
    table.clear()

    ann.write("PRESS TO cat\n> > only what bob once wrote\n> > quoted\nENDPRESS")
    world.poll()
    table.read_all()
    assert table.mails("cat", "press") == []  # nothing left to relay: no empty press
    assert any(
        "Your press to cat was not relayed: it has no text (quoted lines" in m.flat
        for m in table.mails("ann")
    )


def test_anonymous_press_and_the_gms_copy(tmp_path) -> None:
    world = World(tmp_path)
    settings = {**TIMING, "press_anonymous": True, "press_copy_gm": True}
    table = new_table(world, "anon", PLAYERS, settings=settings)
    table.silence()
    table.step()
    table.clear()
    table["ann"].write("PRESS TO bob\nGuess who.\nENDPRESS")
    world.poll()
    table.read_all()
    press = table.mails("bob", "press")
    assert [m.untokened for m in press] == ["[anon] Anonymous press"]
    assert "An anonymous player writes to you:" in press[0].flat
    assert not re.search(r"\bann\b", press[0].text)
    assert table.mails("cat") == []
    copy = [m for m in table.gm if m.kind == "gm_alert"]
    assert [m.subject for m in copy] == ["[anon] GM alert: Press from ann to bob"]
    assert "Guess who." in copy[0].flat


# ---------------------------------------------------------------- rollback
def test_rollback_keeps_the_hash_chain_and_replays_the_same_game(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "rb", PLAYERS, settings=TIMING)
    table.run(lambda: world.game("rb").turn >= 8)
    original = world.chain("rb")
    assert [row[1] for row in original] == list(range(0, 8))  # the deal, then turns 1..7
    table.clear()

    line = world.gm(gm.rollback, "rb", 4)
    assert line == (
        "rb rolled back to turn 4 (turns 4 to 7 undone, 4 log entries); the dice of the "
        "replayed turns are "
        "the same as before (they follow from the committed secret), so the same orders "
        "roll the same dice; --reroll draws new ones"
    )
    assert world.chain("rb") == [row for row in original if row[1] < 4]
    assert [e.turn for e in world.log("rb")] == [1, 2, 3]
    state = world.state("rb")
    assert state.turn == 4
    with world.session(write=False) as session:  # the game's published (keyed) hash
        published = definition_of(session, find_game(session, "rb")).state_hash(state)
    assert published == original[3][3]
    table.read_all()
    mover = state.players[state.current].name
    for name in PLAYERS:
        news = [m for m in table.mails(name) if "Rolled back to turn 4" in m.subject]
        assert len(news) == 1, name
    assert [m.subject.split(" (token")[0] for m in table.mails(mover, "your_turn")] == [
        "[rb] Your turn 4"
    ]

    # the same players send the same orders again: the same chain, and the reports again
    table.run(lambda: world.game("rb").turn >= 8)
    assert world.chain("rb") == original
    table.read_all()
    for name in PLAYERS:
        turns = [m.subject.split(":")[0] for m in table.mails(name, "turn_report")]
        assert turns == [f"[rb] Turn {t}" for t in range(4, 8)], name
