"""The map loader, the built-in maps, and every way a map file can be refused."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from pbem.maps import builtin_map, load_map, map_names
from pbem.rules.board import fold_name
from pbem.rules.errors import MapError
from pbem.rules.mapdump import dump_map
from pbem.rules.mapformat import parse_map

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path("/work/shared/reference")
DATA = Path(__file__).resolve().parents[1] / "data" / "maps"
TINY = (DATA / "tiny.toml").read_text()


def reference_text(name: str) -> str:
    """The shared reference file, or the copy of its facts kept in the test data."""
    path = REFERENCE / name
    return path.read_text() if path.exists() else (DATA / name).read_text()


def parse_reference(text: str) -> tuple[list[tuple[str, int, list[str]]], dict[str, list[str]]]:
    """classic-map.txt: continents (name, bonus, members) and neighbour lists."""
    continents: list[tuple[str, int, list[str]]] = []
    neighbours: dict[str, list[str]] = {}
    for line in text.splitlines():
        header = re.fullmatch(r"# (.+) \(\+(\d+)\)", line)
        if header:
            continents.append((header[1], int(header[2]), []))
        elif line and not line.startswith("#"):
            name, rest = line.split(":")
            continents[-1][2].append(name)
            neighbours[name] = [n.strip() for n in rest.split(",")]
    return continents, neighbours


# -- the classic map -------------------------------------------------------------
def test_classic_equals_the_reference_edge_for_edge() -> None:
    continents, neighbours = parse_reference(reference_text("classic-map.txt"))
    board = builtin_map("classic")
    assert board.names() == list(neighbours)
    assert [(c.name, c.bonus) for c in board.continents] == [
        ("North America", 5),
        ("South America", 2),
        ("Europe", 5),
        ("Africa", 3),
        ("Asia", 7),
        ("Australia", 2),
    ]
    assert [(c.name, c.bonus) for c in board.continents] == [(n, b) for n, b, _ in continents]
    for continent, (_, _, members) in zip(board.continents, continents, strict=True):
        assert [board.territories[t].name for t in continent.territories] == members
    expected = {frozenset((a, b)) for a, ns in neighbours.items() for b in ns}
    got = {
        frozenset((board.territories[a].name, board.territories[b].name)) for a, b in board.edges()
    }
    assert len(expected) == 83
    assert got == expected
    assert len(board.edges()) == 83


def test_classic_aliases_cover_every_territory_and_resolve() -> None:
    board = builtin_map("classic")
    for t in board.territories:
        assert t.aliases, f"{t.name} has no alias"
        for alias in t.aliases:
            assert board.lookup(alias) == t.index
            assert board.lookup(alias.upper().replace(" ", "-")) == t.index
    expected = {
        "AK": "Alaska",
        "NWT": "Northwest Territory",
        "W US": "Western United States",
        "WUS": "Western United States",
        "E US": "Eastern United States",
        "C Am": "Central America",
        "GB": "Great Britain",
        "N Europe": "Northern Europe",
        "W Europe": "Western Europe",
        "S Europe": "Southern Europe",
        "N Africa": "North Africa",
        "E Africa": "East Africa",
        "S Africa": "South Africa",
        "ME": "Middle East",
        "E Aus": "Eastern Australia",
        "W Aus": "Western Australia",
        "NG": "New Guinea",
        "Kam": "Kamchatka",
    }
    for alias, name in expected.items():
        assert board.territories[board.territory(alias)].name == name
    every = [fold_name(a) for t in board.territories for a in (t.name, *t.aliases)]
    every += [fold_name(a) for c in board.continents for a in (c.name, *c.aliases)]
    assert len(every) == len(set(every))


def test_classic_cards_and_missions() -> None:
    board = builtin_map("classic")
    assert Counter(t.card for t in board.territories) == {
        "infantry": 14,
        "cavalry": 14,
        "artillery": 14,
    }
    assert board.wilds == 2 and board.n_cards == 44
    assert board.card_design(42) == board.card_design(43) == "wild"
    assert len(board.missions) == 14
    c = {c.name: c.index for c in board.continents}
    summary = {
        m.id: (m.kind, m.count, m.min_armies, m.continents, m.extra_continents, m.colour)
        for m in board.missions
    }
    assert summary == {
        "occupy-24": ("territories", 24, 1, (), 0, ""),
        "occupy-18-with-2": ("territories", 18, 2, (), 0, ""),
        "north-america-africa": ("continents", 0, 1, (c["North America"], c["Africa"]), 0, ""),
        "north-america-australia": (
            "continents",
            0,
            1,
            (c["North America"], c["Australia"]),
            0,
            "",
        ),
        "asia-south-america": ("continents", 0, 1, (c["South America"], c["Asia"]), 0, ""),
        "asia-africa": ("continents", 0, 1, (c["Africa"], c["Asia"]), 0, ""),
        "europe-south-america-plus-one": (
            "continents",
            0,
            1,
            (c["South America"], c["Europe"]),
            1,
            "",
        ),
        "europe-australia-plus-one": ("continents", 0, 1, (c["Europe"], c["Australia"]), 1, ""),
        **{f"destroy-{x}": ("destroy", 0, 1, (), 0, x) for x in board.colours},
    }
    assert board.colours == ("red", "blue", "yellow", "green", "black", "purple")


def test_classic_positions_look_like_the_world() -> None:
    board = builtin_map("classic")
    assert board.picture == (900, 500)
    width, height = board.picture
    assert all(0 <= t.pos[0] < width and 0 <= t.pos[1] < height for t in board.territories)
    assert board.wrap_edges == ((board.territory("Alaska"), board.territory("Kamchatka")),)

    def centre(name: str) -> tuple[float, float]:
        members = board.continents[[c.name for c in board.continents].index(name)].territories
        xs = [board.territories[t].pos[0] for t in members]
        ys = [board.territories[t].pos[1] for t in members]
        return sum(xs) / len(xs), sum(ys) / len(ys)

    na, sa, eu = centre("North America"), centre("South America"), centre("Europe")
    af, asia, au = centre("Africa"), centre("Asia"), centre("Australia")
    assert na[0] < eu[0] < asia[0] and sa[0] < af[0] < au[0]
    assert na[1] < sa[1] and eu[1] < af[1] and asia[1] < au[1]


# -- the fantasy map ---------------------------------------------------------------
def test_fantasy_map_holds_the_rulebook_links() -> None:
    board = builtin_map("fantasy")
    assert len(board.territories) == 42
    assert len(board.continents) == 6
    links = []
    for line in reference_text("fantasy-map-fragment.txt").splitlines():
        if line and not line.startswith("#"):
            name, rest = line.split(":")
            links += [(name, other.strip()) for other in rest.split(",")]
    assert len(links) == 10
    for a, b in links:
        assert board.adjacent(board.territory(a), board.territory(b)), (a, b)
    sun, azure = board.territory("The Kingdom of the Sun"), board.territory("Azure Kingdom")
    assert board.wrap_edges == ((min(sun, azure), max(sun, azure)),)
    # the named territories have exactly the neighbours the rulebook names
    for name in ("Northern Schataria", "Southern Arillia"):
        named = {b for a, b in links if a == name}
        assert {
            board.territories[n].name for n in board.territories[board.territory(name)].neighbours
        } == named


def test_fantasy_map_is_complete_and_varied() -> None:
    board = builtin_map("fantasy")
    assert Counter(t.card for t in board.territories) == {
        "infantry": 14,
        "cavalry": 14,
        "artillery": 14,
    }
    assert board.wilds == 2
    assert all(t.aliases for t in board.territories)
    assert all(board.lookup(a) == t.index for t in board.territories for a in t.aliases)
    sizes = sorted((len(c.territories), c.bonus) for c in board.continents)
    assert sizes == [(4, 2), (6, 3), (6, 4), (8, 5), (8, 6), (10, 6)]
    assert Counter(m.kind for m in board.missions) == {
        "territories": 2,
        "continents": 6,
        "destroy": 6,
    }
    assert board.picture == (960, 600)


# -- loader behaviour ----------------------------------------------------------------
def test_map_names_and_builtin_cache() -> None:
    assert map_names() == ["classic", "fantasy"]
    assert builtin_map("classic") is builtin_map("classic")
    with pytest.raises(MapError) as caught:
        builtin_map("atlantis")
    assert caught.value.key == "name"
    assert caught.value.message == "no built-in map 'atlantis'; there are: classic, fantasy"


def test_a_map_text_is_checked_once_whatever_names_it() -> None:
    """A stored game's map, its record's and its file's are the same board; errors
    are not kept, so each still names the text it was given as."""
    board = parse_map(TINY, "tiny.toml")
    assert parse_map(TINY, "tiny (in the record)") is board
    assert parse_map(TINY, "tiny", base="/maps") is not board  # images resolve from base
    broken = TINY.replace("wilds = 1", "wilds = -1")
    assert broken != TINY
    for path in ("one.toml", "two.toml"):
        with pytest.raises(MapError) as caught:
            parse_map(broken, path)
        assert str(caught.value).startswith(f"{path}: wilds: ")


@pytest.mark.parametrize("name", ["classic", "fantasy"])
def test_dump_map_round_trips(name: str) -> None:
    board = builtin_map(name)
    assert parse_map(dump_map(board), f"{name}-copy.toml") == board


def test_tiny_map_builds_sorted_indices() -> None:
    board = load_map(DATA / "tiny.toml")
    assert board.names() == ["Alpha", "Beta", "Gamma", "Delta"]
    assert [t.neighbours for t in board.territories] == [(1, 2), (0, 3), (0, 3), (1, 2)]
    assert [c.territories for c in board.continents] == [(0, 1), (2, 3)]
    assert board.missions[0].continents == (0,)
    assert board.wilds == 1 and board.colours == ("red", "blue")


def test_the_documented_example_loads() -> None:
    text = (ROOT / "docs" / "MAPS.md").read_text()
    example = re.search(r"```toml\n(.*?)```", text, re.S)
    assert example is not None
    board = parse_map(example[1], "MAPS.md")
    assert board.names() == ["West Point", "Hill Fort", "East Cape"]
    assert board.wrap_edges == ((0, 2),)


def test_missing_file_is_a_map_error(tmp_path: Path) -> None:
    with pytest.raises(MapError) as caught:
        load_map(tmp_path / "none.toml")
    assert (
        str(caught.value)
        == f"{tmp_path / 'none.toml'}: file: cannot be read: No such file or directory"
    )


# -- broken maps: each change to tiny.toml, and the exact error it gives ------------
BROKEN = [
    (
        "asymmetric edge",
        [
            (
                'neighbours = ["Beta", "Gamma"]\n\n[[missions]]',
                'neighbours = ["Gamma"]\n\n[[missions]]',
            )
        ],
        "territories[Beta].neighbours: lists Delta, but territories[Delta].neighbours "
        "does not list Beta",
    ),
    (
        "disconnected graph",
        [
            (
                'neighbours = ["Beta", "Gamma"]\n\n[[territories]]\nname = "Beta"',
                'neighbours = ["Beta"]\n\n[[territories]]\nname = "Beta"',
            ),
            (
                'neighbours = ["Alpha", "Delta"]\n\n[[territories]]\nname = "Gamma"',
                'neighbours = ["Alpha"]\n\n[[territories]]\nname = "Gamma"',
            ),
            (
                'neighbours = ["Alpha", "Delta"]\n\n[[territories]]\nname = "Delta"',
                'neighbours = ["Delta"]\n\n[[territories]]\nname = "Delta"',
            ),
            (
                'neighbours = ["Beta", "Gamma"]\n\n[[missions]]',
                'neighbours = ["Gamma"]\n\n[[missions]]',
            ),
        ],
        "territories: the map is not connected: Gamma, Delta cannot be reached from Alpha",
    ),
    (
        "territory in no continent",
        [('name = "Gamma"\ncontinent = "Southland"\n', 'name = "Gamma"\n')],
        "territories[Gamma].continent: required key is missing",
    ),
    (
        "territory in an unknown continent",
        [('name = "Gamma"\ncontinent = "Southland"', 'name = "Gamma"\ncontinent = "Eastland"')],
        "territories[Gamma].continent: no continent named 'Eastland'",
    ),
    (
        "duplicate name",
        [('name = "Delta"', 'name = "gamma"')],
        "territories[#4].name: 'gamma' clashes with territory Gamma",
    ),
    (
        "duplicate alias",
        [('["D1"]', '["a1"]')],
        "territories[Delta].aliases: 'a1' clashes with an alias of territory Alpha",
    ),
    (
        "alias equal to a continent's name",
        [('["D1"]', '["Northland"]')],
        "territories[Delta].aliases: 'Northland' clashes with continent Northland",
    ),
    (
        "bad card design",
        [('card = "artillery"', 'card = "tank"')],
        "territories[Gamma].card: unknown design 'tank'; use infantry, cavalry, artillery or none",
    ),
    (
        "unknown neighbour",
        [
            (
                'neighbours = ["Beta", "Gamma"]\n\n[[territories]]\nname = "Beta"',
                'neighbours = ["Beta", "Gama"]\n\n[[territories]]\nname = "Beta"',
            )
        ],
        "territories[Alpha].neighbours: no territory named 'Gama'",
    ),
    (
        "self edge",
        [('[90, 10]\nneighbours = ["Alpha", "Delta"]', '[90, 10]\nneighbours = ["Alpha", "Beta"]')],
        "territories[Beta].neighbours: a territory cannot be its own neighbour",
    ),
    (
        "TOML syntax error",
        [("bonus = 2", "bonus = ")],
        "line 13: not valid TOML: Invalid value (column 9)",
    ),
    (
        "unknown key",
        [('card = "cavalry"', 'card = "cavalry"\ncolour = "red"')],
        "territories[Beta].colour: unknown key; allowed keys are: aliases, card, continent, "
        "name, neighbours, pos",
    ),
    (
        "unknown top-level key",
        [("wilds = 1", "wild_cards = 1")],
        "wild_cards: unknown key; allowed keys are: colours, continents, missions, name, "
        "one_way, picture, territories, title, wilds, wrap_edges",
    ),
    (
        "wrong type",
        [("bonus = 2", 'bonus = "two"')],
        "continents[Northland].bonus: expected an integer, got a string ('two')",
    ),
    (
        "negative wilds",
        [("wilds = 1", "wilds = -1")],
        "wilds: must be 0 or more, not -1",
    ),
    (
        "position outside the picture",
        [("pos = [90, 40]", "pos = [100, 40]")],
        "territories[Delta].pos: [100, 40] is outside the picture (100 x 50 pixels)",
    ),
    (
        "empty continent",
        [
            (
                'name = "Southland"\nbonus = 1\n',
                'name = "Southland"\nbonus = 1\n\n[[continents]]\nname = "Nowhere"\nbonus = 1\n',
            )
        ],
        "continents[Nowhere]: no territory is in this continent",
    ),
    (
        "mission naming an unknown continent",
        [('continents = ["Northland"]', 'continents = ["Westland"]')],
        "missions[northland].continents: no continent named 'Westland'",
    ),
    (
        "mission naming a colour not in colours",
        [('colour = "red"', 'colour = "pink"')],
        "missions[destroy-red].colour: 'pink' is not one of colours",
    ),
    (
        "wrap edge between territories that do not border",
        [
            (
                'colours = ["red", "blue"]',
                'colours = ["red", "blue"]\nwrap_edges = [["Alpha", "Delta"]]',
            )
        ],
        "wrap_edges[0]: Alpha and Delta are not neighbours",
    ),
    (
        "name with a comma",
        [('name = "Delta"', 'name = "Delta, East"')],
        "territories[Delta, East].name: 'Delta, East' must not contain ',', '#' or '->' "
        "(orders use them)",
    ),
]


@pytest.mark.parametrize(("case", "changes", "expected"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_map_is_refused_with_exact_message(
    case: str, changes: list[tuple[str, str]], expected: str
) -> None:
    text = TINY
    for old, new in changes:
        assert text.count(old) == 1, f"{case}: {old!r} must occur once in tiny.toml"
        text = text.replace(old, new)
    with pytest.raises(MapError) as caught:
        parse_map(text, "broken.toml")
    assert str(caught.value) == f"broken.toml: {expected}"
    assert caught.value.path == "broken.toml"
