"""The classic rules (1993/2003 Global Domination), the minor points of issue 14.

Each test quotes the sentence it checks (RULES.md, which quotes the
rulebooks) and checks it with numbers worked out by hand.
"""

from __future__ import annotations

from dataclasses import replace

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.forecast import forecast
from pbem.orders.parser import parse_orders
from pbem.orders.render import render_action
from pbem.orders.validate import turn_actions
from pbem.report.views import setup_task
from pbem.rules import attacking, engine, opening
from pbem.rules.actions import Attack, Claim, Defend
from pbem.rules.eventcodec import seats_that_see
from pbem.rules.events import (
    ArmiesPlaced,
    CardsTraded,
    DefenceOrdered,
    PlaceSkipped,
    TerritoryClaimed,
    )
from pbem.rules.optionwords import FIXED_RULES
from pbem.rules.setupplan import play_setup
from pbem.rules.state import CLAIM, PLACE, GameState
from pbem.rules.turnplan import play_turn
from tests.rules.support import (
    ScriptedDice,
    arrange,
    classic,
    give_cards,
    new_state,
    start_turn,
)

CLASSIC = load_preset("classic")
SEAT = 0
AU = list(range(38, 42))  # Indonesia, New Guinea, Eastern and Western Australia
ALASKA, KAMCHATKA, INDONESIA = 0, 33, 38


def _facing(alaska: int = 3) -> tuple[GameState, int]:
    """SEAT's Kamchatka (10 armies) faces Alaska, the victim's only territory."""
    state = new_state(3, CLASSIC)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [KAMCHATKA], victim: [ALASKA]}, armies={33: 10, 0: alaska})
    return state, victim


def _mail(state: GameState, seat: int, text: str) -> list:
    mail = parse_orders(text, state.board)
    assert validate_mail(state, seat, mail) == []
    return turn_actions(state, mail.turn_orders)


# ------------------------------------------------------------------- defender dice
def test_the_defender_rolls_the_most_dice_by_default() -> None:
    """RULES.md: "defender 1-2 (at most its armies, always the most)" """
    state, _ = _facing(alaska=3)
    start_turn(state, SEAT)
    engine.place(state, INDONESIA, state.reinforcements)
    rng = ScriptedDice([6, 5, 4, 5, 5])
    attacking.attack(state, KAMCHATKA, ALASKA, rng, max_rolls=1)
    assert rng.requests == [5]  # 3 attacking dice + 2 defending
    assert state.armies[ALASKA] == 2  # 6 v 5 and 5 v 5: one each
    assert state.armies[KAMCHATKA] == 9


def test_a_standing_order_defends_with_one_die_until_cleared() -> None:
    """The defender may choose to roll 1 die: "DEFEND WITH 1 IN <territory>"
    is a standing order, kept in the state across turns, shown only to its
    player; DEFEND WITH 2 clears it (issue 14)."""
    state, victim = _facing(alaska=3)
    start_turn(state, victim)  # 1 territory: 3 armies
    events = play_turn(
        state, _mail(state, victim, "PLACE 3 Alaska\nDEFEND WITH 1 IN Alaska"), ScriptedDice()
    )
    assert DefenceOrdered(victim, ALASKA, 1) in events
    assert seats_that_see(DefenceOrdered(victim, ALASKA, 1)) == victim
    assert state.defend_one == [ALASKA] and state.armies[ALASKA] == 6
    assert state.to_dict()["defend_one"] == [ALASKA]
    again = GameState.from_dict(state.to_dict(), state.board, state.options)
    assert again.defend_one == [ALASKA] and again.state_hash() == state.state_hash()

    start_turn(state, SEAT)
    engine.place(state, INDONESIA, state.reinforcements)
    rng = ScriptedDice([6, 5, 4, 5])
    attacking.attack(state, KAMCHATKA, ALASKA, rng, max_rolls=1)
    assert rng.requests == [4]  # 3 attacking dice + 1 defending: 6 v 5, Alaska loses 1
    assert state.armies[ALASKA] == 5 and state.armies[KAMCHATKA] == 10

    start_turn(state, victim)  # 1 territory: 3 armies
    play_turn(
        state, _mail(state, victim, "DEFEND WITH 2 IN Alaska\nPLACE 3 Alaska"), ScriptedDice()
    )
    assert state.defend_one == [] and "defend_one" not in state.to_dict()


def test_the_standing_order_ends_with_its_territory() -> None:
    """A standing order belongs to the territory's owner: taken, it is gone."""
    state, victim = _facing(alaska=1)
    state.defend_one = [ALASKA]
    start_turn(state, SEAT)
    engine.place(state, INDONESIA, state.reinforcements)
    attacking.attack(state, KAMCHATKA, ALASKA, ScriptedDice([6, 6, 6, 1]))
    assert state.owner[ALASKA] == SEAT and state.defend_one == []


