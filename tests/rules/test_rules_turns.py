"""Hand-computed turns of the classic rules: reinforcements, cards, forced trades,
eliminations, conquest and fortify, with dice chosen by the test.

Positions are built from a real set-up whose owners, armies and cards the test
then edits; the dice come from ScriptedDice (this tests the engine alone).
Classic map indices used below: North America 0-8, South America 9-12,
Europe 13-19, Africa 20-25, Asia 26-37, Australia 38-41; wilds are 42 and 43.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.rules import attacking, engine
from pbem.rules.actions import Amount, Attack, Fortify, Place
from pbem.rules.cards import set_value
from pbem.rules.errors import RulesError
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    Fortified,
    MovedIn,
    PlayerEliminated,
    TurnBegan,
)
from pbem.rules.state import ATTACK, FORTIFY, REINFORCE
from pbem.rules.turnplan import play_turn
from tests.rules.support import (
    ScriptedDice,
    arrange,
    classic,
    full_deck_ok,
    give_cards,
    new_state,
    start_turn,
)

CLASSIC = load_preset("classic")
NA = list(range(0, 9))
SA = list(range(9, 13))
EU = list(range(13, 20))
AF = list(range(20, 26))
AS = list(range(26, 38))
AU = list(range(38, 42))
WILD_1, WILD_2 = 42, 43
# Classic card designs used below (checked in test_card_designs_used_here).
INF = [0, 3, 6]  # Alaska, Alberta, Western United States
CAV = [1, 4, 7]  # Northwest Territory, Ontario, Eastern United States
ART = [2, 5, 8]  # Greenland, Quebec, Central America
SEAT = 0


def no_whole_continent(count: int) -> list[int]:
    """``count`` territories that complete no continent: the first of each is left out."""
    firsts = {c.territories[0] for c in classic().continents}
    return [t for t in range(42) if t not in firsts][:count]


def turn_of(lands: list[int], options=CLASSIC, players: int = 3):
    """A state where SEAT holds ``lands`` and its turn has just begun."""
    state = new_state(players, options)
    arrange(state, {SEAT: lands})
    events = start_turn(state, SEAT)
    return state, events


def test_card_designs_used_here() -> None:
    board = classic()
    assert [board.card_design(c) for c in INF] == ["infantry"] * 3
    assert [board.card_design(c) for c in CAV] == ["cavalry"] * 3
    assert [board.card_design(c) for c in ART] == ["artillery"] * 3
    assert board.card_design(WILD_1) == board.card_design(WILD_2) == "wild"
    assert board.n_cards == 44


# ------------------------------------------------------------------ reinforcements
@pytest.mark.parametrize(
    ("count", "expected"), [(9, 3), (11, 3), (12, 4), (14, 4), (17, 5), (1, 3), (2, 3), (41, 13)]
)
def test_reinforcements_by_territory_count(count: int, expected: int) -> None:
    lands = no_whole_continent(count) if count <= 36 else list(range(count))
    state, events = turn_of(lands)
    began = events[-1]
    assert isinstance(began, TurnBegan)
    assert (began.seat, began.territories, began.base) == (SEAT, count, expected)
    if count <= 36:
        assert (began.continents, began.bonus) == ((), 0)
        assert state.reinforcements == expected


@pytest.mark.parametrize(
    ("lands", "continents", "total"),
    [
        (AU + SA + [0], (1, 5), 3 + 2 + 2),  # 9 territories
        (NA, (0,), 3 + 5),
        (EU + AF, (2, 3), 4 + 5 + 3),  # 13 territories
        (AS, (4,), 4 + 7),
        (AS + AU + [0], (4, 5), 5 + 7 + 2),  # 17 territories
        (NA + SA + EU + AF + AU + AS[:-1], (0, 1, 2, 3, 5), 13 + 5 + 2 + 5 + 3 + 2),
    ],
)
def test_continent_bonuses(lands: list[int], continents: tuple[int, ...], total: int) -> None:
    state, events = turn_of(lands)
    began = events[-1]
    assert began.continents == continents
    assert state.reinforcements == total == began.base + began.bonus


# --------------------------------------------------------------------- card values
@pytest.mark.parametrize(
    ("number", "value"), list(zip(range(1, 11), (4, 6, 8, 10, 12, 15, 20, 25, 30, 35), strict=True))
)
def test_escalating_set_values_through_a_trade(number: int, value: int) -> None:
    state, _ = turn_of(AU)  # Australia: 3 + 2
    state.sets_traded = number - 1
    give_cards(state, SEAT, INF)
    events = engine.trade(state, tuple(INF))
    traded = events[0]
    assert isinstance(traded, CardsTraded)
    assert (traded.value, traded.set_number, traded.bonus) == (value, number, ())
    assert state.reinforcements == 5 + value
    assert state.sets_traded == number


def test_set_values_of_every_mode() -> None:
    linear = replace(CLASSIC, card_values="linear")
    fixed = replace(CLASSIC, card_values="fixed")
    assert [set_value(linear, n, []) for n in range(1, 8)] == [4, 5, 6, 7, 8, 9, 10]
    i, c, a, w = "infantry", "cavalry", "artillery", "wild"
    mixed = replace(fixed, fixed_mixed_set=True)
    for n in (1, 7):  # fixed values do not depend on how many sets were traded
        assert set_value(fixed, n, [i, i, i]) == 4
        assert set_value(fixed, n, [c, c, c]) == 6
        assert set_value(fixed, n, [a, a, a]) == 8
        assert set_value(mixed, n, [i, c, a]) == 10  # only with fixed_mixed_set
    # a wild stands for any one type: the one that makes the set worth most
    assert set_value(fixed, 1, [i, i, w]) == 4
    assert set_value(fixed, 1, [a, a, w]) == 8
    assert set_value(fixed, 1, [i, w, w]) == 4  # the wilds stand for infantry
    assert set_value(mixed, 1, [i, c, w]) == 10
    assert set_value(mixed, 1, [i, w, w]) == 10


# ------------------------------------------------------------------ territory bonus
def test_territory_bonus_once_per_turn() -> None:
    # SEAT owns Alaska (0) and Alberta (3) and Ontario (4); not Western US (6)
    state, _ = turn_of([0, 3, 4] + AU)
    give_cards(state, SEAT, [0, 3, 6, 1, 4, 7])
    events = engine.trade(state, (0, 3, 6))
    assert events[0].bonus == ((0, 2),)  # the first owned card listed; once only
    assert events[1] == ArmiesPlaced(SEAT, 0, 2)
    assert state.armies[0] == 3 and state.armies[3] == 1
    events = engine.trade(state, (1, 4, 7))  # Ontario is owned, but the bonus is taken
    assert events[0].bonus == ()
    assert len(events) == 1
    assert state.reinforcements == 5 + 4 + 6


def test_territory_bonus_per_card() -> None:
    european = load_preset("european")  # fixed values, +2 per owned card
    state, _ = turn_of([0, 3, 4] + AU, european)
    give_cards(state, SEAT, [0, 3, 6, 1, 4, 7])
    events = engine.trade(state, (0, 3, 6))
    assert events[0].value == 4  # three infantry, fixed
    assert events[0].bonus == ((0, 2), (3, 2))
    assert events[1:] == [ArmiesPlaced(SEAT, 0, 2), ArmiesPlaced(SEAT, 3, 2)]
    events = engine.trade(state, (1, 4, 7))  # three cavalry: 6, Ontario +2 again
    assert (events[0].value, events[0].bonus) == (6, ((4, 2),))
    assert state.armies[0] == state.armies[3] == state.armies[4] == 3
    assert state.reinforcements == 5 + 4 + 6


# -------------------------------------------------------------------- forced trades
def test_five_cards_force_a_trade_before_attacking_or_ending() -> None:
    state = new_state(3)
    arrange(state, {SEAT: AU + [33]}, armies={33: 5})  # Kamchatka borders Alaska (0)
    give_cards(state, SEAT, [0, 3, 1, 4, 2])
    events = start_turn(state, SEAT)
    assert events[-1].must_trade is True
    engine.place(state, 33, 5)  # placing first is allowed
    before = state.canonical_json()
    with pytest.raises(RulesError) as err:
        attacking.attack(state, 33, 0, ScriptedDice())
    assert err.value.rule == "forced trade"
    with pytest.raises(RulesError) as err:
        engine.end_turn(state, ScriptedDice())
    assert err.value.rule == "forced trade"
    assert state.canonical_json() == before  # refused steps change nothing
    engine.trade(state, (0, 1, 2))
    assert state.must_trade is False
    engine.place(state, 33, 4)
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    assert events[0].conquered


def test_four_cards_force_nothing() -> None:
    state = new_state(3)
    arrange(state, {SEAT: AU})
    give_cards(state, SEAT, [0, 3, 6, 1])
    events = start_turn(state, SEAT)
    assert events[-1].must_trade is False
    engine.place(state, 38, 5)
    assert engine.end_turn(state, ScriptedDice())[-1].seat != SEAT


def test_a_second_set_is_allowed_and_a_third_refused() -> None:
    state, _ = turn_of(AU)
    give_cards(state, SEAT, INF + CAV + ART)
    engine.trade(state, tuple(INF))
    engine.trade(state, tuple(CAV))
    before = state.canonical_json()
    with pytest.raises(RulesError) as err:
        engine.trade(state, tuple(ART))
    assert err.value.rule == "trade"
    assert state.canonical_json() == before
    assert state.reinforcements == 5 + 4 + 6
    assert sorted(state.players[SEAT].cards) == ART


def test_not_a_set_and_not_held_are_refused() -> None:
    state, _ = turn_of(AU)
    give_cards(state, SEAT, [0, 3, 1, 4])
    with pytest.raises(RulesError) as err:
        engine.trade(state, (0, 3, 1))  # two infantry and a cavalry
    assert err.value.rule == "card set"
    with pytest.raises(RulesError) as err:
        engine.trade(state, (0, 3, 6))  # 6 is not in the hand
    assert err.value.rule == "trade"
    assert state.sets_traded == 0 and len(state.players[SEAT].cards) == 4


# ------------------------------------------------------------ where traded cards go
def test_traded_cards_go_to_the_bottom_of_the_pile() -> None:
    state, _ = turn_of(AU)
    give_cards(state, SEAT, [0, 4, WILD_1])
    top = list(state.deck)
    engine.trade(state, (WILD_1, 0, 4))
    assert state.deck == top + [WILD_1, 0, 4]
    assert state.discard == []
    assert full_deck_ok(state)


def test_discards_are_reshuffled_when_the_pile_runs_out() -> None:
    options = replace(CLASSIC, traded_cards="discard")
    state = new_state(3, options)
    other = state.order[1] if state.order[0] == SEAT else state.order[0]
    arrange(state, {SEAT: AU + [33]}, armies={33: 4})
    give_cards(state, SEAT, [0, 3, 6])
    give_cards(state, other, list(state.deck))  # the pile is empty
    start_turn(state, SEAT)
    engine.trade(state, (0, 3, 6))
    assert state.discard == [0, 3, 6] and state.deck == []
    engine.place(state, 38, 5 + 4)
    attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    attacking.move_in(state, 3)
    rng = ScriptedDice()
    events = engine.end_turn(state, rng)
    assert rng.shuffles == 1  # ScriptedDice reverses: the pile becomes 6, 3, 0
    assert events[0] == DeckShuffled(3, reshuffle=True)
    assert events[1] == CardDrawn(SEAT, 6)
    assert state.deck == [3, 0] and state.discard == []
    assert state.players[SEAT].cards == [6]
    assert full_deck_ok(state)


def test_a_card_is_drawn_only_after_a_conquest() -> None:
    state = new_state(3)
    arrange(state, {SEAT: AU + [33]}, armies={33: 4})
    start_turn(state, SEAT)
    engine.place(state, 38, 5)
    attacking.attack(state, 33, 0, ScriptedDice([1, 1, 1, 6]), max_rolls=1)  # lost: 4 -> 3
    top = state.deck[0]
    events = engine.end_turn(state, ScriptedDice())
    assert not any(isinstance(e, CardDrawn) for e in events)
    assert state.players[SEAT].cards == [] and state.deck[0] == top


# ------------------------------------------------------------------- elimination
def _elimination(attacker_cards: list[int], victim_cards: list[int]):
    """SEAT attacks Alaska (0), the last territory of VICTIM, from Kamchatka (33)."""
    state = new_state(3)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [33], victim: [0]}, armies={33: 10})
    give_cards(state, SEAT, attacker_cards)
    give_cards(state, victim, victim_cards)
    start_turn(state, SEAT)
    return state, victim


def test_elimination_with_six_cards_trades_at_once_and_the_player_places() -> None:
    # none of the cards 1..8 is SEAT's: no territory bonus, the first set in
    # sorted order is traded: (1, 2, 3) = cavalry, artillery, infantry.
    # Issue 14: the 4 armies are the player's to place (a PLACE after the
    # ATTACK), no longer put on the territory just taken.
    state, victim = _elimination([1, 3, 8], [2, 5, 6])
    engine.place(state, 38, 5)
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    kinds = [type(e) for e in events]
    assert kinds == [AttackResolved, PlayerEliminated, CardsTaken, CardsTraded]
    assert events[1] == PlayerEliminated(victim, SEAT, 3)
    assert events[2] == CardsTaken(SEAT, (2, 5, 6), victim)
    assert events[3] == CardsTraded(SEAT, (1, 2, 3), 4, 1, (), forced=True)
    assert sorted(state.players[SEAT].cards) == [5, 6, 8]
    assert state.armies[0] == 0 and state.reinforcements == 4
    assert state.pending_move == (33, 0, 3)
    attacking.move_in(state, 3)
    assert state.armies[0] == 3 and state.armies[33] == 7
    assert engine.place(state, 38, 4) == [ArmiesPlaced(SEAT, 38, 4)]
    assert state.reinforcements == 0
    assert full_deck_ok(state)


def test_elimination_with_eight_cards_trades_twice_down_to_two() -> None:
    state, _ = _elimination([1, 3, 8, 4], [2, 5, 6, 7])
    engine.place(state, 38, 5)
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    trades = [e for e in events if isinstance(e, CardsTraded)]
    # hand 1..8: first set (1, 2, 3) for 4, then of 4..8 the first set (4, 5, 6) for 6
    assert [(t.cards, t.value) for t in trades] == [((1, 2, 3), 4), ((4, 5, 6), 6)]
    assert sorted(state.players[SEAT].cards) == [7, 8]
    assert state.reinforcements == 10 and state.armies[0] == 0
    attacking.move_in(state, 3)
    # no PLACE for them: before the turn goes on they are placed on the
    # territory taken last, 3 + 10 = 13
    events = engine.end_turn(state, ScriptedDice())
    assert events[0] == ArmiesPlaced(SEAT, 0, 10) and state.armies[0] == 13


def test_elimination_with_five_cards_waits_for_the_next_turn() -> None:
    state, victim = _elimination([1, 3], [2, 5, 6])
    engine.place(state, 38, 5)
    events = attacking.attack(state, 33, 0, ScriptedDice([6, 6, 6, 1]))
    assert not any(isinstance(e, CardsTraded) for e in events)
    assert len(state.players[SEAT].cards) == 5
    attacking.move_in(state, 3)
    events = engine.end_turn(state, ScriptedDice())
    assert len(state.players[SEAT].cards) == 6  # the card drawn forces nothing now
    assert isinstance(events[-1], TurnBegan) and events[-1].seat != SEAT
    events = start_turn(state, SEAT)
    assert events[-1].must_trade is True


# ---------------------------------------------------------------- attack and dice
def _attack_position(source_armies: int, target_armies: int, options=CLASSIC):
    """SEAT's Kamchatka (33) faces Alaska (0); SEAT has placed everything."""
    state = new_state(3, options)
    arrange(state, {SEAT: AU + [33]}, armies={33: source_armies, 0: target_armies})
    start_turn(state, SEAT)
    engine.place(state, 38, state.reinforcements)
    return state


