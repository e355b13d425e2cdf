"""Deadlines of a long game, on the Maildir transport with a clock the tests move.

Reminders, the late notice, missed turns played by the default of RULES.md,
the removal policies (N in a row, N of the last M; territories neutral or
the seat to the bot), an outage longer than the grace period, and the GM's
pause/resume, extend, kick and process. Players are bots answering their
mail as people would, or silent; every assertion is on the mail that lands
in a Maildir or on the database.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from pbem.orders import render_orders
from pbem.rules.defaults import default_turn
from pbem.service.errors import ServiceError
from pbem.service.play import gm
from pbem.service.play.gamesettings import check_settings
from tests.longgame_helpers import GM_ADDRESS, START, Mail, Seat, Table, World, new_table

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24, 6]}


def alerts(mails: list[Mail], words: str) -> list[Mail]:
    return [m for m in mails if m.kind in ("gm_alert", "notice") and words in m.subject]


def wait_for_turn(table: Table, name: str) -> None:
    """The bots play (time standing still) until it is ``name``'s turn."""
    table.run(lambda: table.mover() == name)
    table.read_all()


def miss_turn(table: Table, name: str) -> list[int]:
    """``name`` (silent) lets the deadline and the grace pass; returns the
    territories they held. The default is played by the poll at the end of grace."""
    world = table.world
    held = world.state(table.game).territories_of(seat_of(table, name))
    deadline = world.game(table.game).deadline
    world.poll_until(deadline + timedelta(hours=24))
    return held


def seat_of(table: Table, name: str) -> int:
    return next(p.seat for p in table.world.players(table.game) if p.name == name)


