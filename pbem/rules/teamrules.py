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


def seats_in_teams(names: list[str], text: str, team_size: int) -> list[int]:
    """The GM's teams, ``"alice,bob / carol,dave"`` (teams split by ``/``,
    players by ``,``), as the seat order that forms them: the index in
    ``names`` of each player, team after team. Every player once, every team
    of ``team_size``; refused otherwise, saying why."""
    if not team_size:
        raise OptionsError("--teams needs a team game: -o team_size=2 (or 3)")
    teams = [[n.strip() for n in part.split(",") if n.strip()] for part in text.split("/")]
    given = [name for team in teams for name in team]
    wrong = [t for t in teams if len(t) != team_size]
    if wrong:
        raise OptionsError(
            f"--teams: every team has {team_size} players; {', '.join(wrong[0]) or '(empty)'} "
            f"has {len(wrong[0])}"
        )
    unknown = [n for n in given if n not in names]
    if unknown:
        raise OptionsError(f"--teams: {unknown[0]} is not a player of the game")
    twice = [n for n in given if given.count(n) > 1]
    if twice:
        raise OptionsError(f"--teams: {twice[0]} is on two teams")
    missing = [n for n in names if n not in given]
    if missing:
        raise OptionsError(f"--teams: {missing[0]} is on no team")
    return [names.index(n) for n in given]
