"""The TOML map format, read: check every rule a map must keep, build the Board
(mapdump.py writes a Board back in this format).

Pure: this module receives the text of a map and never reads a file (pbem.maps
finds, reads and imports map files).  The format is documented for map makers
in docs/MAPS.md.  Every problem is a
MapError naming the file and the offending entry (``territories[Alaska].neighbours``)
so the person who wrote the map can fix it without reading this code.  Indices
follow the order of the file; neighbour and member lists are stored sorted.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections import deque
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, NoReturn, cast

from pbem.rules.board import (
    CLASSIC_COLOURS,
    DESIGNS,
    NO_CARD,
    WILD,
    Board,
    Continent,
    Mission,
    MissionKind,
    Territory,
    fold_name,
)
from pbem.rules.errors import MapError

DEFAULT_COLOURS = CLASSIC_COLOURS  # a map that names no colours offers these
MISSION_KINDS = tuple(MissionKind)

_MAP_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_COLOUR = re.compile(r"[a-z]+(-[a-z]+)*")
_NUMBER = re.compile(r"[\d\s]+")
# A map folds each name many times (claims, labels, neighbour lists): once per name.
_fold = lru_cache(maxsize=4096)(fold_name)
_TOML_WHERE = re.compile(r" \(at (?:line (\d+), column (\d+)|end of document)\)$")

# section -> (required keys, optional keys)
_TOP_KEYS = (
    ("name", "title", "continents", "territories"),
    ("wilds", "colours", "picture", "wrap_edges", "one_way", "missions"),
)
_CONTINENT_KEYS = (("name", "bonus"), ("aliases",))
_TERRITORY_KEYS = (("name", "continent", "neighbours", "card"), ("aliases", "pos"))
_PICTURE_KEYS = (("width", "height"), ("image", "colour_map"))
_MISSION_KEYS = {
    MissionKind.TERRITORIES: (("id", "text", "kind", "count"), ("min_armies", "extended")),
    MissionKind.CONTINENTS: (
        ("id", "text", "kind", "continents"),
        ("extra_continents", "extended"),
    ),
    MissionKind.DESTROY: (("id", "text", "kind", "colour"), ("count", "min_armies", "extended")),
}


# -- public API ----------------------------------------------------------------
def parse_map(
    text: str, path: str, base: str | None = None, decoded: dict[str, Any] | None = None
) -> Board:
    """Check the TOML text of a map; ``path`` names it in error messages.

    ``base`` is the folder the file lives in: relative image paths in
    ``[picture]`` are taken from there (a path is only joined, never opened).
    A board is immutable, so the boards of recent texts are kept: every replay of a
    record and every load of a stored game parses the same map text again. They are
    kept by text and ``base`` only: ``path`` names the text in error messages (which
    are not kept) and not in the board, so a map read from its file, from a record and
    from a stored game is checked once.

    ``decoded``: the TOML of ``text`` already decoded, when the caller has it (a
    shipped map's JSON copy, which pbem.maps takes only if it was made from this very
    text): ``tomllib`` is pure Python and was most of a `pbem verify`'s map time.
    Every check still runs on it, with the same messages.
    """
    key = (text, base)
    board = _BOARDS.get(key)
    if board is None:
        board = _Parser(path, base).board(text, decoded)
        if len(_BOARDS) >= _BOARDS_KEPT:
            _BOARDS.pop(next(iter(_BOARDS)), None)  # the oldest
        _BOARDS[key] = board
    return board


_BOARDS_KEPT = 32
_BOARDS: dict[tuple[str, str | None], Board] = {}  # (map text, base) -> its board


def parsed_before(text: str, base: str | None = None) -> bool:
    """Is the board of this text kept (parse_map will not decode it again)?"""
    return (text, base) in _BOARDS


# -- checking --------------------------------------------------------------------
class _Parser:
    """One map file being checked; ``fail`` raises the MapError that names it."""

    def __init__(self, path: str, base: str | None = None) -> None:
        self.path = path
        self.base = base
        self.taken: dict[str, str] = {}  # folded name or alias -> what it names already

    def fail(self, key: str, message: str) -> NoReturn:
        raise MapError(self.path, key, message)

    def board(self, text: str, decoded: dict[str, Any] | None = None) -> Board:
        data = self.toml(text) if decoded is None else decoded
        self.keys(data, "", *_TOP_KEYS)
        name = self.string(data, "", "name")
        if not _MAP_NAME.fullmatch(name):
            self.fail("name", "use lower-case letters, digits, '-' and '_' only (it names files)")
        colours = self.colours(data)
        picture, images = self.picture(data)
        continents = self.continents(self.tables(data, "continents"))
        territories = self.territories(self.tables(data, "territories"), continents)
        one_way = self.one_way(data, territories)
        self.link(territories, one_way)
        self.check_connected(territories)
        self.check_positions(territories, picture)
        built = []
        for index, c in enumerate(continents):
            members = tuple(t.index for t in territories if t.continent == index)
            if not members:
                self.fail(c.label, "no territory is in this continent")
            built.append(Continent(index, c.name, c.bonus, members, c.aliases))
        return Board(
            name=name,
            title=self.string(data, "", "title"),
            territories=tuple(t.territory() for t in territories),
            continents=tuple(built),
            wilds=self.integer(data, "", "wilds", default=2, minimum=0),
            missions=self.missions(data, territories, [c.name for c in continents], colours),
            picture=picture,
            wrap_edges=self.wrap_edges(data, territories),
            colours=colours,
            one_way=tuple(sorted(one_way)),
            image=images[0],
            colour_map=images[1],
        )

    # -- generic, typed access ------------------------------------------------
    def toml(self, text: str) -> dict[str, Any]:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            found = _TOML_WHERE.search(message)
            if found is None:
                self.fail("toml", f"not valid TOML: {message}")
            key = f"line {found[1]}" if found[1] else "end of file"
            column = f" (column {found[2]})" if found[2] else ""
            self.fail(key, f"not valid TOML: {message[: found.start()]}{column}")

    def keys(
        self, data: dict[str, Any], where: str, required: tuple[str, ...], optional: tuple[str, ...]
    ) -> None:
        allowed = ", ".join(sorted(required + optional))
        for key in data:
            if key not in required + optional:
                self.fail(_join(where, key), f"unknown key; allowed keys are: {allowed}")
        for key in required:
            if key not in data:
                self.fail(_join(where, key), "required key is missing")

    def value(self, data: dict[str, Any], where: str, key: str, kind: type, expected: str) -> Any:
        value = data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(_join(where, key), f"expected {expected}, got {_describe(value)}")
        return value

    def string(self, data: dict[str, Any], where: str, key: str) -> str:
        return cast(str, self.value(data, where, key, str, "a string"))

    def integer(
        self,
        data: dict[str, Any],
        where: str,
        key: str,
        *,
        default: int | None = None,
        minimum: int = 0,
    ) -> int:
        if key not in data and default is not None:
            return default
        number: int = self.value(data, where, key, int, "an integer")
        if number < minimum:
            self.fail(_join(where, key), f"must be {minimum} or more, not {number}")
        return number

    def strings(self, data: dict[str, Any], where: str, key: str) -> list[str]:
        if key not in data:
            return []
        items: list[str] = self.value(data, where, key, list, "a list of strings")
        for item in items:
            if not isinstance(item, str):
                self.fail(_join(where, key), f"expected a list of strings, found {_describe(item)}")
        return items

    def tables(self, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
        items = data.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            self.fail(key, f"expected [[{key}]] tables, got {_describe(items)}")
        return items

    def label(self, section: str, entry: dict[str, Any], key: str, number: int) -> str:
        """How an entry is named in messages: by its name if it has a fresh one."""
        value = entry.get(key)
        if isinstance(value, str) and value.strip() and _fold(value) not in self.taken:
            return f"{section}[{value}]"
        return f"{section}[#{number}]"

    # -- names and aliases ----------------------------------------------------
    def claim(self, text: str, key: str, owner: str) -> None:
        """Reserve a name or alias; any two of them must differ once folded."""
        if not text or text != text.strip():
            self.fail(key, f"{text!r} must not be empty or begin or end with blanks")
        if any(bad in text for bad in (",", "#", "->")):
            self.fail(key, f"{text!r} must not contain ',', '#' or '->' (orders use them)")
        if _NUMBER.fullmatch(text):
            self.fail(key, f"{text!r} must not be a number")
        folded = _fold(text)
        if folded == WILD:
            self.fail(key, f"{text!r} is reserved for wild cards")
        if folded in self.taken:
            self.fail(key, f"{text!r} clashes with {self.taken[folded]}")
        self.taken[folded] = owner

    def named(self, entry: dict[str, Any], label: str, kind: str) -> tuple[str, tuple[str, ...]]:
        name = self.string(entry, label, "name")
        self.claim(name, f"{label}.name", f"{kind} {name}")
        aliases = self.strings(entry, label, "aliases")
        for alias in aliases:
            self.claim(alias, f"{label}.aliases", f"an alias of {kind} {name}")
        return name, tuple(aliases)

    # -- sections --------------------------------------------------------------
    def colours(self, data: dict[str, Any]) -> tuple[str, ...]:
        if "colours" not in data:
            return DEFAULT_COLOURS
        colours = self.strings(data, "", "colours")
        for colour in colours:
            if not _COLOUR.fullmatch(colour):
                self.fail("colours", f"{colour!r} is not a lower-case colour name")
            if colours.count(colour) > 1:
                self.fail("colours", f"{colour!r} is listed twice")
        if len(colours) < 2:
            self.fail("colours", "a map needs at least two colours")
        return tuple(colours)

    def picture(self, data: dict[str, Any]) -> tuple[tuple[int, int] | None, tuple[str, str]]:
        """The picture's size and its image files (paths, made relative to ``base``)."""
        if "picture" not in data:
            return None, ("", "")
        table = self.value(data, "", "picture", dict, "a [picture] table")
        self.keys(table, "picture", *_PICTURE_KEYS)
        width = self.integer(table, "picture", "width", minimum=1)
        size = width, self.integer(table, "picture", "height", minimum=1)
        images = []
        for key in ("image", "colour_map"):
            found = self.string(table, "picture", key) if key in table else ""
            if found and self.base is not None and not posixpath.isabs(found):
                found = posixpath.normpath(posixpath.join(self.base, found))
            images.append(found)
        return size, (images[0], images[1])

    def continents(self, entries: list[dict[str, Any]]) -> list[_ContinentDraft]:
        if not entries:
            self.fail("continents", "a map needs at least one continent")
        found = []
        for number, entry in enumerate(entries, 1):
            label = self.label("continents", entry, "name", number)
            self.keys(entry, label, *_CONTINENT_KEYS)
            name, aliases = self.named(entry, label, "continent")
            found.append(_ContinentDraft(name, self.integer(entry, label, "bonus"), aliases, label))
        return found

    def territories(
        self, entries: list[dict[str, Any]], continents: list[_ContinentDraft]
    ) -> list[_Draft]:
        if len(entries) < 2:
            self.fail("territories", "a map needs at least two territories")
        by_name = {_fold(c.name): i for i, c in enumerate(continents)}
        drafts = []
        for number, entry in enumerate(entries, 1):
            label = self.label("territories", entry, "name", number)
            self.keys(entry, label, *_TERRITORY_KEYS)
            name, aliases = self.named(entry, label, "territory")
            continent = self.string(entry, label, "continent")
            if _fold(continent) not in by_name:
                self.fail(f"{label}.continent", f"no continent named {continent!r}")
            card = self.string(entry, label, "card")
            if card not in DESIGNS + (NO_CARD,):
                designs = _or(DESIGNS + (NO_CARD,))
                self.fail(f"{label}.card", f"unknown design {card!r}; use {designs}")
            pos = None
            if "pos" in entry:
                pos = self.value(entry, label, "pos", list, "[x, y]")
                if len(pos) != 2 or not all(type(v) is int for v in pos):
                    self.fail(f"{label}.pos", f"expected [x, y] in whole pixels, got {pos!r}")
            neighbours = self.strings(entry, label, "neighbours")
            drafts.append(
                _Draft(
                    index=number - 1,
                    name=name,
                    label=label,
                    continent=by_name[_fold(continent)],
                    card=card,
                    aliases=aliases,
                    pos=(pos[0], pos[1]) if pos is not None else None,
                    neighbour_names=neighbours,
                )
            )
        return drafts

    def one_way(self, data: dict[str, Any], drafts: list[_Draft]) -> set[tuple[int, int]]:
        """The borders declared one-way, as (from, to) indices."""
        found: set[tuple[int, int]] = set()
        for key, names, (a, b) in self.name_pairs(data, "one_way", "[from, to]", drafts):
            if (a, b) in found:
                self.fail(key, f"{names[0]} -> {names[1]} is listed twice")
            found.add((a, b))
        return found

    def name_pairs(
        self, data: dict[str, Any], table: str, what: str, drafts: list[_Draft]
    ) -> list[tuple[str, list[str], tuple[int, int]]]:
        """A list of [name, name] pairs (``one_way``, ``wrap_edges``): for each, its
        key for messages, the names as written and the two territories' indices."""
        if table not in data:
            return []
        pairs = self.value(data, "", table, list, f"a list of {what} pairs")
        index = {_fold(d.name): d.index for d in drafts}
        found = []
        for number, pair in enumerate(pairs):
            key = f"{table}[{number}]"
            if not (
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, str) for n in pair)
            ):
                self.fail(key, f"expected a pair of territory names, got {pair!r}")
            for text in pair:
                if _fold(text) not in index:
                    self.fail(key, f"no territory named {text!r}")
            found.append((key, pair, (index[_fold(pair[0])], index[_fold(pair[1])])))
        return found

    def link(self, drafts: list[_Draft], one_way: set[tuple[int, int]]) -> None:
        """Turn neighbour names into indices; every edge must be listed on both sides,
        but for the ``one_way`` ones, listed on the ``from`` side only."""
        index = {_fold(d.name): d.index for d in drafts}
        for d in drafts:
            key = f"{d.label}.neighbours"
            for text in d.neighbour_names:
                other = index.get(_fold(text))
                if other is None:
                    self.fail(key, f"no territory named {text!r}")
                if other == d.index:
                    self.fail(key, "a territory cannot be its own neighbour")
                if other in d.neighbours:
                    self.fail(key, f"{text!r} is listed twice")
                d.neighbours.append(other)
        for a, b in sorted(one_way):
            if b not in drafts[a].neighbours or a in drafts[b].neighbours:
                self.fail(
                    f"one_way[{drafts[a].name}, {drafts[b].name}]",
                    f"a one-way border must be listed in {drafts[a].label}.neighbours "
                    f"and not in {drafts[b].label}.neighbours",
                )
        for d in drafts:
            for n in d.neighbours:
                if d.index not in drafts[n].neighbours and (d.index, n) not in one_way:
                    listed = drafts[n]
                    self.fail(
                        f"{d.label}.neighbours",
                        f"lists {listed.name}, but {listed.label}.neighbours "
                        f"does not list {d.name}",
                    )

    def check_connected(self, drafts: list[_Draft]) -> None:
        """Connected through borders taken either way (a one-way border still joins)."""
        both: list[set[int]] = [set(d.neighbours) for d in drafts]
        for d in drafts:
            for n in d.neighbours:
                both[n].add(d.index)
        seen = {0}
        queue = deque([0])
        while queue:
            for n in sorted(both[queue.popleft()]):
                if n not in seen:
                    seen.add(n)
                    queue.append(n)
        cut_off = [d.name for d in drafts if d.index not in seen]
        if cut_off:
            self.fail(
                "territories",
                f"the map is not connected: {', '.join(cut_off)} cannot be reached "
                f"from {drafts[0].name}",
            )

    def check_positions(self, drafts: list[_Draft], picture: tuple[int, int] | None) -> None:
        """A map with a picture places every territory on it; one without places none."""
        for d in drafts:
            key = f"{d.label}.pos"
            if picture is None:
                if d.pos is not None:
                    self.fail(key, "a position needs a [picture] table with width and height")
                continue
            if d.pos is None:
                self.fail(key, "required key is missing (the map has a [picture])")
            x, y = d.pos
            if not (0 <= x < picture[0] and 0 <= y < picture[1]):
                size = f"{picture[0]} x {picture[1]}"
                self.fail(key, f"[{x}, {y}] is outside the picture ({size} pixels)")

    def wrap_edges(self, data: dict[str, Any], drafts: list[_Draft]) -> tuple[tuple[int, int], ...]:
        edges = set()
        for key, _, ends in self.name_pairs(data, "wrap_edges", "[name, name]", drafts):
            a, b = sorted(ends)
            if b not in drafts[a].neighbours:
                self.fail(key, f"{drafts[a].name} and {drafts[b].name} are not neighbours")
            if (a, b) in edges:
                self.fail(key, f"{drafts[a].name} - {drafts[b].name} is listed twice")
            edges.add((a, b))
        return tuple(sorted(edges))

    def missions(
        self,
        data: dict[str, Any],
        drafts: list[_Draft],
        continents: list[str],
        colours: tuple[str, ...],
    ) -> tuple[Mission, ...]:
        by_name = {_fold(c): i for i, c in enumerate(continents)}
        ids: set[str] = set()
        found = []
        for number, entry in enumerate(self.tables(data, "missions"), 1):
            given = entry.get("id")
            fresh = isinstance(given, str) and given and given not in ids
            label = f"missions[{given}]" if fresh else f"missions[#{number}]"
            for key in ("id", "kind"):
                if key not in entry:
                    self.fail(f"{label}.{key}", "required key is missing")
            kind = self.string(entry, label, "kind")
            if kind not in MISSION_KINDS:
                self.fail(f"{label}.kind", f"unknown kind {kind!r}; use {_or(MISSION_KINDS)}")
            kind = MissionKind(kind)
            self.keys(entry, label, *_MISSION_KEYS[kind])
            mission_id = self.string(entry, label, "id")
            if not mission_id.strip() or mission_id in ids:
                self.fail(f"{label}.id", f"{mission_id!r} is empty or already used")
            ids.add(mission_id)
            mission = Mission(mission_id, self.string(entry, label, "text"), kind)
            if kind == MissionKind.TERRITORIES:
                mission = self.territories_mission(entry, label, mission, len(drafts))
            elif kind == MissionKind.CONTINENTS:
                mission = self.continents_mission(entry, label, mission, by_name)
            else:
                colour = self.string(entry, label, "colour")
                if colour not in colours:
                    self.fail(f"{label}.colour", f"{colour!r} is not one of colours")
                mission = replace(mission, colour=colour)
                if "count" in entry:  # the map's own fallback mission (Domination has one)
                    mission = self.territories_mission(entry, label, mission, len(drafts))
            extended = entry.get("extended", False)
            if not isinstance(extended, bool):
                self.fail(f"{label}.extended", "must be true or false")
            found.append(replace(mission, extended=extended))
        return tuple(found)

    def territories_mission(
        self, entry: dict[str, Any], label: str, mission: Mission, total: int
    ) -> Mission:
        count = self.integer(entry, label, "count", minimum=1)
        if count > total:
            self.fail(f"{label}.count", f"must be at most {total}, the number of territories")
        armies = self.integer(entry, label, "min_armies", default=1, minimum=1)
        return replace(mission, count=count, min_armies=armies)

    def continents_mission(
        self, entry: dict[str, Any], label: str, mission: Mission, by_name: dict[str, int]
    ) -> Mission:
        chosen = []
        for text in self.strings(entry, label, "continents"):
            found = by_name.get(_fold(text))
            if found is None:
                self.fail(f"{label}.continents", f"no continent named {text!r}")
            if found in chosen:
                self.fail(f"{label}.continents", f"{text!r} is listed twice")
            chosen.append(found)
        extra = self.integer(entry, label, "extra_continents", default=0)
        if not 1 <= len(chosen) + extra <= len(by_name):
            self.fail(
                f"{label}.extra_continents",
                f"asks for {len(chosen) + extra} continents; the map has {len(by_name)}",
            )
        return replace(mission, continents=tuple(sorted(chosen)), extra_continents=extra)


@dataclass
class _ContinentDraft:
    name: str
    bonus: int
    aliases: tuple[str, ...]
    label: str  # how messages name it


@dataclass
class _Draft:
    """A territory while its neighbours are resolved from names to indices."""

    index: int
    name: str
    label: str  # how messages name it
    continent: int
    card: str
    aliases: tuple[str, ...]
    pos: tuple[int, int] | None
    neighbour_names: list[str]
    neighbours: list[int] = field(default_factory=list)

    def territory(self) -> Territory:
        neighbours = tuple(sorted(self.neighbours))
        return Territory(
            self.index, self.name, self.continent, neighbours, self.card, self.aliases, self.pos
        )


# -- small helpers ----------------------------------------------------------------
def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _or(words: tuple[str, ...]) -> str:
    return ", ".join(words[:-1]) + " or " + words[-1]


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"
