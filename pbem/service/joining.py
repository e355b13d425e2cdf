"""Joining an open game by mail: JOIN GAME AS NAME, then CONFIRM TOKEN.

The confirmation proves the address reads its mail (nobody can sign up
someone else). When the last seat is confirmed the game deals and the
setup phase begins; everyone gets their game-start mail and password.
"""

from __future__ import annotations

import json
import secrets

from sqlmodel import Session, col, select

from pbem.mail.decode import DecodedMail
from pbem.orders import Confirm, Join
from pbem.service import notify
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.games import PlayerSpec, players_of, seat_player, start_game
from pbem.service.passwords import hash_password, new_password
from pbem.store import Game, JoinRequest


def seats(game: Game) -> int:
    return int(json.loads(game.settings_json or "{}").get("seats", 0))


def handle(session: Session, ctx: Context, game: Game, mail: DecodedMail, commands: list) -> str:
    """JOIN and CONFIRM commands of a mail to an open game; one reply each."""
    done = []
    for cmd in commands:
        if isinstance(cmd, Join):
            done.append(_join(session, ctx, game, mail, cmd))
        elif isinstance(cmd, Confirm):
            done.append(_confirm(session, ctx, game, mail, cmd))
    if not done:
        _tell(
            session,
            ctx,
            game,
            mail,
            f"{game.name} is open for players: send JOIN {game.name} AS yourname to take a seat.",
        )
        return "no JOIN in a mail to an open game"
    return "; ".join(done)


def _tell(
    session: Session,
    ctx: Context,
    game: Game,
    mail: DecodedMail,
    text: str,
    subject: str = "",
) -> None:
    from pbem.report import context as rc
    from pbem.report import render

    rendered = render.render_gm_alert(
        rc.GmAlert(subject or f"[{game.name}] Joining {game.name}", text, None, mail.sender)
    )
    notify.queue(
        session,
        ctx,
        rendered,
        recipient=mail.sender,
        message_id=notify._message_id(ctx, "join", mail.message_id),
        game=None,
        in_reply_to=mail.message_id,
    )


def _join(session: Session, ctx: Context, game: Game, mail: DecodedMail, cmd: Join) -> str:
    name = cmd.player
    if cmd.game and cmd.game != game.name:
        _tell(session, ctx, game, mail, f"JOIN {cmd.game}: this mail went to {game.name}.")
        return "join for another game"
    taken = players_of(session, game)
    if len(taken) >= seats(game):
        _tell(session, ctx, game, mail, f"{game.name} is full.")
        return "game full"
    if any(p.name.lower() == name.lower() for p in taken):
        _tell(session, ctx, game, mail, f"The name {name} is taken in {game.name}; pick another.")
        return "name taken"
    token = secrets.token_hex(4)
    session.add(
        JoinRequest(
            game_id=game.id, name=name, address=mail.sender, token=token, created_at=ctx.clock.now()
        )
    )
    _tell(
        session,
        ctx,
        game,
        mail,
        f"To join {game.name} as {name}, reply to this mail with the line\n\n"
        f"    CONFIRM {token}\n\nIf you did not ask to join, ignore this mail.",
        subject=f"[{game.name}] Confirm joining as {name}",
    )
    return f"join request from {mail.sender} as {name}"


def _confirm(session: Session, ctx: Context, game: Game, mail: DecodedMail, cmd: Confirm) -> str:
    request = session.exec(
        select(JoinRequest).where(
            JoinRequest.game_id == game.id,
            JoinRequest.token == cmd.token,
            JoinRequest.address == mail.sender,
            col(JoinRequest.confirmed).is_(False),
        )
    ).first()
    if request is None:
        _tell(
            session,
            ctx,
            game,
            mail,
            f"CONFIRM {cmd.token}: no pending request from {mail.sender} has that token.",
        )
        return "bad confirmation"
    if len(players_of(session, game)) >= seats(game):
        _tell(session, ctx, game, mail, f"{game.name} filled up before your confirmation.")
        return "game full"
    try:
        seat_player(session, game, PlayerSpec(request.name, request.address))
    except ServiceError as exc:
        _tell(session, ctx, game, mail, str(exc))
        return str(exc)
    request.confirmed = True
    session.add(request)
    seated = len(players_of(session, game))
    if seated < seats(game):
        _tell(
            session,
            ctx,
            game,
            mail,
            f"You have seat {seated} of {seats(game)} in "
            f"{game.name} as {request.name}. The game starts when every seat is taken; "
            "your password comes with the first game mail.",
            subject=f"[{game.name}] You are in, as {request.name}",
        )
        return f"{request.name} joined ({seated}/{seats(game)})"
    start_game(session, game)
    notify.game_start(session, ctx, game, _new_passwords(session, game))
    return f"{request.name} joined; {game.name} is full and starts"


def _new_passwords(session: Session, game: Game) -> dict[str, str]:
    """Every player's password, made when the game starts and mailed once
    (nothing but the hash is kept)."""
    passwords = {}
    for player in players_of(session, game):
        passwords[player.name] = new_password()
        player.secret_hash = hash_password(passwords[player.name])
        session.add(player)
    return passwords
