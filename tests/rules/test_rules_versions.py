"""Rules versions (issue 31): a game keeps the rules it started with.

Rules version 1 is the engine of pbem 95b4065; version 2 is today's. For each
behaviour that changed without an option, a position built by hand where the
two versions differ, with the exact outcome of each; for each option added
since, what options stored by 95b4065 (which do not name it) read as.
docs/RECORDS.md ("Rules versions") lists the changes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.forecast import forecast
from pbem.orders.parser import parse_orders
from pbem.orders.validate import turn_actions
from pbem.rules import attacking, defence, opening, victory
from pbem.rules.actions import Attack
from pbem.rules.board import Board
from pbem.rules.cards import fixed_value, is_set, mixed_sets, set_value
from pbem.rules.errors import RulesError
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    CardsTraded,
    GameWon,
    MovedIn,
)
from pbem.rules.mapformat import parse_map
from pbem.rules.options import Options
from pbem.rules.optionwords import FIXED_RULES, FIXED_RULES_V1
from pbem.rules.ruleversions import RULES_VERSION
from pbem.rules.state import CLAIM, PLACE, GameState
from pbem.rules.turnplan import play_turn
from tests.rules.support import ScriptedDice, arrange, classic, give_cards, new_state, start_turn

CLASSIC = load_preset("classic")
V1 = replace(CLASSIC, rules_version=1)
SEAT = 0
AU = list(range(38, 42))  # Indonesia, New Guinea, Eastern and Western Australia
ALASKA, NW_TERRITORY, ALBERTA, KAMCHATKA, INDONESIA = 0, 1, 3, 33, 38

# The [Options] of records written by pbem 95b4065 (json.dumps of its
# Options.to_dict, sort_keys), presets classic and european.
OLD_CLASSIC = (
    '{"capitals_to_win": false, "card_reroll": false, "card_values": "escalating", '
    '"claim": "deal", "commander": false, "forced_trade_at": 5, "fortify": "adjacent", '
    '"goal": "domination", "max_armies": 0, "max_players": 6, "max_trades": 2, '
    '"max_turns": 0, "min_players": 2, "move_in": "dice", "neutral": true, '
    '"placement": "blind", "territory_bonus": "once", "traded_cards": "bottom"}'
)
OLD_EUROPEAN = OLD_CLASSIC.replace('"escalating"', '"fixed"').replace(
    '"territory_bonus": "once"', '"territory_bonus": "per_card"'
)
OLD_MISSION = OLD_CLASSIC.replace('"domination"', '"mission"').replace(
    '"min_players": 2', '"min_players": 3'
)


# ------------------------------------------------------------- stored options
def test_options_stored_by_95b4065_read_as_version_1_with_the_old_values() -> None:
    options = Options.from_stored(json.loads(OLD_CLASSIC))
    assert options.rules_version == 1
    assert options.fixed_mixed_set is True
    assert options.mission_win == "at_once"
    assert options.mission_deck == "extended"
    # everything the old record named is kept as it was
    assert (options.card_values, options.territory_bonus, options.traded_cards) == (
        "escalating",
        "once",
        "bottom",
    )


def test_options_stored_after_issue_14_keep_their_values_and_read_as_version_2() -> None:
    stored = CLASSIC.to_dict()
    del stored["rules_version"]  # written before the version was stored
    stored["mission_deck"] = "rulebook"
    stored["fixed_mixed_set"] = False
    options = Options.from_stored(stored)
    assert options.rules_version == 2
    assert (options.mission_deck, options.fixed_mixed_set) == ("rulebook", False)


def test_new_games_play_the_current_rules_version() -> None:
    assert RULES_VERSION == 3
    assert Options().rules_version == 3
    assert CLASSIC.rules_version == 3 and load_preset("european").rules_version == 3
    assert Options.from_stored(CLASSIC.to_dict()) == CLASSIC


def test_an_old_european_record_keeps_one_of_each_worth_10() -> None:
    """95b4065: fixed values 4, 6, 8 and 10 for one of each; a wild stands for
    whatever makes the set worth most."""
    old = Options.from_stored(json.loads(OLD_EUROPEAN))
    today = load_preset("european")
    board = classic()
    mixed = [ALASKA, NW_TERRITORY, 2]  # infantry, cavalry, artillery
    assert mixed_sets(old) and not mixed_sets(today)
    assert is_set(board, mixed, mixed_sets(old)) is True
    assert is_set(board, mixed, mixed_sets(today)) is False
    assert set_value(old, 1, ["infantry", "cavalry", "artillery"]) == 10
    assert fixed_value(["infantry", "cavalry", "wild"], old.fixed_mixed_set) == 10
    # a wild with two designs: a set (worth 10) only with one of each allowed
    assert board.card_design(42) == "wild"
    assert is_set(board, [ALASKA, NW_TERRITORY, 42], mixed_sets(old)) is True
    assert is_set(board, [ALASKA, NW_TERRITORY, 42], mixed_sets(today)) is False


def test_an_old_mission_record_deals_from_every_mission_of_the_map() -> None:
    """95b4065 dealt every mission of the map (14 on the classic map, the two
    'plus one of your choice' cards included), less the destroy cards of
    colours not in play."""
    old = Options.from_stored(json.loads(OLD_MISSION))
    today = load_preset("secret-mission")
    colours = {"red", "blue", "yellow"}
    assert victory.mission_deck(classic(), old, colours) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert victory.mission_deck(classic(), today, colours) == [0, 1, 2, 3, 4, 5, 8, 9, 10]


def test_the_rules_of_a_version_1_game_are_told_as_they_play() -> None:
    lines = replace(V1, card_reroll=True).describe()
    assert lines[-2:] == list(FIXED_RULES_V1)
    assert "re-rolls one lost die per roll." in " ".join(lines)
    assert "REROLL" not in " ".join(lines)
    assert CLASSIC.describe()[-2:] == list(FIXED_RULES)


# ------------------------------------------------------------------ the setup
def _tiny() -> Board:
    path = Path(__file__).parent.parent / "data" / "maps" / "tiny.toml"
    return parse_map(path.read_text(encoding="utf-8"), "tiny")


@pytest.mark.parametrize(("version", "armies"), [(1, 40), (2, 4)])
def test_starting_armies_on_a_small_map(version: int, armies: int) -> None:
    """Version 1: the rulebook's 40 on any map; version 2: 40 x 4 / 42, rounded
    up, on the 4 territories of the tiny map. The shuffles reverse (scripted):
    turn order (1, 0); the deal of cards 3, 2, 1, 0 to seats 1, 0 and the neutral
    gives seat 1 Delta and Alpha, seat 0 Gamma, the neutral Beta."""
    options = replace(CLASSIC, rules_version=version)
    state, _ = opening.new_game(
        _tiny(), options, "t", [("ann", "red"), ("bob", "blue")], ScriptedDice()
    )
    assert state.order == [1, 0] and state.owner == [1, 2, 0, 1]
    assert [p.to_place for p in state.players] == [armies - 1, armies - 2, armies - 1]
    assert state.phase == PLACE


def test_version_1_starts_a_game_without_the_check_that_it_fits_the_map() -> None:
    """Version 2 refuses a game the map cannot seat: 5 players on the tiny
    map's 4 territories. Version 1 had no such check (95b4065 dealt the 4
    cards, turn order reversed: seats 4, 3, 2, 1 one each, seat 0 none)."""
    seats = [(f"p{i}", "") for i in range(5)]
    with pytest.raises(RulesError, match="too few for 5 seats"):
        opening.new_game(_tiny(), CLASSIC, "t", seats, ScriptedDice())
    state, _ = opening.new_game(_tiny(), V1, "t", seats, ScriptedDice())
    assert state.order == [4, 3, 2, 1, 0] and state.owner == [1, 2, 3, 4]
    assert [p.to_place for p in state.players] == [25, 24, 24, 24, 24]


@pytest.mark.parametrize("version", [1, 2])
def test_two_player_draft(version: int) -> None:
    """Version 1: the neutral drafts too, last in each round, taking the first
    free territory; version 2 deals it a third of the map first (the 14 cards on
    top of the reversed shuffle: territories 28 to 41)."""
    options = replace(CLASSIC, claim="draft", rules_version=version)
    state, _ = opening.new_game(
        classic(), options, "t", [("ann", "red"), ("bob", "blue")], ScriptedDice()
    )
    assert state.phase == CLAIM and state.order == [1, 0]
    neutral = 2
    before = [t for t, o in enumerate(state.owner) if o == neutral]
    assert before == ([] if version == 1 else list(range(28, 42)))
    opening.claim_draft(state, {0: [], 1: []})  # no wishes: the first free each pick
    owned = {s: [t for t, o in enumerate(state.owner) if o == s] for s in (0, 1, 2)}
    if version == 1:
        assert owned == {
            1: list(range(0, 42, 3)),
            0: list(range(1, 42, 3)),
            2: list(range(2, 42, 3)),
        }
    else:
        assert owned == {1: list(range(0, 28, 2)), 0: list(range(1, 28, 2)), 2: list(range(28, 42))}


# -------------------------------------------------------------------- attacks
def _facing(options: Options, alaska: int = 3) -> tuple[GameState, int]:
    """SEAT's Kamchatka (10 armies) faces Alaska, the victim's only territory."""
    state = new_state(3, options)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [KAMCHATKA], victim: [ALASKA]}, armies={33: 10, 0: alaska})
    return state, victim


@pytest.mark.parametrize("version", [1, 2])
def test_card_reroll_is_automatic_in_version_1(version: int) -> None:
    """card_reroll with the Kamchatka card in hand, an ATTACK without REROLL.
    Dice 6 2 1 against 5 3: 2 loses to 3. Version 1 re-rolls the 2 (a 4): both
    comparisons won, Alaska loses 2. Version 2 re-rolls only on REROLL: one
    army each."""
    state, _ = _facing(replace(CLASSIC, card_reroll=True, rules_version=version))
    give_cards(state, SEAT, [KAMCHATKA])
    start_turn(state, SEAT)
    state.reinforcements = 0
    rng = ScriptedDice([6, 2, 1, 5, 3, 4])
    events = attacking.attack(state, KAMCHATKA, ALASKA, rng, max_rolls=1)
    (roll,) = next(e for e in events if isinstance(e, AttackResolved)).rolls
    if version == 1:
        assert rng.requests == [5, 1] and roll.rerolled == (2, 4)
        assert (state.armies[KAMCHATKA], state.armies[ALASKA]) == (10, 1)
    else:
        assert rng.requests == [5] and roll.rerolled is None
        assert (state.armies[KAMCHATKA], state.armies[ALASKA]) == (9, 2)


@pytest.mark.parametrize(("version", "takes"), [(1, 125 / 216), (2, 15 / 36)])
def test_the_odds_told_follow_the_versions_re_roll(version: int, takes: float) -> None:
    """One die against one (Kamchatka 2, Alaska 1), the Kamchatka card held,
    no REROLL written. Version 2: 15 of 36 rolls win. Version 1 re-rolls a
    lost die: a defender's k is beaten at first by 6 - k faces, else (k of 6)
    by the re-roll's 6 - k: the sum over k of (36 - k**2) / 216 = 125 / 216."""
    state, _ = _facing(replace(CLASSIC, card_reroll=True, rules_version=version), alaska=1)
    state.armies[KAMCHATKA] = 2
    give_cards(state, SEAT, [KAMCHATKA])
    start_turn(state, SEAT)
    state.reinforcements = 0
    (odds,) = forecast(state, [Attack(KAMCHATKA, ALASKA)]).attacks
    assert odds.takes == pytest.approx(takes, abs=1e-12)