def test_defend_is_refused_for_a_territory_not_yours() -> None:
    state, victim = _facing()
    start_turn(state, victim)
    mail = parse_orders("PLACE 3 Alaska\nDEFEND WITH 1 IN Kamchatka", state.board)
    problems = validate_mail(state, victim, mail)
    assert [p.line for p in problems] == [2]
    assert problems[0].message.startswith("Kamchatka is")
    assert render_action(Defend(ALASKA, 1), state.board) == "DEFEND WITH 1 IN Alaska"


# --------------------------------------------------------- elimination armies
def test_armies_of_an_elimination_trade_are_placed_by_the_players_orders() -> None:
    """RULES.md: "Eliminating a player: take their cards; if that makes 6 or
    more, trade at once until 4 or fewer, then stop". Issue 14: the armies
    are placed by PLACE orders after the ATTACK, not on the territory taken."""
    state, victim = _facing(alaska=1)
    give_cards(state, SEAT, [1, 3, 8])
    give_cards(state, victim, [2, 5, 6])
    start_turn(state, SEAT)
    assert state.reinforcements == 5  # 5 territories: 3, + Australia 2
    text = "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\nPLACE 3 Kamchatka, 1 Indonesia"
    events = play_turn(state, _mail(state, SEAT, text), ScriptedDice([6, 6, 6, 1]))
    # 6 cards: the set Northwest Territory, Greenland, Alberta (cavalry,
    # artillery, infantry) is the first set of the game: 4 armies
    trade = next(e for e in events if isinstance(e, CardsTraded))
    assert (trade.cards, trade.value, trade.forced) == ((1, 2, 3), 4, True)
    placed = [e for e in events if isinstance(e, ArmiesPlaced)]
    assert placed[-2:] == [ArmiesPlaced(SEAT, KAMCHATKA, 3), ArmiesPlaced(SEAT, INDONESIA, 1)]
    # Kamchatka 10 - 3 moved in + 3 = 10; Alaska 3; Indonesia 1 + 5 + 1 = 7
    assert (state.armies[KAMCHATKA], state.armies[ALASKA], state.armies[INDONESIA]) == (10, 3, 7)


def test_a_place_after_an_attack_without_an_elimination_is_skipped() -> None:
    state, _ = _facing(alaska=5)
    start_turn(state, SEAT)
    text = "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska UNTIL 1 ROLL\nPLACE 2 Indonesia"
    events = play_turn(state, _mail(state, SEAT, text), ScriptedDice([6, 6, 6, 1, 1]))
    assert PlaceSkipped(SEAT, INDONESIA, 2, "no armies from an elimination") in events
    assert state.armies[INDONESIA] == 6  # 1 + 5, nothing more


def test_pbem_rules_states_the_fixed_rules() -> None:
    lines = CLASSIC.describe()
    assert lines[-2:] == list(FIXED_RULES)
    assert "DEFEND WITH 1 IN" in lines[-2] and "PLACE orders written after that ATTACK" in lines[-1]


# ------------------------------------------------------------ claiming in turn
def test_claim_turns_takes_one_territory_each_per_round() -> None:
    """The 2003 rulebook claims territories in turn, one army on one empty
    territory at a time; by mail (claim = turns) one round per mail, each
    player taking the first free territory on their list, in turn order."""
    options = replace(CLASSIC, claim="turns")
    players = [("a", "red"), ("b", "blue"), ("c", "yellow")]
    state, _ = opening.new_game(classic(), options, "c", players, ScriptedDice())
    assert state.order == [2, 1, 0] and state.phase == CLAIM
    rounds = 0
    lists = {2: [5], 1: [5, 6], 0: []}
    while state.phase == CLAIM:
        events = play_setup(
            state, {s: [Claim(tuple(lists[s]))] for s in state.order}, ScriptedDice()
        )
        if rounds == 0:
            # c takes Quebec; Quebec gone, b takes Western United States; a
            # sent no list: the first free territory in map order, Alaska
            assert events == [
                TerritoryClaimed(2, 5),
                TerritoryClaimed(1, 6),
                TerritoryClaimed(0, 0),
            ]
            assert setup_task(state, 0)[2].endswith("39 territories are still free.")
        rounds += 1
    assert rounds == 14  # 42 territories, 3 a round
    assert [state.owner.count(s) for s in (0, 1, 2)] == [14, 14, 14]
    assert state.phase == PLACE and [state.players[s].to_place for s in (0, 1, 2)] == [21, 21, 21]


def test_the_attackers_forecast_does_not_reveal_a_defend_order() -> None:
    """A standing order is shown only to its player: the attacker's odds are
    the same with and without it."""
    state, _ = _facing(alaska=3)
    start_turn(state, SEAT)
    engine.place(state, INDONESIA, state.reinforcements)
    plain = forecast(state, [Attack(KAMCHATKA, ALASKA)])
    state.defend_one = [ALASKA]
    assert forecast(state, [Attack(KAMCHATKA, ALASKA)]) == plain
    assert state.defend_one == [ALASKA]
