"""The JSON copies of the built-in maps (pbem/maps/copies.py): equal to their TOML,
current, and used only for the very text they were made from."""

from __future__ import annotations

import json
import tomllib

import pytest

from pbem.maps import builtin_map, map_names
from pbem.maps.copies import SUFFIX, decoded_copy, parse_named, render_copy, text_sha256
from pbem.orderlog.records import read_record
from pbem.paths import maps_dir
from pbem.rules import mapformat as rules_maps
from pbem.rules.errors import MapError
from pbem.rules.mapformat import parse_map


@pytest.mark.parametrize("name", map_names())
def test_every_builtin_map_has_a_current_copy(name: str) -> None:
    text = (maps_dir() / f"{name}.toml").read_text(encoding="utf-8")
    shipped = (maps_dir() / f"{name}{SUFFIX}").read_text(encoding="utf-8")
    # regenerate: python -c "from pbem.maps.copies import write_copies; write_copies()"
    assert shipped == render_copy(text), f"{name}{SUFFIX} is stale"
    document = json.loads(shipped)
    assert document["sha256"] == text_sha256(text)
    assert document["map"] == tomllib.loads(text)
    # the same keys in the same order, all the way down (the checks meet them in order)
    assert json.dumps(document["map"]) == json.dumps(tomllib.loads(text))


@pytest.mark.parametrize("name", map_names())
def test_the_board_from_the_copy_is_the_board_from_the_toml(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (maps_dir() / f"{name}.toml").read_text(encoding="utf-8")
    monkeypatch.setattr(rules_maps, "_BOARDS", {})
    from_toml = parse_map(text, name)
    monkeypatch.setattr(rules_maps, "_BOARDS", {})
    decoded = decoded_copy(name, text)
    assert decoded is not None
    monkeypatch.setattr(rules_maps.tomllib, "loads", _no_toml)
    from_copy = parse_named(text, name, name)
    assert from_copy == from_toml
    assert from_copy is not from_toml


def _no_toml(text: str) -> object:
    raise AssertionError("the TOML was decoded although a current copy exists")


def test_the_builtin_maps() -> None:
    assert map_names() == ["classic", "fantasy"]


def test_a_copy_is_not_used_for_another_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (maps_dir() / "classic.toml").read_text(encoding="utf-8")
    edited = text.replace("bonus = 5", "bonus = 6", 1)
    assert edited != text
    assert decoded_copy("classic", edited) is None
    assert decoded_copy("fantasy", text) is None
    assert decoded_copy("atlantis", text) is None
    assert decoded_copy("../maps/classic", text) is None
    monkeypatch.setattr(rules_maps, "_BOARDS", {})
    board = parse_named(edited, "classic (in the record)", "classic")
    assert board.continents[0].bonus == 6
    assert builtin_map("classic").continents[0].bonus == 5


def test_errors_still_name_the_file_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (maps_dir() / "classic.toml").read_text(encoding="utf-8")
    broken = text.replace("bonus = 5", "bonus = -5", 1)
    monkeypatch.setattr(rules_maps, "_BOARDS", {})
    with pytest.raises(MapError) as caught:
        parse_named(broken, "classic (in the record)", "classic")
    assert str(caught.value) == (
        "classic (in the record): continents[North America].bonus: must be 0 or more, not -5"
    )


def test_a_record_on_a_builtin_map_is_checked_from_the_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    from pbem.orderlog.records import definition_of

    path = Path(__file__).parents[1] / "data" / "records"
    record_file = sorted(path.glob("*.pgn"))[0]
    record = read_record(record_file.read_text(encoding="utf-8"), str(record_file))
    monkeypatch.setattr(rules_maps, "_BOARDS", {})
    monkeypatch.setattr(rules_maps.tomllib, "loads", _no_toml)
    definition = definition_of(record, b"\0" * 32)
    assert definition.board == builtin_map(record.map_name)
