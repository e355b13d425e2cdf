"""The two-player rules, the minor points of issue 14.

RULES.md: "Two players: wilds out, deal 14/14/14 to the two players and a
neutral; each player also places half of the neutral's remaining 26
armies". Issue 14: "the neutral's placement in claim/draft follows the
rulebook (random / dealt), not map order": its territories come off the
shuffled territory cards, also when the two players draft theirs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.parser import parse_orders
from pbem.orders.validate import turn_actions
from pbem.report.render import _private
from pbem.report.views import setup_task
from pbem.rules import attacking, defence, engine, opening
from pbem.rules.errors import RulesError
from pbem.rules.events import DefenceOrdered, TerritoriesDealt
from pbem.rules.optionwords import NEUTRAL_DEFENCE
from pbem.rules.state import CLAIM, PLACE, GameState
from pbem.rules.turnplan import play_turn
from tests.rules.support import ScriptedDice, arrange, classic, new_state, start_turn

TWO = load_preset("two-player")
PLAYERS = [("ann", "red"), ("bob", "blue")]
NEUTRAL = 2


def test_the_deal_gives_the_neutral_its_14_from_the_shuffled_cards() -> None:
    """ "deal 14/14/14 to the two players and a neutral" """
    state, events = opening.new_game(classic(), TWO, "duel", PLAYERS, ScriptedDice())
    # the scripted shuffle reverses: turn order bob (1), ann (0); the cards
    # 41, 40, ..., 0 dealt bob, ann, neutral: the neutral gets 39, 36, ..., 0
    assert state.order == [1, 0]
    dealt = {e.seat: e.territories for e in events if isinstance(e, TerritoriesDealt)}
    assert dealt[NEUTRAL] == tuple(range(0, 42, 3))
    assert dealt[1] == tuple(range(2, 42, 3)) and dealt[0] == tuple(range(1, 42, 3))
    assert state.phase == PLACE and [p.to_place for p in state.players] == [26, 26, 26]


def test_with_a_draft_the_neutral_is_dealt_its_third_first() -> None:
    """The neutral's third is dealt at random before the draft; the players
    draft the other 28, 14 each, and the neutral no longer takes the first
    free territory in map order every round."""
    options = replace(TWO, claim="draft")
    state, events = opening.new_game(classic(), options, "duel", PLAYERS, ScriptedDice())
    assert state.phase == CLAIM
    # cards shuffled (reversed): 41, 40, ..., 0; the first 14 are the neutral's
    assert events[-1] == TerritoriesDealt(NEUTRAL, tuple(range(28, 42)))
    assert [t for t, o in enumerate(state.owner) if o == NEUTRAL] == list(range(28, 42))
    assert state.players[NEUTRAL].to_place == 26
    picks = opening.claim_draft(state, {1: [28, 3], 0: [0, 1, 2]})
    # bob: 28 is the neutral's, so 3; ann 0; bob's list is used up: the first
    # free in map order, 1; ann: 0 and 1 gone, so 2; then 4, 5, ... alternately
    assert [(e.seat, e.territory) for e in picks[:4]] == [(1, 3), (0, 0), (1, 1), (0, 2)]
    assert [state.owner.count(s) for s in (0, 1, NEUTRAL)] == [14, 14, 14]
    assert all(e.seat != NEUTRAL for e in picks)
    assert [opening.neutral_share(state, s) for s in (1, 0)] == [13, 13]


def test_the_draft_prompt_says_the_neutral_was_dealt_first() -> None:
    options = replace(TWO, claim="draft")
    state, _ = opening.new_game(classic(), options, "duel", PLAYERS, ScriptedDice())
    assert setup_task(state, 0)[-1] == (
        "The neutral army's 14 territories were dealt at random before the draft; "
        "they are not free."
    )


# ------------------------------------------------- the neutral's defender (issue 33)
OTHER, ALASKA, NORTHWEST, KAMCHATKA, INDONESIA = 1, 0, 1, 33, 38
AU = list(range(38, 42))


def _duel(version: int = 3) -> GameState:
    """p0 (seat 0) holds Australia and Kamchatka (10 armies), the neutral
    Alaska (3), p1 (seat 1) the rest, Northwest Territory with 10."""
    state = new_state(2, replace(TWO, rules_version=version))
    arrange(
        state,
        {0: AU + [KAMCHATKA], NEUTRAL: [ALASKA]},
        armies={KAMCHATKA: 10, ALASKA: 3, NORTHWEST: 10},
    )
    return state


def _p1s_mail(state: GameState, text: str) -> tuple[list, list]:
    """p1's turn begins; his mail places every army on Northwest Territory, then ``text``."""
    start_turn(state, OTHER)
    mail = parse_orders(f"PLACE {state.reinforcements} Northwest Territory\n{text}", state.board)
    return validate_mail(state, OTHER, mail), mail.turn_orders


