"""Import a map in the Lux XML format (Lux Delux's ``.luxb`` boards).

The parts pbem reads::

    <luxboard>
      <title>Small World</title> <author>...</author>
      <width>600</width> <height>400</height>
      <continent>
        <continentname>North</continentname> <bonus>3</bonus>
        <country>
          <id>0</id> <name>Alaska</name>
          <adjoining>1,5</adjoining>          ids this country can attack
          <armylocation>40,330</armylocation> where its armies are drawn
          <polygon>10,300 80,300 80,360</polygon>
        </country>
      </continent>
    </luxboard>

Lux puts the origin of its coordinates at the bottom-left corner; pbem's is
the top-left, so y becomes height - y.  An ``adjoining`` list is what that
country can attack: a border one side lists alone goes one way.  Without an
``armylocation`` the middle of the polygon's points is used.  A country
without a ``<name>`` (the Lux SDK's map generator writes none; Lux names
them itself) is called "Country ID", from its ``<id>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import NoReturn

from pbem.maps.model import Imported, RawMap, RawTerritory, build
from pbem.rules.errors import MapError


def import_lux(path: Path, *, two_way: bool = False) -> Imported:
    """The checked pbem map equivalent to a Lux XML board."""
    return build(read_lux(path), two_way=two_way)


def read_lux(path: Path) -> RawMap:
    """A Lux board as it is, before any check; MapError on what it cannot read."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MapError(str(path), "file", f"cannot be read: {exc.strerror}") from None
    if b"<!ENTITY" in data or b"<!DOCTYPE" in data:
        _fail(path, "xml", "a DOCTYPE or ENTITY declaration is not accepted in a map")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        _fail(path, f"line {exc.position[0]}", f"not well-formed XML: {exc.msg}")
    if root.tag != "luxboard":
        _fail(path, "xml", f"the root element is <{root.tag}>, not <luxboard>")
    raw = RawMap(path, "Lux", _text(root, "title") or path.stem)
    author = _text(root, "author")
    if author:
        raw.title += f" (by {author})"
    width, height = _int(path, root, "width", "board"), _int(path, root, "height", "board")
    raw.size = (width, height)
    raw.wraps = False
    ids: dict[int, int] = {}
    adjoining: list[tuple[str, str]] = []
    for c, continent in enumerate(root.iter("continent")):
        name = _text(continent, "continentname") or f"Continent {c + 1}"
        raw.continents.append((name, _int(path, continent, "bonus", f"continent {name}")))
        for country in continent.iter("country"):
            where = f"country {_text(country, 'id') or '?'}"
            number = _int(path, country, "id", "a country")
            if number in ids:
                _fail(path, where, f"id {number} is used twice")
            ids[number] = len(raw.territories)
            pos = _position(path, country, where, height)
            name = _text(country, "name") or f"Country {number}"
            raw.territories.append(RawTerritory(name, c, pos, where))
            adjoining.append((where, _text(country, "adjoining")))
    if not raw.territories:
        _fail(path, "luxboard", "the board has no <country>")
    for where, listed in adjoining:
        targets = []
        for word in (w.strip() for w in listed.split(",")):
            if not word:
                continue
            if not word.lstrip("-").isdigit() or int(word) not in ids:
                _fail(path, where, f"<adjoining> names {word!r}, which is no country's id")
            if ids[int(word)] not in targets:
                targets.append(ids[int(word)])
        raw.borders.append(targets)
    return raw


def _text(element: ElementTree.Element, tag: str) -> str:
    found = element.find(tag)
    return (found.text or "").strip() if found is not None else ""


def _int(path: Path, element: ElementTree.Element, tag: str, where: str) -> int:
    text = _text(element, tag)
    if not text.lstrip("-").isdigit():
        _fail(path, where, f"<{tag}> must be a whole number, not {text!r}")
    return int(text)


def _position(
    path: Path, country: ElementTree.Element, where: str, height: int
) -> tuple[int, int] | None:
    """Where the armies are drawn, top-left origin."""
    points = _points(path, _text(country, "armylocation"), where)
    if not points:
        points = _points(path, _text(country, "polygon"), where)
    if not points:
        return None
    x = round(sum(p[0] for p in points) / len(points))
    y = round(sum(p[1] for p in points) / len(points))
    return x, height - 1 - y


def _points(path: Path, text: str, where: str) -> list[tuple[int, int]]:
    points = []
    for pair in text.split():
        x, comma, y = pair.partition(",")
        if not comma or not (x.lstrip("-").isdigit() and y.lstrip("-").isdigit()):
            _fail(path, where, f"expected points 'x,y x,y ...', got {pair!r}")
        points.append((int(x), int(y)))
    return points


def _fail(path: Path, key: str, message: str) -> NoReturn:
    raise MapError(str(path), key, message)
