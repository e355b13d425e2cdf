"""Any map size: starting armies fit the map, and a game that could not be set
up is refused with its reason, never created stuck (issue 15, first part).

The maps here are made for the test: a ring of N territories (each borders
the next, and every fifth also the one across), in continents of ten.
"""

from __future__ import annotations

import pytest

from pbem.maps.presets import load_preset
from pbem.rules import opening
from pbem.rules.armies import starting_armies
from pbem.rules.dice import DiceStream
from pbem.rules.errors import RulesError
from pbem.rules.mapformat import parse_map
from pbem.rules.options import Options
from pbem.rules.simulate import play_game
from pbem.rules.state import GameState

DESIGNS = ("infantry", "cavalry", "artillery")


def ring_map(size: int) -> str:
    """The TOML text of a ring of ``size`` territories."""
    names = [f"T{i:03d}" for i in range(size)]
    lines = [f'name = "ring{size}"', f'title = "A ring of {size}"']
    for c in range((size + 9) // 10):
        lines += ["[[continents]]", f'name = "C{c}"', "bonus = 2"]
    for i, name in enumerate(names):
        neighbours = {names[(i + 1) % size], names[(i - 1) % size]}
        if i % 5 == 0 and size > 6:
            neighbours.add(names[(i + size // 2) % size])
        for j in range(size):  # the chords go both ways
            if j % 5 == 0 and size > 6 and (j + size // 2) % size == i:
                neighbours.add(names[j])
        neighbours.discard(name)
        listed = ", ".join(f'"{n}"' for n in sorted(neighbours))
        lines += [
            "[[territories]]",
            f'name = "{name}"',
            f'continent = "C{i // 10}"',
            f'card = "{DESIGNS[i % 3]}"',
            f"neighbours = [{listed}]",
        ]
    return "\n".join(lines) + "\n"


def new_game(size: int, players: int, options: Options | None = None) -> GameState:
    board = parse_map(ring_map(size), f"ring{size}.toml")
    seats = [(f"p{i}", "") for i in range(players)]
    stream = DiceStream(b"\x01" * 32, "g", "setup")
    state, _ = opening.new_game(board, options or load_preset("classic"), "g", seats, stream)
    return state


@pytest.mark.parametrize("size", [110, 12])
def test_starting_armies_scale_with_the_map(size: int) -> None:
    for players in (2, 3, 6):
        state = new_game(size, players)
        expected = starting_armies(players, size)
        # the deal put one army on each territory; the rest wait to be placed
        for seat in state.order:
            held = state.territory_count(seat)
            assert state.players[seat].to_place + held == expected
            assert state.players[seat].to_place >= 0


@pytest.mark.parametrize(("size", "players"), [(110, 3), (110, 6), (12, 2), (12, 6)])
def test_bot_games_on_big_and_small_maps_end_with_a_winner(size: int, players: int) -> None:
    board = parse_map(ring_map(size), f"ring{size}.toml")
    result = play_game(board, load_preset("classic"), players, seed=7, bot="greedy", cap=3000)
    assert not result.capped and result.winner is not None


def test_more_players_than_territories_is_refused_with_the_reason() -> None:
    with pytest.raises(RulesError) as caught:
        new_game(4, 5)
    assert str(caught.value) == (
        "map ring4 has 4 territories, too few for 5 seats (each needs at least one) (rule: setup)"
    )


def test_an_army_cap_the_setup_cannot_keep_is_refused_with_the_reason() -> None:
    capped = load_preset("classic").with_overrides({"max_armies": 4})
    new_game(12, 6, capped)  # 6 armies each on 2 territories: 8 fit
    with pytest.raises(RulesError) as caught:  # 5 armies; 5 territories for 3 seats
        new_game(5, 2, capped)
    assert str(caught.value) == (
        "with max_armies = 4, 5 starting armies do not fit on the 1 territory a player "
        "may get on map ring5 (rule: setup)"
    )
