"""Freestyle by mail (``play_order = freestyle``): each round every player moves
once, in the order their mails are read; one "your move" mail per player per
round, one deadline per round, missed turns played at it; a token of any mail
of the round is live; the game plays to a winner and its log replays."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from pbem.rules.engine import turn_of
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ROUND
from pbem.site import build_site
from tests.longgame_helpers import World, new_table

PLAYERS = ["alice", "bob", "carol"]
FREE = {"placement": "auto", "play_order": "freestyle"}


def table_of(world: World, overrides: dict[str, str] | None = None, names: list[str] = PLAYERS):
    table = new_table(world, "g1", names, overrides={**FREE, **(overrides or {})})
    table.silence()
    table.read_all()
    return table


def test_round_one_opens_to_everyone_and_the_first_mail_read_moves_first(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = table_of(world)
    state = world.state("g1")
    assert (state.phase, state.round, state.turn) == (ROUND, 1, 0)
    for name in PLAYERS:  # one "your move" mail each, with the round in its subject
        (notice,) = table.mails(name, "your_turn")
        assert re.search(r"Your move in round 1 \(token \w+\)", notice.subject)
        assert "Freestyle: every player moves once in round 1" in notice.flat
        (start,) = table.mails(name, "game_start")
        assert (
            "Each round everyone moves once, in the order the mails arrive (freestyle): this "
            "order only breaks ties and orders the turns missed at a deadline." in start.flat
        )
        assert "plays first" not in start.flat
    # carol's mail is read first, then alice's: turns 1 and 2, in that order
    for name in ("carol", "alice"):
        seat = table[name]
        view_state = world.state("g1")
        mine = turn_of(view_state, seat.seat_no(view_state))
        assert seat.bot is not None
        seat.reply(seat.latest("your_turn"), seat.bot.write_turn(mine))
    world.poll()
    log = world.log("g1")
    turns = [(e.kind, e.seat) for e in log if e.kind == "turn"]
    state = world.state("g1")
    seats = {p.name: i for i, p in enumerate(state.players)}
    assert turns == [("turn", seats["carol"]), ("turn", seats["alice"])]
    assert state.moved == [seats["carol"], seats["alice"]] and state.round == 1
    assert waiting_for(state) == [seats["bob"]]
    with world.session() as session:  # the site's game page: who is still to move
        pages = build_site(session, world.ctx, tmp_path / "site")
    index = next(p for p in pages if p.name == "index.html").read_text(encoding="utf-8")
    assert "turn 2: round 1: bob to move" in index
    new = table.read_all()
    (receipt,) = [m for m in new["alice"] if m.kind == "receipt"]
    assert "Orders accepted for turn 2" in receipt.subject  # the turn she took, the 2nd
    assert [m.kind for m in new["bob"]].count("turn_report") == 2  # both turns told
    assert not [m for m in new["bob"] if m.kind == "your_turn"]  # no second notice
    # bob's token from the round's opening mail is still live after two moves
    bob = table["bob"]
    view = turn_of(world.state("g1"), seats["bob"])
    assert bob.bot is not None
    bob.reply(bob.latest("your_turn"), bob.bot.write_turn(view))
    world.poll()
    state = world.state("g1")
    assert (state.round, state.moved, state.turn) == (2, [], 3)
    new = table.read_all()
    for name in PLAYERS:
        (notice,) = [m for m in new[name] if m.kind == "your_turn"]
        assert "Your move in round 2" in notice.subject
    # carol answers her round-1 mail again in round 2: that round is over
    carol = table["carol"]
    carol.reply(table.mails("carol", "your_turn")[0], "PLACE 3 Alaska\n")
    world.poll()
    (over,) = table.read_all()["carol"]
    assert "That round is over: your move in round 2" in over.subject
    assert "round 2 is on and you have not moved in it yet" in over.flat
    assert world.state("g1").turn == 3  # nothing applied


def test_a_second_mail_in_the_same_round_is_refused_with_the_reason(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = table_of(world)
    alice = table["alice"]
    state = world.state("g1")
    seat = alice.seat_no(state)
    assert alice.bot is not None
    alice.reply(alice.latest("your_turn"), alice.bot.write_turn(turn_of(state, seat)))
    world.poll()
    table.read_all()
    alice.reply(alice.latest("your_turn"), "PLACE 3 Alaska\n")
    world.poll()
    (reply,) = [m for m in table.read_all()["alice"] if m.kind == "error_reply"]
    assert "Not applied, 1 problem: round 1 (token" in reply.subject
    assert (
        "you have moved in round 1 already (freestyle: one turn each round); your next "
        "turn is in round 2" in reply.flat
    )
    assert world.game("g1").turn == 1


def test_the_round_deadline_plays_every_missed_turn_then_opens_the_next(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = table_of(world)
    game = world.game("g1")
    assert game.deadline is not None
    deadline = game.deadline
    alice = table["alice"]
    state = world.state("g1")
    assert alice.bot is not None
    alice.reply(
        alice.latest("your_turn"), alice.bot.write_turn(turn_of(state, alice.seat_no(state)))
    )
    world.poll()
    assert world.game("g1").deadline == deadline  # one deadline for the round
    table.read_all()
    # the reminders go to bob and carol only, once each per reminder hour
    world.poll_until(deadline.replace(tzinfo=deadline.tzinfo) - timedelta(hours=5), every_hours=3)
    new = table.read_all()
    assert [m.kind for m in new["alice"]].count("reminder") == 0
    assert [m.kind for m in new["bob"]].count("reminder") == 2  # 24 h and 6 h before
    assert [m.kind for m in new["carol"]].count("reminder") == 2
    (first, _) = [m for m in new["bob"] if m.kind == "reminder"]
    assert re.match(r"\[g1\] Reminder: round 1 due ", first.subject), first.subject
    assert "waiting for your orders for round 1" in first.flat
    world.poll_until(deadline + timedelta(hours=24, minutes=1))
    state = world.state("g1")
    log = [(e.kind, e.seat, e.source) for e in world.log("g1") if e.kind == "turn"]
    seats = {p.name: i for i, p in enumerate(state.players)}
    played = sorted([seats["bob"], seats["carol"]], key=state.order.index)
    assert log == [("turn", seats["alice"], "mail")] + [("turn", s, "default") for s in played]
    assert state.round == 2 and state.moved == [] and state.phase == ROUND
    new = table.read_all()
    for name in ("bob", "carol"):
        subjects = [m.subject for m in new[name] if m.kind == "notice"]
        assert len(subjects) == 2 and "Deadline passed, waiting for" in subjects[0]
        assert re.match(r"\[g1\] You missed turn [23] \(token", subjects[1])
    for name in PLAYERS:
        subjects = [m.subject for m in new[name] if m.kind == "your_turn"]
        assert len(subjects) == 1 and "Your move in round 2" in subjects[0]
    assert world.game("g1").deadline > deadline + timedelta(hours=24)


def test_a_whole_freestyle_game_by_mail_to_its_round_limit_replays(tmp_path: Path) -> None:
    """Six rounds by mail, then the round limit's winner (the domination win of a
    freestyle game by mail: the fog and doubles game below)."""
    world = World(tmp_path)
    table = new_table(world, "g1", PLAYERS, overrides={**FREE, "max_turns": "6"})
    table.run(lambda: world.game("g1").phase == "over", limit=100)
    state = world.state("g1")
    assert state.winner is not None and state.win_reason == "max_turns"
    assert state.turn == 18 and state.round == 7  # six rounds of three turns, no more
    record = world.replayed_record("g1")
    assert "play_order" in record
    opened = {name: len(table.mails(name, "your_turn")) for name in PLAYERS}
    assert opened == {name: 6 for name in PLAYERS}  # one "your move" a round
    assert all(
        "Your move in round" in m.subject for n in PLAYERS for m in table.mails(n, "your_turn")
    )


def test_fog_doubles_freestyle_by_mail_to_a_team_win_replays(tmp_path: Path) -> None:
    """The common online combination, by mail: four bots in two teams under fog,
    each round in the order their mails are read, to a team's win; the record
    replays and names the options."""
    world = World(tmp_path)
    names = ["alice", "bob", "carol", "dave"]
    overrides = {"placement": "auto", "play_order": "freestyle", "fog": "true", "team_size": "2"}
    table = new_table(world, "g1", names, overrides=overrides, seed=3)
    table.run(lambda: world.game("g1").phase == "over", limit=400)
    state = world.state("g1")
    assert state.win_reason == "team" and state.winner is not None
    record = world.replayed_record("g1")
    assert "play_order" in record and "team_size" in record and "fog" in record


def test_check_forecasts_the_turn_as_it_would_begin_now(tmp_path: Path) -> None:
    """CHECK from a player still to move: checked against the board as it stands,
    with the armies due now; the odds of its attacks; nothing applied."""
    world = World(tmp_path)
    table = table_of(world)
    bob = table["bob"]
    state = world.state("g1")
    view = turn_of(state, bob.seat_no(state))
    assert bob.bot is not None
    body = bob.bot.write_turn(view)
    assert "ATTACK" in body  # the greedy bot attacks in its first turn here
    bob.reply(bob.latest("your_turn"), "CHECK\n" + body)
    world.poll()
    (answer,) = [m for m in table.read_all()["bob"] if m.kind != "turn_report"]
    assert "CHECK: your orders for round 1 are valid" in answer.subject
    assert "Odds before the dice" in answer.flat and "takes it" in answer.flat
    assert world.state("g1").canonical_json() == state.canonical_json()  # nothing applied


def test_the_last_movers_mail_delivered_twice_is_not_played_again(tmp_path: Path) -> None:
    """The mail that closed a round, delivered again under a new Message-ID (a mail
    server's retry, a double click) before anything else is played, is "already
    applied", not the next round's move; the same orders for the next round are
    played once they say TURN 2."""
    world = World(tmp_path)
    table = table_of(world, names=["alice", "bob", "carol"])
    state = world.state("g1")
    seats = {p.name: i for i, p in enumerate(state.players)}
    for name in ("alice", "bob"):
        seat = table[name]
        assert seat.bot is not None
        mine = turn_of(world.state("g1"), seats[name])
        seat.reply(seat.latest("your_turn"), seat.bot.write_turn(mine))
        world.poll()
    carol = table["carol"]
    where = state.board.territories[world.state("g1").territories_of(seats["carol"])[0]].name
    due = turn_of(world.state("g1"), seats["carol"]).reinforcements
    body = f"PLACE {due} {where}\n"
    carol.write(body)
    world.poll()
    assert world.state("g1").round == 2
    table.read_all()
    carol.write(body)  # the same text again, a new Message-ID
    world.poll()
    (answer,) = [m for m in table.read_all()["carol"] if m.kind == "error_reply"]
    assert "Already applied" in answer.flat
    assert world.state("g1").moved == [] and world.state("g1").turn == 3
    assert turn_of(world.state("g1"), seats["carol"]).reinforcements == due
    carol.write("TURN 2\n" + body)  # (no territory changed hands: still valid)
    world.poll()
    assert world.state("g1").moved == [seats["carol"]]


def test_an_announced_absence_is_no_miss_at_the_round_deadline(tmp_path: Path) -> None:
    """The round's deadline does not wait for one player's absence, but the turn
    it plays for them is not counted as missed (no letter, no step to removal);
    a player merely silent misses theirs."""
    world = World(tmp_path)
    table = table_of(world)
    game = world.game("g1")
    assert game.deadline is not None
    day = game.deadline.date()
    table["bob"].write(f"ABSENT FROM {day - timedelta(days=1)} TO {day + timedelta(days=2)}\n")
    world.poll()
    table.read_all()
    world.poll_until(game.deadline + timedelta(hours=24, minutes=1))
    assert world.state("g1").round == 2
    new = table.read_all()
    assert not [m for m in new["bob"] if "You missed" in m.subject]
    assert [m for m in new["carol"] if "You missed" in m.subject]
    assert world.player("g1", "bob").missed_in_row == 0
    assert world.player("g1", "carol").missed_in_row == 1
