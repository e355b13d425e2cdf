"""Importing Domination .map/.cards files: the sample pair in tests/data/maps."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image

from pbem.maps.domination import import_domination
from pbem.rules.errors import MapError
from pbem.rules.mapformat import parse_map

DATA = Path(__file__).resolve().parents[1] / "data" / "maps"
MAP = DATA / "sample.map"
CARDS = DATA / "sample.cards"

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


def test_sample_imports_with_the_cards_file_it_names() -> None:
    imported = import_domination(MAP)  # the map names crd sample.cards, next to it
    assert imported.warnings == [
        "file: sample.cards line 24: a mission of both territories and continents is not a "
        "pbem mission kind; skipped",
        "file: image 'three_lakes_pic.png' (pic) not found next to the map",
        "file: image 'three_lakes_map.gif' (map) not found next to the map",
        "line 22: one-way border Heron Rock -> Otter Holt: kept (Otter Holt cannot attack "
        "Heron Rock)",
        "picture: picture size unknown; using the smallest that holds every position (221 x 211)",
        "names: the map has no aliases: players write names in full",
    ]
    text = imported.text
    assert text.startswith("# Imported from sample.map, sample.cards (Domination format)\n")
    board = parse_map(text, "sample.toml")
    assert board == imported.board
    assert board.name == "sample" and board.title == "Three Lakes"
    assert board.names() == NAMES
    assert [(c.name, c.bonus, c.territories) for c in board.continents] == [
        ("North Shore", 3, (0, 1, 2)),
        ("Middle Isles", 2, (3, 4, 5)),
        ("South Downs", 2, (6, 7, 8)),
    ]
    heron, otter = board.territory("Heron Rock"), board.territory("Otter Holt")
    # the one-way border is kept: Heron Rock may attack Otter Holt, not the other way
    assert board.adjacent(heron, otter) and not board.adjacent(otter, heron)
    assert board.one_way == ((heron, otter),)
    assert len(board.edges()) == 13
    assert [t.card for t in board.territories] == ["infantry", "cavalry", "artillery"] * 3
    assert board.wilds == 2
    assert board.picture == (221, 211)
    assert board.territories[0].pos == (40, 40)
    # the picture's size is a guess from the positions: no edge is said to wrap
    assert board.wrap_edges == ()
    summary = [
        (m.id, m.kind, m.count, m.min_armies, m.continents, m.extra_continents, m.colour)
        for m in board.missions
    ]
    assert summary == [
        ("occupy-6", "territories", 6, 1, (), 0, ""),
        ("occupy-5-with-2", "territories", 5, 2, (), 0, ""),
        ("north-shore-south-downs", "continents", 0, 1, (0, 2), 0, ""),
        ("middle-isles-plus-one", "continents", 0, 1, (1,), 1, ""),
        # destroy missions keep Domination's fallback: occupy 6 with 1 army each
        ("destroy-red", "destroy", 6, 1, (), 0, "red"),
        ("destroy-blue", "destroy", 6, 1, (), 0, "blue"),
    ]
    assert board.missions[4].text.startswith("Destroy all of RED's TROOPS.")


def test_one_way_border_made_two_way_on_request() -> None:
    imported = import_domination(MAP, CARDS, two_way=True)
    board = imported.board
    heron, otter = board.territory("Heron Rock"), board.territory("Otter Holt")
    assert board.adjacent(otter, heron) and board.one_way == ()
    assert (
        "borders: Heron Rock -> Otter Holt went one way only; added Otter Holt -> Heron Rock"
        in (imported.warnings)
    )


def test_without_cards_designs_are_dealt_round_robin(tmp_path: Path) -> None:
    shutil.copy(MAP, tmp_path / "lakes.map")  # sample.cards is not next to it
    imported = import_domination(tmp_path / "lakes.map")
    assert "file: the map names 'sample.cards', which is not next to it" in imported.warnings
    assert (
        "cards: no cards in the file: designs dealt infantry, cavalry, artillery in map order"
        in imported.warnings
    )
    board = imported.board
    assert [t.card for t in board.territories] == ["infantry", "cavalry", "artillery"] * 3
    assert board.wilds == 2
    assert board.missions == ()


def test_picture_size_is_read_from_the_background_image(tmp_path: Path) -> None:
    shutil.copy(MAP, tmp_path / "lakes.map")
    Image.new("RGB", (677, 425)).save(tmp_path / "three_lakes_pic.png")
    imported = import_domination(tmp_path / "lakes.map", CARDS)
    board = imported.board
    assert board.name == "lakes"
    assert board.picture == (677, 425)
    assert board.image == str((tmp_path / "three_lakes_pic.png").resolve())
    assert board.colour_map == ""
    assert board.wrap_edges == ()  # 160 pixels apart in 677 is not across the edge
    assert not any("picture size" in w for w in imported.warnings)


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


def test_a_cards_file_that_leaves_out_a_country_is_accepted(tmp_path: Path) -> None:
    """Domination accepts it: the country has no card, and the deck is one shorter."""
    cards = tmp_path / "short.cards"
    cards.write_text(CARDS.read_text().replace("Cannon 9\n", ""))
    imported = import_domination(MAP, cards)
    board = imported.board
    assert board.territories[8].card == "none"
    assert board.deck_cards() == [0, 1, 2, 3, 4, 5, 6, 7, 9, 10]
    assert "cards: 1 territories have no card: Badger Barrow" in imported.warnings


def test_every_problem_of_a_map_is_reported_at_once(tmp_path: Path) -> None:
    source = (
        MAP.read_text()
        .replace("5 Heron_Rock 2", "5 Pine_Point 2")
        .replace("7 Fox_Hollow 3", "7 Fox_Hollow 2")
        .replace("8 Hare_Down 3", "8 Hare_Down 2")
        .replace("9 Badger_Barrow 3", "9 Badger_Barrow 2")
    )
    broken = tmp_path / "twins.map"
    broken.write_text(source)
    with pytest.raises(MapError) as caught:
        import_domination(broken)
    assert str(caught.value) == (
        f"{broken}: Domination map: 2 problems:\n"
        "  line 22: territory name 'Pine Point' is used twice (also line 18)\n"
        "  continent South Downs: no territory is in this continent"
    )


def test_continent_named_like_a_territory_is_renamed(tmp_path: Path) -> None:
    renamed = tmp_path / "isles.map"
    renamed.write_text(MAP.read_text().replace("5 Heron_Rock 2", "5 Middle_Isles 2"))
    imported = import_domination(renamed, CARDS)
    assert (
        "continent Middle Isles: has a territory's name; renamed Middle Isles (continent)"
        in imported.warnings
    )
    board = imported.board
    assert [c.name for c in board.continents][1] == "Middle Isles (continent)"
    assert board.territories[4].name == "Middle Isles"