def test_ties_go_to_the_defender_and_the_last_roll_sets_the_minimum() -> None:
    state = _attack_position(4, 2)
    # roll 1: 3 v 2, 6 6 1 against 6 6: two ties, attacker loses 2 (4 -> 2)
    # roll 2: 1 v 2, 6 against 5 5: defender loses 1 (2 -> 1)
    # roll 3: 1 v 1, 2 against 1: conquered with one die
    rng = ScriptedDice([6, 1, 6, 6, 6] + [6, 5, 5] + [2, 1])
    events = attacking.attack(state, 33, 0, rng)
    result = events[0]
    assert rng.requests == [5, 3, 2]
    assert [(r.attacker, r.defender) for r in result.rolls] == [
        ((6, 6, 1), (6, 6)),
        ((6,), (5, 5)),
        ((2,), (1,)),
    ]
    assert [(r.attacker_losses, r.defender_losses) for r in result.rolls] == [
        (2, 0),
        (0, 1),
        (0, 1),
    ]
    assert (result.conquered, result.attacker_left, result.defender_left) == (True, 2, 0)
    assert state.pending_move == (33, 0, 1)
    with pytest.raises(RulesError):
        attacking.move_in(state, 2)  # one army must stay behind
    assert attacking.move_in(state, 1) == [MovedIn(SEAT, 33, 0, 1)]
    assert state.owner[0] == SEAT and state.armies[0] == 1 and state.armies[33] == 1


