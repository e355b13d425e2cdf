"""The map archive: every map text pbem ever shipped, found by its SHA-256.

A game record names its map by the SHA-256 of the map's text (``[MapSHA256]``)
and, in older formats, does not carry the text. When a shipped map file is
edited later, such a record must still verify: the earlier text is kept here,
one gzip file per distinct text, named ``<sha256>.gz``, inside the package
(``pbem/maps/archive/``). ``scripts/archive_maps.py`` (re)builds the folder
from the git history of ``config/maps``; ``tests/maps/test_archive.py`` fails
when a shipped map is missing from it.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

ARCHIVE_DIR = Path(__file__).resolve().parent / "archive"
_HEX = re.compile(r"[0-9a-f]{64}")


class MapArchiveError(RuntimeError):
    """An archived map file is damaged: its text does not hash to its name."""


def map_text_sha256(text: str) -> str:
    """The SHA-256 a record writes for a map text (as pbem.orderlog.records.map_sha256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise(text: str) -> str:
    """The text as pbem reads a map file (Python text mode: universal line ends)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def archive_path(sha256: str) -> Path:
    """Where the text of that hash is (or would be) kept."""
    return ARCHIVE_DIR / f"{sha256}.gz"


def archived_map_text(sha256: str) -> str | None:
    """The map text whose SHA-256 (as records compute it) is ``sha256``; None if unknown."""
    key = sha256.strip().lower()
    if not _HEX.fullmatch(key):
        return None
    path = archive_path(key)
    if not path.is_file():
        return None
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    if map_text_sha256(text) != key:
        raise MapArchiveError(
            f"{path}: the archived map text does not hash to its name; the package is "
            "damaged (rebuild the archive with `python scripts/archive_maps.py`)"
        )
    return text


def archived_hashes() -> list[str]:
    """The hashes of every archived map text, sorted."""
    return sorted(p.name[: -len(".gz")] for p in ARCHIVE_DIR.glob("*.gz"))


def store_text(text: str) -> tuple[str, bool]:
    """Keep ``text`` in the archive (byte-for-byte reproducible gzip);
    returns (its hash, whether it was new)."""
    key = map_text_sha256(text)
    path = archive_path(key)
    if path.is_file():
        return key, False
    ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return key, True
