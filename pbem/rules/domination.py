"""Import a map in the Domination (yura.net) format: a ``.map`` file and its ``.cards``.

Many Risk maps are shared in that format.  This turns one into the TOML text of
a pbem map (docs/MAPS.md) and a list of warnings about everything that had to
be changed or guessed; the text is checked with parse_map before it is
returned, so a map that pbem cannot play fails here with a clear error.

The format, as Domination reads it (``;`` starts a comment line):

* ``.map``: an optional ``name TITLE`` line; ``[files]`` (``pic``, ``map``,
  ``crd`` ...); ``[continents]`` lines ``Name bonus colour``, numbered from 1;
  ``[countries]`` lines ``index Name continent x y``; ``[borders]`` lines
  ``index neighbour neighbour ...``.  Underscores in names stand for blanks.
* ``.cards``: ``[cards]`` lines ``Infantry|Cavalry|Cannon index`` and
  ``Wildcard``; ``[missions]`` lines ``player territories armies c1 c2 c3 text``:
  destroy player N (0: nobody), hold that many territories with that many
  armies each, hold the continents numbered c1..c3 (0: none, ``*``: one more
  of the player's choice).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NoReturn

from pbem.rules.board import DESIGNS, Board, Continent, Mission, Territory, fold_name
from pbem.rules.errors import MapError
from pbem.rules.maps import DEFAULT_COLOURS, dump_map, parse_map

_DESIGN_WORDS = {
    "infantry": "infantry",
    "cavalry": "cavalry",
    "cannon": "artillery",
    "artillery": "artillery",
}
_PLAYER = re.compile(r"PLAYER([1-6])")  # Domination names players PLAYER1..PLAYER6


@dataclass
class _Country:
    number: int  # Domination's index, as the [borders] and [cards] lines use it
    name: str
    continent: int  # 0-based
    pos: tuple[int, int] | None
    line: int


@dataclass
class _DominationMap:
    title: str = ""
    files: dict[str, str] = field(default_factory=dict)  # pic, map, crd, ...
    continents: list[tuple[str, int]] = field(default_factory=list)  # (name, bonus)
    countries: list[_Country] = field(default_factory=list)
    borders: dict[int, list[int]] = field(default_factory=dict)  # number -> numbers
    border_lines: dict[int, int] = field(default_factory=dict)  # number -> line


def import_domination(
    map_path: Path, cards_path: Path | None = None, *, fix_one_way: bool = True
) -> tuple[str, list[str]]:
    """The TOML text of the pbem map equivalent to a Domination map, and warnings.

    One-way borders are made two-way with a warning when ``fix_one_way``,
    otherwise refused with a MapError naming the border.
    """
    map_path = Path(map_path)
    warnings: list[str] = []
    source = _read_map(map_path, warnings)
    neighbours = _two_way_borders(map_path, source, fix_one_way, warnings)
    missions: tuple[Mission, ...]
    if cards_path is None:
        designs, wilds, missions = _round_robin(source, warnings), 2, ()
    else:
        designs, wilds, missions = _read_cards(Path(cards_path), source, warnings)
    picture, wrap_edges = _picture(map_path, source, neighbours, warnings)
    _rename_clashing_continents(source, warnings)
    board = _board(map_path, source, neighbours, designs, wilds, missions, picture, wrap_edges)
    warnings.append("the map has no aliases: players write territory names in full")
    files = map_path.name + (f" and {Path(cards_path).name}" if cards_path else "")
    header = [f"# Imported from {files} (Domination format)"]
    header += [f"# warning: {w}" for w in warnings]
    text = "\n".join(header) + "\n\n" + dump_map(board)
    parse_map(text, str(map_path))
    return text, warnings


# -- reading the .map file ------------------------------------------------------
def _lines(path: Path, warnings: list[str]) -> Iterator[tuple[str, int, str]]:
    """(section, line number, text) of every line that is not blank or a comment."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MapError(str(path), "file", f"cannot be read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
        warnings.append(f"{path.name} is not UTF-8; read it as Latin-1")
    section = ""
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        yield section, number, line