def _eliminating(version: int) -> tuple[GameState, int]:
    """SEAT, also holding Alberta, takes Alaska (1 army), the victim's last
    territory, with 6 6 6 against 1, and its three cards make six: the set
    Northwest Territory, Greenland, Alberta (first of the game, 4 armies, +2
    on Alberta, SEAT's own) is traded at once."""
    state, victim = _facing(replace(CLASSIC, rules_version=version), alaska=1)
    arrange(state, {SEAT: AU + [KAMCHATKA, ALBERTA], victim: [ALASKA]}, armies={33: 10, 0: 1})
    give_cards(state, SEAT, [1, 3, 8])
    give_cards(state, victim, [2, 5, 6])
    start_turn(state, SEAT)
    assert state.reinforcements == 5  # 6 territories: 3, + Australia 2
    return state, victim


def test_version_1_places_elimination_armies_on_the_territory_taken_last() -> None:
    """Version 1: the set's 4 armies go on Alaska at once, before the 3
    armies move in; the +2 on Alberta, the card's own territory, in both."""
    state, _ = _eliminating(1)
    text = "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska"
    mail = parse_orders(text, state.board)
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice([6, 6, 6, 1]))
    trade = next(e for e in events if isinstance(e, CardsTraded))
    assert (trade.cards, trade.value, trade.forced, trade.bonus) == ((1, 2, 3), 4, True, ((3, 2),))
    i = events.index(trade)
    assert events[i + 1 : i + 3] == [ArmiesPlaced(SEAT, ALBERTA, 2), ArmiesPlaced(SEAT, ALASKA, 4)]
    moved = next(e for e in events if isinstance(e, MovedIn))
    assert events.index(moved) > i + 2 and moved.armies == 3
    # Alaska 0 + 4 + 3 = 7; Kamchatka 10 - 3 = 7; Alberta 1 + 2 = 3; Indonesia 1 + 5 = 6
    assert [state.armies[t] for t in (ALASKA, KAMCHATKA, ALBERTA, INDONESIA)] == [7, 7, 3, 6]