@pytest.mark.parametrize("move_in", ["dice", "survivors"])
@pytest.mark.parametrize(
    ("armies", "dice", "minimum"), [(10, 3, 3), (3, 3, 2), (10, 2, 2), (10, 1, 1)]
)
def test_minimum_move_in(move_in: str, armies: int, dice: int, minimum: int) -> None:
    state = _attack_position(armies, 1, replace(CLASSIC, move_in=move_in))
    rolled = min(dice, armies - 1)
    attacking.attack(state, 33, 0, ScriptedDice([6] * rolled + [1]), dice=dice)
    assert state.pending_move == (33, 0, minimum)
    with pytest.raises(RulesError) as err:
        attacking.move_in(state, minimum - 1)
    assert err.value.rule == "move in"
    with pytest.raises(RulesError):
        engine.end_turn(state, ScriptedDice())  # the move comes first
    attacking.move_in(state, minimum)
    assert (state.armies[33], state.armies[0]) == (armies - minimum, minimum)


def test_move_amounts_are_clamped_to_the_minimum_and_to_all_but_one() -> None:
    state = _attack_position(10, 1)
    # Kamchatka (10) takes Alaska with 3 dice; Alaska (3) takes Northwest Territory with 2
    rng = ScriptedDice([6, 6, 6, 1] + [6, 6, 1])
    assert state.owner[1] != SEAT
    events = play_turn(
        state,
        [Attack(33, 0, move=Amount("n", 1)), Attack(0, 1, move=Amount("n", 50))],
        rng,
    )
    moves = [e for e in events if isinstance(e, MovedIn)]
    assert moves == [MovedIn(SEAT, 33, 0, 3, asked=1), MovedIn(SEAT, 0, 1, 2, asked=50)]


