"""The 2016 edition, the minor points of issue 14.

Issue 14: "2016 edition: traded cards leave the deck (option, on in the 2016
preset)." RULES.md for the rest of the edition: "`fortify = ... chained`
(2016: one move along own territories)", "`move_in = survivors`, 2016",
"Players: 2 to 6 (2016 preset: up to 5)".
"""

from __future__ import annotations

from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.presets import load_preset
from pbem.rules import attacking, engine
from pbem.rules.events import CardDrawn
from tests.rules.support import (
    ScriptedDice,
    arrange,
    full_deck_ok,
    give_cards,
    new_state,
    start_turn,
)

EDITION_2016 = load_preset("2016")
SEAT = 0
AU = list(range(38, 42))
INF = [0, 3, 6]  # Alaska, Alberta, Western United States: three infantry


def test_the_2016_preset_takes_traded_cards_out_of_the_game() -> None:
    assert EDITION_2016.traded_cards == "removed"
    assert load_preset("classic").traded_cards == "bottom"
    assert (EDITION_2016.fortify, EDITION_2016.move_in, EDITION_2016.max_players) == (
        "chained",
        "survivors",
        5,
    )


def test_traded_cards_leave_the_deck() -> None:
    """ "traded cards leave the deck" """
    state = new_state(3, EDITION_2016)
    arrange(state, {SEAT: AU})
    give_cards(state, SEAT, INF)
    start_turn(state, SEAT)
    pile = len(state.deck)
    events = engine.trade(state, tuple(INF))
    assert events[0].value == 4  # the first set of the game
    assert state.removed_cards == INF and len(state.deck) == pile
    assert not any(c in state.deck or c in state.discard for c in INF)
    assert full_deck_ok(state)  # pile + hands + removed: every card, once


def test_no_card_is_drawn_once_the_pile_is_empty() -> None:
    """With the traded cards gone there is nothing to reshuffle: a conquest
    with an empty pile earns no card."""
    state = new_state(3, EDITION_2016)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [33], victim: [0, 1]}, armies={33: 10})
    start_turn(state, SEAT)
    engine.place(state, 38, state.reinforcements)
    state.removed_cards += state.deck
    state.deck = []
    attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    attacking.move_in(state, 3)
    rng = ScriptedDice()
    events = engine.end_turn(state, rng)
    assert not any(isinstance(e, CardDrawn) for e in events) and rng.shuffles == 0
    assert full_deck_ok(state)


def test_pbem_rules_2016_says_it_in_words() -> None:
    """`pbem rules PRESET` states each rule and option in words."""
    result = CliRunner().invoke(app, ["rules", "2016"])
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2016: The 2016 edition")
    assert "- Traded cards leave the game; once the draw pile is empty no card is drawn." in lines
    assert "- One fortifying move per turn, along a chain of own territories." in lines
    assert len(lines) == 1 + len(EDITION_2016.describe())


def test_each_set_showing_an_owned_territory_gives_two_more_armies() -> None:
    """Issue 33, point 4: "If any of the three cards you trade in shows the
    picture of a territory you occupy, you receive two extra troops. You must
    place both troops on that territory." No limit per turn (the classic
    rulebook's "only once per turn" is not in the 2016 text): option
    territory_bonus = per_set, the +2 on the first such card the trade lists."""
    assert EDITION_2016.territory_bonus == "per_set"
    state = new_state(3, EDITION_2016)
    # SEAT holds Alaska (0), Alberta (3), Ontario (4) and Australia; not Western US (6),
    # Northwest Territory (1) or Eastern US (7)
    arrange(state, {SEAT: [0, 3, 4] + AU})
    give_cards(state, SEAT, [0, 3, 6, 1, 4, 7])
    start_turn(state, SEAT)
    assert state.reinforcements == 3 + 2  # 7 territories: 3; Australia: 2
    first = engine.trade(state, (0, 3, 6))  # three infantry: Alaska and Alberta owned
    assert (first[0].value, first[0].bonus) == (4, ((0, 2),))  # once per set: Alaska only
    second = engine.trade(state, (1, 4, 7))  # three cavalry: Ontario owned
    assert (second[0].value, second[0].bonus) == (6, ((4, 2),))  # again, the same turn
    assert (state.armies[0], state.armies[3], state.armies[4]) == (1 + 2, 1, 1 + 2)
    assert state.reinforcements == 5 + 4 + 6


def test_the_classic_bonus_stays_once_per_turn() -> None:
    """The classic rules (RULES.md): "+2 on one owned territory shown on a
    traded card, at most 2 per turn, placed there" (territory_bonus = once): the second
    set of the same turn gives none."""
    classic = load_preset("classic")
    assert classic.territory_bonus == "once"
    state = new_state(3, classic)
    arrange(state, {SEAT: [0, 3, 4] + AU})
    give_cards(state, SEAT, [0, 3, 6, 1, 4, 7])
    start_turn(state, SEAT)
    assert engine.trade(state, (0, 3, 6))[0].bonus == ((0, 2),)
    assert engine.trade(state, (1, 4, 7))[0].bonus == ()
    assert (state.armies[0], state.armies[4]) == (3, 1)