def test_version_2_places_elimination_armies_by_the_place_after_the_attack() -> None:
    state, _ = _eliminating(2)
    text = "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\nPLACE 4 Indonesia"
    mail = parse_orders(text, state.board)
    assert validate_mail(state, SEAT, mail) == []
    events = play_turn(state, turn_actions(state, mail.turn_orders), ScriptedDice([6, 6, 6, 1]))
    assert ArmiesPlaced(SEAT, ALBERTA, 2) in events and ArmiesPlaced(SEAT, INDONESIA, 4) in events
    assert [state.armies[t] for t in (ALASKA, KAMCHATKA, ALBERTA, INDONESIA)] == [3, 7, 3, 10]


def test_version_1_reads_a_place_after_an_attack_as_out_of_order() -> None:
    """pbem 95b4065 refused a PLACE below an ATTACK, and counted its armies
    with the turn's (the same two problems as it gave); a version-1 game still
    does."""
    state, _ = _eliminating(1)
    text = "PLACE 5 Indonesia\nATTACK Kamchatka -> Alaska\nPLACE 4 Indonesia"
    problems = validate_mail(state, SEAT, parse_orders(text, state.board))
    assert sorted((p.line, p.message) for p in problems) == [
        (1, "PLACE orders place 9 armies; 5 are due this turn"),
        (3, "PLACE must come before ATTACK and FORTIFY"),
    ]


