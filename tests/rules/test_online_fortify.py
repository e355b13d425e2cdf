"""The parachute fortify (``fortify = parachute``, docs/RULES.md "Online
settings"): one move a turn between any two own territories, no path needed;
hand-computed turns, the refusals and their messages, the engine, bots and a
whole bot game replayed and verified."""

from __future__ import annotations

import re

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import check_text, parse_orders, turn_actions
from pbem.rules import engine
from pbem.rules.actions import Fortify
from pbem.rules.bots import ALL, View, make_bot
from pbem.rules.errors import RulesError
from pbem.rules.events import Fortified
from pbem.rules.options import Options
from pbem.rules.state import GameState
from pbem.rules.turnplan import play_turn
from tests.rules.online_support import bot_game, position, problems
from tests.rules.support import ScriptedDice, classic

PARACHUTE = Options(fortify="parachute")
T = classic().territory
OWN = ["Alaska", "Argentina", "Japan"]


def three(options: Options = PARACHUTE) -> GameState:
    """Seat 0 holds Alaska (2), Argentina (8) and Japan (1), none next to
    another; every other territory 1 army. 3 armies due."""
    state = position(options, {0: [T(n) for n in OWN]}, {T("Argentina"): 8, T("Alaska"): 2})
    assert state.reinforcements == 3
    return state


def played(state: GameState, text: str) -> tuple[GameState, list[object]]:
    turn = state.copy()
    actions = turn_actions(turn, parse_orders(text, turn.board).orders)
    return turn, list(play_turn(turn, actions, ScriptedDice()))


def test_a_parachute_moves_armies_between_territories_far_apart() -> None:
    state = three()
    text = "PLACE 3 Alaska\nFORTIFY 5 Argentina -> Japan"
    assert problems(state, text) == []
    after, events = played(state, text)
    fortified = [e for e in events if isinstance(e, Fortified)]
    assert [(e.source, e.target, e.armies) for e in fortified] == [(T("Argentina"), T("Japan"), 5)]
    assert [after.armies[T(n)] for n in OWN] == [2 + 3, 8 - 5, 1 + 5]
    # ALL leaves one behind, as always
    after, _ = played(state, "PLACE 3 Alaska\nFORTIFY ALL Argentina -> Japan")
    assert [after.armies[T(n)] for n in OWN] == [5, 1, 8]
    # ALL BUT 1: of the 4 that may move from Alaska (2 + 3 placed), 3
    after, _ = played(state, "PLACE 3 Alaska\nFORTIFY ALL BUT 1 Alaska -> Argentina")
    assert [after.armies[T(n)] for n in OWN] == [2, 8 + 3, 1]


def test_the_same_orders_are_refused_where_a_path_is_needed() -> None:
    text = "PLACE 3 Alaska\nFORTIFY 5 Argentina -> Japan"
    assert problems(three(Options(fortify="chained")), text) == [
        (2, "no chain of your territories joins Argentina and Japan")
    ]
    adjacent = problems(three(Options()), text)
    assert adjacent[0][0] == 2 and adjacent[0][1].startswith(
        "Argentina and Japan are not adjacent; Argentina borders Brazil, Peru"
    )


def test_a_parachute_to_a_foreign_territory_is_refused_with_its_owner() -> None:
    state = three()
    owner = state.players[state.owner[T("Brazil")]].name
    assert problems(state, "PLACE 3 Alaska\nFORTIFY 2 Argentina -> Brazil") == [
        (2, f"Brazil is not yours; it is {owner}'s")
    ]
    assert problems(state, "PLACE 3 Alaska\nFORTIFY 2 Brazil -> Japan") == [
        (2, f"Brazil is not yours; it is {owner}'s"),
        (2, "Brazil has 1 army; none can move"),
    ]
    result = check_text("PLACE 3 Alaska\nFORTIFY 2 Argentina -> Brazil", state.board, state)
    assert not result.ok and f"Brazil is not yours; it is {owner}'s" in result.report
    assert "line 2" in result.report.lower() or "2:" in result.report


def test_one_parachute_a_turn_and_one_army_stays() -> None:
    state = three()
    text = "PLACE 3 Alaska\nFORTIFY 2 Argentina -> Japan\nFORTIFY 1 Alaska -> Japan"
    assert problems(state, text) == [(3, "only one FORTIFY is allowed in a turn")]
    assert problems(state, "PLACE 3 Alaska\nFORTIFY 8 Argentina -> Japan") == [
        (2, "Argentina has 8 armies; at most 7 can move")
    ]


def test_the_engine_moves_by_parachute_and_refuses_what_the_rule_refuses() -> None:
    state = three()
    engine.place(state, T("Alaska"), 3)
    with pytest.raises(RulesError, match="both territories must be yours"):
        engine.fortify(state.copy(), T("Argentina"), T("Brazil"), 2)
    moved = state.copy()
    events = engine.fortify(moved, T("Argentina"), T("Japan"), 7)
    assert isinstance(events[-1], Fortified) and moved.armies[T("Japan")] == 8
    with pytest.raises(RulesError, match="only one fortifying move is allowed in a turn"):
        engine.fortify(moved, T("Alaska"), T("Japan"), 1)
    chained = three(Options(fortify="chained"))
    engine.place(chained, T("Alaska"), 3)
    with pytest.raises(RulesError, match="no chain of your territories joins"):
        engine.fortify(chained, T("Argentina"), T("Japan"), 7)


def test_a_bot_drops_its_interior_stack_on_the_most_threatened_border() -> None:
    south = ["Venezuela", "Brazil", "Peru", "Argentina"]
    armies = {T("Peru"): 9, T("Argentina"): 2, T("North Africa"): 6}
    armies |= {T("Mongolia"): 4, T("Kamchatka"): 5}
    state = position(PARACHUTE, {0: [T(n) for n in [*south, "Japan"]]}, armies)
    bot = make_bot("random", 1)
    view = View.of(state, 0)
    # threats: Japan 4 + 5 - 1 = 8, Brazil 6 - 1 = 5, Venezuela 1 - 1 = 0
    assert bot.fortify(state, view, bot.stream(0, state.turn)) == Fortify(
        T("Peru"), T("Japan"), ALL
    )
    plan = bot.plan_turn(state)
    assert plan[-1] == Fortify(T("Peru"), T("Japan"), ALL)
    chained = position(Options(), {0: [T(n) for n in [*south, "Japan"]]}, armies)
    move = bot.fortify(chained, View.of(chained, 0), bot.stream(0, chained.turn))
    assert move is not None and move.target in (T("Venezuela"), T("Brazil"))


def test_a_parachute_bot_game_to_a_winner_replays_and_verifies() -> None:
    game = bot_game(load_preset("parachute"), 2, bot="greedy")
    result = game.result
    assert not result.capped and result.winner is not None
    assert game.replayed == result.hashes and game.final_hash == result.final_hash
    assert game.verified_ok, game.verify_message
    board = classic()
    far = [
        (a, b)
        for a, b in re.findall(r"^FORTIFY \S+ (.+?) -> (.+)$", game.record_text, re.M)
        if not board.adjacent(board.territory(a), board.territory(b))
    ]
    assert far  # the bots did use the parachute
