"""The board as plain, immutable data: territories, continents, cards, missions.

Territories, continents and cards are referred to by index everywhere in the
engine (fast, and independent of hashing); names are for people and are
looked up here.  Card ids: ``0 .. T-1`` is the card of territory ``i``;
``T .. T+wilds-1`` are wild cards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Final

DESIGNS: Final = ("infantry", "cavalry", "artillery")
WILD: Final = "wild"
NO_CARD: Final = "none"  # a territory without a card (Domination .cards files may leave some out)

_FOLD: Final = re.compile(r"[\s_\-]+")

#: The player colours of a map that names none: the six classic ones, spelt as
#: maps and missions spell them (lower case). A map's ``colours`` replace them.
CLASSIC_COLOURS: Final = ("red", "blue", "yellow", "green", "black", "purple")


def by_fields(obj: Any) -> tuple[Any, ...]:
    """``__reduce__`` of the frozen dataclasses: rebuilt through ``__init__`` from
    their fields. (Compiled with mypyc, a frozen dataclass cannot be unpickled
    attribute by attribute, and process pools pickle boards and options.)"""
    return (type(obj), tuple(getattr(obj, f.name) for f in fields(obj)))


def fold_name(text: str) -> str:
    """The matching key of a name: case-insensitive, runs of blanks/-/_ as one blank."""
    return _FOLD.sub(" ", text.strip()).casefold()


@dataclass(frozen=True)
class Territory:
    index: int
    name: str
    continent: int
    neighbours: tuple[int, ...]  # sorted territory indices
    card: str  # one of DESIGNS, or NO_CARD: the territory has no card in the deck
    aliases: tuple[str, ...] = ()
    pos: tuple[int, int] | None = None  # centre on the map picture, in pixels

    def __reduce__(self) -> tuple[Any, ...]:
        return by_fields(self)


@dataclass(frozen=True)
class Continent:
    index: int
    name: str
    bonus: int
    territories: tuple[int, ...]  # sorted
    aliases: tuple[str, ...] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return by_fields(self)


class MissionKind(StrEnum):
    """What a secret mission asks for (the ``kind`` of a map's [[missions]])."""

    TERRITORIES = "territories"
    CONTINENTS = "continents"
    DESTROY = "destroy"

    def __repr__(self) -> str:  # the plain text's repr: reprs (and digests of them) unchanged
        return repr(self.value)


@dataclass(frozen=True)
class Mission:
    """A secret-mission card.

    kind ``territories``: hold ``count`` territories with ``min_armies`` each.
    kind ``continents``: hold every continent in ``continents`` and
    ``extra_continents`` more of the player's choice.
    kind ``destroy``: eliminate the player of ``colour``.
    ``extended``: a card only of the older, larger deck (the European 14-card
    deck), dealt only with the option ``mission_deck = extended``.
    """

    id: str
    text: str
    kind: MissionKind
    count: int = 0
    min_armies: int = 1
    continents: tuple[int, ...] = ()
    extra_continents: int = 0
    colour: str = ""
    extended: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        return by_fields(self)


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    territories: tuple[Territory, ...]
    continents: tuple[Continent, ...]
    wilds: int = 2
    missions: tuple[Mission, ...] = ()
    picture: tuple[int, int] | None = None  # (width, height) when positions exist
    wrap_edges: tuple[tuple[int, int], ...] = ()  # edges drawn across the picture's edge
    colours: tuple[str, ...] = ()  # player colour names offered by this map
    # Borders that go one way only, (from, to): ``to`` is in from's neighbours,
    # not the other way round (Domination, Conquest and Lux maps may have them).
    one_way: tuple[tuple[int, int], ...] = ()
    image: str = ""  # the map's own picture (a path), drawn under the territories
    colour_map: str = ""  # an image whose pixel value v marks territory v-1 (255: none)
    _index: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return by_fields(self)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for t in self.territories:
            index[fold_name(t.name)] = t.index
            for alias in t.aliases:
                index[fold_name(alias)] = t.index
        object.__setattr__(self, "_index", index)

    # -- lookups -------------------------------------------------------------
    def lookup(self, text: str) -> int | None:
        """Territory index for a name or alias (folded), or None. Nothing fuzzy."""
        return self._index.get(fold_name(text))

    def territory(self, name: str) -> int:
        found = self.lookup(name)
        if found is None:
            raise KeyError(f"no territory {name!r} on map {self.name}")
        return found

    def names(self) -> list[str]:
        return [t.name for t in self.territories]

    def adjacent(self, a: int, b: int) -> bool:
        return b in self.territories[a].neighbours

    def edges(self) -> list[tuple[int, int]]:
        """Every border once, as (low, high) index pairs, one-way borders included."""
        pairs = {(min(t.index, n), max(t.index, n)) for t in self.territories for n in t.neighbours}
        return sorted(pairs)

    # -- colours -------------------------------------------------------------
    def palette(self) -> tuple[str, ...]:
        """The player colours of this map: its own, else the classic six."""
        return self.colours or CLASSIC_COLOURS

    def colour_of(self, text: str) -> str | None:
        """A colour as typed ("Red", " light blue") in the palette's spelling
        ("red", "light-blue"), or None when the map has no such colour: missions
        name colours in that spelling, so a colour is compared only once folded."""
        key = "-".join(fold_name(text).split())
        return key if key in self.palette() else None

    # -- cards ---------------------------------------------------------------
    @property
    def n_cards(self) -> int:
        return len(self.territories) + self.wilds

    def deck_cards(self) -> list[int]:
        """The cards of a full deck: every territory that has a card, then the wilds."""
        return [c for c in range(self.n_cards) if self.card_design(c) != NO_CARD]

    def card_design(self, card: int) -> str:
        if card >= len(self.territories):
            return WILD
        return self.territories[card].card

    def card_name(self, card: int) -> str:
        if card >= len(self.territories):
            return "Wild"
        return self.territories[card].name

    def card_territory(self, card: int) -> int | None:
        return card if card < len(self.territories) else None
