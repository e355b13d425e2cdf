"""The odds forecast of a mail's orders: exact for chains (checked against the battle
odds of pbem.rules.odds, in fractions), sampled otherwise (checked against the exact
method and against a long seeded simulation of the game's own turn code)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

import pbem.orders.forecast as fc
from pbem.maps import builtin_map
from pbem.orders import check_text
from pbem.orders.forecast import Method, forecast, format_forecast
from pbem.rules import odds
from pbem.rules.actions import Amount, Attack, Place, Until
from pbem.rules.bots import make_bot
from pbem.rules.dice import DiceStream
from pbem.rules.events import AttackSkipped
from pbem.rules.options import Options
from pbem.rules.simulate import setup_game
from pbem.rules.state import GameState
from pbem.rules.turnplan import _attack as play_attack

BOARD = builtin_map("classic")
T = {t.name: t.index for t in BOARD.territories}
TOL_EXACT = 1e-12  # floats against fractions
TOL_SAMPLED = 0.02  # 10,000 runs: four standard errors at p = 1/2


def position(options: Options | None = None, alaska: int = 5) -> GameState:
    """Seat ``me`` to move with Alaska only (3 to place); every other territory 3 armies."""
    state = setup_game(BOARD, options or Options(), 3, 7, [make_bot("random", s) for s in range(3)])
    me = state.current
    other = (me + 1) % 3
    for t in range(len(BOARD.territories)):
        state.owner[t], state.armies[t] = other, 3
    state.owner[T["Alaska"]], state.armies[T["Alaska"]] = me, alaska
    for player in state.players:
        player.cards = []
    state.reinforcements, state.must_trade = 3, False
    return state


PLACE = Place(((3, T["Alaska"]),))


def test_one_attack_is_the_battle_odds() -> None:
    state = position()
    result = forecast(state, [PLACE, Attack(T["Alaska"], T["Alberta"])])
    battle = odds.battle(7, 3, exact=True)  # 8 armies on Alaska, one stays behind
    [a] = result.attacks
    assert result.method is Method.EXACT and result.chain
    assert a.runs == 1.0
    assert abs(a.takes - float(battle.attacker_wins)) < TOL_EXACT
    # armies left: the one behind plus the survivors, wherever MOVE put them
    survivors = sum(k * p for k, p in battle.attacker_survivors.items())
    assert abs(a.source_left + a.target_left - float(1 + survivors)) < TOL_EXACT
    assert abs(result.plan - float(battle.attacker_wins)) < TOL_EXACT
    assert state.armies[T["Alaska"]] == 5 and state.reinforcements == 3  # untouched


def test_a_chain_is_exact() -> None:
    """Alaska -> Alberta -> Ontario, MOVE ALL: the second attack starts with what the
    first one had left, minus the army that stays in Alberta."""
    state = position()
    plan = [
        PLACE,
        Attack(T["Alaska"], T["Alberta"], move=Amount("all")),
        Attack(T["Alberta"], T["Ontario"], move=Amount("all")),
    ]
    result = forecast(state, plan)
    first = odds.battle(7, 3, exact=True)
    runs = sum((p for k, p in first.attacker_survivors.items() if k >= 2), Fraction(0))
    takes = sum(
        (
            p * odds.battle(k - 1, 3, exact=True).attacker_wins
            for k, p in first.attacker_survivors.items()
            if k >= 2
        ),
        Fraction(0),
    )
    one, two = result.attacks
    assert result.method is Method.EXACT and result.chain
    assert abs(one.takes - float(first.attacker_wins)) < TOL_EXACT
    assert abs(two.runs - float(runs)) < TOL_EXACT
    assert abs(two.takes - float(takes)) < TOL_EXACT
    assert abs(result.plan - float(takes)) < TOL_EXACT
    assert one.source_left == pytest.approx(1.0)  # MOVE ALL leaves one behind, won or lost


def _simulate(state: GameState, plan: list, runs: int, seed: str) -> tuple[list[float], float]:
    """A long simulation through the game's own turn code, on another seeded stream."""
    rng = DiceStream(bytes(range(32)), "reference", seed)
    me = state.current
    attacks = [a for a in plan if isinstance(a, Attack)]
    took = [0] * len(attacks)
    wins = 0
    for _ in range(runs):
        s = state.copy()
        n = 0
        for action in plan:
            if isinstance(action, Attack):
                events = play_attack(s, action, rng)
                if not isinstance(events[0], AttackSkipped) and s.owner[action.target] == me:
                    took[n] += 1
                n += 1
            else:
                fc._apply_fixed(s, action)
        wins += all(s.owner[a.target] == me for a in attacks)
    return [t / runs for t in took], wins / runs


