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

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.parser import parse_orders
from pbem.orders.render import render_action
from pbem.orders.validate import turn_actions
from pbem.rules.actions import Attack
from pbem.rules.events import ArmiesPlaced, AttackResolved, Roll
from pbem.rules.turnplan import play_turn
from tests.rules.support import ScriptedDice, arrange, give_cards, new_state, start_turn

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
