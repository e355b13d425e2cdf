"""Battle odds against the reference counts and against naive re-computations."""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from functools import cache
from itertools import product
from pathlib import Path

import pytest

from pbem.rules.odds import (
    EXACT_DEFAULT_LIMIT,
    EXACT_MAX,
    BattleOdds,
    battle,
    format_odds,
    roll_outcomes,
    to_json,
)

# The shared reference (outside the repository); a verbatim copy is kept here so the tests
# also run where it is absent, and a test checks the copy against the file when present.
REFERENCE_FILE = (
    Path(os.environ.get("PBEM_REFERENCE_DIR", "/work/shared/reference")) / "dice-odds.txt"
)
REFERENCE_COPY = """\
# Exact outcome counts of ONE roll, ties to the defender.
# dice A v D : total cases | outcomes
1v1: 36   | attacker loses 1: 21 | defender loses 1: 15
2v1: 216  | attacker loses 1: 91 | defender loses 1: 125
3v1: 1296 | attacker loses 1: 441 | defender loses 1: 855
1v2: 216  | attacker loses 1: 161 | defender loses 1: 55
2v2: 1296 | attacker loses 2: 581 | each loses 1: 420 | defender loses 2: 295
3v2: 7776 | attacker loses 2: 2275 | each loses 1: 2611 | defender loses 2: 2890

# Whole battle, attacking until one side is exhausted with the most dice:
# with A armies able to attack (the army left behind not counted) against D,
# P(A=1, D=1) = 5/12, P(A=2, D=2) = 235/648, P(A=3, D=2) = 6610505/10077696.
"""


def reference_text() -> str:
    return REFERENCE_FILE.read_text() if REFERENCE_FILE.exists() else REFERENCE_COPY


def parse_roll_counts(text: str) -> dict[tuple[int, int], tuple[int, dict[tuple[int, int], int]]]:
    """Lines like `3v2: 7776 | attacker loses 2: 2275 | ...` -> {(3, 2): (7776, {(2, 0): ...})}."""
    table = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(\d)v(\d):\s*(\d+)\s*((?:\|[^|]+)+)", line.strip())
        if not match:
            continue
        att, dfn, total, rest = match.groups()
        outcomes = {}
        for part in rest.strip("| ").split("|"):
            who, amount, count = re.fullmatch(
                r"\s*(attacker|defender|each) loses (\d): (\d+)\s*", part
            ).groups()
            losses = int(amount)
            key = {"attacker": (losses, 0), "defender": (0, losses), "each": (losses, losses)}[who]
            outcomes[key] = int(count)
        table[(int(att), int(dfn))] = (int(total), outcomes)
    return table


def parse_battle_odds(text: str) -> dict[tuple[int, int], Fraction]:
    found = re.findall(r"P\(A=(\d+), D=(\d+)\) = (\d+)/(\d+)", text)
    return {(int(a), int(d)): Fraction(int(n), int(m)) for a, d, n, m in found}


# ------------------------------------------------------------------------------ one roll


def test_reference_copy_matches_the_shared_file() -> None:
    if not REFERENCE_FILE.exists():
        pytest.skip(f"{REFERENCE_FILE} is not on this machine")
    assert REFERENCE_FILE.read_text() == REFERENCE_COPY


def test_roll_outcomes_equal_the_reference_counts() -> None:
    table = parse_roll_counts(reference_text())
    assert sorted(table) == [(a, d) for a in (1, 2, 3) for d in (1, 2)]
    for (att, dfn), (total, outcomes) in table.items():
        assert total == 6 ** (att + dfn)
        assert sum(outcomes.values()) == total
        assert roll_outcomes(att, dfn) == outcomes, (att, dfn)


