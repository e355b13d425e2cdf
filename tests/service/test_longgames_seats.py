"""Who holds a seat, and when they are away: replacement by the GM, and absences.

A replacement gives the seat to a new address with a new password and an
extended first deadline, keeps the seat's history, and the newcomer's
orders are played. An absence moves a deadline that falls inside it to its
end, within the game's allowance of days per year.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.service.errors import ServiceError
from pbem.service.play import gm
from pbem.service.play.gamesettings import bot_seats
from pbem.service.play.passwords import verify_password
from tests.longgame_helpers import START, Seat, Table, World, new_table

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24, 6]}


def wait_for_turn(table: Table, name: str) -> None:
    table.run(lambda: table.mover() == name)
    table.read_all()


def seat_of(world: World, game: str, name: str) -> int:
    return world.player(game, name).seat


# ------------------------------------------------------------- replacement
def test_a_replacement_takes_over_the_seat_and_plays_on(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "rep", PLAYERS, settings={**TIMING, "replacement_extra_hours": 24})
    table.silence("cat")
    wait_for_turn(table, "cat")
    table.clear()
    turn = world.game("rep").turn
    seat = seat_of(world, "rep", "cat")
    world.poll_until(world.clock.now() + timedelta(hours=30))  # cat has vanished
    replaced_at = world.clock.now()

    line = world.gm(gm.replace, "rep", "cat", "dave@players.test", "dave")
    assert line.startswith(f"dave (dave@players.test) holds seat {seat} (cat) from turn {turn}")
    assert [h for h in world.holders("rep") if h[0] == seat] == [
        (seat, "cat", "cat@players.test", 0, turn),
        (seat, "dave", "dave@players.test", turn, None),
    ]
    # the extended first deadline: a whole turn from now, plus the extra hours
    assert world.game("rep").deadline == replaced_at + timedelta(hours=48 + 24)

    dave = Seat(
        world, "rep", "cat", address="dave@players.test", bot=TextBot(make_bot("greedy", 99))
    )
    dave.read()
    assert [m.kind for m in dave.received] == ["game_start", "your_turn", "notice"]
    start = dave.received[0]
    assert start.subject.startswith("[rep] Welcome: you take over the seat of cat")
    assert dave.password and dave.password in start.text
    player = world.player("rep", "cat")
    assert player.address == "dave@players.test"
    assert verify_password(dave.password, player.secret_hash)
    assert player.status == "active" and player.missed_in_row == 0
    table.read_all()
    for mails in (table.mails("ann"), table.mails("bob"), dave.received):
        news = [m for m in mails if "takes over" in m.subject]
        assert len(news) == 1
        assert "dave takes over the seat of cat from turn" in news[0].flat
        assert "@" not in news[0].text  # issue 13: no address reaches the players
    assert [m.subject for m in table.mails("cat", "notice")] == [
        "[rep] You no longer play in this game"
    ]

    # the old address is no longer heard
    old = table["cat"]
    old.reply(old.latest("reminder"), "PLACE 3 Alaska")  # the token is in its subject
    report = world.poll()
    assert [m.status for m in report.mails] == ["rejected"]

    # the newcomer's orders (a reply to their your-turn mail) are played
    dave.answer()
    report = world.poll()
    assert [m.status for m in report.mails] == ["processed"]
    entry = world.log("rep")[-1]
    assert (entry.turn, entry.seat, entry.source) == (turn, seat, "mail")
    dave.read()
    assert "receipt" in dave.kinds() and "turn_report" in dave.kinds()
    assert world.game("rep").turn == turn + 1


def test_the_first_deadline_of_a_newcomer_is_extended_when_their_turn_comes(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "rep2", PLAYERS, settings={**TIMING, "replacement_extra_hours": 12})
    table.silence()
    table.step()
    order = [world.state("rep2").players[s].name for s in world.state("rep2").order]
    first, second = order[0], order[1]
    assert world.game("rep2").deadline == START + timedelta(hours=48)
    world.gm(gm.replace, "rep2", second, "erin@players.test")
    assert world.game("rep2").deadline == START + timedelta(hours=48)  # not erin's turn
    # no --name: the newcomer is named from the address, never as the seat
    assert world.holders("rep2")[-1][1:] == ("erin", "erin@players.test", 1, None)

    table[first].auto = True
    table.step()  # first plays at START; now it is erin's turn
    assert table.mover() == second
    assert world.game("rep2").deadline == START + timedelta(hours=48 + 12)
    # only the first: once erin has played, the seat's next deadline is a plain one
    erin = Seat(
        world, "rep2", second, address="erin@players.test", bot=TextBot(make_bot("greedy", 7))
    )
    erin.read()
    erin.answer()
    world.poll()
    assert table.mover() == order[2]
    assert world.game("rep2").deadline == START + timedelta(hours=48)


def test_a_seat_gone_neutral_cannot_be_handed_over(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "rep3", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    victim = next(n for n in PLAYERS if n != table.mover())
    world.gm(gm.kick, "rep3", victim)
    with pytest.raises(ServiceError, match="out of the game"):
        world.gm(gm.replace, "rep3", victim, "frank@players.test")
    with pytest.raises(ServiceError, match="holds another seat"):
        world.gm(gm.replace, "rep3", table.mover(), f"{victim}@players.test")
    assert world.player("rep3", victim).address == f"{victim}@players.test"


# ----------------------------------------------------------------- absence
def test_absence_moves_the_current_deadline_within_the_allowance(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "abs", PLAYERS, settings={**TIMING, "absence_days_per_year": 5})
    table.silence()
    table.step()
    mover = table.mover()
    seat = table[mover]
    table.clear()
    assert world.game("abs").deadline == datetime(2024, 3, 6, 12, tzinfo=UTC)

    seat.write("ABSENT FROM 2024-03-05 TO 2024-03-07")
    world.poll()
    assert world.game("abs").deadline == datetime(2024, 3, 8, 0, tzinfo=UTC)  # the end of it
    assert world.player("abs", mover).absence_days_used == 3
    seat.read()
    answer = seat.received[-1]
    assert answer.kind == "receipt"
    assert "Absence noted from 2024-03-05 to 2024-03-07" in answer.flat
    assert "Your current deadline moved to 2024-03-08 00:00 (UTC)" in answer.flat
    assert "(2 days of absence left in 2024.)" in answer.flat

    seat.write("ABSENT FROM 2024-03-10 TO 2024-03-12")  # 3 more: over the 5 a year
    world.poll()
    seat.read()
    assert "only 2 of the 5 days a year this game allows are left; nothing changed" in (
        seat.received[-1].flat
    )
    assert world.player("abs", mover).absence_days_used == 3

    seat.write("ABSENT FROM 2024-03-07 TO 2024-03-09")  # overlaps: only 2 new days count
    world.poll()
    assert world.player("abs", mover).absence_days_used == 5
    assert world.game("abs").deadline == datetime(2024, 3, 10, 0, tzinfo=UTC)

    # reminders before the moved deadline, no late notice; then the usual course
    table.clear()
    world.poll_until(datetime(2024, 3, 9, 23, 59, tzinfo=UTC), every_hours=6)
    table.read_all()
    reminders = table.mails(mover)
    assert [m.kind for m in reminders] == ["reminder", "reminder"]
    assert [m.sent_at for m in reminders] == [
        datetime(2024, 3, 9, 0, tzinfo=UTC),
        datetime(2024, 3, 9, 18, tzinfo=UTC),
    ]
    world.poll_until(datetime(2024, 3, 11, 0, tzinfo=UTC))
    assert [e.source for e in world.log("abs")] == ["default"]


def test_a_deadline_set_inside_an_absence_starts_at_its_end(tmp_path) -> None:
    world = World(tmp_path)
    settings = {**TIMING, "timezone": "Europe/Paris"}
    table = new_table(world, "abs2", PLAYERS, settings=settings)
    table.silence()
    table.step()
    state = world.state("abs2")
    first = state.players[state.order[0]].name
    second = state.players[state.order[1]].name
    table[second].write("ABSENT FROM 2024-03-06 TO 2024-03-06")
    world.poll()
    assert world.game("abs2").deadline == START + timedelta(hours=48)  # first's: unchanged
    world.advance(hours=1)
    table[first].auto = True
    table.step()  # first plays at 13:00 UTC on Monday
    assert table.mover() == second
    # 48 h later is Wednesday 13:00 UTC, inside the absence: the end of that day in Paris
    assert world.game("abs2").deadline == datetime(2024, 3, 6, 23, 0, tzinfo=UTC)
    table.read_all()
    turn = table[second].latest("your_turn")
    assert "Deadline: Thu 7 Mar 2024 00:00 CET (23:00 UTC)." in turn.flat  # the game's zone


# ------------------------------------------------- kick during the placement
@pytest.mark.parametrize("policy", ["neutral", "bot"])
def test_a_kick_during_the_initial_placement_plays_on_to_a_finished_game(
    tmp_path, policy: str
) -> None:
    """Issue 21: a player who vanishes on day one does not hold the table."""
    world = World(tmp_path)
    # overrides={}: the placement is played by mail
    table = new_table(
        world, "kick0", PLAYERS, settings={**TIMING, "on_removal": policy}, overrides={}
    )
    table.silence("cat")
    table.step()  # ann and bob send their placement; cat does not
    assert world.game("kick0").phase == "setup"

    line = world.gm(gm.kick, "kick0", "cat")
    assert line.startswith("kick0: cat removed during the setup")
    state = world.state("kick0")
    assert world.game("kick0").phase == "playing" and state.phase != "over"
    cat = seat_of(world, "kick0", "cat")
    assert world.player("kick0", "cat").status == "removed"
    if policy == "neutral":
        assert not state.players[cat].alive
        assert state.territories_of(state.neutral_seat)  # cat's armies stand, neutral
    else:
        assert state.players[cat].alive and cat in bot_seats(world.game("kick0"))
    table.read_all()
    announced = [m for m in table.mails("ann") if "cat was removed" in m.flat]
    assert announced, [m.kind for m in table.mails("ann")]
    table.run(lambda: world.game("kick0").phase == "over", limit=400)
    assert world.state("kick0").winner is not None
