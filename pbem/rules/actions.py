"""A player's turn as data: what a mail's orders mean, before any die is rolled.

The order language parses text into these; bots write them; ``turnplan``
runs them with the runtime semantics of ORDERS.md (UNTIL, MOVE clamped,
impossible attacks skipped). All territories and cards are indices.

Actions are values: compare them, hash them, never change one (not frozen
only because frozen dataclasses are slow to build; bots build many).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


@dataclass(slots=True, unsafe_hash=True)
class Trade:
    cards: tuple[int, int, int]


@dataclass(slots=True, unsafe_hash=True)
class Place:
    placements: tuple[tuple[int, int], ...]  # (armies, territory), in the order written


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


@dataclass(slots=True, unsafe_hash=True)
class Until:
    kind: UntilKind = UntilKind.CONQUERED
    n: int = 0


@dataclass(slots=True, unsafe_hash=True)
class Amount:
    """How many armies to move: a number, ALL (all but one), ALL BUT n, or MIN."""

    kind: AmountKind = AmountKind.MIN
    n: int = 0

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


@dataclass(slots=True, unsafe_hash=True)
class Attack:
    source: int
    target: int
    dice: int = 3
    until: Until = UNTIL_CONQUERED
    move: Amount = MOVE_MIN
    reroll: bool = False  # REROLL: use the expert card re-roll where it applies


@dataclass(slots=True, unsafe_hash=True)
class Fortify:
    source: int
    target: int
    amount: Amount


@dataclass(slots=True, unsafe_hash=True)
class Defend:
    """Standing order: roll ``dice`` (1, or 2 to clear it) defending ``territory``."""

    territory: int
    dice: int


TurnAction = Trade | Place | Attack | Fortify | Defend


# ----------------------------------------------------------------------- setup
@dataclass(slots=True, unsafe_hash=True)
class Claim:
    territories: tuple[int, ...]  # preference list, best first


@dataclass(slots=True, unsafe_hash=True)
class PlaceInitial:
    placements: tuple[tuple[int, int], ...]  # (armies, territory)


@dataclass(slots=True, unsafe_hash=True)
class PlaceNeutral:
    placements: tuple[tuple[int, int], ...]  # (armies, territory)


@dataclass(slots=True, unsafe_hash=True)
class Headquarters:
    territory: int


SetupAction = Claim | PlaceInitial | PlaceNeutral | Headquarters
