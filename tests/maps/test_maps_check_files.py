"""`pbem maps check` reads every file pbem loads maps from (issue 30, point 8),
and a Lux board whose countries have no names imports (point 10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.formats import detect, import_file
from pbem.paths import maps_dir

RUNNER = CliRunner()
BUILT_IN = sorted(maps_dir().iterdir())


def test_there_are_built_in_maps_and_their_copies() -> None:
    assert {p.suffix for p in BUILT_IN} == {".toml", ".json"}


@pytest.mark.parametrize("path", BUILT_IN, ids=lambda p: p.name)
def test_maps_check_accepts_every_built_in_map_file(path: Path) -> None:
    result = RUNNER.invoke(app, ["maps", "check", str(path)])
    assert result.exit_code == 0, result.output
    kind = "pbem" if path.suffix == ".toml" else "pbem JSON copy"
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{path} ({kind} format): ")
    assert lines[1].startswith("  42 territories, 6 continents, ")
    assert lines[-1] == "OK: the map can be played"


def test_a_toml_map_is_not_taken_for_a_conquest_map() -> None:
    # classic.toml holds "[[territories]]", which holds the text "[territories]"
    assert detect(maps_dir() / "classic.toml") == "pbem"


def test_a_stale_json_copy_is_refused_with_its_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "classic.toml").write_text(
        (maps_dir() / "classic.toml").read_text(encoding="utf-8") + "\n# edited\n",
        encoding="utf-8",
    )
    copy = tmp_path / "classic.json"
    copy.write_text((maps_dir() / "classic.json").read_text(encoding="utf-8"), encoding="utf-8")
    result = RUNNER.invoke(app, ["maps", "check", str(copy)])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [
        f"{copy}: refused, the map cannot be played",
        "sha256: the copy is stale: classic.toml was edited since; regenerate the copies "
        '(python -c "from pbem.maps.copies import write_copies; write_copies()")',
    ]


UNNAMED = """<?xml version="1.0" encoding="UTF-8"?>
<luxboard>
<width>300</width>
<height>200</height>
<title>Generated</title>
<continent>
  <continentname>West</continentname>
  <bonus>2</bonus>
  <country><id>0</id><adjoining>1,7</adjoining><armylocation>40,160</armylocation></country>
  <country><id>1</id><name></name><adjoining>0,7</adjoining>
    <armylocation>120,170</armylocation></country>
  <country><id>7</id><name>Ford</name><adjoining>0,1</adjoining>
    <armylocation>70,110</armylocation></country>
</continent>
</luxboard>
"""


def test_lux_countries_without_names_are_named_by_their_id(tmp_path: Path) -> None:
    path = tmp_path / "generated.luxb"
    path.write_text(UNNAMED, encoding="utf-8")
    board = import_file(path).board
    assert board.names() == ["Country 0", "Country 1", "Ford"]
    result = RUNNER.invoke(app, ["maps", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"{path} (Lux format): Generated"
    assert result.stdout.splitlines()[-1] == "OK: the map can be played"
