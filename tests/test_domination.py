"""Importing Domination .map/.cards files: the sample pair in tests/data/maps."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image

from pbem.rules.domination import import_domination
from pbem.rules.errors import MapError
from pbem.rules.maps import parse_map

DATA = Path(__file__).resolve().parent / "data" / "maps"
MAP = DATA / "sample.map"
CARDS = DATA / "sample.cards"

ONE_WAY = "border Heron Rock -> Otter Holt was listed one way only; added Otter Holt -> Heron Rock"
NAMES = [
    "Pine Point",
    "Birch Bay",
    "Cedar Cove",
    "Reed Island",
    "Heron Rock",
    "Otter Holt",
    "Fox Hollow",
    "Hare Down",
    "Badger Barrow",
]


def test_sample_imports_with_cards_and_missions() -> None:
    text, warnings = import_domination(MAP, CARDS)
    assert warnings == [
        ONE_WAY,
        "sample.cards line 24: a mission of both territories and continents is not a pbem "
        "mission kind; skipped",
        "picture size unknown; using the smallest that holds every position (221 x 211)",
        "Fox Hollow - Badger Barrow are more than half the picture apart; drawn across the "
        "picture's edge",
        "the map has no aliases: players write territory names in full",
    ]
    assert text.startswith("# Imported from sample.map and sample.cards (Domination format)\n")
    board = parse_map(text, "sample.toml")
    assert board.name == "sample" and board.title == "Three Lakes"
    assert board.names() == NAMES
    assert [(c.name, c.bonus, c.territories) for c in board.continents] == [
        ("North Shore", 3, (0, 1, 2)),
        ("Middle Isles", 2, (3, 4, 5)),
        ("South Downs", 2, (6, 7, 8)),
    ]
    heron, otter = board.territory("Heron Rock"), board.territory("Otter Holt")
    assert board.adjacent(heron, otter) and board.adjacent(otter, heron)
    assert len(board.edges()) == 13
    assert [t.card for t in board.territories] == ["infantry", "cavalry", "artillery"] * 3
    assert board.wilds == 2
    assert board.picture == (221, 211)
    assert board.territories[0].pos == (40, 40)
    assert board.wrap_edges == ((6, 8),)
    summary = [
        (m.id, m.kind, m.count, m.min_armies, m.continents, m.extra_continents, m.colour)
        for m in board.missions
    ]
    assert summary == [
        ("occupy-6", "territories", 6, 1, (), 0, ""),
        ("occupy-5-with-2", "territories", 5, 2, (), 0, ""),
        ("north-shore-south-downs", "continents", 0, 1, (0, 2), 0, ""),
        ("middle-isles-plus-one", "continents", 0, 1, (1,), 1, ""),
        ("destroy-red", "destroy", 0, 1, (), 0, "red"),
        ("destroy-blue", "destroy", 0, 1, (), 0, "blue"),
    ]
    assert board.missions[4].text.startswith("Destroy all of RED's TROOPS.")


def test_one_way_border_refused_when_not_fixed() -> None:
    with pytest.raises(MapError) as caught:
        import_domination(MAP, CARDS, fix_one_way=False)
    assert str(caught.value) == (
        f"{MAP}: line 33: [borders] border Heron Rock (5) -> Otter Holt (6) goes one way "
        "only: Otter Holt does not list 5 (fix_one_way adds the way back)"
    )


def test_without_cards_designs_are_dealt_round_robin() -> None:
    text, warnings = import_domination(MAP)
    assert warnings[1] == (
        "no .cards file: card designs dealt infantry, cavalry, artillery in map order, "
        "2 wild cards, no missions (the map names 'sample.cards'; pass it to import its "
        "cards and missions)"
    )
    board = parse_map(text, "sample.toml")
    assert [t.card for t in board.territories] == ["infantry", "cavalry", "artillery"] * 3
    assert board.wilds == 2
    assert board.missions == ()


def test_picture_size_is_read_from_the_background_image(tmp_path: Path) -> None:
    shutil.copy(MAP, tmp_path / "lakes.map")
    Image.new("RGB", (677, 425)).save(tmp_path / "three_lakes_pic.png")
    text, warnings = import_domination(tmp_path / "lakes.map", CARDS)
    board = parse_map(text, "lakes.toml")
    assert board.name == "lakes"
    assert board.picture == (677, 425)
    assert board.wrap_edges == ()  # 160 pixels apart is no longer half the picture
    assert not any("picture" in w for w in warnings)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "9 Badger_Barrow 3 210 200",
            "9 Badger_Barrow 4 210 200",
            "line 26: [countries] continent 4 does not exist (the [continents] section lists 3, "
            "numbered from 1)",
        ),
        (
            "8 5 7 9",
            "8 5 7 12",
            "line 36: [borders] Hare Down lists 12, but there is no country 12",
        ),
        (
            "North_Shore 3 blue",
            "North_Shore three blue",
            "line 13: [continents] expected 'Name bonus colour', got 'North_Shore three blue'",
        ),
    ],
)
def test_broken_map_files_are_refused(tmp_path: Path, old: str, new: str, expected: str) -> None:
    source = MAP.read_text()
    assert source.count(old) == 1
    broken = tmp_path / "broken.map"
    broken.write_text(source.replace(old, new))
    with pytest.raises(MapError) as caught:
        import_domination(broken)
    assert str(caught.value) == f"{broken}: {expected}"


def test_card_for_a_missing_country_is_refused(tmp_path: Path) -> None:
    cards = tmp_path / "broken.cards"
    cards.write_text(CARDS.read_text().replace("Cannon 9\n", ""))
    with pytest.raises(MapError) as caught:
        import_domination(MAP, cards)
    assert str(caught.value) == f"{cards}: [cards]: no card for Badger Barrow"


def test_an_import_pbem_cannot_play_fails_with_the_loader_error(tmp_path: Path) -> None:
    source = MAP.read_text().replace("5 Heron_Rock 2", "5 Pine_Point 2")
    broken = tmp_path / "twins.map"
    broken.write_text(source)
    with pytest.raises(MapError) as caught:
        import_domination(broken)
    assert str(caught.value) == (
        f"{broken}: territories[#5].name: 'Pine Point' clashes with territory Pine Point"
    )


def test_continent_named_like_a_territory_is_renamed(tmp_path: Path) -> None:
    renamed = tmp_path / "isles.map"
    renamed.write_text(MAP.read_text().replace("5 Heron_Rock 2", "5 Middle_Isles 2"))
    text, warnings = import_domination(renamed)
    assert "continent Middle Isles has a territory's name; renamed Middle Isles (continent)" in (
        warnings
    )
    board = parse_map(text, "isles.toml")
    assert [c.name for c in board.continents][1] == "Middle Isles (continent)"
    assert board.territories[4].name == "Middle Isles"
