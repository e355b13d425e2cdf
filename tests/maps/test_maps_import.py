"""Real and realistic maps of the three formats (tests/data/maps/README.md):
imported, checked, played by bots to a winner with 2 to 6 players, drawn."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps import load_any, map_source
from pbem.maps.balance import play_one
from pbem.maps.formats import detect, import_file
from pbem.maps.model import wraps_across
from pbem.report.picture import map_picture, picture_size
from pbem.report.picture.colours import Side
from pbem.report.picture.image import _tinted
from pbem.rules import opening
from pbem.rules.dice import DiceStream
from pbem.rules.mapformat import parse_map
from pbem.rules.options import Options

DATA = Path(__file__).resolve().parents[1] / "data" / "maps"
RUNNER = CliRunner()

# file: territories, continents, borders, one-way, cards in the deck (wilds in),
# missions, picture size, own image, colour map, wrap edges
FIGURES = {
    "domination/risk.map": (42, 6, 81, 0, 44, 14, (677, 425), True, True, ((0, 37),)),
    "domination/sersom.map": (42, 6, 81, 0, 44, 14, (677, 425), True, True, ((0, 37),)),
    "domination/uk.map": (75, 6, 164, 0, 77, 0, (677, 425), False, True, ()),
    "domination/grid120.map": (120, 9, 205, 2, 117, 5, (600, 440), True, True, ()),
    "sample.map": (9, 3, 13, 1, 11, 6, (221, 211), False, False, ()),
    "conquest/islands.map": (8, 3, 10, 0, 10, 0, (330, 240), True, False, ()),
    "conquest/classic.map": (42, 6, 83, 0, 44, 0, (900, 500), True, False, ((0, 33),)),
    "conquest/grid120.map": (120, 9, 205, 2, 122, 0, (600, 440), True, False, ()),
    "lux/valleys.luxb": (7, 2, 10, 1, 9, 0, (300, 200), False, False, ()),
    "lux/classic.luxb": (42, 6, 83, 0, 44, 0, (900, 500), False, False, ()),
    "lux/grid120.luxb": (120, 9, 205, 2, 122, 0, (600, 440), False, False, ()),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_each_map_imports_with_its_figures(name: str) -> None:
    imported = import_file(DATA / name)
    board = imported.board
    figures = (
        len(board.territories),
        len(board.continents),
        len(board.edges()),
        len(board.one_way),
        len(board.deck_cards()),
        len(board.missions),
        board.picture,
        bool(board.image),
        bool(board.colour_map),
        board.wrap_edges,
    )
    assert figures == FIGURES[name]
    # the TOML text is a pbem map like any other: it parses back to the same board
    assert parse_map(imported.text, name) == board
    assert detect(DATA / name) == {"domination": "Domination", "conquest": "Conquest"}.get(
        name.split("/")[0], "Lux" if name.startswith("lux") else "Domination"
    )


def test_one_way_borders_are_kept_in_every_format() -> None:
    for name in ("domination/grid120.map", "conquest/grid120.map", "lux/grid120.luxb"):
        board = import_file(DATA / name).board
        pairs = [(board.names()[a], board.names()[b]) for a, b in board.one_way]
        assert pairs == [("Irholm", "Kelholm"), ("Morholm", "Ashmere")], name
        irholm, kelholm = board.territory("Irholm"), board.territory("Kelholm")
        assert board.adjacent(irholm, kelholm) and not board.adjacent(kelholm, irholm)


def test_the_real_risk_map_reads_domination_cards_and_missions() -> None:
    board = import_file(DATA / "domination/risk.map").board
    assert board.title == "Risk Map"
    assert [(c.name, c.bonus, len(c.territories)) for c in board.continents] == [
        ("North-America", 5, 9),  # Domination keeps hyphens; orders fold them to blanks
        ("South-America", 2, 4),
        ("Europe", 5, 7),
        ("Africa", 3, 6),
        ("Asia", 7, 12),
        ("Oceania", 2, 4),
    ]
    designs = [t.card for t in board.territories]
    assert (designs.count("infantry"), designs.count("cavalry"), designs.count("artillery")) == (
        14,
        14,
        14,
    )
    destroy = [m for m in board.missions if m.kind == "destroy"]
    assert [(m.colour, m.count, m.min_armies) for m in destroy] == [
        (c, 24, 1) for c in ("red", "blue", "yellow", "green", "black", "purple")
    ]


def test_a_deck_leaves_out_the_territories_without_a_card() -> None:
    board = import_file(DATA / "domination/grid120.map").board
    state, _ = opening.new_game(
        board, Options(), "g", [("a", "red"), ("b", "blue"), ("c", "yellow")],
        DiceStream(b"k" * 32, "g", "setup"),
    )  # fmt: skip
    assert len(state.deck) == 117
    assert set(range(115, 120)).isdisjoint(state.deck)
    assert {120, 121} <= set(state.deck)  # the wilds


# -- bot games to a winner ------------------------------------------------------------------
GAMES = [
    ("sample.map", [2, 3, 4, 5, 6]),
    ("conquest/islands.map", [2, 3, 4, 5, 6]),
    ("lux/valleys.luxb", [2, 3, 4, 5, 6]),
    ("domination/risk.map", [2, 6]),
    ("domination/sersom.map", [3]),
    ("domination/uk.map", [4]),
    ("conquest/classic.map", [5]),
    ("lux/classic.luxb", [4]),
    ("domination/grid120.map", [2]),
    ("conquest/grid120.map", [3]),
    ("lux/grid120.luxb", [2]),
]


@pytest.mark.parametrize(("name", "counts"), GAMES)
def test_bot_games_end_with_a_winner(name: str, counts: list[int]) -> None:
    board = import_file(DATA / name).board
    for players in counts:
        outcome = play_one(board, Options(), players, seed=5, bot="greedy", cap=3000)
        assert outcome.seat is not None, f"{name}, {players} players: capped"
        assert 0 <= outcome.seat < players


def test_mission_game_on_an_imported_map_ends() -> None:
    board = import_file(DATA / "domination/risk.map").board
    outcome = play_one(board, Options(goal="mission"), 4, seed=2, bot="greedy", cap=3000)
    assert outcome.seat is not None


# -- pictures --------------------------------------------------------------------------------
def _sides(n: int) -> list[Side]:
    colours = [(204, 40, 40), (38, 84, 196), (236, 196, 0), (40, 150, 60), (40, 40, 40)]
    return [Side(f"p{i + 1}", colours[i], 1, 1) for i in range(n)]


@pytest.mark.parametrize(
    "name", ["domination/risk.map", "domination/grid120.map", "conquest/islands.map"]
)
def test_the_picture_is_drawn_on_the_map_image(name: str) -> None:
    board = import_file(DATA / name).board
    count = len(board.territories)
    owner = [i % 3 for i in range(count)]
    png = map_picture(board, owner, [i + 1 for i in range(count)], _sides(3), [0], "turn 1")
    assert png is not None
    image = Image.open(io.BytesIO(png))
    assert image.size == picture_size(board, 3)


def test_a_colour_map_fills_each_territory_in_its_owner_colour() -> None:
    board = import_file(DATA / "domination/grid120.map").board
    owner = tuple(0 if i < 60 else 1 for i in range(120))
    base = Image.open(board.image).convert("RGB")
    tinted = _tinted(board, base, owner, tuple(_sides(2)))
    # Ashby (index 0) is the cell at column 1, row 0: pixels 50..99 x 0..39
    x, y = 60, 10
    under = base.getpixel((x, y))
    red = (204, 40, 40)
    expected = tuple(round(u + (r - u) * 0.65) for u, r in zip(under, red, strict=True))
    got = tinted.getpixel((x, y))
    assert all(abs(g - e) <= 1 for g, e in zip(got, expected, strict=True))
    assert tinted.getpixel((5, 5)) == base.getpixel((5, 5))  # the sea is left alone
    blue_cell = board.territories[100].pos
    assert blue_cell is not None
    assert tinted.getpixel(blue_cell) != base.getpixel(blue_cell)


def test_maps_without_an_image_keep_the_graph_picture() -> None:
    board = import_file(DATA / "lux/valleys.luxb").board
    assert board.image == "" and board.colour_map == ""
    png = map_picture(board, [0, 1, 0, 1, 0, 1, 0], [1] * 7, _sides(2))
    assert png is not None
    assert Image.open(io.BytesIO(png)).size == picture_size(board, 2)


@pytest.mark.parametrize(
    ("a", "b", "width", "wraps"),
    [
        ((41, 55), (640, 70), 677, True),  # Alaska - Kamchatka on Domination's risk map
        # far apart (more than half the width: the old rule said "wraps"), but...
        ((150, 50), (560, 300), 677, False),  # ...the way round is not much shorter
        ((100, 100), (500, 120), 677, False),  # ...not near the two edges
    ],
)
def test_wrap_edges_only_when_the_way_round_is_much_shorter(
    a: tuple[int, int], b: tuple[int, int], width: int, wraps: bool
) -> None:
    assert wraps_across(a[0], a[1], b[0], b[1], width) is wraps


# -- commands ---------------------------------------------------------------------------------
def test_maps_check_reports_and_exits_0_on_a_playable_map() -> None:
    result = RUNNER.invoke(app, ["maps", "check", str(DATA / "lux/valleys.luxb")])
    assert result.exit_code == 0
    assert result.stdout == (
        f"{DATA / 'lux/valleys.luxb'} (Lux format): Twin Valleys (by pbem tests)\n"
        "  7 territories, 2 continents, 10 borders (1 one-way), 9 cards (2 wild), 0 missions\n"
        "  picture: 300 x 200, drawn as a graph (no image)\n"
        "  warning: country 6: one-way border Watchtower -> Orchard: kept (Orchard cannot "
        "attack Watchtower)\n"
        "  warning: cards: no cards in the file: designs dealt infantry, cavalry, artillery "
        "in map order\n"
        "  warning: names: the map has no aliases: players write names in full\n"
        "OK: the map can be played\n"
    )


BROKEN = """\
[Map]
wrap=no