def _read_map(path: Path, warnings: list[str]) -> _DominationMap:
    found = _DominationMap(title=path.stem)
    numbers: set[int] = set()
    skipped: set[str] = set()
    for section, line, text in _lines(path, warnings):
        words = text.split()
        where = f"line {line}"
        if section == "":
            if words[0].lower() == "name" and len(words) > 1:
                found.title = text[len(words[0]) :].strip()
        elif section == "files":
            if len(words) > 1:
                found.files[words[0].lower()] = text[len(words[0]) :].strip()
        elif section == "continents":
            if len(words) < 2 or not _is_int(words[1]):
                _fail(path, where, f"[continents] expected 'Name bonus colour', got {text!r}")
            found.continents.append((_name(words[0]), int(words[1])))
        elif section == "countries":
            found.countries.append(_country(path, line, text, len(found.continents), numbers))
        elif section == "borders":
            if not all(_is_int(w) for w in words):
                _fail(path, where, f"[borders] expected 'index neighbour ...', got {text!r}")
            number, *listed = (int(w) for w in words)
            if number in found.borders:
                _fail(path, where, f"[borders] country {number} has a second line")
            found.borders[number] = listed
            found.border_lines[number] = line
        elif section not in skipped:
            skipped.add(section)
            warnings.append(f"{path.name}: section [{section}] is not used and was ignored")
    if not found.countries:
        _fail(path, "[countries]", "the map has no countries")
    return found


def _country(path: Path, line: int, text: str, continents: int, numbers: set[int]) -> _Country:
    words = text.split()
    where = f"line {line}"
    if len(words) < 3 or not all(_is_int(w) for w in [words[0], *words[2:5]]):
        _fail(path, where, f"[countries] expected 'index Name continent x y', got {text!r}")
    number, continent = int(words[0]), int(words[2])
    if number in numbers:
        _fail(path, where, f"[countries] index {number} is used twice")
    numbers.add(number)
    if not 1 <= continent <= continents:
        _fail(
            path,
            where,
            f"[countries] continent {continent} does not exist "
            f"(the [continents] section lists {continents}, numbered from 1)",
        )
    pos = (int(words[3]), int(words[4])) if len(words) >= 5 else None
    return _Country(number, _name(words[1]), continent - 1, pos, line)


def _two_way_borders(
    path: Path, source: _DominationMap, fix_one_way: bool, warnings: list[str]
) -> list[set[int]]:
    """Neighbours by position in the file; every border made (or required) two-way."""
    position = {c.number: i for i, c in enumerate(source.countries)}
    names = [c.name for c in source.countries]
    listed: list[set[int]] = [set() for _ in source.countries]
    for number, others in source.borders.items():
        where = f"line {source.border_lines[number]}"
        if number not in position:
            _fail(path, where, f"[borders] there is no country {number}")
        for other in others:
            if other not in position:
                _fail(
                    path,
                    where,
                    f"[borders] {names[position[number]]} lists {other}, "
                    f"but there is no country {other}",
                )
            if other == number:
                warnings.append(f"{names[position[number]]} lists itself as a neighbour; ignored")
                continue
            listed[position[number]].add(position[other])
    neighbours = [set(s) for s in listed]
    for a in range(len(listed)):
        for b in sorted(listed[a]):
            if a in listed[b]:
                continue
            country_a, country_b = source.countries[a], source.countries[b]
            if not fix_one_way:
                line = source.border_lines[country_a.number]
                _fail(
                    path,
                    f"line {line}",
                    f"[borders] border {names[a]} ({country_a.number}) -> {names[b]} "
                    f"({country_b.number}) goes one way only: {names[b]} does not list "
                    f"{country_a.number} (fix_one_way adds the way back)",
                )
            warnings.append(
                f"border {names[a]} -> {names[b]} was listed one way only; "
                f"added {names[b]} -> {names[a]}"
            )
            neighbours[b].add(a)
    return neighbours


