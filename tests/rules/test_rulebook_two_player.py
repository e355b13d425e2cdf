"""The two-player rules, the minor points of issue 14.

RULES.md: "Two players: wilds out, deal 14/14/14 to the two players and a
neutral; each player also places half of the neutral's remaining 26
armies". Issue 14: "the neutral's placement in claim/draft follows the
rulebook (random / dealt), not map order": its territories come off the
shuffled territory cards, also when the two players draft theirs.
"""

from __future__ import annotations

from dataclasses import replace

from pbem.maps.presets import load_preset
from pbem.report.views import setup_task
from pbem.rules import opening
from pbem.rules.events import TerritoriesDealt
from pbem.rules.state import CLAIM, PLACE
from tests.rules.support import ScriptedDice, classic

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