def test_roll_outcomes_equal_brute_force() -> None:
    # one case at a time, straight from the rules: sort, compare highest pairs, ties defend
    for att, dfn in product((1, 2, 3), (1, 2)):
        counts: dict[tuple[int, int], int] = {}
        for dice in product(range(1, 7), repeat=att + dfn):
            high_att = sorted(dice[:att], reverse=True)
            high_def = sorted(dice[att:], reverse=True)
            att_losses = def_losses = 0
            for i in range(min(att, dfn)):
                if high_att[i] > high_def[i]:
                    def_losses += 1
                else:
                    att_losses += 1
            counts[(att_losses, def_losses)] = counts.get((att_losses, def_losses), 0) + 1
        assert roll_outcomes(att, dfn) == counts


def test_roll_outcomes_refuses_impossible_dice() -> None:
    for att, dfn in ((0, 1), (4, 1), (1, 0), (1, 3), (True, 1), (2.0, 1)):
        with pytest.raises(ValueError, match="rolls 1 to"):
            roll_outcomes(att, dfn)  # type: ignore[arg-type]


def test_roll_outcomes_result_is_a_fresh_dict() -> None:
    first = roll_outcomes(1, 1)
    first[(1, 0)] = 0
    assert roll_outcomes(1, 1) == {(0, 1): 15, (1, 0): 21}


# ------------------------------------------------------------------------------ battles


def test_reference_battles() -> None:
    expected = parse_battle_odds(reference_text())
    assert expected == {
        (1, 1): Fraction(5, 12),
        (2, 2): Fraction(235, 648),
        (3, 2): Fraction(6610505, 10077696),
    }
    for (att, dfn), chance in expected.items():
        odds = battle(att, dfn)
        assert odds.exact
        assert odds.attacker_wins == chance
        assert isinstance(odds.attacker_wins, Fraction)


def test_small_battles_by_hand() -> None:
    one = battle(1, 1)
    assert one.attacker_survivors == {1: Fraction(15, 36)}
    assert one.defender_survivors == {1: Fraction(21, 36)}
    assert one.expected_attacker_losses == Fraction(7, 12)
    assert one.expected_defender_losses == Fraction(5, 12)
    assert one.defender_holds == Fraction(7, 12)

    # 2 v 1: the defender loses at once (125/216), or it is 1 v 1 after (91/216)
    two = battle(2, 1)
    assert two.attacker_survivors == {2: Fraction(125, 216), 1: Fraction(91, 216) * Fraction(5, 12)}
    assert two.defender_survivors == {1: Fraction(91, 216) * Fraction(7, 12)}
    assert two.expected_attacker_losses == Fraction(91, 216) * (1 + Fraction(7, 12))


@cache
def naive_outcome(att: int, dfn: int) -> dict[tuple[int, int], Fraction]:
    """End state -> probability, by plain recursion over the rolls (independent of odds.py)."""
    if att == 0 or dfn == 0:
        return {(att, dfn): Fraction(1)}
    att_dice, def_dice = min(att, 3), min(dfn, 2)
    total = 6 ** (att_dice + def_dice)
    result: dict[tuple[int, int], Fraction] = {}
    for (att_loss, def_loss), ways in roll_outcomes(att_dice, def_dice).items():
        for end, p in naive_outcome(att - att_loss, dfn - def_loss).items():
            result[end] = result.get(end, Fraction(0)) + Fraction(ways, total) * p
    return result


def test_exact_battles_equal_a_naive_recursion() -> None:
    for att in range(1, 9):
        for dfn in range(1, 9):
            ends = naive_outcome(att, dfn)
            odds = battle(att, dfn)
            assert odds.attacker_survivors == {a: p for (a, d), p in sorted(ends.items()) if d == 0}
            assert odds.defender_survivors == {d: p for (a, d), p in sorted(ends.items()) if a == 0}
            assert odds.expected_attacker_losses == sum((att - a) * p for (a, _), p in ends.items())
            assert odds.expected_defender_losses == sum((dfn - d) * p for (_, d), p in ends.items())


