"""Which format a map file is in, and importing it whatever it is."""

from __future__ import annotations

import re
from pathlib import Path

from pbem.maps.model import Imported
from pbem.rules.errors import MapError

FORMATS = ("Domination", "Conquest", "Lux")

# A section header alone on its line: a pbem TOML map's ``[[territories]]``
# holds the text ``[territories]`` but is no Conquest section.
_SECTION = r"(?m)^[ \t]*\[{}\][ \t]*\r?$"


def _has_section(head: str, name: str) -> bool:
    return re.search(_SECTION.format(name), head) is not None


def detect(path: Path) -> str:
    """The format of a map file, told by its content (not only its name)."""
    path = Path(path)
    try:
        head = path.read_bytes()[:65536].decode("latin-1").lower()
    except OSError as exc:
        raise MapError(str(path), "file", f"cannot be read: {exc.strerror}") from None
    if "<luxboard" in head:
        return "Lux"
    if _has_section(head, "territories"):
        return "Conquest"
    if _has_section(head, "countries") and _has_section(head, "borders"):
        return "Domination"
    if path.suffix.lower() == ".toml":
        return "pbem"
    if path.suffix.lower() == ".json" and '"sha256"' in head:
        return "pbem JSON copy"
    raise MapError(
        str(path),
        "file",
        "not a map pbem can import: expected a Domination .map ([countries], [borders]), "
        "a Conquest .map ([Territories]) or a Lux XML board (<luxboard>)",
    )


def import_file(path: Path, cards: Path | None = None, *, two_way: bool = False) -> Imported:
    """Import and check a map file of any known format (``cards``: Domination only)."""
    fmt = detect(path)
    if cards is not None and fmt != "Domination":
        raise MapError(str(path), "--cards", f"a .cards file goes with a Domination map, not {fmt}")
    if fmt == "Domination":
        from pbem.maps.domination import import_domination

        return import_domination(path, cards, two_way=two_way)
    if fmt == "Conquest":
        from pbem.maps.conquest import import_conquest

        return import_conquest(path, two_way=two_way)
    if fmt == "Lux":
        from pbem.maps.lux import import_lux

        return import_lux(path, two_way=two_way)
    raise MapError(str(path), "file", f"is already a pbem map ({fmt}); nothing to import")
