"""The team options' numbers and checks, apart from the state (options.py
reads them; teams.py has the rules of a team game)."""

from __future__ import annotations

from typing import Final

from pbem.rules.errors import OptionsError

TEAM_SIZES: Final = (0, 2, 3)  # 0: no teams; quadruples need 8 players (pbem seats 6)
TEAM_WORDS: Final[dict[int, str]] = {2: "doubles", 3: "triples"}


def team_name(team: int) -> str:
    """Team 0 is "team A", 1 "team B", ..."""
    return f"team {chr(ord('A') + team)}"


def check_team_players(team_size: int, count: int) -> None:
    """Refuse a player count that does not make two or more whole teams."""
    if not team_size:
        return
    words = TEAM_WORDS.get(team_size, f"teams of {team_size}")
    if count % team_size:
        raise OptionsError(
            f"{words} needs a number of players that is a multiple of {team_size}, not {count}"
        )
    if count < 2 * team_size:
        raise OptionsError(
            f"{words} needs at least two teams: {2 * team_size} players, not {count}"
        )
