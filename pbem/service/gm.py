"""What the GM does to a running game: pause, extend, kick, replace, roll back,
play the turn now. Each is one transaction and is announced to the players."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from sqlmodel import Session, col, delete, select

from pbem.service import notify, replay
from pbem.service.context import Context
from pbem.service.deadlines import (
    _aware,
    on_allowed_day,
    play_bot_turns,
    play_missing,
    remove,
    settings,
    start_period,
)
from pbem.service.errors import ServiceError
from pbem.service.games import (
    find_player,
    load,
    log_of,
    players_of,
    store_result,
    to_entry,
)
from pbem.service.passwords import hash_password, new_password
from pbem.store import Game, OrderEntry, PendingOrders, SeatHolder, ServiceState, TurnResult


def _running(game: Game) -> None:
    if game.status == "finished":
        raise ServiceError(f"game {game.name} is over")


def pause(session: Session, ctx: Context, game: Game) -> str:
    _running(game)
    if game.status == "paused":
        raise ServiceError(f"game {game.name} is paused already")
    game.status = "paused"
    session.add(game)
    session.add(ServiceState(key=f"paused:{game.id}", value=ctx.clock.now().isoformat()))
    notify.announce(
        session,
        ctx,
        game,
        f"The GM has paused {game.name}. Deadlines are frozen until the game resumes.",
    )
    return f"{game.name} paused"


def resume(session: Session, ctx: Context, game: Game) -> str:
    if game.status != "paused":
        raise ServiceError(f"game {game.name} is not paused")
    marker = session.exec(
        select(ServiceState).where(ServiceState.key == f"paused:{game.id}")
    ).first()
    game.status = "running"
    if marker is not None:
        paused_for = ctx.clock.now() - _aware(datetime.fromisoformat(marker.value))
        if game.deadline is not None:
            game.deadline = _aware(game.deadline) + paused_for
        session.delete(marker)
    session.add(game)
    when = f" The deadline is now {game.deadline:%Y-%m-%d %H:%M} UTC." if game.deadline else ""
    notify.announce(session, ctx, game, f"The GM has resumed {game.name}.{when}")
    return f"{game.name} resumed"


def extend(session: Session, ctx: Context, game: Game, hours: float) -> str:
    _running(game)
    if game.deadline is None:
        raise ServiceError(f"game {game.name} has no deadline to extend")
    if hours <= 0:
        raise ServiceError("extend by a positive number of hours")
    game.deadline = _aware(game.deadline) + timedelta(hours=hours)
    session.add(game)
    notify.announce(
        session,
        ctx,
        game,
        f"The GM extended the deadline by {hours:g} hours, to {game.deadline:%Y-%m-%d %H:%M} UTC.",
    )
    return f"deadline of {game.name} now {game.deadline.isoformat()}"


def kick(session: Session, ctx: Context, game: Game, name: str) -> str:
    _running(game)
    player = find_player(session, game, name)
    if player.status != "active":
        raise ServiceError(f"{player.name} is no longer playing")
    if game.phase != "playing":
        raise ServiceError("players can be removed once the game is under way")
    lines = remove(session, ctx, game, player, [], reason="removed by the GM")
    return "; ".join(lines)


def replace(
    session: Session,
    ctx: Context,
    game: Game,
    name: str,
    address: str,
    new_name: str | None = None,
) -> str:
    """Give a seat to a new address: new password, extended first deadline; the
    seat's history keeps who held it when."""
    _running(game)
    player = find_player(session, game, name)
    state = load(session, game).state
    if not state.players[player.seat].alive:
        raise ServiceError(
            f"{player.name}'s seat is out of the game (its territories are "
            "neutral); there is nothing to hand over"
        )
    address = address.strip().lower()
    if "@" not in address:
        raise ServiceError(f"{address!r} is not a mail address")
    holder = session.exec(
        select(SeatHolder).where(
            SeatHolder.game_id == game.id,
            SeatHolder.seat == player.seat,
            SeatHolder.to_turn.is_(None),
        )
    ).first()  # type: ignore[union-attr]
    if holder is not None:
        holder.to_turn = game.turn
        session.add(holder)
    old = player.name
    if new_name:
        player.name = new_name
    player.address = address
    password = new_password()
    player.secret_hash = hash_password(password)
    player.status = "active"
    player.missed_in_row = 0
    player.misses_json = "[]"
    session.add(player)
    session.add(
        SeatHolder(
            game_id=game.id,
            seat=player.seat,
            name=player.name,
            address=address,
            from_turn=game.turn,
        )
    )
    stored = json.loads(game.settings_json or "{}")
    if player.seat in stored.get("bot_seats", []):
        stored["bot_seats"] = [s for s in stored["bot_seats"] if s != player.seat]
        game.settings_json = json.dumps(stored, sort_keys=True)
    if state.current == player.seat and game.deadline is not None:
        extra = timedelta(hours=settings(game)["replacement_extra_hours"])
        game.deadline = on_allowed_day(
            ctx.clock.now() + timedelta(hours=settings(game)["turn_hours"]) + extra, settings(game)
        )
    session.add(game)
    session.flush()
    notify.game_start(session, ctx, game, {player.name: password}, only_seat=player.seat)
    notify.announce(
        session,
        ctx,
        game,
        f"{address} takes over the seat of {old} (now {player.name}) from turn {game.turn}.",
    )
    return f"{player.name} ({address}) holds seat {player.seat}; password {password}"


