"""The European rules (1994), each test quoting the rule it checks (issue 14).

RULES.md: "`fixed` (European): three infantry 4, three cavalry 6, three
artillery 8 (a wild stands for any one type); one of each is not a set
there (option `fixed_mixed_set`, off by default), so with `per_card` the
most a set can give is 8 + 3 x 2 = 14." And: "`per_card` (European): +2 for
every traded card showing an owned territory, each on its territory."
The European standard game is played for the secret missions.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.parser import parse_orders
from pbem.rules import engine
from pbem.rules.errors import RulesError
from pbem.rules.events import ArmiesPlaced
from tests.rules.support import arrange, give_cards, new_state, start_turn

EUROPEAN = load_preset("european")
SEAT = 0
AU = list(range(38, 42))  # Australia: SEAT always holds it, so it is SEAT's turn to play
INF = [0, 3, 6]  # Alaska, Alberta, Western United States
CAV = [1, 4, 7]  # Northwest Territory, Ontario, Eastern United States
ART = [2, 5, 8]  # Greenland, Quebec, Central America
WILD_1, WILD_2 = 42, 43


def turn_with(cards: list[int], lands: list[int], options=EUROPEAN):  # noqa: ANN001, ANN201
    state = new_state(3, options)
    arrange(state, {SEAT: lands + AU})
    give_cards(state, SEAT, cards)
    start_turn(state, SEAT)
    return state


@pytest.mark.parametrize(
    ("cards", "value"),
    [(INF, 4), (CAV, 6), (ART, 8)],
    ids=["three infantry 4", "three cavalry 6", "three artillery 8"],
)
def test_three_of_a_kind_are_worth_4_6_and_8(cards: list[int], value: int) -> None:
    """ "three infantry 4, three cavalry 6, three artillery 8" """
    state = turn_with(cards, [])
    before = state.reinforcements
    events = engine.trade(state, tuple(cards))
    assert events[0].value == value and state.reinforcements == before + value


def test_a_wild_stands_for_any_one_type() -> None:
    """ "a wild stands for any one type" """
    state = turn_with([ART[0], ART[1], WILD_1], [])
    assert engine.trade(state, (ART[0], ART[1], WILD_1))[0].value == 8
    state = turn_with([CAV[0], WILD_1, WILD_2], [])
    assert engine.trade(state, (CAV[0], WILD_1, WILD_2))[0].value == 6


def test_one_of_each_is_not_a_set_unless_fixed_mixed_set() -> None:
    """ "one of each is not a set there (option fixed_mixed_set, off by default)" """
    mixed = [INF[0], CAV[0], ART[0]]
    state = turn_with(mixed, [])
    with pytest.raises(RulesError, match="three of a design, or two of a design and a wild"):
        engine.trade(state, tuple(mixed))
    with pytest.raises(RulesError):  # nor two different designs and a wild
        engine.trade(turn_with([INF[0], CAV[0], WILD_1], []), (INF[0], CAV[0], WILD_1))
    # The order language says so, with the line:
    text = "TRADE Alaska, Northwest Territory, Greenland\nPLACE 3 Eastern Australia\n"
    problems = validate_mail(state, SEAT, parse_orders(text, state.board))
    assert problems[0].line == 1
    assert problems[0].message.endswith("a set is three of a design, or two of a design and a Wild")
    allowed = replace(EUROPEAN, fixed_mixed_set=True)
    state = turn_with(mixed, [], allowed)
    assert engine.trade(state, tuple(mixed))[0].value == 10


def test_the_most_one_set_can_give_is_14() -> None:
    """ "+2 for every traded card showing an owned territory, each on its
    territory ... the most a set can give is 8 + 3 x 2 = 14" """
    state = turn_with(ART, ART)  # SEAT holds Greenland, Quebec and Central America
    before = state.reinforcements
    events = engine.trade(state, tuple(ART))
    assert events[0].value == 8
    assert events[0].bonus == ((2, 2), (5, 2), (8, 2))
    assert [e for e in events if isinstance(e, ArmiesPlaced)] == [
        ArmiesPlaced(SEAT, 2, 2),
        ArmiesPlaced(SEAT, 5, 2),
        ArmiesPlaced(SEAT, 8, 2),
    ]
    assert state.reinforcements - before + 3 * 2 == 14


def test_five_cards_without_a_set_force_no_trade() -> None:
    """With one of each not a set, a hand of five may hold none: no trade is
    forced then (two infantry, two cavalry, one artillery)."""
    hand = [INF[0], INF[1], CAV[0], CAV[1], ART[0]]
    state = turn_with(hand, [])
    assert state.must_trade is False
    classic_hand = turn_with(hand, [], load_preset("classic"))
    assert classic_hand.must_trade is True  # there one of each is a set


def test_the_european_standard_game_is_won_by_the_secret_missions() -> None:
    """The 1994 European rules play for the secret missions; the card rules
    played for domination are the preset european-domination."""
    assert EUROPEAN.goal == "mission" and EUROPEAN.min_players == 3
    domination = load_preset("european-domination")
    assert domination.goal == "domination"
    assert (domination.card_values, domination.territory_bonus) == ("fixed", "per_card")
    assert domination.fixed_mixed_set is False
