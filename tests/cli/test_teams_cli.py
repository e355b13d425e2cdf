"""`pbem new --teams`: the GM's teams seat the players team after team, stored
with the game; wrong teams are refused before any game is made."""

from __future__ import annotations

import json
from pathlib import Path

from pbem.rules import teams
from tests.cli.test_gm_cli import pbem, state_of, write_config

FOUR = [x for n in ("alice", "bob", "carol", "dave") for x in ("-p", f"{n}:{n}@example.org")]


def test_the_gms_teams_seat_the_players_and_wrong_teams_are_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path / "g")
    wrong = pbem(
        "new",
        "world-1",
        *FOUR,
        "--preset",
        "doubles",
        "--teams",
        "alice,bob,carol / dave",
        "--config",
        config,
    )
    assert wrong.exit_code == 1
    assert "--teams: every team has 2 players; alice, bob, carol has 3" in wrong.stderr
    five = [*FOUR, "-p", "erin:erin@example.org"]
    odd = pbem("new", "world-1", *five, "--preset", "doubles", "--config", config)
    assert odd.exit_code != 0
    assert (
        "doubles needs a number of players that is a multiple of 2, not 5"
        in odd.output + odd.stderr
    )
    made = pbem(
        "new", "world-1", *FOUR, "--preset", "doubles", "--teams", "alice,carol / bob,dave",
        "--dice", "v1", "--config", config,
    )  # fmt: skip
    assert made.exit_code == 0, made.output + made.stderr
    state = state_of(config)
    assert [p.name for p in state.players] == ["alice", "carol", "bob", "dave"]
    assert [teams.team_of(state, s) for s in range(4)] == [0, 0, 1, 1]
    assert teams.team_label(state, 0) == "team A (alice, carol)"
    shown = pbem("show", "world-1", "--config", config)
    assert shown.exit_code == 0, shown.output
    assert "Online settings: teams: team A (alice, carol); team B (bob, dave)" in shown.output
    as_json = pbem("show", "world-1", "--json", "--config", config)
    data = json.loads(as_json.output)
    assert [p["team"] for p in data["players"]] == [0, 0, 1, 1]
    assert data["online_settings"] == ["teams: team A (alice, carol); team B (bob, dave)"]


def test_show_tells_the_gm_of_fog_and_terminators_points(tmp_path: Path) -> None:
    config = write_config(tmp_path / "g")
    made = pbem(
        "new", "world-1", *FOUR, "--preset", "terminator", "-o", "fog=true",
        "--config", config,
    )  # fmt: skip
    assert made.exit_code == 0, made.output + made.stderr
    shown = pbem("show", "world-1", "--config", config).output
    assert "Online settings: fog of war (players see only their part of the board" in shown
    assert "(0 points)" in shown
    data = json.loads(pbem("show", "world-1", "--json", "--config", config).output)
    assert [p["points"] for p in data["players"]] == [0, 0, 0, 0]
    assert [p["team"] for p in data["players"]] == [None] * 4


def test_simulate_takes_options_over_the_preset() -> None:
    fogged = pbem(
        "simulate", "--preset", "doubles", "-o", "fog=true", "--games", "2",
        "--bot", "greedy", "--workers", "1", "--json",
    )  # fmt: skip
    assert fogged.exit_code == 0, fogged.output + fogged.stderr
    plain = pbem(
        "simulate", "--preset", "doubles", "--games", "2", "--bot", "greedy",
        "--workers", "1", "--json",
    )  # fmt: skip
    digests = json.loads(fogged.output)["digest"], json.loads(plain.output)["digest"]
    assert digests[0] != digests[1]  # the fog changes what the bots see, so their play
    wrong = pbem("simulate", "-o", "card_value_cap=2", "--games", "1")
    assert wrong.exit_code == 1
    assert "option card_value_cap must be 0 (no cap) or at least 4" in wrong.stderr