@pytest.mark.parametrize(
    ("source", "target", "att", "dfn"),
    [(2, 1, 1, 1), (3, 1, 2, 1), (4, 1, 3, 1), (3, 2, 2, 2), (20, 2, 3, 2), (20, 9, 3, 2)],
)
def test_dice_limits(source: int, target: int, att: int, dfn: int) -> None:
    state = _attack_position(source, target)
    rng = ScriptedDice([1] * (att + dfn))  # every comparison tied: the attacker loses
    events = attacking.attack(state, 33, 0, rng, max_rolls=1)
    assert rng.requests == [att + dfn]
    roll = events[0].rolls[0]
    assert (len(roll.attacker), len(roll.defender)) == (att, dfn)
    assert roll.attacker_losses == min(att, dfn)
    # one army left ends the attack whatever else was asked
    assert events[0].stop == ("exhausted" if source - min(att, dfn) < 2 else "max_rolls")


def test_refused_attacks_change_nothing() -> None:
    state = _attack_position(1, 1)
    state.armies[33] = 1
    state.phase = REINFORCE
    before = state.canonical_json()
    for source, target, dice, rule in [
        (33, 0, 3, "attack"),  # one army
        (38, 33, 3, "attack"),  # own target
        (38, 0, 3, "adjacency"),
    ]:
        with pytest.raises(RulesError) as err:
            attacking.attack(state, source, target, ScriptedDice(), dice=dice)
        assert err.value.rule == rule
    state.armies[33] = 5
    for dice in (0, 4):
        with pytest.raises(RulesError):
            attacking.attack(state, 33, 0, ScriptedDice(), dice=dice)
    state.armies[33] = 1
    assert state.canonical_json() == before
    assert state.phase == REINFORCE  # a refused attack does not close the trading phase


