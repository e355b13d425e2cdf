"""What a mail is about, decided with it: its stable Message-ID (on the game's
domain, with the game's rollback epoch) and what every mail shows of a game.

The deciders (play/) record these in their notices; the telling stage and
the site read them too. Nothing here renders or queues a mail."""

from __future__ import annotations

from sqlmodel import Session, select

from pbem.report import context as rc
from pbem.report.mime import stable_message_id
from pbem.service.context import Context
from pbem.service.play.games import current_commitment, definition_of, players_of
from pbem.service.play.gamesettings import settings_of
from pbem.store import Game, SeatHolder
from pbem.vocab import SeatStatus

STATUS_BY_PLAYER: dict[str, str] = {
    SeatStatus.ACTIVE: rc.PLAYING,
    SeatStatus.ELIMINATED: rc.OUT,
    SeatStatus.RESIGNED: rc.RESIGNED,
    SeatStatus.REMOVED: rc.REMOVED,
}


def host_of(ctx: Context) -> str:
    """The domain of the game's address: the right-hand side of every Message-ID."""
    address = ctx.config.mail.game_address
    return address.rpartition("@")[2] or "localhost"


def message_id(ctx: Context, *parts: object) -> str:
    """The stable Message-ID of the mail about ``parts`` (see mime.stable_message_id)."""
    return stable_message_id(host_of(ctx), *parts)


def epoch(game: Game) -> tuple[int, ...]:
    """Part of the Message-ID of every mail about a turn once the game has been
    rolled back, so the turns played again are reported again."""
    rollbacks = int(settings_of(game).get("rollbacks", 0))
    return (rollbacks,) if rollbacks else ()


def _holders(session: Session, game: Game) -> dict[int, str]:
    """Seat -> the name of who holds it now (SeatHolder)."""
    rows = session.exec(
        select(SeatHolder).where(
            SeatHolder.game_id == game.id,
            SeatHolder.to_turn.is_(None),  # type: ignore[union-attr]
        )
    ).all()
    return {h.seat: h.name for h in rows}


def game_info(session: Session, ctx: Context, game: Game) -> rc.GameInfo:
    """What every mail about a game shows of it (the report layer's view of the rows)."""
    definition = definition_of(session, game)
    players = []
    holders = _holders(session, game)
    for p in players_of(session, game):
        status = rc.WINNER if game.winner_seat == p.seat else STATUS_BY_PLAYER.get(p.status, rc.OUT)
        holder = holders.get(p.seat, p.name)
        holder = "" if holder == p.name else holder
        players.append(rc.PlayerInfo(p.seat, p.name, p.colour, p.address, status, holder))
    return rc.GameInfo(
        name=game.name,
        title=game.title or game.name,
        board=definition.board,
        options=definition.options,
        commitment=game.commitment,
        secret_hex=game.secret if game.secret_revealed else None,
        dice_version=game.dice_version,
        players=tuple(players),
        gm_address=game.gm_address or ctx.config.mail.gm_address,
        timezone=settings_of(game).get("timezone", "UTC"),
        player_zones=tuple(
            sorted((int(s), z) for s, z in settings_of(game).get("tz_prefs", {}).items())
        ),
        from_address=ctx.config.mail.game_address,
        preset=game.preset,
        dice_commitment=current_commitment(session, game),
    )
