"""Secret Mission (1993/2003 rulebooks, 2016 edition): the mission deck (issue 14).

RULES.md: "The mission deck is 12 cards, as all three rulebooks count it.
Six colours (1993 rules): "destroy all X armies" for each of the 6 colours,
"occupy 24 territories", "occupy 18 territories with at least 2 armies
each", and the four continent pairs [...] The two "Europe and South
America / Australia and a third continent of your choice" cards of the
older 14-card European deck are not in it (keep them as an option for that
deck). Five colours (2016 edition): 5 destroy cards + 7 others = 12; the
rulebook removes the cards of colours not chosen."
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.rules import opening
from pbem.rules.errors import RulesError
from pbem.rules.mapdump import dump_map
from pbem.rules.mapformat import parse_map
from pbem.rules.victory import mission_deck
from tests.rules.support import ScriptedDice, classic

MISSIONS = load_preset("secret-mission")
SIX = {"red", "blue", "yellow", "green", "black", "purple"}
OTHERS = [
    "occupy-24",
    "occupy-18-with-2",
    "north-america-africa",
    "north-america-australia",
    "asia-south-america",
    "asia-africa",
]


def _ids(indices: list[int]) -> list[str]:
    board = classic()
    return [board.missions[i].id for i in indices]


def test_the_deck_for_six_colours_is_the_rulebooks_12_cards() -> None:
    """ "The mission deck is 12 cards, as all three rulebooks count it." """
    deck = _ids(mission_deck(classic(), MISSIONS, SIX))
    assert len(deck) == 12
    assert deck == OTHERS + [
        f"destroy-{c}" for c in ("red", "blue", "yellow", "green", "black", "purple")
    ]


def test_fewer_colours_remove_their_destroy_cards() -> None:
    """ "the rulebook removes the cards of colours not chosen": 5 colours,
    5 destroy cards + 7 others = 12 in the 2016 edition, where the seventh
    other card is the 2016 one; on the 1993 map's 6 others, 3 colours
    leave 3 destroy cards + 6 = 9."""
    five = _ids(mission_deck(classic(), MISSIONS, SIX - {"purple"}))
    assert len(five) == 11 and "destroy-purple" not in five
    three = _ids(mission_deck(classic(), MISSIONS, {"red", "blue", "yellow"}))
    assert three == OTHERS + ["destroy-red", "destroy-blue", "destroy-yellow"]


def test_the_older_european_cards_only_with_mission_deck_extended() -> None:
    """ "keep them as an option for that deck" """
    extended = replace(MISSIONS, mission_deck="extended")
    deck = _ids(mission_deck(classic(), extended, SIX))
    assert len(deck) == 14
    assert deck[6:8] == ["europe-south-america-plus-one", "europe-australia-plus-one"]
    board = builtin_map("classic")
    assert [m.id for m in board.missions if m.extended] == deck[6:8]
    again = parse_map(dump_map(board), "classic")  # the map format keeps the mark
    assert [m.extended for m in again.missions] == [m.extended for m in board.missions]


def test_missions_are_dealt_from_the_12_card_deck() -> None:
    """Three players, red, blue and yellow: the deck is 9 cards; with the
    scripted shuffle (a reversal) the first three dealt are the last three,
    the destroy cards of yellow, blue and red, in turn order."""
    players = [("a", "red"), ("b", "blue"), ("c", "yellow")]
    state, _ = opening.new_game(classic(), MISSIONS, "m", players, ScriptedDice())
    # turn order reversed: c, b, a; the deck reversed: yellow, blue, red, asia-africa, ...
    dealt = {
        state.players[s].name: classic().missions[state.players[s].mission].id for s in state.order
    }
    assert dealt == {"c": "destroy-yellow", "b": "destroy-blue", "a": "destroy-red"}
    # each drew the card of its own colour: "occupy 24 territories" instead
    assert [state.players[s].mission_fallback for s in state.order] == [True, True, True]


def test_colours_typed_capitalised_keep_their_destroy_cards() -> None:
    """Issue 33, point 2. The rulebook (000): the General removes the Mission
    cards "that refer to the unused colors". Red, Blue and Yellow are used
    colours however they are typed: from rules version 3 a colour is read in
    the map's spelling, so the deck for three players is 6 others + 3 destroy
    cards = 9, and each player's own-colour card falls back to 24 territories."""
    players = [("a", "Red"), ("b", "BLUE"), ("c", " yellow ")]
    state, _ = opening.new_game(classic(), MISSIONS, "m", players, ScriptedDice())
    assert [p.colour for p in state.players] == ["red", "blue", "yellow"]
    colours = {p.colour for p in state.players}
    assert len(mission_deck(classic(), MISSIONS, colours)) == 6 + 3
    missions = classic().missions
    dealt = {p.name: missions[p.mission].id for p in state.players if p.mission is not None}
    assert dealt == {"c": "destroy-yellow", "b": "destroy-blue", "a": "destroy-red"}
    assert [p.mission_fallback for p in state.players] == [True, True, True]


def test_capitalised_colours_under_rules_version_2_keep_their_old_deck() -> None:
    """Versions 1 and 2 kept a colour as typed: "Red" matched no destroy card,
    so three capitalised colours left the 6 other cards, dealt from the
    reversed deck: asia-africa, asia-south-america, north-america-australia."""
    v2 = replace(MISSIONS, rules_version=2)
    players = [("a", "Red"), ("b", "Blue"), ("c", "Yellow")]
    state, _ = opening.new_game(classic(), v2, "m", players, ScriptedDice())
    assert [p.colour for p in state.players] == ["Red", "Blue", "Yellow"]
    assert len(mission_deck(classic(), v2, {"Red", "Blue", "Yellow"})) == 6
    missions = classic().missions
    dealt = {p.name: missions[p.mission].id for p in state.players if p.mission is not None}
    assert dealt == {
        "c": "asia-africa",
        "b": "asia-south-america",
        "a": "north-america-australia",
    }
    assert not any(p.mission_fallback for p in state.players)


def test_a_colour_the_map_does_not_have_is_refused() -> None:
    """Colours are one vocabulary: the map's (the classic six here)."""
    players = [("a", "red"), ("b", "pink"), ("c", "blue")]
    with pytest.raises(RulesError) as refused:
        opening.new_game(classic(), MISSIONS, "m", players, ScriptedDice())
    assert refused.value.message == (
        "'pink' is not a colour of this map (known: red, blue, yellow, green, black, purple)"
    )
    twice = [("a", "Red"), ("b", "red"), ("c", "blue")]
    with pytest.raises(RulesError, match="two players have the same colour"):
        opening.new_game(classic(), MISSIONS, "m", twice, ScriptedDice())