def test_distributions_sum_to_one_exactly() -> None:
    for att, dfn in ((1, 1), (3, 2), (7, 4), (20, 20), (1, 40), (40, 1)):
        odds = battle(att, dfn)
        assert odds.exact
        assert sum(odds.attacker_survivors.values()) == odds.attacker_wins
        assert sum(odds.defender_survivors.values()) == odds.defender_holds
        assert odds.attacker_wins + odds.defender_holds == 1
        assert set(odds.attacker_survivors) == set(range(1, att + 1))  # all can happen
        assert set(odds.defender_survivors) == set(range(1, dfn + 1))
        assert all(p > 0 for p in odds.attacker_survivors.values())


def assert_close(exact: BattleOdds, approx: BattleOdds, tolerance: float) -> None:
    assert not approx.exact
    assert isinstance(approx.attacker_wins, float)
    assert abs(exact.attacker_wins - approx.attacker_wins) < tolerance
    for name in ("attacker_survivors", "defender_survivors"):
        want, got = getattr(exact, name), getattr(approx, name)
        assert set(got) <= set(want)
        for armies, p in want.items():
            assert abs(p - got.get(armies, 0.0)) < tolerance, (name, armies)
    for name in ("expected_attacker_losses", "expected_defender_losses"):
        want = getattr(exact, name)
        assert abs(want - getattr(approx, name)) < tolerance * max(1, want)


def test_float_and_exact_agree() -> None:
    # mid-size, both sides long; and the edge paths where one side starts small
    for att, dfn in ((30, 25), (60, 40), (3, 2), (2, 50), (50, 1), (1, 1), (4, 2)):
        assert_close(battle(att, dfn, exact=True), battle(att, dfn, exact=False), 1e-12)


def naive_float_battle(att: int, dfn: int) -> tuple[dict[int, float], dict[int, float]]:
    """A plain float DP over every state, row by row, written independently of odds.py."""
    chances = {
        (a, d): {k: ways / 6 ** (a + d) for k, ways in roll_outcomes(a, d).items()}
        for a in (1, 2, 3)
        for d in (1, 2)
    }
    mass = {(att, dfn): 1.0}
    wins: dict[int, float] = {}
    holds: dict[int, float] = {}
    for total in range(att + dfn, 0, -1):
        for a in range(min(att, total), -1, -1):
            p = mass.pop((a, total - a), 0.0)
            d = total - a
            if not p or d < 0:
                continue
            if d == 0:
                wins[a] = p
            elif a == 0:
                holds[d] = p
            else:
                for (la, ld), q in chances[(min(a, 3), min(d, 2))].items():
                    mass[(a - la, d - ld)] = mass.get((a - la, d - ld), 0.0) + p * q
    return wins, holds


@pytest.mark.parametrize("att, dfn", [(1000, 1000), (300, 20), (20, 300), (5, 700)])
def test_large_float_battles_equal_a_plain_float_dp(att: int, dfn: int) -> None:
    wins, holds = naive_float_battle(att, dfn)
    odds = battle(att, dfn)
    assert not odds.exact
    assert abs(odds.attacker_wins - sum(wins.values())) < 1e-12
    for want, got in ((wins, odds.attacker_survivors), (holds, odds.defender_survivors)):
        assert max(abs(p - got.get(armies, 0.0)) for armies, p in want.items()) < 1e-15
        assert set(got) <= set(want)
    total = sum(odds.attacker_survivors.values()) + sum(odds.defender_survivors.values())
    assert abs(total - 1) < 1e-12


def test_thousand_against_thousand_values() -> None:
    # literals from the plain float DP above (0.9989113234289511, 853.1796232556424, ...)
    odds = battle(1000, 1000)
    assert odds.attacker_wins == pytest.approx(0.99891132342895, abs=1e-13)
    assert odds.expected_attacker_losses == pytest.approx(853.1796232556424, abs=1e-10)
    assert odds.expected_defender_losses == pytest.approx(999.9828285898823, abs=1e-10)