[Continents]
Westisle=2
Empty=3

[Territories]
Harbour,40,50,Westisle,Lighthouse
Lighthouse,110,40,Westisle,Harbour
Harbour,70,120,Westisle,Lighthouse
Cape Rock,220,50,Westisle,Old Fort
Old Fort,290,60,Westisle,Cape Rock
"""


def test_maps_check_names_every_problem_and_exits_1(tmp_path: Path) -> None:
    broken = tmp_path / "broken.map"
    broken.write_text(BROKEN)
    result = RUNNER.invoke(app, ["maps", "check", str(broken)])
    assert result.exit_code == 1
    assert result.stdout == (
        f"{broken}: refused, the map cannot be played\n"
        "Conquest map: 3 problems:\n"
        "  line 11: territory name 'Harbour' is used twice (also line 9)\n"
        "  continent Empty: no territory is in this continent\n"
        "  borders: the map is in 2 pieces: cannot reach Cape Rock, Old Fort from Harbour\n"
    )


def test_maps_import_detects_the_format_and_writes_relative_image_paths(
    tmp_path: Path,
) -> None:
    out = tmp_path / "islands.toml"
    result = RUNNER.invoke(
        app, ["maps", "import", str(DATA / "conquest/islands.map"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("# Imported from islands.map, islands.png (Conquest format)\n")
    assert 'image = "../' in text  # relative to the folder of the written map
    board = load_any(str(out))
    assert Path(board.image) == (DATA / "conquest/islands.png").resolve()
    assert board.names()[:3] == ["Harbour", "Lighthouse", "Dunes"]


def test_a_map_file_of_any_format_is_taken_where_a_map_is() -> None:
    name, text, board = map_source(str(DATA / "domination/risk.map"))
    assert name == "risk" and len(board.territories) == 42
    # the stored text finds the images from anywhere: absolute paths
    assert parse_map(text, "stored").image == board.image
    assert Path(board.image).is_absolute()
    result = RUNNER.invoke(app, ["maps", str(DATA / "lux/valleys.luxb"), "--json"])
    assert result.exit_code == 0, result.output
    result = RUNNER.invoke(
        app,
        ["simulate", "--map", str(DATA / "conquest/islands.map"), "--players", "3",
         "--games", "2", "--workers", "1", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output


def test_a_destroy_mission_falls_back_to_the_map_own_mission() -> None:
    from pbem.rules.victory import MISSION_FALLBACK, fallback_of

    board = import_file(DATA / "sample.map").board
    destroy_red = board.missions[4]
    fallback = fallback_of(destroy_red)
    assert (fallback.kind, fallback.count, fallback.min_armies) == ("territories", 6, 1)
    assert fallback.text == "Occupy 6 territories"
    grid = import_file(DATA / "domination/grid120.map").board
    assert fallback_of(grid.missions[3]).text == (
        "Occupy 70 territories with at least 2 armies each"
    )
    classic_destroy = [m for m in load_any("classic").missions if m.kind == "destroy"][0]
    assert fallback_of(classic_destroy) is MISSION_FALLBACK  # the rulebook's 24


def test_a_game_is_created_from_a_map_file_of_any_format() -> None:
    from pbem.service.play.games import map_text_of

    name, text, board = map_text_of(str(DATA / "lux/valleys.luxb"))
    assert name == "valleys" and board.names()[0] == "High Pass"
    assert parse_map(text, "stored") == board


def test_an_attack_against_a_one_way_border_says_so() -> None:
    from pbem.orders.linereader import not_adjacent

    board = import_file(DATA / "lux/valleys.luxb").board
    watchtower, orchard = board.territory("Watchtower"), board.territory("Orchard")
    assert not_adjacent(board, orchard, watchtower) == (
        "Orchard and Watchtower are not adjacent (the border goes one way only, from "
        "Watchtower to Orchard); Orchard borders Ford, River Bend"
    )
    result = RUNNER.invoke(app, ["maps", str(DATA / "lux/valleys.luxb")])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:2] == [
        "Twin Valleys (by pbem tests) (valleys): 7 territories, 2 continents, 10 edges, 9 cards",
        "one-way: Watchtower -> Orchard",
    ]


def test_a_game_whose_map_image_has_gone_gets_the_graph_picture() -> None:
    from dataclasses import replace

    board = import_file(DATA / "conquest/islands.map").board
    gone = replace(board, image="/nonexistent/islands.png")
    owner, armies = [i % 2 for i in range(8)], [2] * 8
    png = map_picture(gone, owner, armies, _sides(2))
    assert png is not None
    graph = map_picture(replace(board, image=""), owner, armies, _sides(2))
    assert png == graph


def test_a_turn_report_of_an_imported_map_carries_its_picture() -> None:
    """Through the real report path: a game played on Domination's risk map."""
    from pbem.report import render_turn_report
    from pbem.testing.sample import play_sample

    board = import_file(DATA / "domination/risk.map").board
    sample = play_sample(seed=3, players=4, turns=3, board=board)
    mail = render_turn_report(sample.reports[2], 0)
    assert len(mail.images) == 1
    (png,) = mail.images.values()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == picture_size(board, 4)
    from pbem.report import views

    state = sample.reports[2].after
    rgb = views.sides(sample.game, state)[state.owner[0]].rgb  # Alaska's owner
    values = Image.open(board.colour_map).convert("L")
    alaska = next(
        (x, y) for y in range(0, 425, 3) for x in range(0, 120, 3) if values.getpixel((x, y)) == 1
    )
    under = Image.open(board.image).convert("RGB").getpixel(alaska)
    tinted = tuple(round(u + (c - u) * 0.65) for u, c in zip(under, rgb, strict=True))
    got = image.getpixel(alaska)

    def distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
        return sum(abs(x - y) for x, y in zip(a, b, strict=True))

    # Alaska's pixels are filled in its owner's colour (the PNG's palette may shift them a bit)
    assert distance(got, tinted) < distance(got, under)
    assert distance(got, tinted) <= 24
