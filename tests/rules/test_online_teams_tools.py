"""Team games in the tools: `pbem simulate` names a team's win by the team (the
game-over mail's words), `pbem maps balance` tallies wins by team as well as by seat."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.balance import Balance, GameOutcome, balance, wilson
from pbem.maps.presets import load_preset
from pbem.rules.simulate import play_game, summarise
from pbem.rules.state import GameState
from pbem.rules.teams import team_label, winner_words
from tests.rules.support import classic

DOUBLES = load_preset("doubles")


# ------------------------------------------------------------------ simulate
def test_a_simulated_teams_win_is_named_by_the_team_as_the_game_over_says() -> None:
    result = play_game(classic(), DOUBLES, 4, 3, "greedy")
    assert (result.reason, result.winner, result.turns) == ("team", "team B (p3, p4)", 36)


def test_winner_words_are_the_players_name_without_teams() -> None:
    result = play_game(classic(), load_preset("classic"), 3, 3, "greedy")
    assert (result.reason, result.winner, result.turns) == ("domination", "p1", 79)


def test_the_summary_counts_wins_by_team() -> None:
    outcomes = [
        (1, "team A (p1, p2)", 70, False, "h1", "team"),
        (2, "team B (p3, p4)", 80, False, "h2", "team"),
        (3, "team A (p1, p2)", 60, False, "h3", "team"),
    ]
    summary = summarise(outcomes, 1.0, 4, "greedy", 1, 1)
    assert summary.winners == {"team A (p1, p2)": 2, "team B (p3, p4)": 1}
    assert "winners: team A (p1, p2) 2, team B (p3, p4) 1" in summary.describe()


def test_pbem_simulate_names_the_teams() -> None:
    out = CliRunner().invoke(
        app,
        [
            "simulate",
            "--players",
            "4",
            "--games",
            "4",
            "--bot",
            "greedy",
            "--workers",
            "1",
            "-o",
            "team_size=2",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    figures = json.loads(out.output)
    assert figures["reasons"] == {"team": 4}
    assert set(figures["winners"]) <= {"team A (p1, p2)", "team B (p3, p4)"}
    assert sum(figures["winners"].values()) == 4


def test_the_words_are_the_team_label_on_a_teams_win() -> None:
    state: GameState = play_game_state()
    assert state.winner is not None
    team = state.winner // 2
    assert winner_words(state) == team_label(state, team)


def play_game_state() -> GameState:
    """A doubles game of greedy bots played to its end (seed 3)."""
    from pbem.rules.bots import make_bot
    from pbem.rules.dice import make_stream
    from pbem.rules.simulate import game_secret, setup_game
    from pbem.rules.state import ENDED
    from pbem.rules.turnplan import play_turn

    bots = [make_bot("greedy", 30 + seat) for seat in range(4)]
    state = setup_game(classic(), DOUBLES, 4, 3, bots)
    while state.phase != ENDED:
        rng = make_stream("pbem-dice-v1", game_secret(3), state.game, f"turn:{state.turn}")
        play_turn(state, bots[state.current].plan_turn(state), rng)
    return state


# ------------------------------------------------------------------ balance
def test_balance_tallies_wins_by_team_of_turn_order_places() -> None:
    # 4 players in doubles: teams by turn order alternate, team 1 = places 1 and 3.
    outcomes = [
        GameOutcome(1, 0, 40, 0),
        GameOutcome(2, 2, 60, 0),
        GameOutcome(3, 1, 50, 1),
        GameOutcome(4, None, 3001, None),
    ]
    result = Balance("Test Map", 4, "greedy", 1, outcomes, team_size=2)
    assert result.teams == 2
    assert result.wins() == [1, 1, 1, 0]
    assert result.team_wins() == [2, 1]
    low, high = wilson(2, 3)
    assert result.team_rows()[0] == (1, 2, 2 / 3, low, high)
    lines = result.describe().splitlines()
    assert "team (turn order; teams of 2, a team's win counted once)" in lines
    assert f"   1  1, 3             2    66.7%   {low:6.1%} .. {high:6.1%}" in lines
    assert lines[-1] == "teams: every interval holds the fair share 50.0%"
    teams = result.to_json()["teams"]
    assert [(t["team"], t["seats"], t["wins"]) for t in teams] == [(1, [1, 3], 2), (2, [2, 4], 1)]


def test_balance_without_teams_says_nothing_of_teams() -> None:
    result = Balance("Test Map", 2, "greedy", 1, [GameOutcome(1, 0, 40)])
    assert "team" not in result.describe() and "teams" not in result.to_json()


def test_balance_of_a_doubles_game_counts_each_win_for_its_team() -> None:
    result = balance(classic(), DOUBLES, players=4, games=4, seed=1, bot="greedy")
    assert result.team_size == 2 and result.finished == 4
    for o in result.outcomes:
        assert o.seat is not None and o.team == o.seat % 2  # the named winner's team
    assert sum(result.team_wins()) == 4


def test_pbem_maps_balance_takes_team_size() -> None:
    out = CliRunner().invoke(
        app,
        ["maps", "balance", "classic", "--players", "4", "--games", "2", "--option", "team_size=2"],
    )
    assert out.exit_code == 0, out.output
    assert "team (turn order; teams of 2, a team's win counted once)" in out.output
    assert "   2  2, 4" in out.output
