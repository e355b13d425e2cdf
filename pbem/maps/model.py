"""What every importer reads a map file into, the checks every imported map gets,
and the pbem map built from it.

An importer (Domination, Conquest, Lux) only reads its format into a RawMap:
names, continents, the borders exactly as the file lists them (one-way ones
included), positions, images, cards and missions.  ``check`` then finds every
problem at once, so the report names all of them, each with the file and the
line or entry at fault; ``build`` makes the Board and its TOML text, which is
parsed again by pbem.rules.mapformat, so an imported map is held to every rule of a
hand-written one.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from pbem.rules.board import DESIGNS, NO_CARD, WILD, Board, Continent, Mission, Territory
from pbem.rules.board import fold_name as fold
from pbem.rules.errors import MapError
from pbem.rules.mapdump import dump_map
from pbem.rules.mapformat import DEFAULT_COLOURS, parse_map

_NUMBER = re.compile(r"[\d\s]+")


@dataclass
class RawTerritory:
    name: str
    continent: int  # index into RawMap.continents; -1 when the file names none
    pos: tuple[int, int] | None
    where: str  # where the file defines it ("line 12", "territory 7")
    card: str | None = None  # a design, NO_CARD, or None: not given by the file


@dataclass
class RawMap:
    """A map file as its format says it, before any pbem rule is applied."""

    path: Path
    fmt: str  # "Domination", "Conquest", "Lux"
    title: str
    continents: list[tuple[str, int]] = field(default_factory=list)  # (name, bonus)
    territories: list[RawTerritory] = field(default_factory=list)
    borders: list[list[int]] = field(default_factory=list)  # listed neighbours, by index
    image: Path | None = None  # the picture the players see
    colour_map: Path | None = None  # Domination: pixel value v is territory v (255: none)
    size: tuple[int, int] | None = None  # the picture's size, when the image was read
    wraps: bool | None = None  # does the format say the map wraps left-right? None: unknown
    wilds: int = 2
    missions: tuple[Mission, ...] = ()
    extra_files: list[str] = field(default_factory=list)  # other files, for the header
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a map; an error stops the import, a warning does not."""

    where: str
    message: str
    error: bool = True

    def __str__(self) -> str:
        kind = "error" if self.error else "warning"
        return f"{kind}: {self.where}: {self.message}"


@dataclass
class Imported:
    """A map imported and checked: its TOML text, its Board and every note on it."""

    raw: RawMap
    problems: list[Problem]
    board: Board
    text: str

    @property
    def warnings(self) -> list[str]:
        return [f"{p.where}: {p.message}" for p in self.problems if not p.error]


def check(raw: RawMap, two_way: bool = False) -> list[Problem]:
    """Every problem of an imported map: duplicate names, continents, borders,
    connectivity, positions.  One-way borders are kept and noted."""
    found: list[Problem] = []
    found += _check_names(raw)
    found += _check_continents(raw)
    found += _check_borders(raw, two_way)
    found += _check_connected(raw)
    found += _check_positions(raw)
    return found


def build(raw: RawMap, *, two_way: bool = False) -> Imported:
    """Check and build the map; a MapError lists every error when there is one."""
    problems = check(raw, two_way)
    problems = [Problem("file", w, error=False) for w in raw.warnings] + problems
    errors = [p for p in problems if p.error]
    if errors:
        listed = "\n".join(f"  {p.where}: {p.message}" for p in errors)
        count = f"{len(errors)} problem" + ("s" if len(errors) > 1 else "")
        raise MapError(str(raw.path), f"{raw.fmt} map", f"{count}:\n{listed}")
    neighbours = _neighbours(raw)
    if two_way:
        for a, listed_ in enumerate(list(neighbours)):
            for b in sorted(listed_):
                if a not in neighbours[b]:
                    neighbours[b].add(a)
                    names = raw.territories[a].name, raw.territories[b].name
                    problems.append(
                        Problem(
                            "borders",
                            f"{names[0]} -> {names[1]} went one way only; "
                            f"added {names[1]} -> {names[0]}",
                            error=False,
                        )
                    )
    one_way = tuple(
        sorted((a, b) for a, ns in enumerate(neighbours) for b in ns if a not in neighbours[b])
    )
    designs, notes = _designs(raw)
    problems += [Problem("cards", n, error=False) for n in notes]
    picture, wraps, notes = _picture(raw, neighbours)
    problems += [Problem("picture", n, error=False) for n in notes]
    continents = _continent_names(raw, problems)
    board = Board(
        name=_slug(raw.path.stem) or "imported",
        title=raw.title or raw.path.stem,
        territories=tuple(
            Territory(
                i,
                t.name,
                t.continent,
                tuple(sorted(neighbours[i])),
                designs[i],
                (),
                t.pos if picture else None,
            )
            for i, t in enumerate(raw.territories)
        ),
        continents=tuple(
            Continent(
                c,
                continents[c],
                bonus,
                tuple(i for i, t in enumerate(raw.territories) if t.continent == c),
            )
            for c, (_, bonus) in enumerate(raw.continents)
        ),
        wilds=raw.wilds,
        missions=raw.missions,
        picture=picture,
        wrap_edges=wraps,
        colours=DEFAULT_COLOURS,
        one_way=one_way,
        image=str(raw.image.resolve()) if raw.image and picture else "",
        colour_map=str(raw.colour_map.resolve()) if raw.colour_map and picture else "",
    )
    problems.append(
        Problem("names", "the map has no aliases: players write names in full", error=False)
    )
    files = ", ".join([raw.path.name, *raw.extra_files])
    header = [f"# Imported from {files} ({raw.fmt} format)"]
    header += [f"# warning: {p.where}: {p.message}" for p in problems if not p.error]
    text = "\n".join(header) + "\n\n" + dump_map(board)
    board = parse_map(text, str(raw.path))
    return Imported(raw, problems, board, text)


