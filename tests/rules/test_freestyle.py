"""Freestyle play order (``play_order = freestyle``, docs/RULES.md "Play order"):
in each round every player moves once, in the order their orders arrive; the
round ends when everyone still in the game has moved. The engine between turns
stands in phase ROUND with no seat to move; hashes of other games do not move.
(By mail, with the round's deadline: tests/service/test_mail_freestyle.py.)"""

from __future__ import annotations

import pytest

from pbem.orders import parse_orders, validate_turn
from pbem.rules import engine, freestyle
from pbem.rules.errors import RulesError
from pbem.rules.events import RoundBegan, TurnBegan, TurnEnded
from pbem.rules.options import Options
from pbem.rules.state import REINFORCE, ROUND, GameState
from pbem.rules.turnplan import play_turn
from tests.rules.online_support import bot_game
from tests.rules.support import ScriptedDice, arrange, classic, new_state

FREE = Options(play_order="freestyle")
T = classic().territory


def opened(options: Options = FREE, players: int = 3) -> GameState:
    state = new_state(players, options)
    for player in state.players:
        player.cards = []
    return state


def play_empty(state: GameState, seat: int) -> list[object]:
    """``seat`` takes the next turn and places its armies on its first territory."""
    events: list[object] = list(engine.take_turn(state, seat))
    where = state.territories_of(seat)[0]
    events += engine.place(state, where, state.reinforcements)
    events += engine.end_turn(state, ScriptedDice())
    return events


def test_the_play_opens_round_one_to_everyone_with_no_seat_to_move() -> None:
    state = opened()
    assert (state.phase, state.current, state.round, state.turn) == (ROUND, -1, 1, 0)
    assert freestyle.waiting_for(state) == state.order
    assert state.moved == []


def test_the_first_to_arrive_takes_turn_one_with_the_armies_of_the_rules() -> None:
    state = opened()
    arrange(state, {2: [T("Alaska"), T("Alberta")] + list(range(20, 30))})
    events = engine.take_turn(state, 2)
    # 12 territories (Alaska, Alberta and the 10 from North Africa to Siam):
    # 12 // 3 = 4 armies, and Africa (continent 3) held whole: +3
    assert events == [TurnBegan(1, 2, 12, 4, (3,), 3, False)]
    assert (state.phase, state.current, state.turn, state.reinforcements) == (REINFORCE, 2, 1, 7)


def test_each_seat_moves_once_then_the_next_round_opens() -> None:
    state = opened()
    order = [state.order[2], state.order[0], state.order[1]]  # any arrival order
    first = play_empty(state, order[0])
    assert TurnEnded(1, order[0], None) in first
    assert state.moved == [order[0]] and state.phase == ROUND and state.current == -1
    with pytest.raises(RulesError, match=r"has moved in round 1 already"):
        engine.take_turn(state, order[0])
    play_empty(state, order[1])
    last = play_empty(state, order[2])
    assert last[-1] == RoundBegan(2, tuple(state.order))
    assert (state.round, state.moved, state.turn) == (2, [], 3)
    assert freestyle.waiting_for(state) == state.order


def test_no_orders_between_turns_and_none_from_a_seat_that_moved() -> None:
    state = opened()
    with pytest.raises(RulesError, match="no turn is under way"):
        engine.place(state, state.territories_of(0)[0], 1)
    seat = state.order[0]
    play_empty(state, seat)
    where = state.territories_of(seat)[0]
    orders = parse_orders(f"PLACE 3 {state.board.territories[where].name}", state.board).orders
    (problem,) = validate_turn(state, seat, orders)
    assert problem.message == (
        "you have moved in round 1 already (freestyle: one turn each round); "
        "your next turn is in round 2"
    )
    other = state.order[1]
    mine = state.territories_of(other)[0]
    due = engine.turn_of(state, other).reinforcements
    text = f"PLACE {due} {state.board.territories[mine].name}"
    assert validate_turn(state, other, parse_orders(text, state.board).orders) == []
    assert state.phase == ROUND and state.current == -1  # the check changed nothing


def test_the_round_limit_ends_the_game_after_the_last_mover_of_round_n() -> None:
    state = opened(Options(play_order="freestyle", max_turns=2))
    for _ in range(2):
        for seat in list(state.order):
            play_empty(state, seat)
    assert state.winner is not None and state.win_reason == "max_turns"
    assert state.turn == 6  # two rounds of three turns, no more


def test_removing_the_last_player_to_move_opens_the_next_round() -> None:
    state = opened(players=4)
    for seat in state.order[:3]:
        play_empty(state, seat)
    events = engine.remove_player(state, state.order[3])
    assert events[-1] == RoundBegan(2, tuple(state.order[:3]))
    assert state.moved == [] and state.round == 2


def test_moved_is_hashed_only_mid_round_and_matches_the_reference_form() -> None:
    state = opened()
    assert '"moved"' not in state.canonical_json()
    play_empty(state, state.order[1])
    assert '"moved":[' in state.canonical_json()
    assert state.canonical_json() == state.canonical_json_reference()
    again = GameState.from_dict(state.to_dict(), state.board, state.options)
    assert again.canonical_json() == state.canonical_json()


def test_options_record_play_order_only_when_freestyle() -> None:
    assert "play_order" not in Options().to_dict()
    assert FREE.to_dict()["play_order"] == "freestyle"
    with pytest.raises(Exception, match="play_order"):
        Options(play_order="simultaneous")


@pytest.mark.parametrize(
    ("options", "seed", "players"),
    [
        (FREE, 3, 3),
        (Options(play_order="freestyle", team_size=2, fog=True), 5, 4),
        (Options(play_order="freestyle", goal="terminator", max_turns=8), 7, 4),
    ],
    ids=["freestyle", "fog+teams+freestyle", "terminator-freestyle"],
)
def test_whole_bot_games_replay_and_verify(options: Options, seed: int, players: int) -> None:
    played = bot_game(options, seed, players)
    assert not played.result.capped and played.result.winner is not None
    assert played.replayed == played.result.hashes  # the log replays the simulation
    assert played.verified_ok, played.verify_message
    assert played.verified_steps > played.result.turns


def test_turns_play_through_play_turn_like_any_other() -> None:
    state = opened()
    seat = state.order[1]
    engine.take_turn(state, seat)
    engine.place(state, state.territories_of(seat)[0], state.reinforcements)
    events = play_turn(state, [], ScriptedDice())
    assert TurnEnded(1, seat, None) in events and state.moved == [seat]


def test_maps_balance_plays_freestyle_games_the_same_twice() -> None:
    from pbem.maps.balance import play_one

    first = play_one(classic(), FREE, 4, 11, "greedy", 3000)
    assert first.seat is not None and first.turns > 0
    assert play_one(classic(), FREE, 4, 11, "greedy", 3000) == first
    # the arrival order is not the turn order: not the same game as in turn order
    assert play_one(classic(), Options(), 4, 11, "greedy", 3000) != first
