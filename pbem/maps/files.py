"""Map files: the built-in maps, a TOML map file, or a file in another format.

Everything here reads files; the rules layer receives the text (pbem.rules.mapformat)
or the Board.  A map is named by a built-in name (``classic``) or by a path to
a file: a ``.toml`` map, or a Domination, Conquest or Lux map, imported on the
fly (pbem.maps.formats).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from pbem.maps.copies import parse_named, text_sha256
from pbem.paths import maps_dir
from pbem.rules.board import Board
from pbem.rules.errors import MapError
from pbem.rules.mapdump import dump_map
from pbem.rules.mapformat import parse_map


def read_text(path: Path) -> str:
    """The UTF-8 text of a map file, or a MapError that names it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise MapError(str(path), "file", "is not UTF-8 text") from None
    except OSError as exc:
        raise MapError(str(path), "file", f"cannot be read: {exc.strerror}") from None


def load_map(path: Path) -> Board:
    """Read and check the TOML map file at ``path`` (images next to it are found)."""
    path = Path(path)
    text, base = read_text(path), str(path.parent.resolve())
    if path.parent.resolve() == maps_dir().resolve():  # a built-in map: its JSON copy
        return parse_named(text, str(path), path.stem, base)
    return parse_map(text, str(path), base=base)


def map_names() -> list[str]:
    """The names of the built-in maps, sorted."""
    return sorted(p.stem for p in maps_dir().glob("*.toml"))


@functools.lru_cache(maxsize=16)
def builtin_map(name: str) -> Board:
    """The built-in map ``name`` (config/maps/NAME.toml); loaded once per process."""
    known = map_names()
    if name not in known:
        where = str(maps_dir())
        raise MapError(where, "name", f"no built-in map {name!r}; there are: {', '.join(known)}")
    path = maps_dir() / f"{name}.toml"
    board = load_map(path)
    if board.name != name:
        raise MapError(str(path), "name", f"must be {name!r}, the name of the file")
    return board


def is_file_name(name: str) -> bool:
    """Does a map argument name a file rather than a built-in map?"""
    return "/" in name or "\\" in name or "." in Path(name).name


def map_source(name: str) -> tuple[str, str, Board]:
    """(name, text, board) of a built-in map or of a map file of any known format.

    The text is what a game stores: the TOML of the map, with the paths of its
    images made absolute so that the stored game finds them from anywhere.
    """
    if not is_file_name(name):
        board = builtin_map(name)
        return name, read_text(maps_dir() / f"{name}.toml"), board
    path = Path(name)
    if not path.is_file():
        raise MapError(name, "file", "no such map file")
    if path.suffix.lower() == ".toml":
        text = read_text(path)
        board = parse_map(text, str(path), base=str(path.parent.resolve()))
    else:
        from pbem.maps.formats import import_file

        result = import_file(path)
        text, board = result.text, result.board
    if board.image or board.colour_map:
        text = dump_map(board)
    return board.name, text, board


def load_any(name: str) -> Board:
    """The Board of a built-in map name or of a map file of any known format."""
    return map_source(name)[2]


def load_copy(path: Path) -> Board:
    """The board of a JSON copy file (``pbem maps check``): the copy must have been
    made from the text of the TOML map next to it, and is checked as that map is."""
    path = Path(path)
    try:
        document = json.loads(read_text(path))
    except ValueError as exc:
        raise MapError(str(path), "file", f"is not JSON: {exc}") from None
    data = document.get("map") if isinstance(document, dict) else None
    if not isinstance(data, dict):
        raise MapError(str(path), "map", 'a JSON copy holds the decoded map under "map"')
    source = path.with_suffix(".toml")
    if not source.is_file():
        raise MapError(str(path), "file", f"is a JSON copy of {source.name}, which is missing")
    text = read_text(source)
    if document.get("sha256") != text_sha256(text):
        raise MapError(
            str(path),
            "sha256",
            f"the copy is stale: {source.name} was edited since; regenerate the copies "
            '(python -c "from pbem.maps.copies import write_copies; write_copies()")',
        )
    return parse_map(text, str(path), str(path.parent.resolve()), data)
