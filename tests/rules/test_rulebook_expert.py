"""The expert rules, the minor points of issue 14.

RULES.md: "`card_reroll` (an attacker holding the card of FROM or TO
re-rolls one die per roll: the lowest attacking die that lost a
comparison)". Issue 14: "the player chooses whether to re-roll (an order
option [...]), not automatic": the clause REROLL of ATTACK asks for it.
And "armies that cannot be placed are lost" (max_armies = 12) no longer
costs the armies of an elimination: the player places them.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.parser import parse_orders
from pbem.orders.render import render_action, render_orders
from pbem.orders.v3checks import room_for_due
from pbem.orders.validate import turn_actions
from pbem.rules import engine
from pbem.rules.actions import Attack, Place, Trade
from pbem.rules.bots import make_bot
from pbem.rules.cards import designs_of, set_value
from pbem.rules.defaults import default_turn, trade_bonus
from pbem.rules.dice import DiceStream
from pbem.rules.errors import RulesError
from pbem.rules.events import ArmiesPlaced, AttackResolved, PlaceSkipped, Roll
from pbem.rules.simulate import game_secret, setup_game
from pbem.rules.state import ENDED
from pbem.rules.turnplan import play_turn
from tests.rules.support import (
    ScriptedDice,
    arrange,
    classic,
    give_cards,
    new_state,
    start_turn,
)

EXPERT = load_preset("expert")
NO_COMMANDER = replace(EXPERT, commander=False)  # the re-roll alone
SEAT = 0
AU = list(range(38, 42))
ALASKA, KAMCHATKA, INDONESIA = 0, 33, 38


def _position(alaska: int = 6, options=NO_COMMANDER, card: bool = True):  # noqa: ANN001, ANN202
    state = new_state(3, options)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [KAMCHATKA], victim: [ALASKA]}, armies={33: 10, 0: alaska})
    if card:
        give_cards(state, SEAT, [KAMCHATKA])  # the card of FROM
    start_turn(state, SEAT)
    return state, victim


def _roll_once(text: str) -> tuple[ScriptedDice, AttackResolved]:
    state, _ = _position()
    orders = f"PLACE {state.reinforcements} Indonesia\n{text}"
    mail = parse_orders(orders, state.board)
    assert validate_mail(state, SEAT, mail) == []
    # 5 3 2 v 4 4: the 3 lost; a re-roll turns it into a 6
    rng = ScriptedDice([5, 3, 2, 4, 4, 6])
    events = play_turn(state, turn_actions(state, mail.turn_orders), rng)
    return rng, next(e for e in events if isinstance(e, AttackResolved))


def test_without_reroll_there_is_no_reroll() -> None:
    """ "not automatic" """
    rng, attack = _roll_once("ATTACK Kamchatka -> Alaska UNTIL 1 ROLL")
    assert rng.requests == [5]
    assert attack.rolls == (Roll((5, 3, 2), (4, 4), 1, 1),)


def test_reroll_rerolls_the_lowest_losing_die() -> None:
    """ "re-rolls one die per roll: the lowest attacking die that lost a comparison" """
    rng, attack = _roll_once("ATTACK Kamchatka -> Alaska UNTIL 1 ROLL REROLL")
    assert rng.requests == [5, 1]
    # 3 -> 6: 6 5 2 v 4 4, the defender loses both
    assert attack.rolls == (Roll((6, 5, 2), (4, 4), 0, 2, rerolled=(3, 6)),)


def test_reroll_is_an_attack_clause_and_needs_the_expert_option() -> None:
    state, _ = _position()
    mail = parse_orders("ATTACK Kamchatka -> Alaska REROLL", state.board)
    action = mail.orders[0].action
    assert action == Attack(KAMCHATKA, ALASKA, reroll=True)
    assert render_action(action, state.board) == "ATTACK Kamchatka -> Alaska REROLL"
    classic, _ = _position(options=load_preset("classic"))
    text = f"PLACE {classic.reinforcements} Indonesia\nATTACK Kamchatka -> Alaska REROLL"
    problems = validate_mail(classic, SEAT, parse_orders(text, classic.board))
    assert [(p.line, p.message) for p in problems] == [
        (2, "REROLL: these rules have no card re-roll")
    ]


def test_elimination_armies_are_not_lost_to_the_cap() -> None:
    """With max_armies = 12 the 5 armies of an elimination's set (linear
    values: 4, 5, ...; the second set of the game) used to go on the
    territory just taken, where the cap destroyed them; placed by the
    player they are all kept."""
    state, victim = _position(alaska=1, options=EXPERT, card=False)
    state.sets_traded = 1
    give_cards(state, SEAT, [1, 3, 4])
    give_cards(state, victim, [2, 5, 6])  # 6 cards: trade Northwest Territory, Greenland, Alberta
    due = state.reinforcements  # 5 territories: 3, + Australia 2
    text = (
        f"PLACE {due} Indonesia\nATTACK Kamchatka -> Alaska MOVE ALL\n"
        "PLACE 3 Kamchatka, 2 New Guinea"
    )
    mail = parse_orders(text, state.board)
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice([6, 6, 6, 1]))
    placed = [e for e in events if isinstance(e, ArmiesPlaced)]
    assert placed[-2:] == [ArmiesPlaced(SEAT, KAMCHATKA, 3), ArmiesPlaced(SEAT, 39, 2)]
    # MOVE ALL: 9 of Kamchatka's 10 into Alaska; then 1 + 3 = 4 and New Guinea 1 + 2 = 3
    assert (state.armies[ALASKA], state.armies[KAMCHATKA], state.armies[39]) == (9, 4, 3)
    assert not any(e.lost for e in placed)


def test_the_rules_in_words_say_the_reroll_is_asked_for() -> None:
    assert (
        "An attacker holding the card of either territory may re-roll one lost die per roll "
        "(ATTACK ... REROLL)."
    ) in replace(EXPERT, rules_version=2).describe()  # version 3: test_rulebook_expert_audit


# ---------------------------------------------------------------------------------------
# Issue 33, point 1: 000 (expert variations), "If because of this rule you are unable
# to place some armies, you lose those armies." Under rules version 3 a PLACE over the
# cap is refused (as in the setup), and armies are lost only where no territory of the
# player has room; version 2 kept the order and lost what fell over.
EXPERT_V2 = replace(EXPERT, rules_version=2)
NEW_GUINEA, E_AUSTRALIA, W_AUSTRALIA = 39, 40, 41


def _capped(options=EXPERT, armies: dict[int, int] | None = None):  # noqa: ANN001, ANN202
    """SEAT holds Alaska (12 armies, the cap) and Australia (1 each): 5 territories,
    so 3 armies + 2 for Australia = 5 due."""
    state = new_state(3, options)
    arrange(state, {SEAT: [ALASKA] + AU}, armies={ALASKA: 12, **(armies or {})})
    start_turn(state, SEAT)
    assert state.reinforcements == 5
    return state


def _problems(state, text: str) -> list[tuple[int, str]]:  # noqa: ANN001
    return [
        (p.line, p.message) for p in validate_mail(state, SEAT, parse_orders(text, state.board))
    ]


def test_a_place_over_the_cap_is_refused_naming_the_cap_and_the_room() -> None:
    """ "If because of this rule you are unable to place some armies, you lose those
    armies": here the player is able to, so the order is refused, not the armies lost."""
    state = _capped()
    assert _problems(state, "PLACE 4 Alaska, 1 Indonesia") == [
        (
            1,
            "Alaska would hold 16 armies, over the cap of 12 (max_armies): room for 0 more "
            "there; your other territories have room for 44 more",
        )
    ]
    assert _problems(state, "PLACE 4 Indonesia, 1 New Guinea") == []
    with pytest.raises(
        RulesError,
        match="Alaska holds 12 armies and max_armies is 12: room for 0 more there, not 4",
    ):
        engine.place(state, ALASKA, 4)
    assert state.reinforcements == 5 and state.armies[ALASKA] == 12


