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
from pbem.orders.errors import OrdersError
from pbem.orders.forecast import forecast_lines
from pbem.orders.parser import parse_orders
from pbem.orders.validate import turn_actions
from pbem.rules import engine
from pbem.rules.actions import Trade
from pbem.rules.defaults import default_turn
from pbem.rules.errors import RulesError
from pbem.rules.events import ArmiesPlaced, CardsTraded, TradeSkipped
from pbem.rules.turnplan import play_turn
from tests.rules.support import ScriptedDice, arrange, give_cards, new_state, start_turn

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


# ---------------------------------------------------------------------------------------
# Issue 33, point 3: 000, "you must immediately trade in enough sets" (the player's
# choice), and 003's +2 "for every card that belongs to a territory you have". Under
# rules version 3 the TRADE orders after the ATTACK choose; without them the set worth
# most to the player, its +2s counted. Version 2 took the most on its face.
DOMINATION = replace(EUROPEAN, goal="domination")
KAMCHATKA = 33
MINE = [3, 6, 9]  # Alberta, Western United States, Venezuela: infantry, SEAT's own


def _elimination(options=DOMINATION, hand: list[int] = MINE, taken: list[int] = CAV):  # noqa: ANN001, ANN202
    """SEAT (Australia, Kamchatka 10 armies and MINE) attacks Alaska, the last
    territory of a player holding ``taken``: 8 territories, 3 armies + 2 = 5 due."""
    state = new_state(3, options)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [KAMCHATKA] + MINE, victim: [0]}, armies={KAMCHATKA: 10})
    give_cards(state, SEAT, hand)
    give_cards(state, victim, taken)
    start_turn(state, SEAT)
    assert state.reinforcements == 5 and state.must_trade == (len(hand) >= 5)
    return state


def _play(state, text: str) -> list:  # noqa: ANN001
    mail = parse_orders(f"PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\n{text}", state.board)
    assert validate_mail(state, SEAT, mail) == []
    # 6 6 6 against Alaska's 1 die: taken, the player eliminated
    return play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice([6, 6, 6, 1]))


def test_the_forced_trade_is_the_set_worth_most_to_the_player() -> None:
    """ "+2 for every card that belongs to a territory you have": three infantry of
    SEAT's own territories are worth 4 + 3 x 2 = 10, three cavalry 6."""
    state = _elimination()
    events = _play(state, "")
    traded = [e for e in events if isinstance(e, CardsTraded)]
    assert [(e.cards, e.value, e.bonus, e.forced) for e in traded] == [
        ((3, 6, 9), 4, ((3, 2), (6, 2), (9, 2)), True)
    ]
    # 3 cards left, and New Guinea drawn for the conquest
    assert sorted(state.players[SEAT].cards) == CAV + [39]
    # the 4 armies on Alaska, taken last (3 moved in); +2 on each infantry territory
    assert [state.armies[t] for t in (0, 3, 6, 9)] == [7, 3, 3, 3]


def test_version_2_traded_the_most_on_its_face() -> None:
    state = _elimination(replace(DOMINATION, rules_version=2))
    events = _play(state, "")
    traded = [e for e in events if isinstance(e, CardsTraded)]
    assert [(e.cards, e.value, e.bonus) for e in traded] == [(tuple(CAV), 6, ())]
    assert sorted(state.players[SEAT].cards) == MINE + [39]
    assert [state.armies[t] for t in (0, 3, 6, 9)] == [9, 1, 1, 1]


def test_a_trade_after_the_attack_chooses_the_set() -> None:
    """ "you must immediately trade in enough sets": which ones is the player's
    choice. Holding Alberta, Western United States, Venezuela and a Wild, the player
    keeps Venezuela: the set of the TRADE, 4 + 2 x 2 = 8, not the 10 of the three."""
    state = _elimination(hand=MINE + [WILD_1], taken=CAV[:2])
    events = _play(state, "TRADE Alberta, Western United States, Wild\nPLACE 4 Alberta")
    traded = [e for e in events if isinstance(e, CardsTraded)]
    assert [(e.cards, e.value, e.bonus) for e in traded] == [((3, 6, WILD_1), 4, ((3, 2), (6, 2)))]
    assert sorted(state.players[SEAT].cards) == [CAV[0], CAV[1], 9, 39]
    # Alberta 1 + 2 + 4 (PLACE), Western United States 1 + 2, Alaska the 3 moved in
    assert [state.armies[t] for t in (0, 3, 6, 9)] == [3, 7, 3, 1]