# ------------------------------------------------------------- reminders
def test_reminders_go_once_each_to_the_player_who_must_move(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "rem", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    mover = table.mover()
    turn_mail = table[mover].latest("your_turn")
    token = turn_mail.subject.rsplit("(token ", 1)[1].rstrip(")")
    table.clear()
    hours = sorted({*range(2, 48, 2), 23, 41, 47})  # and three polls at each reminder time
    for hour in hours:
        world.clock.set(START + timedelta(hours=hour))
        world.poll()
        if hour in (24, 42):
            world.poll()
            world.poll()
    table.read_all()

    reminders = table.mails(mover)
    assert [m.kind for m in reminders] == ["reminder", "reminder"]
    assert [m.sent_at for m in reminders] == [
        START + timedelta(hours=24),
        START + timedelta(hours=42),
    ]
    assert all(f"(token {token})" in m.subject for m in reminders)
    assert all("Wed 6 Mar 12:00" in m.subject for m in reminders)
    for other in PLAYERS:
        if other != mover:
            assert table.mails(other) == []
    assert table.gm == []


def test_late_notice_to_everyone_then_the_default_after_grace(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "late", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    mover = table.mover()
    table.clear()
    world.poll_until(START + timedelta(hours=48))  # the deadline
    world.advance(hours=1)
    world.poll()
    table.read_all()
    for name in PLAYERS:
        notices = table.mails(name, "notice")
        assert [m.untokened for m in notices] == [f"[late] Deadline passed, waiting for {mover}"], (
            name
        )
        assert "still waiting for " + mover in notices[0].flat
    assert [m.subject for m in table.gm] == [
        f"[late] GM alert: Deadline passed, waiting for {mover}"
    ]
    assert world.log("late") == []

    before = world.state("late")
    world.poll_until(START + timedelta(hours=71, minutes=59))  # grace not over: nothing
    assert world.log("late") == []
    world.poll_until(START + timedelta(hours=72))
    log = world.log("late")
    assert [(e.kind, e.turn, e.seat, e.source) for e in log] == [
        ("turn", 1, before.current, "default")
    ]
    assert log[0].text == render_orders(default_turn(before), before.board)
    table.read_all()
    warning = alerts(table.mails(mover), "You missed turn 1")
    assert len(warning) == 1
    assert "Turns missed in a row: 1 of 3 allowed." in warning[0].flat
    for name in PLAYERS:
        reports = table.mails(name, "turn_report")
        assert len(reports) == 1 and reports[0].subject.startswith("[late] Turn 1: "), name
        if name != mover:
            assert alerts(table.mails(name), "missed") == []
    nxt = table.mover()
    assert nxt != mover
    assert [m.subject.split(" (token")[0] for m in table.mails(nxt, "your_turn")] == [
        "[late] Your turn 2"
    ]


# ---------------------------------------------------------- removal policies
def test_removed_after_misses_in_a_row_territories_neutral(tmp_path) -> None:
    world = World(tmp_path)
    settings = {**TIMING, "remove_after_misses": 2}
    table = new_table(world, "row", PLAYERS, settings=settings)
    table.silence("cat")
    wait_for_turn(table, "cat")
    miss_turn(table, "cat")
    assert world.player("row", "cat").status == "active"
    assert world.player("row", "cat").missed_in_row == 1
    wait_for_turn(table, "cat")
    held = miss_turn(table, "cat")
    table.read_all()

    cat = world.player("row", "cat")
    assert cat.status == "removed"
    log = world.log("row")
    cats = [(e.kind, e.source, e.text) for e in log if e.seat == cat.seat]
    assert [k[:2] for k in cats] == [
        ("turn", "default"),
        ("turn", "default"),
        ("command", "default"),
    ]
    assert cats[-1][2] == "REMOVE"
    state = world.state("row")
    assert not state.players[cat.seat].alive
    neutral = state.neutral_seat
    assert held and all(state.owner[t] == neutral for t in held)

    warnings = alerts(table.mails("cat"), "You missed turn")
    assert len(warnings) == 2
    assert "now removed" not in warnings[0].flat
    assert "Turns missed in a row: 2 of 2 allowed." in warnings[1].flat
    assert "By the rules of this game you are now removed from it." in warnings[1].flat
    for name in PLAYERS:
        news = alerts(table.mails(name), "cat removed, territories neutral")
        assert len(news) == 1, name
        assert "cat was removed (missed turns); their territories are neutral now." in news[0].flat
    assert len(alerts(table.gm, "cat removed")) == 1

    # the GM undoes it: back to the start of cat's second missed turn
    second_miss = [e.turn for e in log if e.seat == cat.seat][1]
    world.gm(gm.rollback, "row", second_miss)
    cat = world.player("row", "cat")
    assert (cat.status, cat.missed_in_row) == ("active", 1)
    assert world.state("row").players[cat.seat].alive
    assert [e.source for e in world.log("row") if e.seat == cat.seat] == ["default"]


def test_removed_after_n_of_the_last_m_turns(tmp_path) -> None:
    world = World(tmp_path)
    settings = {**TIMING, "remove_after_misses": 0, "remove_after_of_last": [2, 3]}
    table = new_table(world, "ofm", PLAYERS, settings=settings)
    table.silence("cat")
    wait_for_turn(table, "cat")
    miss_turn(table, "cat")
    table["cat"].auto = True  # cat plays its next turn
    table.run(
        lambda: any(
            e.seat == seat_of(table, "cat") and e.source == "mail" for e in world.log("ofm")
        )
    )
    table.silence("cat")
    wait_for_turn(table, "cat")
    assert world.player("ofm", "cat").status == "active"
    assert world.player("ofm", "cat").missed_in_row == 0
    miss_turn(table, "cat")

    cat = world.player("ofm", "cat")
    assert cat.status == "removed"
    assert cat.missed_in_row == 1  # removed by "2 of the last 3", not by misses in a row
    sources = [e.source for e in world.log("ofm") if e.seat == cat.seat]
    assert sources == ["default", "mail", "default", "default"]
    assert not world.state("ofm").players[cat.seat].alive
    table.read_all()
    assert len(alerts(table.mails("ann"), "cat removed")) == 1


def test_removal_hands_the_seat_to_the_bot(tmp_path) -> None:
    world = World(tmp_path)
    settings = {**TIMING, "remove_after_misses": 1, "on_removal": "bot"}
    table = new_table(world, "bot", PLAYERS, settings=settings)
    table.silence("cat")
    wait_for_turn(table, "cat")
    miss_turn(table, "cat")
    table.read_all()
    cat = world.player("bot", "cat")
    assert cat.status == "removed"
    for name in PLAYERS:
        news = alerts(table.mails(name), "cat removed, the bot plays the seat")
        assert len(news) == 1, name
    table.clear()
    # the others play on; every turn of cat's seat is the bot's, at once
    table.run(lambda: len([e for e in world.log("bot") if e.source == "bot"]) >= 2)
    table.read_all()
    log = world.log("bot")
    first_default = next(i for i, e in enumerate(log) if e.source == "default")
    later = [(e.seat, e.source) for e in log[first_default + 1 :] if e.seat == cat.seat]
    assert later and all(source == "bot" for _, source in later)
    assert all(e.kind == "turn" for e in log)  # no REMOVE: the seat plays on
    assert world.state("bot").players[cat.seat].alive
    assert table.mails("cat", "your_turn") == []
    assert len(table.mails("cat", "turn_report")) >= 2  # still reads the reports

    # the GM gives the seat to a newcomer: the bot stops, the newcomer is asked
    world.gm(gm.replace, "bot", "cat", "gus@players.test", "gus")
    assert world.player("bot", "cat").status == "active"
    gus = Seat(world, "bot", "cat", address="gus@players.test", auto=False)
    table.seats["gus"] = gus
    bot_turns = len([e for e in world.log("bot") if e.source == "bot"])
    table.run(lambda: table.mover() == "cat")
    table.read_all()
    assert [m.kind for m in gus.received][:2] == ["game_start", "notice"]
    assert gus.received[-1].kind == "your_turn"
    assert len([e for e in world.log("bot") if e.source == "bot"]) == bot_turns


# ------------------------------------------------------------------ outage
def test_an_outage_longer_than_grace_punishes_nobody(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "out", PLAYERS, settings=TIMING)
    table.silence()
    table.step()  # the last poll before the outage, at START
    table.clear()
    deadline = world.game("out").deadline
    assert deadline == START + timedelta(hours=48)
    world.clock.set(START + timedelta(hours=80))  # down from START to deadline + grace + 8 h
    report = world.poll()
    assert report.deadline_events[0] == "out: deadline pushed back 80.0 h after an outage"
    assert world.log("out") == []
    assert world.game("out").deadline == deadline + timedelta(hours=80)
    table.read_all()
    note = alerts(table.gm, "Deadline pushed back after a server outage")
    assert len(note) == 1
    assert "did not run for 80.0 hours" in note[0].flat
    assert "to 2024-03-09 20:00 UTC" in note[0].flat
    for name in PLAYERS:
        assert [m.kind for m in table.mails(name)] == ["notice"]
    # the next poll, an hour later, is no outage: nothing moves again
    world.advance(hours=1)
    world.poll()
    assert world.game("out").deadline == deadline + timedelta(hours=80)
    # and the pushed deadline is then kept as any other
    world.poll_until(deadline + timedelta(hours=80 + 24))
    assert [e.source for e in world.log("out")] == ["default"]


def test_a_short_outage_changes_nothing(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "short", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    world.poll_until(START + timedelta(hours=40))
    world.clock.set(START + timedelta(hours=60))  # past the deadline, down less than grace
    report = world.poll()
    assert world.game("short").deadline == START + timedelta(hours=48)
    assert not any("outage" in line for line in report.deadline_events)
    assert any("deadline passed" in line for line in report.deadline_events)


# -------------------------------------------------------------- GM commands
def test_pause_freezes_and_resume_moves_the_deadline(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "pz", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    table.clear()
    world.clock.set(START + timedelta(hours=10))
    assert world.gm(gm.pause, "pz") == "pz paused"
    for hours in range(20, 100, 10):  # polls go on while paused, past deadline and grace
        world.clock.set(START + timedelta(hours=hours))
        world.poll()
    assert world.log("pz") == []
    mover = table.mover()
    table.read_all()
    assert [m.untokened for m in table.mails(mover)] == ["[pz] The game is paused"]
    # orders sent meanwhile are refused
    seat = table[mover]
    seat.write("STATUS")
    world.poll()
    assert world.game("pz").status == "paused"

    world.clock.set(START + timedelta(hours=100))
    line = world.gm(gm.resume, "pz")
    assert world.game("pz").deadline == START + timedelta(hours=48 + 90)
    assert line == "pz resumed; deadline 2024-03-10 06:00 UTC"
    table.read_all()
    resumed = alerts(table.mails(mover), "The game resumes")
    assert len(resumed) == 1 and "after 90.0 hours" in resumed[0].flat
    world.poll()
    assert world.log("pz") == []


def test_extend_pushes_the_deadline_and_tells_everyone(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "ext", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    table.clear()
    assert world.gm(gm.extend, "ext", 12.0) == "deadline of ext now 2024-03-07 00:00 UTC"
    assert world.game("ext").deadline == START + timedelta(hours=60)
    table.read_all()
    for name in PLAYERS:
        assert [m.untokened for m in table.mails(name)] == ["[ext] Deadline extended by 12 hours"]
    world.poll_until(START + timedelta(hours=59))
    table.read_all()
    assert alerts(table.mails("ann"), "Deadline passed") == []
    world.poll_until(START + timedelta(hours=60))
    table.read_all()
    assert len(alerts(table.mails("ann"), "Deadline passed")) == 1


def test_kick_removes_a_player_now(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "kick", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    table.clear()
    victim = next(n for n in PLAYERS if n != table.mover())
    seat = seat_of(table, victim)
    held = world.state("kick").territories_of(seat)
    line = world.gm(gm.kick, "kick", victim)
    assert line == f"kick: {victim} removed, territories neutral"
    state = world.state("kick")
    assert not state.players[seat].alive
    assert all(state.owner[t] == state.neutral_seat for t in held)
    assert world.player("kick", victim).status == "removed"
    assert [(e.kind, e.seat, e.text, e.source) for e in world.log("kick")] == [
        ("command", seat, "REMOVE", "default")
    ]
    table.read_all()
    for name in PLAYERS:
        news = alerts(table.mails(name), f"{victim} removed, territories neutral")
        assert len(news) == 1 and "(removed by the GM)" in news[0].flat, name


def test_process_plays_the_turn_now_without_counting_a_miss(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "proc", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    table.clear()
    mover = table.mover()
    before = world.state("proc")
    world.clock.set(START + timedelta(hours=5))
    line = world.gm(gm.process, "proc")
    # issue 13: a turn the GM plays before the deadline is the GM's, not a miss
    assert line == "proc: turn 1 played by the GM, default orders"
    log = world.log("proc")
    assert [(e.turn, e.seat, e.source) for e in log] == [(1, before.current, "gm")]
    assert log[0].text == render_orders(default_turn(before), before.board)
    assert world.player("proc", mover).missed_in_row == 0  # the deadline had not passed
    nxt = table.mover()
    assert world.game("proc").deadline == START + timedelta(hours=5 + 48)
    table.read_all()
    assert len(table.mails(nxt, "your_turn")) == 1
    report = table.mails(nxt, "turn_report")[-1].flat
    assert f"The GM played this turn for {mover}." in report
    assert "sent no orders in time" not in report
    assert alerts(table.mails(mover), "You missed") == []
    assert GM_ADDRESS  # the GM's copy of the report
    assert [m.kind for m in table.gm] == ["turn_report"]


def test_process_plays_orders_held_for_the_deadline(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "proc2", PLAYERS, settings={**TIMING, "adjudicate": "deadline"})
    table.silence()
    table.step()
    mover = table[table.mover()]
    orders = mover.bot.write_turn(world.state("proc2"))
    held = mover.reply(mover.latest("your_turn"), orders)
    world.poll()
    assert world.log("proc2") == []
    line = world.gm(gm.process, "proc2")
    assert line == f"proc2: turn 1 played with {mover.name}'s orders"
    assert [(e.turn, e.source, e.message_id) for e in world.log("proc2")] == [(1, "mail", held)]


def test_settings_are_checked() -> None:
    assert check_settings({"turn_hours": 24})["grace_hours"] == 24.0
    bad = [
        ({"turn_hours": 0}, "turn_hours"),
        ({"adjudicate": "sometimes"}, "adjudicate"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"remove_after_of_last": [4, 3]}, "remove_after_of_last"),
        ({"allowed_days": ["mon", "funday"]}, "allowed_days"),
        ({"on_removal": "delete"}, "on_removal"),
    ]
    for stored, key in bad:
        with pytest.raises(ServiceError, match=f"^setting {key} = "):
            check_settings(stored)


def test_zero_grace_applies_the_missed_turn_policy_at_the_deadline(tmp_path) -> None:
    """Issue 13: grace_hours = 0 used to push every passed deadline back by the
    gap since the last poll, so a deadline was never enforced. Now a poll
    right after the deadline plays the missed turn."""
    world = World(tmp_path)
    table = new_table(world, "zero", PLAYERS, settings={**TIMING, "grace_hours": 0})
    table.silence()
    table.step()
    mover, turn = table.mover(), world.game("zero").turn
    world.poll_until(START + timedelta(hours=47), every_hours=0.1)  # cron every 6 minutes
    assert world.game("zero").turn == turn
    world.poll_until(START + timedelta(hours=48, minutes=6), every_hours=0.1)
    assert world.game("zero").turn == turn + 1
    assert [e.source for e in world.log("zero")][-1] == "default"
    assert table.mover() != mover


def test_the_reminder_says_what_the_games_settings_do(tmp_path) -> None:
    """Issue 13: the reminder follows the grace period and the removal policy."""
    world = World(tmp_path)
    settings = {**TIMING, "grace_hours": 12, "on_removal": "bot", "remove_after_misses": 2}
    table = new_table(world, "rem", PLAYERS, settings=settings)
    table.silence()
    table.step()
    mover = table.mover()
    table.clear()
    world.poll_until(START + timedelta(hours=30))  # the 24-hour reminder is due
    table.read_all()
    reminders = table.mails(mover, "reminder")
    assert reminders, [m.kind for m in table[mover].received]
    text = reminders[0].flat
    assert "If none arrive within 12 hours after it (the game's grace), the default turn" in text
    assert "After 2 a player is removed from the game and the greedy bot plays their seat." in (
        text
    )


def test_a_turn_by_mail_stamps_the_rows_with_the_service_clock(tmp_path) -> None:  # noqa: ANN001
    """The clock is the service's (ManualClock here, --now for a GM): the game
    row and the setup orders held for the others take its time, not the wall
    clock's (issue 18)."""
    from sqlmodel import select

    from pbem.service.play.schedule import aware_utc
    from pbem.store import PendingOrders

    world = World(tmp_path)
    table = new_table(world, "clk", ["ann", "bob", "cat"], overrides={"placement": "blind"})
    world.advance(hours=2)
    table.read_all()
    table.seats["ann"].answer()  # ann's placement waits for bob's and cat's
    world.poll()
    with world.session(write=False) as session:
        held = list(session.exec(select(PendingOrders)))
    assert held and {aware_utc(p.received_at) for p in held} == {world.clock.now()}
    table.run(lambda: world.game("clk").turn >= 2)
    assert aware_utc(world.game("clk").updated_at) == world.clock.now()
