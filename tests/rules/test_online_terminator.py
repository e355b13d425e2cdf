"""Terminator (goal = terminator), from its reading in docs/RULES.md: 1 point
for each player eliminated by your attack, none for a player removed from the
game, none lost; the game ends after max_turns rounds (required) or with one
player left; at the limit the first of the standings still in the game wins:
most points, then territories, then armies, then turn order.

Classic map: Alaska 0 and Japan 32, both next to Kamchatka 33.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.rules import attacking, engine, gametypes
from pbem.rules.errors import OptionsError
from pbem.rules.eventcodec import seats_that_see
from pbem.rules.events import GameWon, PlayerEliminated, PointScored, TurnEnded
from pbem.rules.options import Options
from pbem.rules.simulate import play_game
from pbem.rules.state import ENDED
from tests.rules.support import (
    ScriptedDice,
    arrange,
    classic,
    new_state,
    play_checked_game,
    start_turn,
)

TERMINATOR = load_preset("terminator")


def test_points_for_each_elimination_by_attack_none_for_a_removal() -> None:
    """p2 (10 on Kamchatka) takes Alaska, p1's last (1 point), then Japan, p3's
    last (2 points); the GM removes p0: nobody scores."""
    state = new_state(4, TERMINATOR, game="term")
    assert 32 in classic().territories[33].neighbours
    arrange(state, {1: [0], 3: [32], 2: [33]}, armies={33: 10})
    start_turn(state, 2)
    engine.place(state, 33, state.reinforcements)
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    assert events[1:3] == [PlayerEliminated(1, 2, 0), PointScored(2, 1, 1)]
    assert seats_that_see(events[2]) is None  # public
    attacking.move_in(state, 3)
    events = attacking.attack(state, 33, 32, ScriptedDice([6, 6, 6, 1]))
    assert events[1:3] == [PlayerEliminated(3, 2, 0), PointScored(2, 3, 2)]
    assert state.phase != ENDED  # p0 and p2 are left
    attacking.move_in(state, 3)
    events = engine.remove_player(state, 0, "removed")
    assert not any(isinstance(e, PointScored) for e in events)
    assert events[-1] == GameWon(2, "domination", "p0 removed")  # one player left
    assert [gametypes.points(state, s) for s in range(4)] == [0, 0, 2, 0]
    assert gametypes.standings(state)[0] == 2


def _limit_state(territories: dict[int, int], max_turns: int = 1):
    """Five players; the last two in turn order are out: the fifth eliminated
    by the second, the fourth by the third (1 point each)."""
    state = new_state(5, replace(TERMINATOR, max_turns=max_turns), game="limit")
    o = state.order
    lands, first = {}, 0
    for position, count in territories.items():
        lands[o[position]] = list(range(first, first + count))
        first += count
    arrange(state, lands)  # the rest round robin to o[3], o[4]...
    for position in (3, 4):
        state.owner = [o[0] if x == o[position] else x for x in state.owner]
        state.players[o[position]].alive = False
    state.players[o[4]].eliminated_by = o[1]
    state.players[o[3]].eliminated_by = o[2]
    return state


def test_at_the_round_limit_points_decide_then_territories() -> None:
    """o0 holds the most territories (0 points); o1 and o2 have 1 point each,
    o2 holds 12 territories to o1's 10: o2 wins, decided by territories."""
    state = _limit_state({1: 10, 2: 12})
    o = state.order
    assert [state.territory_count(o[p]) for p in range(3)] == [20, 10, 12]
    events = []
    for _ in range(3):
        assert state.phase != ENDED
        state.reinforcements = 0
        events = engine.end_turn(state, ScriptedDice())
    assert events[-2:] == [
        TurnEnded(3, o[2], None),
        GameWon(o[2], "points", "1 point, decided by most territories, after 1 round"),
    ]
    assert state.winner == o[2] and state.win_reason == "points"
    assert gametypes.standings(state) == [o[2], o[1], o[0], o[3], o[4]]


def test_at_the_round_limit_points_alone_decide() -> None:
    state = _limit_state({1: 10, 2: 12})
    o = state.order
    state.players[o[3]].eliminated_by = o[1]  # o1 now has 2 points
    for _ in range(3):
        state.reinforcements = 0
        events = engine.end_turn(state, ScriptedDice())
    assert events[-1] == GameWon(o[1], "points", "2 points, decided by most points, after 1 round")


def test_the_game_ends_exactly_after_the_last_turn_of_round_n() -> None:
    state = new_state(3, replace(TERMINATOR, max_turns=2), game="rounds")
    for turn in range(1, 7):
        assert state.phase != ENDED and state.turn == turn and state.round == (turn + 2) // 3
        state.reinforcements = 0
        events = engine.end_turn(state, ScriptedDice())
    assert state.phase == ENDED and state.turn == 6 and state.round == 3
    assert events[-2] == TurnEnded(6, state.order[2], None)


def test_terminator_options_need_a_round_limit_and_three_players() -> None:
    with pytest.raises(OptionsError, match="goal = terminator needs a round limit: set max_turns"):
        Options(goal="terminator")
    with pytest.raises(OptionsError, match="Terminator needs 3 or more players"):
        Options(goal="terminator", max_turns=10, max_players=2)
    with pytest.raises(OptionsError, match="Terminator needs 3 or more players, not 2"):
        Options(goal="terminator", max_turns=10).check_players(2)
    lines = TERMINATOR.describe(4)
    assert any(line.startswith("Terminator: 1 point for each player") for line in lines)
    assert any("20 rounds" in line and "most points wins" in line for line in lines)


def test_whole_terminator_bot_games_end_with_a_winner_and_replay_the_same() -> None:
    for seed in (1, 2):
        state, turns = play_checked_game(TERMINATOR, 4, seed, ["random", "greedy"])
        assert state.phase == ENDED and state.players[state.winner].alive
        assert state.win_reason in ("points", "domination")
        if state.win_reason == "points":
            assert state.round == 21 and turns == state.turn
    first = play_game(classic(), TERMINATOR, 4, 5, bot="greedy", keep_hashes=True)
    again = play_game(classic(), TERMINATOR, 4, 5, bot="greedy", keep_hashes=True)
    assert first.winner is not None and first.hashes == again.hashes


def test_the_odds_say_a_kill_is_a_point() -> None:
    from pbem.orders.forecast import forecast_lines
    from pbem.orders.parser import parse_orders

    state = new_state(4, TERMINATOR, game="term")
    arrange(state, {1: [0], 2: [33]}, armies={33: 10})
    start_turn(state, 2)
    orders = parse_orders(
        f"PLACE {state.reinforcements} Kamchatka\nATTACK Kamchatka -> Alaska\n", classic()
    ).orders
    lines = forecast_lines(state, orders, 2)
    assert lines[-1] == "  Taking Alaska eliminates p1: a point for you."


def test_a_removal_on_the_last_turn_of_the_last_round_ends_the_game() -> None:
    state = new_state(3, replace(TERMINATOR, max_turns=1), game="rounds")
    for _ in range(2):
        state.reinforcements = 0
        engine.end_turn(state, ScriptedDice())
    last = state.order[2]
    assert state.current == last and state.round == 1
    events = engine.remove_player(state, last, "resigned")
    assert events[-2] == TurnEnded(3, last, None)
    assert isinstance(events[-1], GameWon) and events[-1].reason == "points"
    assert state.phase == ENDED and state.turn == 3  # round 2 never begins