def test_version_2_keeps_the_place_and_loses_what_falls_over() -> None:
    state = _capped(EXPERT_V2)
    mail = parse_orders("PLACE 4 Alaska, 1 Indonesia", state.board)
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice())
    assert ArmiesPlaced(SEAT, ALASKA, 0, 4) in events
    assert (state.armies[ALASKA], state.armies[38]) == (12, 2)


def test_armies_no_territory_can_hold_are_lost_and_the_place_must_fill_the_room() -> None:
    """ "you are unable to place some armies, you lose those armies": 2 places left
    (Indonesia 10 of 12), 5 due: PLACE 2, and the 3 others are lost."""
    full = {38: 10, NEW_GUINEA: 12, E_AUSTRALIA: 12, W_AUSTRALIA: 12}
    state = _capped(armies=full)
    assert _problems(state, "PLACE 5 Indonesia") == [
        (
            1,
            "Indonesia would hold 15 armies, over the cap of 12 (max_armies): room for 2 "
            "more there; your other territories are full too",
        ),
        (
            1,
            "PLACE orders place 5 armies; 5 are due this turn, but your territories have "
            "room for only 2 under the cap of 12 (max_armies): place 2 (the other 3 are lost)",
        ),
    ]
    mail = parse_orders("PLACE 2 Indonesia", state.board)
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice())
    placed = [e for e in events if isinstance(e, ArmiesPlaced)]
    # the 3 that fit nowhere: told on the first own territory, Alaska
    assert placed == [ArmiesPlaced(SEAT, 38, 2), ArmiesPlaced(SEAT, ALASKA, 0, 3)]
    assert state.armies[38] == 12 and state.current != SEAT  # and the turn went on