def test_the_player_who_rolls_for_the_neutral_may_defend_it_with_one_die() -> None:
    """Issue 33, point 7. The rulebook (000), two players: when you attack a
    neutral territory, "your opponent rolls to defend that neutral territory";
    like any defender, the opponent may choose one die: p1's DEFEND WITH 1 IN
    Alaska (neutral) counts when p0 attacks it, not when p1 does."""
    state = _duel()
    problems, orders = _p1s_mail(state, "DEFEND WITH 1 IN Alaska")
    assert problems == []
    events = play_turn(state, turn_actions(state, orders), ScriptedDice())
    assert DefenceOrdered(OTHER, ALASKA, 1) in events
    assert state.defend_neutral == [(OTHER, ALASKA)] and state.defend_one == []
    assert state.to_dict()["defend_neutral"] == [[OTHER, ALASKA]]
    assert state.canonical_json() == state.canonical_json_reference()
    again = GameState.from_dict(state.to_dict(), state.board, state.options)
    assert again.defend_neutral == [(OTHER, ALASKA)]
    assert again.state_hash() == state.state_hash()
    assert _private(state, OTHER)["defend_one"] == ["Alaska"]
    assert _private(state, 0)["defend_one"] == []

    start_turn(state, 0)  # p0 attacks the neutral: p1 rolls for it, one die
    engine.place(state, INDONESIA, state.reinforcements)
    rng = ScriptedDice([6, 5, 4, 5])
    attacking.attack(state, KAMCHATKA, ALASKA, rng, max_rolls=1)
    assert rng.requests == [4]  # 3 attacking dice + 1 defending: 6 v 5, Alaska loses 1
    assert (state.armies[ALASKA], state.armies[KAMCHATKA]) == (2, 10)

    start_turn(state, OTHER)  # p1 attacks it: p0 rolls for it, the most dice
    engine.place(state, NORTHWEST, state.reinforcements)
    rng = ScriptedDice([6, 5, 4, 5, 5])
    attacking.attack(state, NORTHWEST, ALASKA, rng, max_rolls=1)
    assert rng.requests == [5]  # 3 attacking dice + 2 defending: one army each
    assert state.armies[ALASKA] == 1


def test_the_neutral_standing_order_ends_when_the_territory_is_taken() -> None:
    state = _duel()
    state.armies[ALASKA] = 1
    state.defend_neutral = [(OTHER, ALASKA)]
    start_turn(state, 0)
    engine.place(state, INDONESIA, state.reinforcements)
    attacking.attack(state, KAMCHATKA, ALASKA, ScriptedDice([6, 6, 6, 1]))
    assert state.owner[ALASKA] == 0 and state.defend_neutral == []


def test_rules_version_2_refuses_defend_for_a_neutral_territory() -> None:
    """Versions 1-2 read DEFEND as the owner's order only: refused, as before."""
    state = _duel(version=2)
    problems, _ = _p1s_mail(state, "DEFEND WITH 1 IN Alaska")
    assert [p.line for p in problems] == [2]
    assert problems[0].message.startswith("Alaska is")
    with pytest.raises(RulesError, match="Alaska is not p1's"):
        defence.set_defence(state, ALASKA, 1)
    assert state.defend_neutral == []


def test_pbem_rules_says_who_may_defend_the_neutral_from_version_3() -> None:
    said = "\n".join(TWO.describe(2))
    assert f"(with a draft, its third is dealt first). {NEUTRAL_DEFENCE}\n" in said
    assert NEUTRAL_DEFENCE not in "\n".join(replace(TWO, rules_version=2).describe(2))
    classic = load_preset("classic")
    assert NEUTRAL_DEFENCE not in "\n".join(classic.describe(3))  # no neutral with three