# -- reading the .cards file ------------------------------------------------------
def _read_cards(
    path: Path, source: _DominationMap, warnings: list[str]
) -> tuple[list[str], int, tuple[Mission, ...]]:
    position = {c.number: i for i, c in enumerate(source.countries)}
    designs: list[str | None] = [None] * len(source.countries)
    wilds = 0
    missions: list[Mission] = []
    skipped: set[str] = set()
    for section, line, text in _lines(path, warnings):
        words = text.split()
        where = f"line {line}"
        if section == "cards":
            kind = words[0].lower()
            if kind == "wildcard":
                wilds += 1
                continue
            if kind not in _DESIGN_WORDS or len(words) < 2 or not _is_int(words[1]):
                _fail(
                    path,
                    where,
                    f"[cards] expected 'Infantry|Cavalry|Cannon index' or 'Wildcard', got {text!r}",
                )
            number = int(words[1])
            if number not in position:
                _fail(path, where, f"[cards] there is no country {number}")
            if designs[position[number]] is not None:
                _fail(path, where, f"[cards] country {number} has a second card")
            designs[position[number]] = _DESIGN_WORDS[kind]
        elif section == "missions":
            mission = _mission(path, line, text, source, missions, warnings)
            if mission is not None:
                missions.append(mission)
        elif section not in skipped:
            skipped.add(section)
            warnings.append(f"{path.name}: lines outside [cards] and [missions] were ignored")
    missing = [c.name for c, d in zip(source.countries, designs, strict=True) if d is None]
    if missing:
        _fail(path, "[cards]", f"no card for {', '.join(missing)}")
    return [d for d in designs if d is not None], wilds, tuple(missions)


def _mission(
    path: Path,
    line: int,
    text: str,
    source: _DominationMap,
    earlier: list[Mission],
    warnings: list[str],
) -> Mission | None:
    """One [missions] line as a pbem mission, or None (with a warning) if pbem has no such kind."""
    words = text.split(None, 6)
    if len(words) < 6 or not all(_is_int(w) for w in words[:3]):
        _fail(
            path,
            f"line {line}",
            f"[missions] expected 'player territories armies c1 c2 c3 text', got {text!r}",
        )
    player, count, armies = (int(w) for w in words[:3])
    wanted = words[3:6]
    description = words[6] if len(words) > 6 else ""
    continents = []
    for word in wanted:
        if word not in ("0", "*") and not (
            _is_int(word) and 1 <= int(word) <= len(source.continents)
        ):
            _fail(path, f"line {line}", f"[missions] continent {word} does not exist")
        if word not in ("0", "*"):
            continents.append(int(word) - 1)
    extra = wanted.count("*")
    if player > 0:
        if player > len(DEFAULT_COLOURS):
            warnings.append(
                f"{path.name} line {line}: no colour for player {player}; mission skipped"
            )
            return None
        colour = DEFAULT_COLOURS[player - 1]
        text_out = _PLAYER.sub(lambda m: DEFAULT_COLOURS[int(m[1]) - 1].upper(), description)
        mission = Mission("", text_out or f"Destroy all {colour} armies.", "destroy", colour=colour)
        slug = f"destroy-{colour}"
    elif continents or extra:
        if count > 0:
            warnings.append(
                f"{path.name} line {line}: a mission of both territories and continents "
                "is not a pbem mission kind; skipped"
            )
            return None
        chosen = tuple(sorted(continents))
        names = [source.continents[c][0] for c in chosen]
        default = "Conquer " + " and ".join(names + ["one more continent"] * extra) + "."
        mission = Mission(
            "", description or default, "continents", continents=chosen, extra_continents=extra
        )
        slug = "-".join(names + ["plus-one"] * min(extra, 1))
    elif count > 0:
        armies = max(armies, 1)
        default = f"Occupy {count} territories with at least {armies} armies each."
        mission = Mission("", description or default, "territories", count=count, min_armies=armies)
        slug = f"occupy-{count}" + (f"-with-{armies}" if armies > 1 else "")
    else:
        warnings.append(f"{path.name} line {line}: the mission asks for nothing; skipped")
        return None
    return replace(mission, id=_unique_id(slug, earlier))