NOT_A_CHAIN = [
    PLACE,
    Attack(T["Alaska"], T["Alberta"], until=Until("left", 4)),
    Attack(T["Alaska"], T["Northwest Territory"], move=Amount("all")),
    Attack(T["Alaska"], T["Kamchatka"], until=Until("rolls", 2)),
]


def test_monte_carlo_agrees_with_exact_and_with_a_long_simulation(monkeypatch) -> None:
    state = position(alaska=9)
    exact = forecast(state, NOT_A_CHAIN)
    assert exact.method is Method.EXACT and not exact.chain
    monkeypatch.setattr(fc, "MAX_BOARDS", 1)  # too many boards: sampled instead
    sampled = forecast(state, NOT_A_CHAIN)
    assert sampled.method is Method.MONTE_CARLO and sampled.runs == 10_000
    assert forecast(state, NOT_A_CHAIN) == sampled  # its own fixed stream: same figures
    took, plan = _simulate(state, NOT_A_CHAIN, 40_000, "long")
    for e, m, t in zip(exact.attacks, sampled.attacks, took, strict=True):
        assert abs(e.takes - t) < 0.01  # 40,000 runs: four standard errors
        assert abs(m.takes - e.takes) < TOL_SAMPLED
        assert abs(m.runs - e.runs) < TOL_SAMPLED
        assert abs(m.source_left - e.source_left) < 0.1
    assert abs(exact.plan - plan) < 0.01
    assert abs(sampled.plan - exact.plan) < TOL_SAMPLED
    text = "\n".join(format_forecast(sampled, state))
    assert "Monte Carlo estimate of 10,000 seeded runs" in text


def test_commander_and_card_reroll_follow_the_engine() -> None:
    options = replace(Options(), commander=True, card_reroll=True)
    state = position(options, alaska=6)
    state.players[state.current].cards = [T["Alberta"]]  # the re-roll applies on Alberta
    plan = [
        PLACE,
        Attack(T["Alaska"], T["Alberta"], move=Amount("all")),
        Attack(T["Alberta"], T["Ontario"]),
    ]
    exact = forecast(state, plan)
    took, plan_sim = _simulate(state, plan, 20_000, "commander")
    assert exact.method is Method.EXACT
    plain = forecast(position(alaska=6), plan)
    assert exact.attacks[0].takes > plain.attacks[0].takes + 0.02  # the helps show
    for e, t in zip(exact.attacks, took, strict=True):
        assert abs(e.takes - t) < 0.015  # 20,000 runs: four standard errors
    assert abs(exact.plan - plan_sim) < 0.015


def test_roll_classes_sum_to_one() -> None:
    for att in (1, 2, 3):
        for dfn in (1, 2):
            for reroll in (False, True):
                for commander in (False, True):
                    total = sum(p for _, p in fc.roll_classes(att, dfn, reroll, commander))
                    assert abs(total - 1) < 1e-12
    # a plain 3 v 2: the attacker loses two in 2275 of 7776 rolls (pbem.rules.odds)
    classes = {dice: p for dice, p in fc.roll_classes(3, 2, False, False)}
    assert sorted(round(p * 7776) for p in classes.values()) == [2275, 2611, 2890]


def test_pbem_check_prints_the_forecast() -> None:
    state = position()
    text = "PLACE 3 Alaska\nATTACK Alaska -> Alberta\n"
    result = check_text(text, BOARD, state, state.current)
    assert result.ok, result.report
    assert "Odds before the dice (exact odds, the attacks form a chain" in result.report
    assert "1. Alaska -> Alberta: takes it 91.0%" in result.report
    assert "Whole plan (every territory attacked taken): 91.0%" in result.report
