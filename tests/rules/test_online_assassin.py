"""Assassin (goal = assassin), from its reading in docs/RULES.md: a secret
target each, one circle; the hunter of a player eliminated by attack wins at
once, whoever attacked; a player removed from the game passes their target to
their hunter.

Classic map: Alaska 0 (next to Kamchatka 33), Indonesia 38.
Seat names: p0, p1, p2, p3.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.rules import attacking, engine, gametypes
from pbem.rules.errors import OptionsError
from pbem.rules.eventcodec import event_from_dict, seats_that_see
from pbem.rules.events import (
    AttackResolved,
    GameWon,
    MovedIn,
    PlayerEliminated,
    TargetDealt,
    TurnOrderDrawn,
)
from pbem.rules.options import Options
from pbem.rules.simulate import play_game
from pbem.rules.state import ENDED, GameState
from tests.rules.support import (
    ScriptedDice,
    arrange,
    classic,
    new_state,
    play_checked_game,
    start_turn,
)

ASSASSIN = load_preset("assassin")


def test_the_targets_of_a_seeded_four_player_game_make_one_circle() -> None:
    """Drawn from the setup stream right after the turn order: game "hunt"
    draws the order 1, 0, 3, 2 and the circle p0 -> p1 -> p3 -> p2 -> p0."""
    state = new_state(4, ASSASSIN, game="hunt")
    assert state.order == [1, 0, 3, 2]
    assert state.targets == [1, 3, 0, 2]
    seat, seen = 0, []
    for _ in range(4):
        seen.append(seat)
        seat = state.targets[seat]
    assert seat == 0 and sorted(seen) == [0, 1, 2, 3]  # one circle through everyone


def test_the_targets_are_dealt_privately_and_replay_the_same() -> None:
    from pbem.rules import opening
    from pbem.rules.dice import DiceStream

    seats = [(f"p{i}", c) for i, c in enumerate(("red", "blue", "yellow", "green"))]
    runs = []
    for _ in range(2):
        stream = DiceStream(bytes(range(32)), "hunt", "setup")
        state, events = opening.new_game(classic(), ASSASSIN, "hunt", seats, stream)
        runs.append((state.state_hash(), events))
    assert runs[0] == runs[1]
    events = runs[0][1]
    assert isinstance(events[0], TurnOrderDrawn)
    dealt = [e for e in events if isinstance(e, TargetDealt)]
    assert dealt == [TargetDealt(s, t) for s, t in ((1, 3), (0, 1), (3, 2), (2, 0))]
    assert [seats_that_see(e) for e in dealt] == [1, 0, 3, 2]  # each to its own seat only
    assert event_from_dict(dealt[0].to_dict()) == dealt[0]


def _hunt(targets: list[int]) -> GameState:
    """Four players; p1 holds only Alaska (1 army); p2, to move, has 10 on Kamchatka."""
    state = new_state(4, ASSASSIN, game="hunt")
    state.targets = list(targets)
    arrange(state, {1: [0], 2: [33]}, armies={33: 10})
    start_turn(state, 2)
    engine.place(state, 33, state.reinforcements)
    return state


def test_a_target_eliminated_by_another_player_wins_for_its_hunter_at_once() -> None:
    """p0 hunts p1; p2 takes p1's last territory: p0 wins, on p2's turn."""
    state = _hunt([1, 2, 3, 0])
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    assert [type(e) for e in events] == [AttackResolved, PlayerEliminated, GameWon, MovedIn]
    assert events[1] == PlayerEliminated(1, 2, 0)
    assert events[2] == GameWon(0, "assassin", "target p1 eliminated by p2")
    assert state.phase == ENDED and state.winner == 0 and state.win_reason == "assassin"


def test_eliminating_your_own_target_wins() -> None:
    state = _hunt([3, 0, 1, 2])  # p2 hunts p1
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    assert events[2] == GameWon(2, "assassin", "target p1 eliminated by p2")


def test_a_target_removed_by_the_gm_passes_to_the_hunter() -> None:
    """p0 hunts p1, p1 hunts p2. The GM removes p1 (armies to the neutral): p0
    now hunts p2, told privately; the game goes on. p2 then falls to p3: p0 wins."""
    state = _hunt([1, 2, 3, 0])
    events = engine.remove_player(state, 1, "removed")
    assert TargetDealt(0, 2, inherited_from=1) in events
    assert seats_that_see(TargetDealt(0, 2, inherited_from=1)) == 0
    assert state.targets == [2, 2, 3, 0]  # p1 keeps their last target, for the record
    assert gametypes.hunter_of(state, 2) == 0 and gametypes.target_of(state, 0) == 2
    assert state.phase != ENDED and not any(isinstance(e, GameWon) for e in events)
    # p2 eliminated by p3 (by hand: the conquest itself is the engine's usual one)
    state.owner = [3 if o == 2 else o for o in state.owner]
    state.players[2].alive = False
    from pbem.rules import victory

    victory.on_elimination(state, 2, 3)
    assert engine.check_victory(state) == [GameWon(0, "assassin", "target p2 eliminated by p3")]


def test_a_resignation_of_the_last_but_one_ends_by_domination() -> None:
    state = new_state(3, ASSASSIN, game="three")
    a, b, c = state.order
    state.targets = [-1, -1, -1]
    state.targets[a], state.targets[b], state.targets[c] = b, c, a
    engine.remove_player(state, b, "resigned")
    assert state.targets[a] == c  # a inherits c
    events = engine.remove_player(state, c, "resigned")
    assert events[-1] == GameWon(a, "domination", f"p{c} resigned")
    assert not any(isinstance(e, TargetDealt) for e in events)  # a would hunt a: nobody


def test_assassin_options_need_three_players() -> None:
    with pytest.raises(OptionsError, match="Assassin needs 3 or more players"):
        Options(goal="assassin", max_players=2)
    with pytest.raises(OptionsError, match="Assassin needs 3 or more players, not 2"):
        Options(goal="assassin").check_players(2)
    assert "secret target" in " ".join(ASSASSIN.describe(4))


def test_games_of_other_goals_carry_no_targets_in_their_state() -> None:
    state = new_state(4, load_preset("classic"), game="hunt")
    assert state.targets == [] and "targets" not in state.to_dict()
    assert state.canonical_json() == state.canonical_json_reference()


def test_whole_assassin_bot_games_end_with_a_winner_and_replay_the_same() -> None:
    reasons = set()
    for seed in (1, 2, 3):
        state, turns = play_checked_game(ASSASSIN, 4, seed, ["random", "greedy"])
        assert state.phase == ENDED and state.players[state.winner].alive
        assert state.canonical_json() == state.canonical_json_reference()
        reasons.add(state.win_reason)
    assert reasons <= {"assassin", "domination"} and "assassin" in reasons
    first = play_game(classic(), ASSASSIN, 4, 7, bot="greedy", keep_hashes=True)
    again = play_game(classic(), replace(ASSASSIN), 4, 7, bot="greedy", keep_hashes=True)
    assert first.winner is not None and first.reason == "assassin"
    assert first.hashes == again.hashes and first.final_hash == again.final_hash


def test_the_greedy_bot_hunts_its_own_target_and_spares_the_others() -> None:
    """A greedy bot never takes the last territory of a player it does not hunt
    (their hunter would win): in games of greedy bots each win is the winner's
    own kill."""
    for seed in (1, 2, 3, 4, 5):
        state, _ = play_checked_game(ASSASSIN, 4, seed, ["greedy"])
        winner = state.winner
        target = state.targets[winner]
        assert state.win_reason == "assassin"
        assert state.players[target].eliminated_by == winner
        out = [p for p in state.players if not p.alive]
        assert len(out) == 1  # only the winner's target was eliminated


def test_the_random_bot_spares_a_last_territory_it_does_not_hunt() -> None:
    """p2 (to move, 10 armies on Kamchatka next to p1's only territory, Alaska):
    hunting p3 it never attacks Alaska (p1's hunter would win); hunting p1 it
    may, and does for some seeds."""
    from pbem.rules.actions import Attack
    from pbem.rules.bots import make_bot

    def attacks_alaska(targets: list[int], seed: int) -> bool:
        plan = make_bot("random", seed).plan_turn(_hunt(targets))
        return any(isinstance(a, Attack) and a.target == 0 for a in plan)

    assert not any(attacks_alaska([1, 2, 3, 0], seed) for seed in range(30))  # p2 hunts p3
    assert any(attacks_alaska([3, 0, 1, 2], seed) for seed in range(30))  # p2 hunts p1


def test_the_odds_say_what_taking_a_last_territory_does() -> None:
    """The CHECK and receipt odds (to the player to move only): p2 attacks Alaska,
    p1's last territory, with p1 its own target, then with p1 another's."""
    from pbem.orders.forecast import forecast_lines
    from pbem.orders.parser import parse_orders

    orders = parse_orders("ATTACK Kamchatka -> Alaska\n", classic()).orders
    state = _hunt([3, 0, 1, 2])  # p2 hunts p1
    lines = forecast_lines(state, orders, 2)
    assert lines[-1] == "  Taking Alaska eliminates p1, your target: you win the game."
    state = _hunt([1, 2, 3, 0])  # p0 hunts p1
    lines = forecast_lines(state, orders, 2)
    assert lines[-1] == (
        "  Taking Alaska eliminates p1, who is not your target: their hunter wins the game."
    )
    assert forecast_lines(state, orders, 0) == []  # not p0's turn: no odds at all