def test_a_trade_after_an_attack_that_eliminates_nobody_is_skipped() -> None:
    state = _elimination(hand=MINE + [WILD_1], taken=CAV[:2])
    mail = parse_orders(
        "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska UNTIL 1 ROLL\nTRADE Alberta, "
        "Western United States, Venezuela",
        state.board,
    )
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice([1, 1, 1, 6]))
    reason = "no forced trade after an elimination used it"
    assert TradeSkipped(SEAT, (3, 6, 9), reason) in events
    assert not [e for e in events if isinstance(e, CardsTraded)]
    assert len(state.players[SEAT].cards) == 4


def test_a_trade_after_an_attack_must_be_a_held_set_and_a_forced_trade_possible() -> None:
    state = _elimination(hand=[3, 6, 1], taken=[4])
    text = (
        "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\n"
        "TRADE Alberta, Western United States, Northwest Territory\n"
    )
    problems = validate_mail(state, SEAT, parse_orders(text, state.board))
    assert [(p.line, p.message) for p in problems] == [
        (
            3,
            "a TRADE after an ATTACK chooses the sets of the trade forced when an "
            "elimination leaves you 6 or more cards, and none can here: you hold 3, and "
            "the players your ATTACKs aim at hold 1",
        )
    ]
    state = _elimination(hand=[3, 6, 1], taken=[4, 7, 2])
    text += "TRADE Ontario, Eastern United States, Greenland"
    problems = validate_mail(state, SEAT, parse_orders(text, state.board))
    assert [(p.line, p.message) for p in problems] == [
        (
            3,
            "Alberta, Western United States, Northwest Territory is not a set (infantry, "
            "infantry, cavalry): a set is three of a design, or two of a design and a Wild",
        ),
        (4, "you do not hold the Ontario card"),
        (4, "you do not hold the Eastern United States card"),
        (4, "you do not hold the Greenland card"),
    ]


def test_version_2_reads_a_trade_after_an_attack_as_before() -> None:
    state = _elimination(replace(DOMINATION, rules_version=2), hand=MINE + [WILD_1], taken=[4, 7])
    text = (
        "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\nTRADE Alberta, Western United States, Wild"
    )
    problems = validate_mail(state, SEAT, parse_orders(text, state.board))
    # as version 2 read it: a TRADE out of place, and its set's 4 armies due
    assert [(p.line, p.message) for p in problems] == [
        (1, "PLACE orders place 5 armies; 9 are due this turn (5 + 4 for the traded set)"),
        (3, "TRADE must come before PLACE, ATTACK and FORTIFY"),
    ]


def test_a_missed_turn_trades_the_set_worth_most_to_the_player() -> None:
    """The forced trade of a missed turn (6 cards): three infantry of own territories,
    4 + 3 x 2 = 10, rather than three cavalry, 6 (version 2)."""
    state = _elimination(hand=MINE + CAV, taken=[])
    assert state.must_trade
    assert default_turn(state)[0] == Trade((3, 6, 9))
    v2 = _elimination(replace(DOMINATION, rules_version=2), hand=MINE + CAV, taken=[])
    assert default_turn(v2)[0] == Trade((1, 4, 7))


def test_check_gives_odds_for_a_trade_after_an_attack() -> None:
    """CHECK (the forecast) plays such orders without refusing them."""
    state = _elimination(hand=MINE + [WILD_1], taken=CAV[:2])
    text = (
        "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\n"
        "TRADE Alberta, Western United States, Wild\nPLACE 4 Alberta"
    )
    lines = forecast_lines(state, parse_orders(text, state.board).turn_orders)
    assert lines[1] == (
        "  1. Kamchatka -> Alaska: takes it >99.9%; armies left 9.5 (Kamchatka 6.5, Alaska 3.0)"
    )


def test_a_trade_below_a_line_to_be_an_attack_is_read_as_a_forced_trades_choice() -> None:
    """A mail whose ATTACK could not be read: the TRADE below it is not told to come
    before it (version 3); its cards are still checked."""
    state = _elimination(hand=MINE + [WILD_1], taken=CAV[:2])
    text = "PLACE 5 Indonesia\nATACK Kamchatka -> Alaska\nTRADE Alberta, Western United States, "
    with pytest.raises(OrdersError) as caught:
        parse_orders(text + "Wild", state.board)
    assert validate_mail(state, SEAT, caught.value.partial) == []
    with pytest.raises(OrdersError) as caught:
        parse_orders(text + "Quebec", state.board)
    problems = validate_mail(state, SEAT, caught.value.partial)
    assert [(p.line, p.message) for p in problems] == [(3, "you do not hold the Quebec card")]
