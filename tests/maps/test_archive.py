"""The map archive keeps every shipped map text, found by the hash records write."""

from __future__ import annotations

import gzip
import importlib.util
import subprocess
from pathlib import Path

import pytest

from pbem.maps import archive
from pbem.maps.archive import MapArchiveError, archived_hashes, archived_map_text
from pbem.orderlog.records import map_sha256
from pbem.paths import maps_dir

# The classic map as 95b4065 shipped it (before the rules changes of issue 14):
# records exported then name it by this hash and carry no text.
CLASSIC_95B4065 = "9f2fe65d56caf08ddbede7a50592f2c251130049f0613b181ca89f8868a23506"


@pytest.mark.parametrize("path", sorted(maps_dir().iterdir()), ids=lambda p: p.name)
def test_every_shipped_map_file_is_archived(path) -> None:
    text = path.read_text(encoding="utf-8")
    found = archived_map_text(map_sha256(text))
    assert found == text, (
        f"{path.name} (sha256 {map_sha256(text)}) is not in pbem/maps/archive/: a map file "
        "changed without archiving its text; run `python scripts/archive_maps.py` and commit "
        "the new file under pbem/maps/archive/"
    )


def test_an_old_text_is_found_by_its_hash() -> None:
    text = archived_map_text(CLASSIC_95B4065)
    assert text is not None and map_sha256(text) == CLASSIC_95B4065
    assert 'name = "classic"' in text


def test_unknown_or_malformed_hashes_give_none() -> None:
    assert archived_map_text("0" * 64) is None
    assert archived_map_text("../../etc/passwd") is None
    assert archived_map_text(CLASSIC_95B4065.upper()) is not None  # hex in either case


def test_every_archived_file_is_named_by_its_text(tmp_path, monkeypatch) -> None:
    for key in archived_hashes():
        assert archived_map_text(key) is not None
    bad = "1" * 64
    monkeypatch.setattr(archive, "ARCHIVE_DIR", tmp_path)
    (tmp_path / f"{bad}.gz").write_bytes(gzip.compress(b"not the text of that hash"))
    with pytest.raises(MapArchiveError, match="does not hash to its name"):
        archived_map_text(bad)


def test_every_map_text_in_the_git_history_is_archived() -> None:
    """A map file edited in some commit and edited again later: both texts are kept."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "archive_maps.py"
    spec = importlib.util.spec_from_file_location("archive_maps", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        blobs = module.history_blobs("HEAD")  # not other people's unfinished branches
    except (OSError, subprocess.CalledProcessError) as err:
        pytest.skip(f"no git history here: {err}")
    missing = []
    for blob in sorted(blobs):
        text = archive.normalise(module._git("cat-file", "blob", blob).decode("utf-8"))
        if archived_map_text(map_sha256(text)) != text:
            missing.append(blob)
    assert not missing, (
        f"map texts of the git history not archived (blobs {missing}): run "
        "`python scripts/archive_maps.py` and commit pbem/maps/archive/"
    )
    assert CLASSIC_95B4065 in archived_hashes()