def test_version_1_has_no_defend_order() -> None:
    state, victim = _facing(V1)
    start_turn(state, victim)
    problems = validate_mail(
        state, victim, parse_orders("PLACE 3 Alaska\nDEFEND WITH 1 IN Alaska", state.board)
    )
    assert [(p.line, p.message) for p in problems] == [(2, defence.NO_DEFEND_IN_V1)]
    with pytest.raises(RulesError, match="rules version 1"):
        defence.set_defence(state, ALASKA, 1)
    assert state.defend_one == []


# ------------------------------------------------------------ destroy missions
def _destroy_race(version: int) -> tuple[GameState, int, int]:
    """3 players, Secret Mission: SEAT (21 territories) must occupy 24, the
    third player (20 territories) must destroy the victim's colour; SEAT takes
    Alaska, the victim's last territory."""
    options = replace(load_preset("secret-mission"), rules_version=version, mission_win="at_once")
    state, victim = _facing(options, alaska=1)
    third = next(s for s in state.order if s not in (SEAT, victim))
    lands = {SEAT: list(range(21, 42)), victim: [ALASKA], third: list(range(1, 21))}
    arrange(state, lands, armies={KAMCHATKA: 10, ALASKA: 1})
    colour = state.players[victim].colour
    destroy = next(
        i for i, m in enumerate(state.board.missions) if m.kind == "destroy" and m.colour == colour
    )
    for seat, mission in ((SEAT, 0), (victim, 2), (third, destroy)):
        state.players[seat].mission = mission
        state.players[seat].mission_fallback = False
    start_turn(state, SEAT)
    state.reinforcements = 0
    return state, victim, third


def test_version_1_destroy_mission_needs_the_holders_own_elimination() -> None:
    """Version 1: the victim eliminated by another player leaves the holder
    needing 24 territories (the fallback); nobody wins."""
    state, victim, third = _destroy_race(1)
    events = attacking.attack(state, KAMCHATKA, ALASKA, ScriptedDice([6, 6, 6, 1]))
    assert state.players[victim].eliminated_by == SEAT
    assert state.players[third].mission_fallback is True
    assert not any(isinstance(e, GameWon) for e in events) and state.winner is None


def test_version_2_destroy_mission_is_complete_whoever_eliminates() -> None:
    """Version 2 (the rulebook): whoever takes the target's last armies
    completes the holder's mission; with mission_win = at_once it wins now."""
    state, victim, third = _destroy_race(2)
    events = attacking.attack(state, KAMCHATKA, ALASKA, ScriptedDice([6, 6, 6, 1]))
    assert state.players[third].mission_fallback is False
    won = [e for e in events if isinstance(e, GameWon)]
    assert [(e.seat, e.reason) for e in won] == [(third, "mission")] and state.winner == third


def test_version_1_destroy_mission_completed_by_its_holder() -> None:
    state, victim, third = _destroy_race(1)
    state.players[SEAT].mission, state.players[third].mission = (
        state.players[third].mission,
        state.players[SEAT].mission,
    )
    events = attacking.attack(state, KAMCHATKA, ALASKA, ScriptedDice([6, 6, 6, 1]))
    assert [(e.seat, e.reason) for e in events if isinstance(e, GameWon)] == [(SEAT, "mission")]
