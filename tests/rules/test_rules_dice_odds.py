"""The engine's real battles (attacking.attack with the HMAC DiceStream) against the
exact odds of pbem.rules.odds and the reference counts of dice-odds.txt.

Statistical bound: every observed frequency must lie within 4 standard errors,
sqrt(p (1 - p) / n), of the exact probability. The streams are fixed (a fixed
secret), so the test is deterministic; with a correct engine a 4-SE miss has
odds of about 1 in 16,000 per comparison, and a wrong comparison rule (ties to
the attacker, unsorted dice, a wrong dice count) misses by far more.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from pbem.rules import attacking, engine
from pbem.rules.dice import DiceStream
from pbem.rules.odds import battle, roll_outcomes
from pbem.rules.state import ATTACK
from tests.rules.support import SECRET, arrange, new_state, start_turn

SOURCE, TARGET = 33, 0  # Kamchatka attacks Alaska
SEAT = 0
BOUND = 4.0  # standard errors


def within(observed: int, n: int, p: float) -> tuple[bool, float]:
    se = math.sqrt(p * (1 - p) / n)
    z = abs(observed / n - p) / se if se else float(observed / n != p) * math.inf
    return z <= BOUND, z


def _battles(attackers: int, defenders: int, n: int, label: str):
    """Fight ``n`` battles to the end; count wins and attacker survivors."""
    state = new_state(3)
    defender = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: [SOURCE, 38], defender: [TARGET]})
    start_turn(state, SEAT)
    engine.place(state, 38, state.reinforcements)
    rng = DiceStream(SECRET, "odds", label)
    wins = 0
    survivors: dict[int, int] = {}
    rolls: list = []
    for _ in range(n):
        state.owner[TARGET] = defender
        state.armies[SOURCE] = attackers + 1
        state.armies[TARGET] = defenders
        state.pending_move = None
        state.phase = ATTACK
        result = attacking.attack(state, SOURCE, TARGET, rng)[0]
        rolls.extend(result.rolls)
        if result.conquered:
            wins += 1
            left = result.attacker_left - 1
            survivors[left] = survivors.get(left, 0) + 1
    return wins, survivors, rolls


def test_reference_values_agree_with_the_odds_module() -> None:
    assert battle(1, 1, exact=True).attacker_wins == Fraction(5, 12)
    assert battle(2, 2, exact=True).attacker_wins == Fraction(235, 648)
    assert battle(3, 2, exact=True).attacker_wins == Fraction(6610505, 10077696)
    assert roll_outcomes(3, 2) == {(2, 0): 2275, (1, 1): 2611, (0, 2): 2890}


@pytest.mark.parametrize(
    ("attackers", "defenders", "n"), [(1, 1, 20000), (2, 2, 20000), (3, 2, 20000), (6, 4, 12000)]
)
def test_battles_match_exact_odds(attackers: int, defenders: int, n: int) -> None:
    wins, survivors, _ = _battles(attackers, defenders, n, f"battle:{attackers}:{defenders}")
    odds = battle(attackers, defenders, exact=True)
    ok, z = within(wins, n, float(odds.attacker_wins))
    assert ok, f"{wins}/{n} wins, expected {float(odds.attacker_wins):.4f} (z = {z:.2f})"
    # each outcome of the win: how many attacking armies survive
    for left in range(1, attackers + 1):
        p = float(odds.attacker_survivors.get(left, 0))
        ok, z = within(survivors.get(left, 0), n, p)
        assert ok, f"{left} survivors: {survivors.get(left, 0)}/{n}, expected {p:.4f} (z={z:.2f})"


def test_single_rolls_match_the_reference_counts() -> None:
    """Every roll of long battles, grouped by the dice rolled, against dice-odds.txt."""
    _, _, rolls = _battles(30, 20, 1500, "rolls")
    by_dice: dict[tuple[int, int], list] = {}
    for r in rolls:
        by_dice.setdefault((len(r.attacker), len(r.defender)), []).append(r)
    checked = 0
    for (a, d), group in sorted(by_dice.items()):
        if len(group) < 1000:
            continue
        counts = roll_outcomes(a, d)
        total = sum(counts.values())
        for (att_loss, def_loss), ways in counts.items():
            seen = sum(
                1 for r in group if (r.attacker_losses, r.defender_losses) == (att_loss, def_loss)
            )
            ok, z = within(seen, len(group), ways / total)
            assert ok, f"{a}v{d} {att_loss}/{def_loss}: {seen}/{len(group)} (z = {z:.2f})"
        # every roll is sorted high to low on both sides
        assert all(list(r.attacker) == sorted(r.attacker, reverse=True) for r in group)
        assert all(list(r.defender) == sorted(r.defender, reverse=True) for r in group)
        checked += 1
    assert (3, 2) in by_dice and len(by_dice[(3, 2)]) > 20000
    assert checked >= 1
