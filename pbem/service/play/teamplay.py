"""Team games in the service: who a PRESS TO TEAM reaches (the teams are the
rules' own, rules/teams.py: seats in blocks of ``team_size``)."""

from __future__ import annotations

from collections.abc import Sequence

from pbem import orders
from pbem.rules.options import Options
from pbem.rules.teamrules import team_name
from pbem.service.errors import ServiceError
from pbem.service.play.loading import stored_options
from pbem.store import Game, Player


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


def press_targets(
    game: Game, seat: int, press: orders.Press, players: Sequence[Player]
) -> list[Player]:
    """Who a press block reaches among ``players`` (the others still in the game):
    all of them (TO ALL), the teammates (TO TEAM), or the player named."""
    if press.to_all:
        return list(players)
    if press.to_team:
        return team_targets(stored_options(game), seat, players)
    return [p for p in players if p.name.lower() == press.recipient.lower()]
