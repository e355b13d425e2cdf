"""STAND-IN, replaced at merge by the map archive of issue 31 (worktree h31a).

The real module keeps every map text pbem ever shipped, by SHA-256, inside the
package. This stand-in knows only the maps shipped today (config/maps/*.toml),
so that pbem/orderlog/records.py can be written against the agreed interface
``archived_map_text(sha256) -> str | None``. Keep the merge side of h31a.
"""

from __future__ import annotations

import hashlib

from pbem.paths import maps_dir


def archived_map_text(sha256: str) -> str | None:
    """The text of a map pbem shipped whose UTF-8 SHA-256 is ``sha256``, or None."""
    wanted = sha256.strip().lower()
    for path in sorted(maps_dir().glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == wanted:
            return text
    return None