def test_until_left_stops_before_a_roll() -> None:
    state = _attack_position(6, 5)
    rng = ScriptedDice([1] * 25)
    events = attacking.attack(state, 33, 0, rng, until_left=3)
    # 6 -> 4 (3 v 2, two ties), then 4 has more than 3 so roll again: 4 -> 2
    assert [r.attacker_losses for r in events[0].rolls] == [2, 2]
    assert (events[0].attacker_left, events[0].stop) == (2, "until_left")
    assert state.phase == ATTACK


# ------------------------------------------------------------------------ fortify
def test_fortify_leaves_one_army_and_is_adjacent_and_once() -> None:
    state = _attack_position(6, 3)
    with pytest.raises(RulesError) as err:
        engine.fortify(state, 33, 38, 1)  # Kamchatka - Indonesia: not adjacent
    assert err.value.rule == "adjacency"
    with pytest.raises(RulesError) as err:
        engine.fortify(state, 38, 39, state.armies[38])
    assert "one army must stay behind" in err.value.message
    armies = state.armies[38]
    assert engine.fortify(state, 38, 39, armies - 1) == [Fortified(SEAT, 38, 39, armies - 1)]
    assert (state.armies[38], state.armies[39], state.phase) == (1, armies, FORTIFY)
    with pytest.raises(RulesError) as err:
        engine.fortify(state, 39, 40, 1)
    assert "only one" in err.value.message
    with pytest.raises(RulesError):
        attacking.attack(state, 33, 0, ScriptedDice())  # no attacks after fortifying


