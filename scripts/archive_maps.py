"""(Re)build the map archive (pbem/maps/archive/) from the git history.

Every text of every file ever committed under config/maps (on any branch) is
stored once, gzip-compressed, under its SHA-256 as records compute it, so a
record that names its map only by hash still verifies after the map file
changes. Run it after editing a map file:

    python scripts/archive_maps.py

Texts already archived are kept (the archive only grows); the shipped files of
the work tree are archived too, so an edit not yet committed is covered.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pbem.maps.archive import normalise, store_text  # noqa: E402

MAPS = "config/maps"


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True).stdout


def history_blobs(ref: str = "--all") -> set[str]:
    """The ids of every blob ever committed under config/maps, on any branch
    (or in the history of ``ref``)."""
    out = _git(
        "log", ref, "--full-history", "--no-renames", "--format=", "--raw",
        "--no-abbrev", "--", MAPS,
    ).decode()  # fmt: skip
    blobs = set()
    for line in out.splitlines():
        if not line.startswith(":"):
            continue
        fields = line.split("\t")[0].split()
        new_blob = fields[3]
        if set(new_blob) != {"0"}:  # a deletion has no new text
            blobs.add(new_blob)
    return blobs


def main() -> int:
    texts: dict[str, str] = {}
    for blob in sorted(history_blobs()):
        raw = _git("cat-file", "blob", blob)
        try:
            texts[blob] = normalise(raw.decode("utf-8"))
        except UnicodeDecodeError:
            print(f"skipped blob {blob}: not UTF-8 text (no map file)", file=sys.stderr)
    for path in sorted((REPO / MAPS).iterdir()):
        if path.is_file():
            texts[f"worktree:{path.name}"] = path.read_text(encoding="utf-8")
    added = 0
    for source, text in sorted(texts.items()):
        key, new = store_text(text)
        if new:
            added += 1
            print(f"archived {key} ({source})")
    print(f"{len(set(texts.values()))} distinct map texts; {added} new in pbem/maps/archive/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
