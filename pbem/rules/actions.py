"""A player's turn as data: what a mail's orders mean, before any die is rolled.

The order language parses text into these; bots write them; ``turnplan``
runs them with the runtime semantics of ORDERS.md (UNTIL, MOVE clamped,
impossible attacks skipped). All territories and cards are indices.

Actions are values: compare them, hash them, never change one (not frozen
only because frozen dataclasses are slow to build; bots build many). Each
writes its own ``__init__`` (``init=False``): compiled with mypyc, a generated
one would run as Python code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final


@dataclass(init=False, slots=True, unsafe_hash=True)
class Trade:
    cards: tuple[int, int, int]

    def __init__(self, cards: tuple[int, int, int]) -> None:
        self.cards = cards


@dataclass(init=False, slots=True, unsafe_hash=True)
class Place:
    placements: tuple[tuple[int, int], ...]  # (armies, territory), in the order written

    def __init__(self, placements: tuple[tuple[int, int], ...]) -> None:
        self.placements = placements


class UntilKind(StrEnum):
    """When an attack stops (besides running out of armies)."""

    CONQUERED = "conquered"  # the territory is taken
    LEFT = "left"  # UNTIL n LEFT: n armies left in the source
    ROLLS = "rolls"  # UNTIL n ROLLS: after n rolls

    def __repr__(self) -> str:  # the plain text's repr: reprs (and digests of them) unchanged
        return repr(self.value)


class AmountKind(StrEnum):
    """How an amount of armies to move is written."""

    N = "n"  # a number
    ALL = "all"  # every army that may move
    ALL_BUT = "all_but"  # ALL BUT n
    MIN = "min"  # the least the rules allow

    def __repr__(self) -> str:  # the plain text's repr: reprs (and digests of them) unchanged
        return repr(self.value)


@dataclass(init=False, slots=True, unsafe_hash=True)
class Until:
    kind: UntilKind = UntilKind.CONQUERED
    n: int = 0

    def __init__(self, kind: UntilKind | str = UntilKind.CONQUERED, n: int = 0) -> None:
        # the kind's plain text is taken too (same repr, equality and hash), as the
        # compiled class (mypyc) holds only the enum
        # (the enum's own members skip Enum.__call__: the parser makes one per attack)
        self.kind = kind if type(kind) is UntilKind else UntilKind(kind)
        self.n = n


@dataclass(init=False, slots=True, unsafe_hash=True)
class Amount:
    """How many armies to move: a number, ALL (all but one), ALL BUT n, or MIN."""

    kind: AmountKind = AmountKind.MIN
    n: int = 0

    def __init__(self, kind: AmountKind | str = AmountKind.MIN, n: int = 0) -> None:
        # the plain text too, as Until
        self.kind = kind if type(kind) is AmountKind else AmountKind(kind)
        self.n = n

    def resolve(self, available: int, minimum: int = 1) -> int:
        """The amount asked for, given ``available`` armies that may move."""
        if self.kind == AmountKind.N:
            return self.n
        if self.kind == AmountKind.ALL:
            return available
        if self.kind == AmountKind.ALL_BUT:
            return available - self.n
        return minimum


UNTIL_CONQUERED: Final = Until()
MOVE_MIN: Final = Amount()


@dataclass(init=False, slots=True, unsafe_hash=True)
class Attack:
    source: int
    target: int
    dice: int = 3
    until: Until = UNTIL_CONQUERED
    move: Amount = MOVE_MIN
    reroll: bool = False  # REROLL: use the expert card re-roll where it applies
    commander: bool = False  # COMMANDER (rules version 3): use the expert commander here

    def __init__(
        self,
        source: int,
        target: int,
        dice: int = 3,
        until: Until = UNTIL_CONQUERED,
        move: Amount = MOVE_MIN,
        reroll: bool = False,
        commander: bool = False,
    ) -> None:
        self.source = source
        self.target = target
        self.dice = dice
        self.until = until
        self.move = move
        self.reroll = reroll
        self.commander = commander

    def __repr__(self) -> str:
        """The dataclass's repr, naming ``commander`` only when set: the reprs of the
        orders before COMMANDER existed (and digests of them) stay the same."""
        text = (
            f"Attack(source={self.source!r}, target={self.target!r}, dice={self.dice!r}, "
            f"until={self.until!r}, move={self.move!r}, reroll={self.reroll!r}"
        )
        return text + (", commander=True)" if self.commander else ")")


class CommanderUse(StrEnum):
    """Where the expert commander may be used, under rules version 3 (versions 1
    and 2 use it on the turn's first roll where it wins a comparison)."""

    DEFAULT = "default"  # no ATTACK of the turn says COMMANDER: a roll of 3 attacking dice
    HERE = "here"  # this ATTACK says COMMANDER: any roll of it
    ELSEWHERE = "elsewhere"  # another ATTACK of the turn says COMMANDER: not this one

    def __repr__(self) -> str:  # as the other kinds: the plain text's repr
        return repr(self.value)


def commander_named(actions: Sequence[TurnAction]) -> bool:
    """Does an ATTACK of the turn's ``actions`` say COMMANDER?"""
    return any(isinstance(a, Attack) and a.commander for a in actions)


def commander_use(action: Attack, named: bool) -> CommanderUse:
    """Where the commander may be used in ``action``; ``named``: commander_named
    of the turn's actions."""
    if action.commander:
        return CommanderUse.HERE
    return CommanderUse.ELSEWHERE if named else CommanderUse.DEFAULT


@dataclass(init=False, slots=True, unsafe_hash=True)
class Fortify:
    source: int
    target: int
    amount: Amount

    def __init__(self, source: int, target: int, amount: Amount) -> None:
        self.source = source
        self.target = target
        self.amount = amount


@dataclass(init=False, slots=True, unsafe_hash=True)
class Defend:
    """Standing order: roll ``dice`` (1, or 2 to clear it) defending ``territory``."""

    territory: int
    dice: int

    def __init__(self, territory: int, dice: int) -> None:
        self.territory = territory
        self.dice = dice


TurnAction = Trade | Place | Attack | Fortify | Defend


# ----------------------------------------------------------------------- setup
@dataclass(init=False, slots=True, unsafe_hash=True)
class Claim:
    territories: tuple[int, ...]  # preference list, best first

    def __init__(self, territories: tuple[int, ...]) -> None:
        self.territories = territories


@dataclass(init=False, slots=True, unsafe_hash=True)
class PlaceInitial:
    placements: tuple[tuple[int, int], ...]  # (armies, territory)

    def __init__(self, placements: tuple[tuple[int, int], ...]) -> None:
        self.placements = placements


@dataclass(init=False, slots=True, unsafe_hash=True)
class PlaceNeutral:
    placements: tuple[tuple[int, int], ...]  # (armies, territory)

    def __init__(self, placements: tuple[tuple[int, int], ...]) -> None:
        self.placements = placements


@dataclass(init=False, slots=True, unsafe_hash=True)
class Headquarters:
    territory: int

    def __init__(self, territory: int) -> None:
        self.territory = territory


SetupAction = Claim | PlaceInitial | PlaceNeutral | Headquarters