def test_fortify_all_moves_all_but_one() -> None:
    state = _attack_position(6, 3)
    state.armies[40] = 7
    events = play_turn(state, [Fortify(40, 41, Amount("all"))], ScriptedDice())
    assert events[0] == Fortified(SEAT, 40, 41, 6)
    assert (state.armies[40], state.armies[41]) == (1, 7)


def test_placing_needs_the_exact_armies_due() -> None:
    state, _ = turn_of(AU + [33])
    assert state.reinforcements == 5
    with pytest.raises(RulesError):
        engine.place(state, 38, 6)
    with pytest.raises(RulesError):
        engine.place(state, 0, 1)  # not SEAT's
    engine.place(state, 38, 4)
    with pytest.raises(RulesError) as err:
        engine.end_turn(state, ScriptedDice())
    assert err.value.rule == "placement"
    events = play_turn(state, [Place(((1, 39),))], ScriptedDice())
    assert events[0] == ArmiesPlaced(SEAT, 39, 1)
    assert state.current != SEAT


def test_territory_numbers_off_the_map_are_refused() -> None:
    state, _ = turn_of(AU + [33])
    for step in (
        lambda: engine.place(state, -1, 1),  # would be Western Australia from the end
        lambda: engine.place(state, 42, 1),
        lambda: attacking.attack(state, 33, -42, ScriptedDice()),
        lambda: engine.fortify(state, 38, 99, 1),
    ):
        if state.reinforcements == 0:
            before = state.canonical_json()
        with pytest.raises(RulesError) as err:
            step()
        assert "no territory number" in err.value.message
        if state.reinforcements == 5:
            engine.place(state, 38, 5)  # attack and fortify come after placing
            before = state.canonical_json()
    assert state.canonical_json() == before


def test_state_round_trips_through_its_canonical_form() -> None:
    state, _ = turn_of(AU + [33])
    give_cards(state, SEAT, [0, 1])
    copy = type(state).from_dict(state.to_dict(), state.board, state.options)
    assert copy.canonical_json() == state.canonical_json()
    assert copy.state_hash() == state.state_hash() and len(state.state_hash()) == 64
