"""Team games in the reports: a seat's team letter, the teams' standing (their
territories and armies together) and the start mail's "your team" line."""

from __future__ import annotations

from dataclasses import dataclass

from pbem.rules import teams
from pbem.rules.state import GameState
from pbem.rules.teamrules import team_name


@dataclass(frozen=True)
class TeamRow:
    """One team's standing: its players (those out marked), territories, armies."""

    name: str  # "team A"
    players: str  # "alice, bob (out)"
    territories: int
    armies: int
    out: bool  # every player of the team is out


def team_letter(state: GameState, seat: int) -> str:
    """'A' for team A, '' without teams (or for the neutral)."""
    team = teams.team_of(state, seat)
    return "" if team is None else team_name(team)[-1]


def team_rows(state: GameState) -> list[TeamRow]:
    """Every team's standing, team A first (empty without teams)."""
    rows = []
    for team in range(teams.team_count(state)):
        seats = teams.members(state, team)
        names = [
            state.players[s].name + ("" if state.players[s].alive else " (out)") for s in seats
        ]
        rows.append(
            TeamRow(
                team_name(team),
                ", ".join(names),
                sum(state.territory_count(s) for s in seats),
                sum(state.army_count(s) for s in seats),
                not any(state.players[s].alive for s in seats),
            )
        )
    return rows


def team_lines(state: GameState) -> list[str]:
    """The teams' standing as text lines (none without teams)."""
    return [
        f"Team {r.name[-1]} ({r.players}): {r.territories} territories, {r.armies} armies"
        + (" - out" if r.out else "")
        for r in team_rows(state)
    ]


def your_team(state: GameState, seat: int) -> str:
    """'You play in team A with bob.' for the start mail ('' without teams)."""
    team = teams.team_of(state, seat)
    if team is None:
        return ""
    mates = [state.players[s].name for s in teams.members(state, team) if s != seat]
    return (
        f"You play in {team_name(team)} with {' and '.join(mates)}: you may PLACE on "
        "their territories and FORTIFY into their adjacent ones, never attack them, "
        "and win together. PRESS TO TEAM writes to them alone."
    )


def won(state: GameState, seat: int) -> bool:
    """``seat`` won: the winner, or (team games) a player of the winning team,
    out or not."""
    winner = state.winner
    return winner is not None and (seat == winner or teams.is_teammate(state, winner, seat))


def winners(state: GameState) -> str:
    """Who won, in words: the winner's name, or (team games) the team with its players."""
    return teams.winner_words(state)


def removal_words(state: GameState, seat: int) -> str:
    """What becomes of a removed player's territories (a reminder's words)."""
    if teams.heir(state, seat) is not None:
        return "their territories and cards go to their first surviving teammate"
    return "their territories become neutral"
