"""The odds of a battle fought to the end, for players (`pbem odds`) and for tests.

A battle is a walk over states (a, d): ``a`` armies still able to attack (the one left
behind is not counted), ``d`` defending armies.  Every roll uses the most dice allowed
(attacker min(3, a), defender min(2, d)) and loses one or two armies in all, so the
probability of every state follows from the states with more armies: dynamic programming
by decreasing a + d.

Small battles are computed exactly, in fractions.  Large ones in floating point, where one
trick keeps ``pbem odds 1000 1000`` instant: while a >= 3 and d >= 2 every roll is the same
3-against-2 roll, so a whole anti-diagonal (all states with the same a + d) advances at
once as one big-integer multiplication over fixed-point slots (see `_interior_exits`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import product

Prob = Fraction | float
State = tuple[int, int]  # (attacking armies, defending armies)

EXACT_DEFAULT_LIMIT = 400  # attackers * defenders up to which battle() answers in fractions
EXACT_MAX = 10_000  # beyond this, exact fractions grow to thousands of digits: refuse

MAX_ATTACK_DICE = 3
MAX_DEFENCE_DICE = 2


# ------------------------------------------------------------------------------ one roll


@cache
def _sorted_rolls(dice: int) -> dict[tuple[int, ...], int]:
    """How many of the 6**dice rolls give each result, sorted high to low."""
    rolls = product(range(1, 7), repeat=dice)
    return dict(Counter(tuple(sorted(roll, reverse=True)) for roll in rolls))


@cache
def _roll_outcome_counts(att_dice: int, def_dice: int) -> tuple[tuple[State, int], ...]:
    counts: Counter[State] = Counter()
    compared = min(att_dice, def_dice)
    # Every attacker roll meets every defender roll: grouping each side by its sorted
    # result first counts all 6**(att+def) cases without visiting them one by one.
    for att, att_ways in _sorted_rolls(att_dice).items():
        for dfn, def_ways in _sorted_rolls(def_dice).items():
            # compare highest with highest, second with second; ties to the defender
            att_losses = sum(a <= d for a, d in zip(att, dfn, strict=False))
            counts[(att_losses, compared - att_losses)] += att_ways * def_ways
    return tuple(sorted(counts.items()))


def roll_outcomes(att_dice: int, def_dice: int) -> dict[State, int]:
    """(attacker losses, defender losses) -> how many of the 6**(att+def) rolls end so."""
    for name, value, most in (
        ("attacker", att_dice, MAX_ATTACK_DICE),
        ("defender", def_dice, MAX_DEFENCE_DICE),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
            raise ValueError(f"the {name} rolls 1 to {most} dice, not {value!r}")
    return dict(_roll_outcome_counts(att_dice, def_dice))


@cache
def _transitions(exact: bool) -> dict[State, tuple[tuple[State, Prob], ...]]:
    """(attacker dice, defender dice) -> ((attacker losses, defender losses), probability)."""
    table = {}
    for att_dice in range(1, MAX_ATTACK_DICE + 1):
        for def_dice in range(1, MAX_DEFENCE_DICE + 1):
            total = 6 ** (att_dice + def_dice)
            table[(att_dice, def_dice)] = tuple(
                (losses, Fraction(ways, total) if exact else ways / total)
                for losses, ways in roll_outcomes(att_dice, def_dice).items()
            )
    return table


# ------------------------------------------------------------------------------ a battle


@dataclass(frozen=True)
class BattleOdds:
    """How a battle fought to the end comes out.

    The survivor distributions are probabilities of outcomes of the whole battle: the
    attacker's sum to ``attacker_wins``, the defender's to ``defender_holds``, the two to 1.
    Outcomes that cannot happen (or, in floating point, are below about 1e-20) are absent.
    """

    attackers: int
    defenders: int
    exact: bool
    attacker_wins: Prob
    attacker_survivors: dict[int, Prob]  # armies of the attacking ones left -> P(win so)
    defender_survivors: dict[int, Prob]  # defending armies left -> P(hold so)
    expected_attacker_losses: Prob
    expected_defender_losses: Prob

    @property
    def defender_holds(self) -> Prob:
        return 1 - self.attacker_wins


def battle(attackers: int, defenders: int, exact: bool | None = None) -> BattleOdds:
    """Odds of attacking with the most dice until one side is exhausted.

    ``attackers`` counts the armies that may attack (not the one left behind).  ``exact``
    chooses fractions or floats (correct to about 1e-15); by default fractions when
    attackers * defenders <= 400.
    """
    for name, value in (("attackers", attackers), ("defenders", defenders)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a whole number of armies >= 1, not {value!r}")
    if exact is None:
        exact = attackers * defenders <= EXACT_DEFAULT_LIMIT
    elif exact and attackers * defenders > EXACT_MAX:
        raise ValueError(
            f"exact odds are limited to attackers * defenders <= {EXACT_MAX} "
            f"({attackers} * {defenders} = {attackers * defenders}); ask for floats instead"
        )

    if exact:
        ends = _settle({(attackers, defenders): Fraction(1)}, _transitions(True))
    elif attackers >= 3 and defenders >= 2:
        exits: dict[tuple[int, int], Fraction | float] = dict(_interior_exits(attackers, defenders))
        ends = _settle(exits, _transitions(False))
    else:
        ends = _settle({(attackers, defenders): 1.0}, _transitions(False))

    zero: Prob = Fraction(0) if exact else 0.0
    attacker_survivors = {a: p for (a, d), p in sorted(ends.items()) if d == 0 and p}
    defender_survivors = {d: p for (a, d), p in sorted(ends.items()) if a == 0 and p}
    return BattleOdds(
        attackers=attackers,
        defenders=defenders,
        exact=exact,
        attacker_wins=sum(attacker_survivors.values(), zero),
        attacker_survivors=attacker_survivors,
        defender_survivors=defender_survivors,
        expected_attacker_losses=sum(((attackers - a) * p for (a, _), p in ends.items()), zero),
        expected_defender_losses=sum(((defenders - d) * p for (_, d), p in ends.items()), zero),
    )


def _settle(
    start: dict[State, Prob], transitions: dict[State, tuple[tuple[State, Prob], ...]]
) -> dict[State, Prob]:
    """Push the probability of the ``start`` states through every roll to the end states.

    Each roll lowers a + d, so handling the states level by level (largest a + d first)
    finishes every state before anything is taken from it.
    """
    levels: dict[int, dict[State, Prob]] = {}
    for (a, d), p in start.items():
        level = levels.setdefault(a + d, {})
        level[(a, d)] = level.get((a, d), 0) + p
    ends: dict[State, Prob] = {}
    for total in range(max(levels, default=0), -1, -1):
        for (a, d), p in levels.pop(total, {}).items():
            if a == 0 or d == 0:
                ends[(a, d)] = ends.get((a, d), 0) + p
                continue
            for (att_losses, def_losses), chance in transitions[
                (min(a, MAX_ATTACK_DICE), min(d, MAX_DEFENCE_DICE))
            ]:
                level = levels.setdefault(total - att_losses - def_losses, {})
                state = (a - att_losses, d - def_losses)
                level[state] = level.get(state, 0) + p * chance
    return ends


# Fixed-point layout of `_interior_exits`: a slot holds probability * 2**_VALUE_BITS as an
# integer; the 3-v-2 probabilities are integers over 2**_COEF_BITS; a slot is wide enough for
# their product plus headroom, so slots never carry into each other.
_VALUE_BITS = 72
_COEF_BITS = 64
_SLOT_BITS = _VALUE_BITS + _COEF_BITS + 8


def _interior_exits(attackers: int, defenders: int) -> dict[State, float]:
    """Where the walk from (attackers, defenders) first leaves a >= 3 and d >= 2, in floats.

    Inside that region every roll is 3 dice against 2 with three outcomes: defender loses
    2 (a unchanged), each loses 1 (a - 1), attacker loses 2 (a - 2); a + d drops by 2.  The
    states of one anti-diagonal a + d = total are packed into one integer, slot j holding
    state a = low + j, and so are the three chances, as the polynomial

        roll = P(att -2) + P(each -1) * x + P(def -2) * x**2     (x = one slot)

    Then `old * roll` is, slot by slot, the new diagonal (whose slot j is a = low - 2 + j):
    one multiplication rolls every state at once.  Shifting out the coefficient scale and
    masking each slot to its value bits finishes the step; the slots that leave the region
    (a < 3 at the bottom, d < 2 at the top) are read off and removed.  Values are truncated
    to multiples of 2**-72, so every probability is correct to about 1e-17 absolute (tests
    compare with fractions and with a plain float DP); states less likely than that
    vanish, which also keeps the integers short.
    """
    width = _SLOT_BITS
    slot = (1 << width) - 1
    def_two, each_one, att_two = _fixed_point_three_two()
    roll = (def_two << 2 * width) | (each_one << width) | att_two
    value_mask = (1 << (width - _COEF_BITS)) - 1
    # value_mask repeated in every slot: (2**(n*w) - 1) / (2**w - 1) = sum of 2**(j*w)
    slots_needed = attackers + 3
    mask = value_mask * (((1 << (slots_needed * width)) - 1) // slot)
    scale = 2.0**-_VALUE_BITS

    packed = 1 << _VALUE_BITS  # probability 1 at (attackers, defenders)
    low, total = attackers, attackers + defenders
    exits: dict[State, float] = {}
    while packed:
        packed = ((packed * roll) >> _COEF_BITS) & mask
        low -= 2
        total -= 2
        if low < 3:  # attacker down to 1 or 2: those states leave through the bottom
            for a in range(low, 3):
                value = (packed >> ((a - low) * width)) & slot
                if value:
                    exits[(a, total - a)] = value * scale
            packed >>= (3 - low) * width
            low = 3
        first_out = max(low, total - 1)  # defender down to 1 or 0: they leave at the top
        if packed.bit_length() > (first_out - low) * width:
            top = packed >> ((first_out - low) * width)
            for a in range(first_out, total + 1):
                value = (top >> ((a - first_out) * width)) & slot
                if value:
                    exits[(a, total - a)] = value * scale
            packed &= (1 << ((first_out - low) * width)) - 1
        while packed and not packed & slot:  # the least likely states rounded to zero
            packed >>= width
            low += 1
    return exits


@cache
def _fixed_point_three_two() -> tuple[int, int, int]:
    """P(defender loses 2), P(each loses 1), P(attacker loses 2) in units of 2**-_COEF_BITS.

    They sum to exactly one unit, so the packed rolls lose no probability on the way.
    """
    counts = roll_outcomes(3, 2)
    one = 1 << _COEF_BITS
    def_two = round(Fraction(counts[(0, 2)], 6**5) * one)
    each_one = round(Fraction(counts[(1, 1)], 6**5) * one)
    return def_two, each_one, one - def_two - each_one


# ------------------------------------------------------------------------------ output


def _ratio(p: Prob) -> str:
    fraction = Fraction(p)
    return f"{fraction.numerator}/{fraction.denominator}"


def to_json(odds: BattleOdds) -> dict[str, object]:
    """A JSON-ready summary; probabilities as floats, the win chance also as "a/b" if exact."""

    def distribution(survivors: dict[int, Prob]) -> dict[str, float]:
        return {str(armies): float(p) for armies, p in sorted(survivors.items())}

    return {
        "attackers": odds.attackers,
        "defenders": odds.defenders,
        "attacker_wins": float(odds.attacker_wins),
        "defender_holds": float(odds.defender_holds),
        "exact": _ratio(odds.attacker_wins) if odds.exact else None,
        "expected_attacker_losses": float(odds.expected_attacker_losses),
        "expected_defender_losses": float(odds.expected_defender_losses),
        "attacker_survivors": distribution(odds.attacker_survivors),
        "defender_survivors": distribution(odds.defender_survivors),
    }


_MAX_ROWS = 12
_SHOWN = 0.0005  # outcomes beyond the likely ones (this share of their side) make "other"
_LONGEST_RATIO = 40  # longer exact fractions are left to the JSON output


def format_odds(odds: BattleOdds) -> str:
    """A short table for people."""
    how = "exact" if odds.exact else "floating point"
    wins = _percent(odds.attacker_wins)
    if odds.exact and len(_ratio(odds.attacker_wins)) <= _LONGEST_RATIO:
        wins += f"  ({_ratio(odds.attacker_wins)})"
    lines = [
        f"{_armies(odds.attackers)} attacking against {odds.defenders} defending ({how})",
        f"Attacker wins    {wins}",
        f"Defender holds   {_percent(odds.defender_holds)}",
        f"Expected losses  attacker {float(odds.expected_attacker_losses):.2f}, "
        f"defender {float(odds.expected_defender_losses):.2f}",
    ]
    for title, survivors in (
        ("Attacker wins with", odds.attacker_survivors),
        ("Defender holds with", odds.defender_survivors),
    ):
        if survivors:
            lines += ["", f"{title:<22}chance"]
            lines += [f"  {armies:<20}{_percent(p)}" for armies, p in _rows(survivors)]
    return "\n".join(lines)


def _armies(count: int) -> str:
    return f"{count} army" if count == 1 else f"{count} armies"


def _percent(p: Prob) -> str:
    if 0 < p < 0.00005:
        return " <0.01 %"
    if 0.99995 <= p < 1:
        return ">99.99 %"
    return f"{100 * float(p):6.2f} %"


def _rows(survivors: dict[int, Prob]) -> list[tuple[str, float]]:
    """Rows "armies left -> chance" over the likely outcomes: one each, or ranges if many."""
    chances = {armies: float(p) for armies, p in survivors.items()}
    threshold = _SHOWN * sum(chances.values())
    likely = [armies for armies, p in chances.items() if p >= threshold]
    low, high = min(likely), max(likely)
    step = 1 if high - low < _MAX_ROWS else math.ceil((high - low + 1) / (_MAX_ROWS - 2))
    buckets: dict[int, float] = {}
    other = 0.0
    for armies, p in chances.items():
        if low <= armies <= high:
            start = low + (armies - low) // step * step
            buckets[start] = buckets.get(start, 0.0) + p
        else:
            other += p
    rows = [
        (str(start) if step == 1 else f"{start}-{min(start + step - 1, high)}", p)
        for start, p in sorted(buckets.items(), reverse=True)  # most armies left first
    ]
    if other > 0:
        rows.append(("other", other))
    return rows
