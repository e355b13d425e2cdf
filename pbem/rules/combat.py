"""One roll of the dice: compare, apply card re-roll and commander, count losses;
and a plain battle fought to its end (``battle``), the hot path of every game."""

from __future__ import annotations

from typing import Final, Protocol

from pbem.rules.dice import DiceStream
from pbem.rules.events import Roll


class Stream(Protocol):
    def roll(self, count: int) -> list[int]: ...

    def die(self) -> int: ...


def losses(
    attacker: list[int] | tuple[int, ...], defender: list[int] | tuple[int, ...]
) -> tuple[int, int]:
    """Both sorted high to low; compare highest pairs, ties to the defender."""
    a_loss = d_loss = 0
    for a, d in zip(attacker, defender, strict=False):
        if a > d:
            d_loss += 1
        else:
            a_loss += 1
    return a_loss, d_loss


# A plain roll is fully decided by the dice drawn, and there are only 10,836 of
# them (6**2 + 6**3 + 6**4 + 6**3 + 6**4 + 6**5), so each one's Roll is made once
# and shared: the hot path of a simulation is then one dict lookup per roll.
PLAIN: Final[dict[tuple[int, int], dict[tuple[int, ...], Roll]]] = {
    (a, d): {} for a in (1, 2, 3) for d in (1, 2)
}


def plain_roll(att_dice: int, def_dice: int, drawn: tuple[int, ...]) -> Roll:
    """The Roll of ``drawn`` without re-roll or commander, made once and kept in PLAIN."""
    table = PLAIN[(att_dice, def_dice)]
    found = table.get(drawn)
    if found is None:
        attacker = tuple(sorted(drawn[:att_dice], reverse=True))
        defender = tuple(sorted(drawn[att_dice:], reverse=True))
        a_loss, d_loss = losses(attacker, defender)
        found = table[drawn] = Roll(attacker, defender, a_loss, d_loss)
    return found


# The same rolls by code, for the compiled battle loop (attacking.attack): the
# dice drawn d_0 .. d_n-1 (1..6) are the code sum(d_k * 7**(n-1-k)), an index
# into a list per (attacker dice, defender dice) that holds the shared Roll and
# its losses as attacker * 4 + defender (-1 until the roll is first seen). An
# index into a list of ints costs no hashing and no attribute lookup.
CODED_ROLLS: Final[list[list[Roll | None]]] = [
    [None] * 7 ** (a + d) for a in (1, 2, 3) for d in (1, 2)
]
CODED_LOSSES: Final[list[list[int]]] = [[-1] * 7 ** (a + d) for a in (1, 2, 3) for d in (1, 2)]


def pair_index(att_dice: int, def_dice: int) -> int:
    """The index of (att_dice, def_dice) in CODED_ROLLS and CODED_LOSSES."""
    return (att_dice - 1) * 2 + def_dice - 1


def _coded_losses(att_dice: int, def_dice: int, code: int, drawn: tuple[int, ...]) -> int:
    """Fill the coded tables for ``drawn`` (whose code is ``code``); its losses."""
    found = PLAIN[(att_dice, def_dice)].get(drawn) or plain_roll(att_dice, def_dice, drawn)
    pair = pair_index(att_dice, def_dice)
    CODED_ROLLS[pair][code] = found
    packed = found.attacker_losses * 4 + found.defender_losses
    CODED_LOSSES[pair][code] = packed
    return packed


def roll(
    rng: Stream,
    att_dice: int,
    def_dice: int,
    reroll: bool = False,
    commander: bool = False,
    only_if_helps: bool = False,
) -> Roll:
    """Roll once. The attacker's dice are drawn first, then the defender's (DICE.md).

    ``reroll``: the lowest attacking die that lost a comparison is rolled again
    (one extra die drawn after both sides); with ``only_if_helps`` (rules
    version 3) only when ``reroll_helps`` says so, and no die is drawn
    otherwise. ``commander``: one attacking die
    becomes a 6 if that turns a lost comparison into a win (the caller allows
    it once per turn and sees from ``Roll.commander`` whether it was used).
    """
    # DiceStream.roll_tuple slices the dice out of its decoded block; streams made for
    # tests and forecasts need only roll()
    roll_tuple = getattr(rng, "roll_tuple", None)
    count = att_dice + def_dice
    drawn = roll_tuple(count) if roll_tuple is not None else tuple(rng.roll(count))
    plain = PLAIN[(att_dice, def_dice)].get(drawn) or plain_roll(att_dice, def_dice, drawn)
    if not (reroll or commander) or plain.attacker_losses == 0:
        return plain  # nothing lost: neither a re-roll nor the commander applies
    attacker = list(plain.attacker)
    defender = plain.defender
    rerolled = None
    if reroll:
        lost = [i for i in range(min(att_dice, def_dice)) if attacker[i] <= defender[i]]
        i = lost[-1]  # the lowest attacking die that lost
        if not only_if_helps or reroll_helps(plain.attacker, defender):
            old, new = attacker[i], rng.die()
            attacker[i] = new
            attacker.sort(reverse=True)
            rerolled = (old, new)
    used = None
    if commander:
        used = _commander(attacker, defender)
        if used is not None:
            attacker.remove(used[0])
            attacker.append(6)
            attacker.sort(reverse=True)
    a_loss, d_loss = losses(attacker, defender)
    return Roll(tuple(attacker), defender, a_loss, d_loss, rerolled, used)