def report(imported: Imported | None, path: Path, error: MapError | None = None) -> str:
    """The text of `pbem maps check`: what the map is, then every problem found."""
    if imported is None:
        assert error is not None
        return f"{path}: refused, the map cannot be played\n{error.key}: {error.message}\n"
    board = imported.board
    one_way = len(board.one_way)
    cards = len(board.deck_cards())
    lines = [
        f"{path} ({imported.raw.fmt} format): {board.title}",
        f"  {len(board.territories)} territories, {len(board.continents)} continents, "
        f"{len(board.edges())} borders ({one_way} one-way), {cards} cards "
        f"({board.wilds} wild), {len(board.missions)} missions",
        f"  picture: {_picture_text(board)}",
    ]
    lines += [f"  {p}" for p in imported.problems]
    lines.append("OK: the map can be played")
    return "\n".join(lines) + "\n"


# -- the checks ---------------------------------------------------------------------
def _check_names(raw: RawMap) -> list[Problem]:
    found = []
    if len(raw.territories) < 2:
        found.append(Problem("territories", "a map needs at least two territories"))
    seen: dict[str, str] = {}
    for t in raw.territories:
        message = _bad_name(t.name)
        if message:
            found.append(Problem(t.where, f"territory name {t.name!r} {message}"))
        key = fold(t.name)
        if key in seen:
            found.append(
                Problem(t.where, f"territory name {t.name!r} is used twice (also {seen[key]})")
            )
        seen.setdefault(key, t.where)
    continent_names: dict[str, int] = {}
    for c, (name, _) in enumerate(raw.continents):
        message = _bad_name(name)
        if message:
            found.append(Problem(f"continent {c + 1}", f"continent name {name!r} {message}"))
        if fold(name) in continent_names:
            found.append(Problem(f"continent {c + 1}", f"continent name {name!r} is used twice"))
        continent_names[fold(name)] = c
    return found


def _bad_name(name: str) -> str:
    if not name.strip():
        return "is empty"
    if any(bad in name for bad in (",", "#", "->")):
        return "contains ',', '#' or '->' (orders use them)"
    if _NUMBER.fullmatch(name):
        return "is a number"
    if fold(name) == WILD:
        return "is reserved for wild cards"
    return ""


def _check_continents(raw: RawMap) -> list[Problem]:
    found = []
    if not raw.continents:
        found.append(Problem("continents", "the map has no continents"))
    for c, (name, bonus) in enumerate(raw.continents):
        if bonus < 0:
            found.append(Problem(f"continent {name}", f"bonus {bonus} is negative"))
        if not any(t.continent == c for t in raw.territories):
            found.append(Problem(f"continent {name}", "no territory is in this continent"))
    for t in raw.territories:
        if not 0 <= t.continent < len(raw.continents):
            found.append(Problem(t.where, f"{t.name} is in no continent of the map"))
    return found


def _check_borders(raw: RawMap, two_way: bool) -> list[Problem]:
    found = []
    for a, listed in enumerate(raw.borders):
        name = raw.territories[a].name
        for b in listed:
            if b == a:
                where = raw.territories[a].where
                found.append(Problem(where, f"{name} borders itself; ignored", error=False))
            elif not 0 <= b < len(raw.territories):
                found.append(Problem(raw.territories[a].where, f"{name} lists an unknown border"))
        if listed.count(a) == 0 and len(set(listed)) != len(listed):
            raw.warnings.append(f"{name} lists a border twice; counted once")
    for a, listed in enumerate(raw.borders):
        for b in sorted(set(listed)):
            if 0 <= b < len(raw.borders) and b != a and a not in raw.borders[b] and not two_way:
                names = raw.territories[a].name, raw.territories[b].name
                found.append(
                    Problem(
                        raw.territories[a].where,
                        f"one-way border {names[0]} -> {names[1]}: kept "
                        f"({names[1]} cannot attack {names[0]})",
                        error=False,
                    )
                )
    return found


def _neighbours(raw: RawMap) -> list[set[int]]:
    return [{b for b in listed if b != a} for a, listed in enumerate(raw.borders)]


