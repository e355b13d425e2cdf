"""Team games in the service: who a PRESS TO TEAM reaches (the teams are the
rules' own, rules/teams.py: seats in blocks of ``team_size``)."""

from __future__ import annotations

from collections.abc import Sequence

from pbem.rules.options import Options
from pbem.rules.teamrules import team_name
from pbem.service.errors import ServiceError
from pbem.store import Player


def team_targets(options: Options, seat: int, players: Sequence[Player]) -> list[Player]:
    """The sender's teammates among ``players`` (those still in the game, the
    sender left out): a PRESS TO TEAM reaches them and nobody else."""
    size = options.team_size
    if not size:
        raise ServiceError("PRESS TO TEAM: this game is not played in teams")
    team = [p for p in players if p.seat // size == seat // size and p.seat != seat]
    if not team:
        raise ServiceError(
            f"PRESS TO TEAM: nobody else of your {team_name(seat // size)} is in the game"
        )
    return team
