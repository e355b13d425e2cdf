"""Import a map in the Conquest format (the ``.map`` files of Conquest and the
many Risk clones that read them).

The format, an INI-like text file::

    [Map]
    author=Someone
    image=world.bmp        the picture, next to the map file
    wrap=no                does the map wrap left-right?
    scroll=horizontal
    warn=yes

    [Continents]
    North America=5        name=bonus

    [Territories]
    Alaska,70,126,North America,Northwest Territory,Alberta,Kamchatka

A territory line is its name, x and y on the picture, its continent, then the
names of the territories it borders.  Blank lines between territories group
them and mean nothing.  A border listed on one side only goes one way.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

from pbem.maps.model import Imported, RawMap, RawTerritory, build, image_size
from pbem.rules.board import fold_name
from pbem.rules.errors import MapError


def import_conquest(path: Path, *, two_way: bool = False) -> Imported:
    """The checked pbem map equivalent to a Conquest map."""
    return build(read_conquest(path), two_way=two_way)


def read_conquest(path: Path) -> RawMap:
    """A Conquest map as it is, before any check; MapError on lines it cannot read."""
    path = Path(path)
    raw = RawMap(path, "Conquest", path.stem)
    settings: dict[str, str] = {}
    continent_index: dict[str, int] = {}
    lines: list[tuple[int, list[str]]] = []
    section = ""
    for number, line in enumerate(_text(path, raw).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            if section not in ("map", "continents", "territories"):
                raw.warnings.append(f"line {number}: section [{section}] is not used; ignored")
            continue
        where = f"line {number}"
        if section == "map":
            key, _, value = line.partition("=")
            settings[key.strip().lower()] = value.strip()
        elif section == "continents":
            name, equals, bonus = line.rpartition("=")
            if not equals or not name.strip() or not _is_int(bonus.strip()):
                _fail(path, where, f"[Continents] expected 'Name=bonus', got {line!r}")
            continent_index[fold_name(name)] = len(raw.continents)
            raw.continents.append((name.strip(), int(bonus.strip())))
        elif section == "territories":
            fields = [f.strip() for f in line.split(",")]
            if len(fields) < 4 or not (_is_int(fields[1]) and _is_int(fields[2])):
                _fail(
                    path,
                    where,
                    f"[Territories] expected 'Name,x,y,Continent,neighbour,...', got {line!r}",
                )
            lines.append((number, fields))
    if not lines:
        _fail(path, "[Territories]", "the map has no territories")
    raw.title = settings.get("name", "") or settings.get("title", "") or path.stem
    if "author" in settings:
        raw.title += f" (by {settings['author']})" if settings["author"] else ""
    raw.wraps = settings.get("wrap", "no").lower() == "yes"
    index: dict[str, int] = {}
    for number, fields in lines:
        name = fields[0]
        continent = continent_index.get(fold_name(fields[3]), -1)
        if continent < 0:
            raw.warnings.append(f"line {number}: {name} names continent {fields[3]!r}, not listed")
        raw.territories.append(
            RawTerritory(name, continent, (int(fields[1]), int(fields[2])), f"line {number}")
        )
        index.setdefault(fold_name(name), len(raw.territories) - 1)
    for number, fields in lines:
        listed = []
        for other in fields[4:]:
            if not other:
                continue
            found = index.get(fold_name(other))
            if found is None:
                _fail(path, f"line {number}", f"{fields[0]} borders {other!r}: no such territory")
            if found not in listed:
                listed.append(found)
        raw.borders.append(listed)
    image = settings.get("image", "")
    if image:
        found_image = path.parent / image
        size = image_size(found_image)
        if size is None:
            raw.warnings.append(f"image {image!r} not found next to the map; no picture")
        else:
            raw.image, raw.size = found_image, size
            raw.extra_files.append(found_image.name)
    return raw


def _text(path: Path, raw: RawMap) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MapError(str(path), "file", f"cannot be read: {exc.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raw.warnings.append(f"{path.name} is not UTF-8; read it as Latin-1")
        return data.decode("latin-1")


def _is_int(word: str) -> bool:
    return word.lstrip("-").isdigit()


def _fail(path: Path, key: str, message: str) -> NoReturn:
    raise MapError(str(path), key, message)