def _check_connected(raw: RawMap) -> list[Problem]:
    """One piece, borders taken either way; a territory nobody can enter is noted."""
    neighbours = _neighbours(raw)
    both = [set(ns) for ns in neighbours]
    for a, ns in enumerate(neighbours):
        for b in ns:
            both[b].add(a)
    pieces: list[list[int]] = []
    seen: set[int] = set()
    for start in range(len(both)):
        if start in seen:
            continue
        piece, queue = [start], deque([start])
        seen.add(start)
        while queue:
            for n in sorted(both[queue.popleft()]):
                if n not in seen:
                    seen.add(n)
                    piece.append(n)
                    queue.append(n)
        pieces.append(sorted(piece))
    found = []
    if len(pieces) > 1:
        names = [", ".join(raw.territories[i].name for i in p[:6]) for p in pieces[1:]]
        found.append(
            Problem(
                "borders",
                f"the map is in {len(pieces)} pieces: cannot reach "
                + "; ".join(names)
                + f" from {raw.territories[0].name}",
            )
        )
    for b, t in enumerate(raw.territories):
        if not any(b in ns for ns in neighbours):
            found.append(Problem(t.where, f"{t.name} can never be attacked", error=False))
        if not neighbours[b]:
            found.append(Problem(t.where, f"{t.name} can attack nowhere", error=False))
    return found


def _check_positions(raw: RawMap) -> list[Problem]:
    found: list[Problem] = []
    if raw.size is None:
        return found
    width, height = raw.size
    for t in raw.territories:
        if t.pos is not None and not (0 <= t.pos[0] < width and 0 <= t.pos[1] < height):
            found.append(
                Problem(
                    t.where,
                    f"{t.name} is at {t.pos[0]}, {t.pos[1]}, outside the "
                    f"{width} x {height} picture",
                )
            )
    return found


# -- building -------------------------------------------------------------------------
def _designs(raw: RawMap) -> tuple[list[str], list[str]]:
    given = [t.card for t in raw.territories]
    if all(c is None for c in given):
        note = "no cards in the file: designs dealt infantry, cavalry, artillery in map order"
        return [DESIGNS[i % 3] for i in range(len(given))], [note]
    missing = [raw.territories[i].name for i, c in enumerate(given) if c is None]
    notes = []
    if missing:
        shown = ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")
        notes.append(f"{len(missing)} territories have no card: {shown}")
    return [c if c is not None else NO_CARD for c in given], notes


def _picture(
    raw: RawMap, neighbours: list[set[int]]
) -> tuple[tuple[int, int] | None, tuple[tuple[int, int], ...], list[str]]:
    """The picture's size (None: no positions), the edges drawn across its edge, notes."""
    positions = [t.pos for t in raw.territories]
    if any(p is None for p in positions):
        return None, (), ["some territories have no position; the map has no picture"]
    xs = [p[0] for p in positions if p is not None]
    ys = [p[1] for p in positions if p is not None]
    notes = []
    size = raw.size
    if size is None:
        size = (max(max(xs) + 1, 1), max(max(ys) + 1, 1))
        notes.append(
            f"picture size unknown; using the smallest that holds every position "
            f"({size[0]} x {size[1]})"
        )
    wraps = []
    if raw.wraps is not False and raw.size is not None:
        for a, others in enumerate(neighbours):
            for b in sorted(others):
                if a < b and wraps_across(xs[a], ys[a], xs[b], ys[b], size[0]):
                    wraps.append((a, b))
                    names = raw.territories[a].name, raw.territories[b].name
                    notes.append(f"{names[0]} - {names[1]} drawn across the picture's edge")
    return size, tuple(wraps), notes


def wraps_across(ax: int, ay: int, bx: int, by: int, width: int) -> bool:
    """Is the border between two positions drawn across the left-right edge?

    Only when the two ends lie in opposite outer quarters of the picture and the
    way round the edge is less than half as long as the way across: two far
    neighbours in the middle of a map are just far apart, not wrapped.
    """
    left, right = min(ax, bx), max(ax, bx)
    if not (left < width / 4 and right > width * 3 / 4):
        return False
    dy2 = (ay - by) ** 2
    across = ((right - left) ** 2 + dy2) ** 0.5
    around = ((width - right + left) ** 2 + dy2) ** 0.5
    return around * 2 < across


def _continent_names(raw: RawMap, problems: list[Problem]) -> list[str]:
    """pbem needs continent and territory names apart; some formats do not."""
    taken = {fold(t.name) for t in raw.territories}
    names = []
    for name, _ in raw.continents:
        if fold(name) in taken:
            problems.append(
                Problem(
                    f"continent {name}",
                    f"has a territory's name; renamed {name} (continent)",
                    error=False,
                )
            )
            name = f"{name} (continent)"
        names.append(name)
    return names


def _picture_text(board: Board) -> str:
    if board.picture is None:
        return "none (the report draws the graph without positions: no picture)"
    size = f"{board.picture[0]} x {board.picture[1]}"
    if board.image:
        extra = " and a colour map of the territories" if board.colour_map else ""
        return f"{Path(board.image).name}, {size}{extra}"
    return f"{size}, drawn as a graph (no image)"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def image_size(picture: Path) -> tuple[int, int] | None:
    """The size of an image file, or None when it is missing or not an image."""
    if not picture.is_file():
        return None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(picture) as image:
            return image.size
    except (OSError, UnidentifiedImageError):
        return None
