"""JSON copies of the built-in maps: the same data, decoded much faster than the TOML.

``tomllib`` is pure Python, and decoding a map was most of the time a new
`pbem verify` spent on it (docs/PERFORMANCE.md). Each built-in
``config/maps/NAME.toml`` is also shipped as ``NAME.json``, the decoded TOML
together with the SHA-256 of the
text it was made from. A copy is used only for that exact text (a map file edited
since, or a stored game's own map, is read from its TOML), and the board is
checked from it by the same code with the same messages. The TOML stays the
source: regenerate the copies with
``python -c "from pbem.maps.copies import write_copies; write_copies()"``
(tests/maps/test_maps_copies.py fails when one is missing or stale). Keys keep the
order of the TOML, so the checks meet them in the same order.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

from pbem.paths import maps_dir
from pbem.rules.board import Board
from pbem.rules.mapformat import parse_map, parsed_before

SUFFIX = ".json"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render_copy(toml_text: str) -> str:
    """The JSON copy of a map's TOML text (what ``NAME.json`` must hold)."""
    document = {"sha256": text_sha256(toml_text), "map": tomllib.loads(toml_text)}
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def decoded_copy(name: str, text: str) -> dict[str, Any] | None:
    """The decoded TOML of ``text`` from the built-in map ``name``'s JSON copy, or
    None when there is no copy or it was made from another text."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    try:
        raw = (maps_dir() / f"{name}{SUFFIX}").read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        document = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("sha256") != text_sha256(text):
        return None
    data = document.get("map")
    return data if isinstance(data, dict) else None


def parse_named(text: str, path: str, name: str, base: str | None = None) -> Board:
    """``parse_map`` of the text of the map ``name``, from its JSON copy when the
    copy was made from this text (else from the TOML)."""
    if parsed_before(text, base):  # checked in this process already: no copy to read
        return parse_map(text, path, base)
    return parse_map(text, path, base, decoded_copy(name, text))


def write_copies(folder: Path | None = None) -> list[Path]:
    """(Re)write the JSON copy of every TOML map in ``folder`` (the built-in maps)."""
    folder = folder or maps_dir()
    written = []
    for source in sorted(folder.glob("*.toml")):
        target = source.with_suffix(SUFFIX)
        target.write_text(render_copy(source.read_text(encoding="utf-8")), encoding="utf-8")
        written.append(target)
    return written
