"""`pbem new`'s summary says the online settings (fog, the teams with their
members), and a game open for JOIN takes team_size and the GM's --teams."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_gm_cli import pbem, write_config

FOUR = [x for n in ("alice", "bob", "carol", "dave") for x in ("-p", f"{n}:{n}@example.org")]
FOG = "fog of war (players see only their part of the board; you see all)"


def test_the_summary_names_fog_and_the_teams(tmp_path: Path) -> None:
    config = write_config(tmp_path / "g")
    made = pbem(
        "new", "world-1", *FOUR, "--preset", "doubles", "-o", "fog=true",
        "--teams", "alice,carol / bob,dave", "--config", config,
    )  # fmt: skip
    assert made.exit_code == 0, made.output + made.stderr
    lines = made.output.splitlines()
    assert lines[:3] == [
        "game world-1 created: 4 players, preset doubles, map classic",
        f"  {FOG}",
        "  teams: team A (alice, carol); team B (bob, dave)",
    ]
    plain = pbem("new", "world-2", *FOUR, "--config", config)
    assert plain.exit_code == 0, plain.output + plain.stderr
    assert plain.output.splitlines()[1].startswith("dice commitment")  # nothing to say


def test_an_open_team_game_says_how_its_teams_are_made(tmp_path: Path) -> None:
    config = write_config(tmp_path / "g")
    by_seat = pbem(
        "new", "open-1", "--open", "--seats", "4", "-o", "team_size=2", "-o", "fog=true",
        "--config", config,
    )  # fmt: skip
    assert by_seat.exit_code == 0, by_seat.output + by_seat.stderr
    assert by_seat.output.splitlines()[1:] == [
        f"  {FOG}",
        "  teams by seat, in joining order: team A seats 1-2, team B seats 3-4",
    ]
    chosen = pbem(
        "new", "open-2", "--open", "--seats", "4", "-o", "team_size=2",
        "--teams", "alice,carol / bob,dave", "--config", config,
    )  # fmt: skip
    assert chosen.exit_code == 0, chosen.output + chosen.stderr
    assert chosen.output.splitlines()[1:] == [
        "  teams: team A (alice, carol); team B (bob, dave) (they JOIN under these names)"
    ]
    trench = pbem(
        "new", "open-4", "--open", "--seats", "3", "--preset", "freestyle", "-o", "trench=true",
        "--config", config,
    )  # fmt: skip
    assert trench.exit_code == 0, trench.output + trench.stderr
    assert pbem("show", "open-4", "--config", config).output.splitlines()[1:] == [
        "Online settings: trench warfare",
        "Online settings: freestyle (each round every player moves once, in the order mails "
        "arrive)",
    ]
    # `pbem show` of a game nobody has joined yet: the seats and the teams
    shown = pbem("show", "open-2", "--config", config)
    assert shown.exit_code == 0, shown.output + shown.stderr
    assert shown.output.splitlines() == [
        "Game open-2 on classic (preset classic): open for players to JOIN, 0 of 4 seats taken",
        "Online settings: teams: team A (alice, carol); team B (bob, dave) (they JOIN under "
        "these names)",
    ]
    for teams, why in [
        ("alice,carol / bob", "--teams: every team has 2 players; bob has 1"),
        ("alice,carol / bob,dave / erin,fay", "--teams names 6 players; the game is open for 4"),
        ("alice,carol / bob,Alice", "--teams: alice is on two teams"),
    ]:
        wrong = pbem(
            "new", "open-3", "--open", "--seats", "4", "-o", "team_size=2",
            "--teams", teams, "--config", config,
        )  # fmt: skip
        assert wrong.exit_code == 1 and why in wrong.stderr, (teams, wrong.stderr)
    no_teams = pbem(
        "new", "open-3", "--open", "--seats", "4", "--teams", "alice,carol / bob,dave",
        "--config", config,
    )  # fmt: skip
    assert "--teams needs a team game: -o team_size=2 (or 3)" in no_teams.stderr