def rollback(session: Session, ctx: Context, game: Game, turn: int) -> str:
    """Undo every step from ``turn`` on: truncate the log, replay, announce."""
    if turn < 1 or turn > game.turn:
        raise ServiceError(f"turn must be between 1 and {game.turn}")
    rows = log_of(session, game)
    keep = [r for r in rows if not (r.kind in ("turn", "command") and r.turn >= turn)]
    cut = len(rows) - len(keep)
    if cut == 0:
        raise ServiceError(f"nothing has been played from turn {turn} on")
    last_seq = keep[-1].seq if keep else 0
    session.exec(
        delete(OrderEntry).where(
            OrderEntry.game_id == game.id,  # type: ignore[call-overload]
            col(OrderEntry.seq) > last_seq,
        )
    )
    session.exec(
        delete(TurnResult).where(
            TurnResult.game_id == game.id,  # type: ignore[call-overload]
            col(TurnResult.seq) > last_seq,
        )
    )
    session.exec(
        delete(PendingOrders).where(
            PendingOrders.game_id == game.id,  # type: ignore[call-overload]
            PendingOrders.turn >= turn,
        )
    )
    session.flush()
    definition = replay.GameDefinition(*_definition_args(session, game))
    rebuilt = replay.rebuild(definition, [to_entry(r) for r in keep])
    state = rebuilt.state
    latest = session.exec(
        select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq).desc())
    ).first()
    if latest is None:
        store_result(
            session,
            game,
            replay.Step(state.turn, None, [], [], state, state.state_hash()),
            seq=last_seq,
        )
    elif latest.state_hash != state.state_hash():
        raise ServiceError(
            f"the log of {game.name} does not replay to its stored hash at entry "
            f"{latest.seq}; run `pbem replay {game.name}` before rolling back"
        )
    game.status = "running"
    game.winner_seat = None
    from pbem.service.games import _sync  # the row mirrors the rebuilt state

    _sync(game, state)
    for player in players_of(session, game):
        if (
            player.seat < len(state.players)
            and state.players[player.seat].alive
            and player.status in ("eliminated", "resigned", "removed")
        ):
            player.status = "active"
            session.add(player)
    start_period(session, ctx, game, state)
    notify.announce(
        session,
        ctx,
        game,
        f"The GM rolled {game.name} back to the start of turn "
        f"{state.turn}: {cut} log entries were undone. The board is as it was then.",
    )
    notify.prompt_next(session, ctx, game, state)
    return f"{game.name} rolled back to turn {state.turn} ({cut} entries undone)"


def _definition_args(session: Session, game: Game) -> tuple:
    from pbem.service.games import definition_of

    d = definition_of(session, game)
    return (d.name, d.board, d.options, d.players, d.secret)


def process(session: Session, ctx: Context, game: Game) -> str:
    """Play the current turn (or setup phase) now, defaults for the missing."""
    _running(game)
    if game.status == "paused":
        raise ServiceError(f"game {game.name} is paused")
    lines = play_missing(session, ctx, game, load(session, game))
    lines += play_bot_turns(session, ctx, game)
    return "; ".join(lines) or "nothing to play"