def test_monotonic_in_both_armies() -> None:
    grid = {(a, d): battle(a, d).attacker_wins for a in range(1, 13) for d in range(1, 13)}
    for (a, d), p in grid.items():
        if a > 1:
            assert p > grid[(a - 1, d)]
        if d > 1:
            assert p < grid[(a, d - 1)]
    floats = [battle(a, 60, exact=False).attacker_wins for a in range(40, 120, 10)]
    assert floats == sorted(floats) and len(set(floats)) == len(floats)
    floats = [battle(90, d, exact=False).attacker_wins for d in range(40, 120, 10)]
    assert floats == sorted(floats, reverse=True) and len(set(floats)) == len(floats)


def test_exact_is_chosen_by_size() -> None:
    assert EXACT_DEFAULT_LIMIT == 400
    assert battle(20, 20).exact
    assert battle(400, 1).exact
    assert not battle(21, 20).exact
    assert battle(21, 20, exact=True).exact
    assert not battle(2, 2, exact=False).exact
    assert isinstance(battle(2, 2, exact=False).attacker_wins, float)
    assert battle(2, 2, exact=False).attacker_wins == pytest.approx(235 / 648, abs=1e-15)


def test_bad_battles_are_refused() -> None:
    for att, dfn in ((0, 1), (1, 0), (-3, 2), (1.5, 2), (True, 2), ("3", 2)):
        with pytest.raises(ValueError, match="whole number of armies"):
            battle(att, dfn)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"<= {EXACT_MAX}"):
        battle(101, 100, exact=True)


# ------------------------------------------------------------------------------ output


def test_to_json_exact() -> None:
    data = to_json(battle(3, 2))
    assert data == {
        "attackers": 3,
        "defenders": 2,
        "attacker_wins": 6610505 / 10077696,
        "defender_holds": 1 - 6610505 / 10077696,
        "exact": "6610505/10077696",
        "expected_attacker_losses": float(battle(3, 2).expected_attacker_losses),
        "expected_defender_losses": float(battle(3, 2).expected_defender_losses),
        "attacker_survivors": {
            "1": float(battle(3, 2).attacker_survivors[1]),
            "2": float(battle(3, 2).attacker_survivors[2]),
            "3": float(battle(3, 2).attacker_survivors[3]),
        },
        "defender_survivors": {
            "1": float(battle(3, 2).defender_survivors[1]),
            "2": float(battle(3, 2).defender_survivors[2]),
        },
    }
    assert json.loads(json.dumps(data)) == data
    assert to_json(battle(1, 1))["exact"] == "5/12"


def test_to_json_float() -> None:
    data = to_json(battle(50, 40))
    assert data["exact"] is None
    assert data["attacker_wins"] == battle(50, 40).attacker_wins
    assert list(data["attacker_survivors"]) == sorted(data["attacker_survivors"], key=int)
    json.dumps(data)


def test_format_odds_small() -> None:
    assert format_odds(battle(3, 2)) == (
        "3 armies attacking against 2 defending (exact)\n"
        "Attacker wins     65.60 %  (6610505/10077696)\n"
        "Defender holds    34.40 %\n"
        "Expected losses  attacker 1.41, defender 1.44\n"
        "\n"
        "Attacker wins with    chance\n"
        "  3                    37.17 %\n"
        "  2                    19.43 %\n"
        "  1                     9.00 %\n"
        "\n"
        "Defender holds with   chance\n"
        "  2                    21.81 %\n"
        "  1                    12.60 %"
    )


def test_format_odds_large_is_short() -> None:
    text = format_odds(battle(1000, 1000))
    assert text.startswith("1000 armies attacking against 1000 defending (floating point)\n")
    assert "Attacker wins     99.89 %\n" in text
    assert len(text.splitlines()) <= 5 + 2 * 14
    assert "other" in text  # the unlikely tails are summed, not listed
    assert "1 army attacking" in format_odds(battle(1, 30))
    assert "Defender holds   >99.99 %" in format_odds(battle(1, 30))
