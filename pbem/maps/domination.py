"""Import a map in the Domination (yura.net) format: a ``.map`` file and its ``.cards``.

Many Risk maps are shared in that format.  This reads one into a RawMap
(pbem.maps.model), which checks it and builds the pbem map (docs/MAPS.md).
The ``.cards`` file named by the map (``crd``) and its images (``pic``, the
picture; ``map``, the colour map whose pixel value is the country's number)
are used when they lie next to the map.

The format, as Domination reads it (``;`` starts a comment line):

* ``.map``: an optional ``name TITLE`` line; ``[files]`` (``pic``, ``map``,
  ``crd`` ...); ``[continents]`` lines ``Name bonus colour``, numbered from 1;
  ``[countries]`` lines ``index Name continent x y``; ``[borders]`` lines
  ``index neighbour neighbour ...`` (a border listed on one side only is a
  one-way border, kept).  Underscores in names stand for blanks.
* ``.cards``: ``[cards]`` lines ``Infantry|Cavalry|Cannon index`` and
  ``Wildcard`` (a country without a line has no card); ``[missions]`` lines
  ``player territories armies c1 c2 c3 text``: destroy player N (0: nobody),
  hold that many territories with that many armies each, hold the continents
  numbered c1..c3 (0: none, ``*``: one more of the player's choice).  On a
  destroy mission the territories and armies are its fallback: the mission
  when the target is the player's own colour or is destroyed by another.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NoReturn

from pbem.maps.model import Imported, RawMap, RawTerritory, build, image_size
from pbem.rules.board import Mission, MissionKind
from pbem.rules.errors import MapError
from pbem.rules.mapformat import DEFAULT_COLOURS

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
    map_path: Path, cards_path: Path | None = None, *, two_way: bool = False
) -> Imported:
    """The checked pbem map equivalent to a Domination map (and its .cards).

    Without ``cards_path`` the .cards file the map names is used when it is
    next to the map.  One-way borders are kept, or made two-way with ``two_way``.
    """
    return build(read_domination(map_path, cards_path), two_way=two_way)


def read_domination(map_path: Path, cards_path: Path | None = None) -> RawMap:
    """A Domination map as it is, before any check."""
    map_path = Path(map_path)
    warnings: list[str] = []
    source = _read_map(map_path, warnings)
    raw = RawMap(map_path, "Domination", source.title, warnings=warnings)
    raw.continents = list(source.continents)
    raw.territories = [
        RawTerritory(c.name, c.continent, c.pos, f"line {c.line}") for c in source.countries
    ]
    raw.borders = _borders(map_path, source)
    if cards_path is None and "crd" in source.files:
        named = map_path.parent / source.files["crd"]
        if named.is_file():
            cards_path = named
        else:
            warnings.append(f"the map names {source.files['crd']!r}, which is not next to it")
    if cards_path is not None:
        designs, raw.wilds, raw.missions = _read_cards(Path(cards_path), source, warnings)
        for territory, design in zip(raw.territories, designs, strict=True):
            territory.card = design
        raw.extra_files.append(Path(cards_path).name)
    else:
        warnings.append("no .cards file: 2 wild cards, no missions")
    for key in ("pic", "map"):
        if key in source.files:
            found = map_path.parent / source.files[key]
            size = image_size(found)
            if size is None:
                warnings.append(f"image {source.files[key]!r} ({key}) not found next to the map")
                continue
            if raw.size is not None and size != raw.size:
                warnings.append(f"image {found.name} is {size}, not {raw.size}; ignored")
                continue
            raw.size = size
            if key == "pic":
                raw.image = found
            else:
                raw.colour_map = found
            raw.extra_files.append(found.name)
    return raw


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


def _borders(path: Path, source: _DominationMap) -> list[list[int]]:
    """Neighbours by position in the file, as listed (one-way borders stay one way)."""
    position = {c.number: i for i, c in enumerate(source.countries)}
    names = [c.name for c in source.countries]
    listed: list[list[int]] = [[] for _ in source.countries]
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
            if position[other] not in listed[position[number]]:
                listed[position[number]].append(position[other])
    return listed


# -- reading the .cards file ------------------------------------------------------
def _read_cards(
    path: Path, source: _DominationMap, warnings: list[str]
) -> tuple[list[str | None], int, tuple[Mission, ...]]:
    """Designs by country (None: no card, as Domination allows), wilds, missions."""
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
    return designs, wilds, tuple(missions)


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
        mission = Mission(
            "", text_out or f"Destroy all {colour} armies.", MissionKind.DESTROY, colour=colour
        )
        if count > 0:  # the fallback mission: occupy that many with that many armies
            if count > len(source.countries):
                warnings.append(
                    f"{path.name} line {line}: fallback of {count} territories is more than "
                    f"the map has; {len(source.countries)}"
                )
                count = len(source.countries)
            mission = replace(mission, count=count, min_armies=max(armies, 1))
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
            "",
            description or default,
            MissionKind.CONTINENTS,
            continents=chosen,
            extra_continents=extra,
        )
        slug = "-".join(names + ["plus-one"] * min(extra, 1))
    elif count > 0:
        armies = max(armies, 1)
        default = f"Occupy {count} territories with at least {armies} armies each."
        mission = Mission(
            "", description or default, MissionKind.TERRITORIES, count=count, min_armies=armies
        )
        slug = f"occupy-{count}" + (f"-with-{armies}" if armies > 1 else "")
    else:
        warnings.append(f"{path.name} line {line}: the mission asks for nothing; skipped")
        return None
    return replace(mission, id=_unique_id(slug, earlier))


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
