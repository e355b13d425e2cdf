"""The site folder of each game: safe, bounded and one per game.

A game name is any text the GM typed (up to the length the database takes):
"ÄÖ" and "game" must not share a folder, "Game" and "game" must not either (a
case-insensitive file system would merge them), and a 300-character name must
not become a file name longer than the 255 bytes a file system allows. A name
that is already a short, lower-case file name is its own folder (links to the
site of a running game stay valid); any other gets a readable part and a hash
of the whole name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from typing import Final

from pbem.service.errors import ServiceError

MAX_READABLE: Final = 40  # characters of the name kept in a hashed folder
HASH_HEX: Final = 12  # 48 bits of SHA-256 of the name
_PLAIN: Final = re.compile(f"[a-z0-9][a-z0-9_-]{{0,{MAX_READABLE - 1}}}")
_HASHED: Final = re.compile(f".*-[0-9a-f]{{{HASH_HEX}}}")
_UNSAFE: Final = re.compile(r"[^a-z0-9_-]+")


class SiteFolderClash(ServiceError):
    """Two games would be written to one folder (a hash collision: never by chance)."""


def slug(name: str) -> str:
    """The folder of the game ``name``: the name itself when it is a plain, short,
    lower-case file name (no dot: "index.html" and "style.css" are the site's own
    files); else ``readable-<12 hex>``, the hex from the whole name.

    A plain name that looks like a hashed folder (ends in ``-`` and 12 hex) is
    hashed too, so no name can take the folder another name maps to."""
    if _PLAIN.fullmatch(name) and not _HASHED.fullmatch(name):
        return name
    ascii_ = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    readable = _UNSAFE.sub("-", ascii_.lower()).strip("-")[:MAX_READABLE].strip("-") or "game"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:HASH_HEX]
    return f"{readable}-{digest}"


def folders(names: Iterable[str]) -> dict[str, str]:
    """The folder of each game; SiteFolderClash if two would share one (ignoring case)."""
    taken: dict[str, str] = {}
    out: dict[str, str] = {}
    for name in names:
        folder = slug(name)
        other = taken.setdefault(folder.lower(), name)
        if other != name:
            raise SiteFolderClash(
                f"the games {other!r} and {name!r} would share the site folder {folder!r}; "
                "rename one of them"
            )
        out[name] = folder
    return out