def _round_robin(source: _DominationMap, warnings: list[str]) -> list[str]:
    hint = ""
    if "crd" in source.files:
        hint = f" (the map names {source.files['crd']!r}; pass it to import its cards and missions)"
    warnings.append(
        "no .cards file: card designs dealt infantry, cavalry, artillery in map order, "
        f"2 wild cards, no missions{hint}"
    )
    return [DESIGNS[i % 3] for i in range(len(source.countries))]


# -- the picture --------------------------------------------------------------------
def _picture(
    path: Path, source: _DominationMap, neighbours: list[set[int]], warnings: list[str]
) -> tuple[tuple[int, int] | None, tuple[tuple[int, int], ...]]:
    """The picture's size (None: no positions) and the edges drawn across its edge."""
    positions = [c.pos for c in source.countries]
    if any(p is None for p in positions):
        warnings.append("some countries have no x y position; the map has no positions")
        return None, ()
    xs = [p[0] for p in positions if p is not None]
    ys = [p[1] for p in positions if p is not None]
    if min(xs + ys) < 0:
        _fail(path, "[countries]", "a position is negative")
    size = _image_size(path.parent / source.files["pic"]) if "pic" in source.files else None
    if size is None or max(xs) >= size[0] or max(ys) >= size[1]:
        size = (max(xs) + 1, max(ys) + 1)
        warnings.append(
            f"picture size unknown; using the smallest that holds every position "
            f"({size[0]} x {size[1]})"
        )
    wraps = []
    for a, others in enumerate(neighbours):
        for b in sorted(others):
            if a < b and abs(xs[a] - xs[b]) > size[0] / 2:
                wraps.append((a, b))
                names = source.countries[a].name, source.countries[b].name
                warnings.append(
                    f"{names[0]} - {names[1]} are more than half the picture apart; "
                    "drawn across the picture's edge"
                )
    return size, tuple(wraps)


def _image_size(picture: Path) -> tuple[int, int] | None:
    if not picture.is_file():
        return None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(picture) as image:
            return image.size
    except (OSError, UnidentifiedImageError):
        return None


# -- building ---------------------------------------------------------------------------
def _rename_clashing_continents(source: _DominationMap, warnings: list[str]) -> None:
    """pbem needs continent and territory names apart; Domination does not."""
    territory_names = {fold_name(c.name) for c in source.countries}
    for index, (name, bonus) in enumerate(source.continents):
        if fold_name(name) in territory_names:
            source.continents[index] = (f"{name} (continent)", bonus)
            warnings.append(f"continent {name} has a territory's name; renamed {name} (continent)")


def _board(
    path: Path,
    source: _DominationMap,
    neighbours: list[set[int]],
    designs: list[str],
    wilds: int,
    missions: tuple[Mission, ...],
    picture: tuple[int, int] | None,
    wrap_edges: tuple[tuple[int, int], ...],
) -> Board:
    continents = []
    for index, (name, bonus) in enumerate(source.continents):
        members = tuple(i for i, c in enumerate(source.countries) if c.continent == index)
        continents.append(Continent(index, name, bonus, members))
    territories = tuple(
        Territory(
            i,
            c.name,
            c.continent,
            tuple(sorted(neighbours[i])),
            designs[i],
            (),
            c.pos if picture else None,
        )
        for i, c in enumerate(source.countries)
    )
    return Board(
        name=_slug(path.stem) or "imported",
        title=source.title,
        territories=territories,
        continents=tuple(continents),
        wilds=wilds,
        missions=missions,
        picture=picture,
        wrap_edges=wrap_edges,
        colours=DEFAULT_COLOURS,
    )


# -- small helpers ---------------------------------------------------------------------
def _fail(path: Path, key: str, message: str) -> NoReturn:
    raise MapError(str(path), key, message)


def _name(word: str) -> str:
    return " ".join(word.replace("_", " ").split())


def _is_int(word: str) -> bool:
    return re.fullmatch(r"-?\d+", word) is not None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _unique_id(slug: str, earlier: list[Mission]) -> str:
    base = _slug(slug) or "mission"
    taken = {m.id for m in earlier}
    found, n = base, 1
    while found in taken:
        n += 1
        found = f"{base}-{n}"
    return found
