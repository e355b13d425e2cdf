"""The your-turn mail opens with "Since your last turn" and carries the deadline as a
calendar file; a held mail's receipt carries the odds forecast. Maildir transport, a
clock the test moves, bots answering their mail."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlmodel import select

from pbem.maps import builtin_map
from pbem.report import ics
from pbem.rules.eventcodec import event_from_dict
from pbem.rules.events import AttackResolved, CardsTraded, PlayerEliminated
from pbem.service.play.catchup import since_lines
from pbem.store import TurnResult
from tests.longgame_helpers import START, World, new_table
from tests.orders.test_forecast import position

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24]}
BOARD = builtin_map("classic")
T = {t.name: t.index for t in BOARD.territories}


def test_since_lines_say_who_took_what() -> None:
    state = position()
    me = state.current
    a, b = (me + 1) % 3, (me + 2) % 3
    name = [p.name for p in state.players]
    events = [
        AttackResolved(a, me, T["Alberta"], T["Alaska"], (), True, 3, 0, "conquered"),
        AttackResolved(a, b, T["Alberta"], T["Ontario"], (), True, 3, 0, "conquered"),
        AttackResolved(b, me, T["Ontario"], T["Quebec"], (), False, 1, 2, "exhausted"),
        AttackResolved(a, me, T["Ontario"], T["Quebec"], (), True, 2, 0, "conquered"),
        CardsTraded(b, (1, 2, 3), 6, 2),
        CardsTraded(b, (4, 5, 6), 8, 3),
        CardsTraded(me, (7, 8, 9), 4, 1),  # one's own trade is no news
        PlayerEliminated(b, a, 2),
    ]
    assert since_lines(state, me, events, 2) == [
        f"{name[a]} took Alaska and Quebec from you.",
        f"{name[a]} eliminated {name[b]} (and 2 cards).",
        f"{name[b]} traded 2 sets for 6 + 8 armies.",
        "You received 2 press messages (sent separately).",
        "You hold 1 territory now.",
    ]
    assert since_lines(state, me, [], 0)[0].startswith("Nothing changed for you")


def test_ics_file_is_rfc5545() -> None:
    due = ics.Deadline(
        "world-1", 12, "Ann, the \u00e9lue; first", datetime(2024, 3, 6, 12, 0, tzinfo=UTC), 0
    )
    text = ics.calendar([due], "game.test", datetime(2024, 3, 4, 12, 0, tzinfo=UTC))
    lines = text.split("\r\n")
    assert lines[0] == "BEGIN:VCALENDAR" and lines[-2] == "END:VCALENDAR" and lines[-1] == ""
    assert "UID:pbem-world-1-turn12-seat0@game.test" in lines
    assert "DTEND:20240306T120000Z" in lines and "DTSTART:20240306T113000Z" in lines
    assert "DTSTAMP:20240304T120000Z" in lines
    assert all(len(line.encode()) <= 75 for line in lines)
    unfolded = text.replace("\r\n ", "")
    assert "SUMMARY:[world-1] orders due for turn 12 (Ann\\, the \u00e9lue\\; first)" in unfolded


def test_your_turn_mail_opens_with_what_changed_and_has_the_deadline(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "since", PLAYERS, settings=TIMING)
    table.run(lambda: world.state("since").turn >= 7)  # every player has moved twice
    table.read_all()
    state = world.state("since")
    mover = state.players[state.current].name
    mail = table[mover].latest("your_turn")
    seat = state.current
    with world.session(write=False) as session:
        rows = list(session.exec(select(TurnResult).order_by(TurnResult.seq)))
    own = max(i for i, r in enumerate(rows) if r.seat == seat and r.turn > 0)
    lost = [
        e
        for r in rows[own + 1 :]
        for e in map(event_from_dict, json.loads(r.events_json))
        if isinstance(e, AttackResolved) and e.conquered and e.defender == seat
    ]
    head = mail.text.split("Deadline:")[0]
    assert "Since your last turn:" in head
    for event in lost:
        assert BOARD.territories[event.target].name in " ".join(head.split())
    held = state.territory_count(seat)
    assert f"You hold {held} territories now." in " ".join(head.split())
    [part] = [p for p in mail.msg.iter_attachments() if p.get_content_type() == "text/calendar"]
    assert part.get_filename() == f"since-turn{state.turn}.ics"
    body = part.get_content()
    deadline = world.game("since").deadline
    assert f"DTEND:{deadline.astimezone(UTC):%Y%m%dT%H%M%SZ}" in body
    assert f"UID:pbem-since-turn{state.turn}-seat{seat}@game.test" in body


def test_a_held_mail_gets_the_odds_in_its_receipt(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "odds", PLAYERS, settings={**TIMING, "adjudicate": "deadline"})
    table.silence()
    table.step()
    state = world.state("odds")
    mover = state.players[state.current].name
    seat = state.current
    own = state.territories_of(seat)
    source = max(own, key=lambda t: (state.armies[t], -t))
    target = next(n for n in BOARD.territories[source].neighbours if state.owner[n] != seat)
    src, dst = BOARD.territories[source].name, BOARD.territories[target].name
    body = f"PLACE {state.reinforcements} {src}\nATTACK {src} -> {dst}\n"
    table[mover].reply(table[mover].latest("your_turn"), body)
    world.poll()
    table.read_all()
    receipt = table[mover].latest("receipt")
    assert "played at the deadline" in receipt.flat
    assert "Odds before the dice (exact odds, the attacks form a chain" in receipt.flat
    assert f"1. {src} -> {dst}: takes it" in receipt.flat
    assert world.game("odds").deadline > START  # nothing was played
    assert world.state("odds").turn == state.turn
