"""Team games (docs/RULES.md, "Teams"): teams by seat in blocks, the turn order
alternating teams, PLACE on and FORTIFY into a teammate's adjacent territory,
no ATTACK on a teammate, the team's win, a removed player's handover, and a
whole bot game of doubles replayed to the same hash."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import check_text, parse_orders, validate_mail
from pbem.report.teamview import team_lines, won
from pbem.rules import attacking, engine, teams
from pbem.rules.errors import OptionsError, RulesError
from pbem.rules.events import ArmiesPlaced, CardsTaken, Fortified, GameWon, TeamHandover
from pbem.rules.options import Options
from pbem.rules.simulate import play_game
from pbem.rules.state import ENDED
from pbem.rules.teamrules import seats_in_teams
from tests.rules.support import ScriptedDice, arrange, classic, give_cards, new_state, start_turn

DOUBLES = load_preset("doubles")
TRIPLES = load_preset("triples")
ALASKA, NWT, GREENLAND, ALBERTA, ONTARIO, QUEBEC, WUS, EUS, CAM = range(9)
KAMCHATKA = 33


# ------------------------------------------------------------------ formation
def test_the_presets_and_the_checks_of_team_size() -> None:
    assert (DOUBLES.team_size, DOUBLES.min_players, DOUBLES.max_players) == (2, 4, 6)
    assert (TRIPLES.team_size, TRIPLES.min_players, TRIPLES.max_players) == (3, 6, 6)
    with pytest.raises(OptionsError, match="quadruples need 8 players"):
        Options(team_size=4)
    with pytest.raises(OptionsError, match="not goal = mission"):
        Options(team_size=2, goal="mission")
    with pytest.raises(OptionsError, match="a multiple of 2, not 5"):
        DOUBLES.check_players(5)
    with pytest.raises(OptionsError, match="at least two teams: 6 players, not 3"):
        replace(TRIPLES, min_players=2).check_players(3)
    with pytest.raises(OptionsError, match="^triples needs at least two teams: 6 players, not 3$"):
        TRIPLES.check_players(3)  # the team's words, not "these rules need 6 to 6 players"
    assert not any("Win by eliminating every other player" in x for x in DOUBLES.describe())
    assert any("a team wins together" in x for x in DOUBLES.describe())
    DOUBLES.check_players(4)
    DOUBLES.check_players(6)
    TRIPLES.check_players(6)
    assert "team_size" not in Options().to_dict()  # stored options of other games unchanged
    assert DOUBLES.to_dict()["team_size"] == 2


@pytest.mark.parametrize(
    ("options", "players", "expected"),
    [
        (DOUBLES, 4, [0, 0, 1, 1]),
        (DOUBLES, 6, [0, 0, 1, 1, 2, 2]),
        (TRIPLES, 6, [0, 0, 0, 1, 1, 1]),
    ],
)
def test_teams_by_seat_in_blocks(options: Options, players: int, expected: list[int]) -> None:
    state = new_state(players, options)
    assert [teams.team_of(state, s) for s in range(players)] == expected
    assert [teams.team_label(state, t) for t in range(len(set(expected)))][0] == (
        "team A (" + ", ".join(f"p{i}" for i in range(options.team_size)) + ")"
    )
    # the turn order alternates teams: no two players of a team in a row
    order = state.order
    team_order = [expected[s] for s in order]
    assert all(a != b for a, b in zip(team_order, team_order[1:], strict=False))


def test_interleave_keeps_the_drawn_order_of_teams_and_of_players() -> None:
    assert teams.interleave([3, 0, 2, 1], 2) == [3, 0, 2, 1]
    assert teams.interleave([0, 1, 2, 3], 2) == [0, 2, 1, 3]
    assert teams.interleave([5, 4, 0, 1, 2, 3], 2) == [5, 0, 2, 4, 1, 3]
    assert teams.interleave([5, 4, 0, 1, 2, 3], 3) == [5, 0, 4, 1, 3, 2]
    assert teams.interleave([2, 0, 1], 0) == [2, 0, 1]


def test_teams_chosen_by_the_gm_seat_the_players_team_after_team() -> None:
    names = ["alice", "bob", "carol", "dave"]
    assert seats_in_teams(names, "alice, carol / bob,dave", 2) == [0, 2, 1, 3]
    six = ["a", "b", "c", "d", "e", "f"]
    assert seats_in_teams(six, "f,a,c / b,d,e", 3) == [5, 0, 2, 1, 3, 4]
    assert seats_in_teams(six, "a,f / b,e / c,d", 2) == [0, 5, 1, 4, 2, 3]
    with pytest.raises(OptionsError, match="every team has 2 players; alice, carol, bob has 3"):
        seats_in_teams(names, "alice,carol,bob / dave", 2)
    with pytest.raises(OptionsError, match="erin is not a player"):
        seats_in_teams(names, "alice,erin / bob,dave", 2)
    with pytest.raises(OptionsError, match="alice is on two teams"):
        seats_in_teams(names, "alice,bob / alice,dave", 2)
    with pytest.raises(OptionsError, match="needs a team game"):
        seats_in_teams(names, "alice,bob / carol,dave", 0)


# ---------------------------------------------------------------- one turn
def _doubles_turn():
    """p0 (team A) to move with Alaska, Northwest Territory, Alberta; its teammate
    p1 holds Greenland, Ontario, Quebec; p2 (team B) the United States and
    Central America; p3 (team B) every other territory. 3 armies due (3 lands)."""
    state = new_state(4, DOUBLES)
    arrange(
        state,
        {0: [ALASKA, NWT, ALBERTA], 1: [GREENLAND, ONTARIO, QUEBEC], 2: [WUS, EUS, CAM]},
        {ALBERTA: 4, ONTARIO: 2, WUS: 2, KAMCHATKA: 3},
    )
    start_turn(state, 0)
    return state


def test_a_turn_placing_on_a_teammate_and_fortifying_into_a_teammates_adjacent_land() -> None:
    state = _doubles_turn()
    assert (state.current, state.reinforcements) == (0, 3)
    assert engine.place(state, ONTARIO, 2) == [ArmiesPlaced(0, ONTARIO, 2)]
    assert engine.place(state, ALBERTA, 1) == [ArmiesPlaced(0, ALBERTA, 1)]
    assert (state.armies[ONTARIO], state.armies[ALBERTA], state.owner[ONTARIO]) == (4, 5, 1)
    # Alberta (5) -> Ontario (4, p1's): adjacent, so one move of 3
    assert engine.fortify(state, ALBERTA, ONTARIO, 3) == [Fortified(0, ALBERTA, ONTARIO, 3)]
    assert (state.armies[ALBERTA], state.armies[ONTARIO], state.owner[ONTARIO]) == (2, 7, 1)
    assert state.fortifies_this_turn == 1


def test_the_refusals_attack_on_a_teammate_and_fortify_through_or_out_of_one() -> None:
    state = _doubles_turn()
    engine.place(state, ALBERTA, 3)
    with pytest.raises(RulesError) as err:
        attacking.attack(state, ALBERTA, ONTARIO, ScriptedDice([6] * 5))
    assert err.value.message == (
        "Ontario is your teammate p1's: teammates do not attack each other"
    )
    with pytest.raises(RulesError) as err:  # NWT -> Quebec: through Ontario, not adjacent
        engine.fortify(state, ALBERTA, QUEBEC, 1)
    assert (err.value.rule, err.value.message) == (
        "adjacency",
        "Alberta and Quebec are not adjacent",
    )
    with pytest.raises(RulesError) as err:
        engine.fortify(state, ONTARIO, ALBERTA, 1)
    assert err.value.message == (
        "Ontario is your teammate's: you may fortify into a teammate's territory, not out of it"
    )
    with pytest.raises(RulesError) as err:  # into an opponent's territory
        engine.fortify(state, ALBERTA, WUS, 1)
    assert err.value.message == (
        "both territories must be yours, or Western United States a teammate's next to Alberta"
    )
    # a chained fortify goes through the player's own territories only
    chained = _doubles_turn()
    chained.options = replace(DOUBLES, fortify="chained")
    engine.place(chained, ALBERTA, 3)
    with pytest.raises(RulesError) as err:
        engine.fortify(chained, ALBERTA, QUEBEC, 1)
    assert err.value.rule == "adjacency"


def test_the_order_check_says_so_in_the_players_words() -> None:
    state = _doubles_turn()
    text = "PLACE 2 Ontario, 1 Alberta\nATTACK Alberta -> Ontario\nFORTIFY 1 Alberta -> Quebec\n"
    problems = validate_mail(state, 0, parse_orders(text, classic()))
    assert [(p.line, p.message) for p in problems] == [
        (2, "Ontario is your teammate p1's: teammates do not attack each other"),
        (
            3,
            "Quebec is your teammate's and not next to Alberta: a move into a teammate's "
            "territory goes to an adjacent one, never through others",
        ),
    ]
    text = "PLACE 2 Ontario, 1 Alberta\nFORTIFY 1 Ontario -> Alberta\n"
    problems = validate_mail(state, 0, parse_orders(text, classic()))
    assert [(p.line, p.message) for p in problems] == [
        (2, "Ontario is not yours; it is p1's"),
    ]
    good = "PLACE 2 Ontario, 1 Alberta\nFORTIFY 3 Alberta -> Ontario\n"
    assert validate_mail(state, 0, parse_orders(good, classic())) == []
    report = check_text(good, classic(), state, 0)  # CHECK: the forecast of the turn
    assert report.ok, report.report
    assert "Ontario" in report.report


# ------------------------------------------------------- removal and the win
def test_a_removed_players_territories_and_cards_go_to_the_first_surviving_teammate() -> None:
    state = _doubles_turn()
    give_cards(state, 1, [0, 1])
    p1_lands = state.territories_of(1)
    p0_before = state.territory_count(0)
    events = engine.remove_player(state, 1, "resigned")
    assert events == [TeamHandover(1, 0, 3, 2), CardsTaken(0, (0, 1), 1)]
    assert all(state.owner[t] == 0 for t in p1_lands)
    assert state.territory_count(0) == p0_before + 3 == 6
    assert (state.armies[ONTARIO], state.players[0].cards, state.players[1].cards) == (
        2,
        [0, 1],
        [],
    )
    assert not state.players[1].alive and state.neutral_seat is None  # no neutral made
    assert state.phase != ENDED and state.current == 0


def test_without_a_surviving_teammate_a_removed_player_goes_neutral_as_before() -> None:
    state = _doubles_turn()
    engine.remove_player(state, 1, "resigned")
    events = engine.remove_player(state, 0, "resigned")  # team A gone: team B wins
    neutral = state.neutral_seat
    assert neutral == 4 and state.owner[ALBERTA] == neutral
    assert events[-1] == GameWon(2, "team", "team B (p2, p3)")


def test_the_team_wins_together_with_a_player_out_earlier() -> None:
    """p1 (team A) and p3 (team B) are out; p2 holds Kamchatka alone; p0 takes it."""
    state = new_state(4, DOUBLES)
    arrange(state, {1: [], 2: [KAMCHATKA], 3: []}, {ALASKA: 6})
    assert [p.alive for p in state.players] == [True, False, True, False]
    start_turn(state, 0)
    engine.place(state, ALASKA, state.reinforcements)
    events = attacking.attack(state, ALASKA, KAMCHATKA, ScriptedDice([6, 6, 6, 1]))
    assert [e for e in events if isinstance(e, GameWon)] == [GameWon(0, "team", "team A (p0, p1)")]
    assert (state.winner, state.win_reason, state.phase) == (0, "team", ENDED)
    assert [won(state, s) for s in range(4)] == [True, True, False, False]
    assert team_lines(state)[1] == "Team B (p2 (out), p3 (out)): 0 territories, 0 armies - out"


# ------------------------------------------------------------- whole games
def test_a_seeded_bot_doubles_game_ends_with_a_team_and_replays_to_the_same_hash() -> None:
    first = play_game(classic(), DOUBLES, 4, 3, "greedy", keep_hashes=True)
    again = play_game(classic(), DOUBLES, 4, 3, "greedy", keep_hashes=True)
    assert (first.capped, first.reason) == (False, "team")
    assert (first.winner, first.turns) == (again.winner, again.turns)
    assert first.hashes == again.hashes and first.final_hash == again.final_hash


def test_a_record_of_a_doubles_game_with_a_resignation_replays_and_verifies() -> None:
    """Greedy bots, four seats; after turn 6 dave (team B) resigns: his territories
    and cards go to carol. The record is written, read back and verified step by step."""
    from pbem.orderlog.records import read_record, verify_record, write_record
    from tests.orderlog.test_records import CLASSIC, SECRET, play_record

    four = [("alice", "red"), ("bob", "blue"), ("carol", "yellow"), ("dave", "green")]
    record = play_record("classic", CLASSIC, four, resign_at=6, options=DOUBLES)
    text = write_record(record)
    assert '\\"team_size\\": 2' in text
    again = read_record(text)
    assert again.options.team_size == 2 and [p[0] for p in again.players] == [p[0] for p in four]
    assert [(e.kind, e.seat, e.turn, e.text) for e in record.entries if e.kind == "command"] == [
        ("command", 3, 7, "RESIGN")
    ]
    report = verify_record(again, SECRET.hex())
    assert (report.ok, report.steps) == (True, 46), report.message
    assert record.result == "carol"  # team B won: carol, its survivor, is named
    assert record.hashes[-1] == "e5262120d305b28c12a04f079231b222107f759be1225395eb4420f3ad67be79"