# reroll_helps, once per sorted roll that lost a comparison (at most 1,029 of them)
HELPS: Final[dict[tuple[tuple[int, ...], tuple[int, ...]], bool]] = {}


def reroll_helps(attacker: tuple[int, ...], defender: tuple[int, ...]) -> bool:
    """The re-roll policy of rules version 3 (``ATTACK ... REROLL``): re-roll the
    lowest attacking die that lost a comparison only when it gains armies on
    average, that is when the mean over its six new values of (defender's losses
    - attacker's losses) is greater than that difference for the roll as it
    stands. A tie keeps the roll (no die drawn). Both sides sorted high to low,
    at least one comparison lost."""
    key = (attacker, defender)
    found = HELPS.get(key)
    if found is not None:
        return found
    lost = [i for i in range(min(len(attacker), len(defender))) if attacker[i] <= defender[i]]
    i = lost[-1]
    a_loss, d_loss = losses(attacker, defender)
    kept = 6 * (d_loss - a_loss)
    after = 0
    for value in range(1, 7):
        trial = list(attacker)
        trial[i] = value
        trial.sort(reverse=True)
        a_new, d_new = losses(trial, defender)
        after += d_new - a_new
    found = HELPS[key] = after > kept
    return found


def _commander(attacker: list[int], defender: tuple[int, ...]) -> tuple[int, int] | None:
    """The die whose change to 6 wins the most comparisons, if any gains one;
    among equal gains the lowest die."""
    _, base = losses(attacker, defender)
    best: tuple[int, int] | None = None
    best_gain = 0
    for value in sorted(set(attacker)):  # lowest value first
        if value == 6:
            continue
        trial = list(attacker)
        trial.remove(value)
        trial.append(6)
        trial.sort(reverse=True)
        gain = losses(trial, defender)[1] - base
        if gain > best_gain:
            best, best_gain = (value, 6), gain
    return best


# ------------------------------------------------- a plain battle to its end
def battle(
    rng: Stream, dice: int, one_die: bool, have: int, left: int, rolls: list[Roll]
) -> tuple[int, int]:
    """Roll until the defender has no army left or the attacker one (no re-roll, no
    commander, no UNTIL): each roll's Roll appended to ``rolls``; the armies left on
    both sides. The same dice and the same Rolls as ``battle_by_rolls``, which stays
    as the reference; a DiceStream takes the fast way (``_battle_from_faces``)."""
    if isinstance(rng, DiceStream):
        return _battle_from_faces(rng, dice, one_die, have, left, rolls)
    return battle_by_rolls(rng, dice, one_die, have, left, rolls)


def battle_by_rolls(
    rng: Stream, dice: int, one_die: bool, have: int, left: int, rolls: list[Roll]
) -> tuple[int, int]:
    """``battle`` as the rulebook says it: one ``roll`` after another."""
    while have >= 2 and left > 0:
        a = dice if dice < have else have - 1
        d = 1 if one_die or left < 2 else 2
        result = roll(rng, a, d)
        rolls.append(result)
        have -= result.attacker_losses
        left -= result.defender_losses
    return have, left


def _battle_from_faces(
    stream: DiceStream, dice: int, one_die: bool, have: int, left: int, rolls: list[Roll]
) -> tuple[int, int]:
    """``battle`` without a call per roll: the dice are sliced from the stream's
    decoded faces (``face_cursor``) and each roll is found by its code in
    CODED_ROLLS/CODED_LOSSES. Where the faces run short or hold a rejected word (0)
    the stream rolls the dice itself (``roll_tuple``), so the dice are the same.
    (Typed DiceStream, not a Protocol: compiled, the stream's calls are direct.)"""
    faces, i = stream.face_cursor() or ((), 0)
    start = i
    count = len(faces)
    while have >= 2:
        a = dice if dice < have else have - 1
        d = 1 if one_die or left < 2 else 2
        n = a + d
        pair = (a - 1) * 2 + d - 1  # pair_index
        code = 0  # the dice as a code, 0 on a rejected word or too few faces
        end: int = i + n
        if end <= count:
            j: int = i
            while j < end:
                face: int = faces[j]
                if face == 0:
                    code = 0
                    break
                code = code * 7 + face
                j += 1
        if code:
            packed = CODED_LOSSES[pair][code]
            if packed < 0:
                packed = _coded_losses(a, d, code, faces[i : i + n])
            result = CODED_ROLLS[pair][code]
            i += n
        else:  # the stream's own path
            if i != start:
                stream.skip_faces(i - start)
            drawn = stream.roll_tuple(n)
            faces, i = stream.face_cursor() or ((), 0)
            count = len(faces)
            start = i
            result = PLAIN[a, d].get(drawn) or plain_roll(a, d, drawn)
            packed = result.attacker_losses * 4 + result.defender_losses
        rolls.append(result)  # type: ignore[arg-type]  # filled with its losses
        have -= packed >> 2
        left -= packed & 3
        if left == 0:
            break
    if i != start:
        stream.skip_faces(i - start)
    return have, left