def test_a_missed_turn_spreads_what_falls_over_to_territories_with_room() -> None:
    """A missed turn spreads the 5 due over the border, Alaska (12) and Indonesia (10):
    3 and 2. Alaska has no room: its 3 go to the player's territories with room, the
    border first, then the others in map order (New Guinea); none is lost."""
    state = _capped(armies={38: 10})
    assert default_turn(state) == [Place(((2, 38), (3, NEW_GUINEA)))]
    v2 = _capped(EXPERT_V2, armies={38: 10})
    # version 2: 3 on Alaska, lost over the cap
    assert default_turn(v2) == [Place(((3, ALASKA), (2, 38)))]
    events = play_turn(v2, default_turn(v2), ScriptedDice())
    assert ArmiesPlaced(SEAT, ALASKA, 0, 3) in events


def test_elimination_armies_over_the_cap_go_where_there_is_room() -> None:
    """A PLACE after the ATTACK over the cap places what fits; the rest of the
    elimination's 5 armies go on the territory taken last, then in map order."""
    state, victim = _position(alaska=1, options=EXPERT, card=False)
    state.armies[NEW_GUINEA] = 11
    state.sets_traded = 1
    give_cards(state, SEAT, [1, 3, 4])
    give_cards(state, victim, [2, 5, 6])
    due = state.reinforcements
    text = f"PLACE {due} Indonesia\nATTACK Kamchatka -> Alaska MOVE ALL\nPLACE 5 New Guinea"
    mail = parse_orders(text, state.board)
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice([6, 6, 6, 1]))
    reason = "New Guinea would hold more than 12 armies"
    assert PlaceSkipped(SEAT, NEW_GUINEA, 4, reason) in events
    placed = [e for e in events if isinstance(e, ArmiesPlaced)]
    # 1 on New Guinea (11 -> 12); Alaska 9 (MOVE ALL) + 3 = 12; Kamchatka 1 + 1 = 2
    assert placed[-3:] == [
        ArmiesPlaced(SEAT, NEW_GUINEA, 1),
        ArmiesPlaced(SEAT, ALASKA, 3),
        ArmiesPlaced(SEAT, KAMCHATKA, 1),
    ]
    assert (state.armies[NEW_GUINEA], state.armies[ALASKA], state.armies[KAMCHATKA]) == (12, 12, 2)


def test_the_rules_in_words_say_what_the_cap_does_by_version() -> None:
    """`pbem rules expert`: the cap in words, version 3 and version 2."""
    assert (
        "A territory holds at most 12 armies: a PLACE over it is refused, and armies are "
        "lost only when no territory of the player has room; moves stop at it."
    ) in EXPERT.describe()
    assert (
        "A territory holds at most 12 armies; armies placed over it are lost, moves stop at it."
    ) in EXPERT_V2.describe()
    assert "TRADE orders written after that ATTACK" in EXPERT.describe()[-1]
    assert "TRADE" not in EXPERT_V2.describe()[-1]


def test_bots_and_missed_turns_place_under_the_cap_in_orders_that_validate() -> None:
    """Under version 3 a bot's and a missed turn's orders are read like a player's
    (rendered, parsed, validated): none places over the cap, and the armies lost
    before the attacks are exactly those no territory of the player had room for.
    A low cap (6) fills the board."""
    options = replace(EXPERT, max_armies=6)
    bots = [make_bot("random" if s % 2 else "greedy", 10 + s) for s in range(4)]
    state = setup_game(classic(), options, 4, 3, bots)
    short = 0  # turns whose armies did not all fit
    while state.phase != ENDED and state.turn < 80:
        seat = state.current
        actions = default_turn(state) if state.turn % 4 == 0 else bots[seat].plan_turn(state)
        mail = parse_orders(render_orders(actions, state.board), state.board)
        assert validate_mail(state, seat, mail) == [], (state.turn, actions)
        trades = [a.cards for a in actions if isinstance(a, Trade)]
        due = state.reinforcements
        for number, cards in enumerate(trades, state.sets_traded + 1):
            due += set_value(options, number, designs_of(state.board, cards))
        bonus = trade_bonus(state, seat, trades)
        room = room_for_due(state, seat, bonus)
        # the +2 of a traded card goes on its own territory only ("you must place both
        # troops on that territory"): over the cap there, it is lost whatever the room
        bonus_over = sum(max(0, state.armies[t] + b - 6) for t, b in bonus.items())
        rng = DiceStream(game_secret(3), state.game, f"turn:{state.turn}")
        events = play_turn(state, actions, rng)
        first_attack = next(
            (i for i, e in enumerate(events) if isinstance(e, AttackResolved)), len(events)
        )
        lost = sum(e.lost for e in events[:first_attack] if isinstance(e, ArmiesPlaced))
        assert lost == max(0, due - room) + bonus_over, state.turn
        short += due > room
    assert state.turn >= 40 and short > 0
