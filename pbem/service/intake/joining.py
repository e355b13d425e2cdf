"""Joining an open game by mail: JOIN GAME AS NAME, then CONFIRM TOKEN.

The confirmation proves the address reads its mail (nobody can sign up
someone else). When the last seat is confirmed the game deals and the
setup phase begins; everyone gets their game-start mail and password.
"""

from __future__ import annotations

import json
import secrets

from sqlmodel import Session, select

from pbem.mail.decode import DecodedMail
from pbem.orders import Confirm, Join
from pbem.orders.envelope import only_help
from pbem.report.letters import quote
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play import mailinfo, notify, teamplay
from pbem.service.play.games import PlayerSpec, players_of, seat_player, start_game
from pbem.service.play.names import address_problem, player_name_problem
from pbem.service.play.passwords import hash_password, new_password
from pbem.service.play.ratelimit import may_answer
from pbem.service.tell import outmail
from pbem.store import Game, JoinRequest, id_of

MAX_NAME = 20
JOINS_PER_HOUR = 3  # JOIN answers to one address for one game an hour (a lost mail, a typo)


def seats(game: Game) -> int:
    return int(json.loads(game.settings_json or "{}").get("seats", 0))


def handle(session: Session, ctx: Context, game: Game, mail: DecodedMail, commands: list) -> str:
    """JOIN and CONFIRM commands of a mail to an open game; one answer each,
    within the sender's reply budget and the budget of all strangers
    (pbem.service.play.ratelimit). A mail with neither is answered only when
    ``[mail] reply_to_unknown`` says so, when the sender plays here, or when
    it says HELP and nothing else."""
    done = []
    for index, cmd in enumerate(commands):
        if isinstance(cmd, Join):
            done.append(_join(session, ctx, game, mail, cmd, index))
        elif isinstance(cmd, Confirm):
            done.append(_confirm(session, ctx, game, mail, cmd, index))
    if done:
        return "; ".join(done)
    asks_help = only_help(mail.text)  # HELP is answered from any address (budgets hold)
    if not (ctx.config.mail.reply_to_unknown or asks_help or _seated(session, game, mail.sender)):
        return "no JOIN in a mail to an open game (not answered: reply_to_unknown is off)"
    told = _tell(
        session,
        ctx,
        game,
        mail,
        f"{game.name} is open for players: send a mail with the line\n\n"
        f"    JOIN {game.name} AS yourname\n\nto take a seat.",
        "How to join",
    )
    return "no JOIN in a mail to an open game" + ("" if told else NOT_ANSWERED)


NOT_ANSWERED = " (not answered: a reply budget is spent)"


def _seated(session: Session, game: Game, address: str) -> bool:
    return any(p.address == address for p in players_of(session, game))


def _tell(
    session: Session,
    ctx: Context,
    game: Game,
    mail: DecodedMail,
    text: str,
    subject: str,
    index: int = 0,
    *,
    counted: bool = False,
) -> bool:
    """One answer to the sender (the [game] tag in its subject brings the reply
    back), when the budgets allow it (``counted``: already asked); False when
    they did not and nothing was sent."""
    from pbem.report import context as rc
    from pbem.report import render

    if not counted and not _may_answer(session, ctx, game, mail.sender):
        return False
    rendered = render.render_gm_alert(
        rc.GmAlert(subject, text, mailinfo.game_info(session, ctx, game), mail.sender, replies=True)
    )
    outmail.post(
        session,
        ctx,
        rendered,
        mail.sender,
        ("join", mail.reply_key, index),
        game=None,
        in_reply_to=mail.message_id,
    )
    return True


def _may_answer(
    session: Session, ctx: Context, game: Game, address: str, *, join: bool = False
) -> bool:
    """Within the address's reply budget (and the budget of all strangers,
    unless the address has a seat here); ``join``: within JOINS_PER_HOUR too."""
    also = [(f"join:{game.id}:{address}", JOINS_PER_HOUR)] if join else []
    stranger = not _seated(session, game, address)
    return may_answer(session, ctx, address, stranger=stranger, also=also)


def _name_problem(game: Game, name: str) -> str | None:
    """The check of `pbem new` and `replace`; and the GM's teams name the players."""
    return player_name_problem(name, "the name") or teamplay.join_problem(game, name)


def _join(
    session: Session, ctx: Context, game: Game, mail: DecodedMail, cmd: Join, index: int
) -> str:
    name = teamplay.reserved_spelling(game, cmd.player)  # "A" joins as the GM's "a"
    # Every answer to a JOIN, a refusal too, counts against JOINS_PER_HOUR:
    # the same JOIN thirty times gets three answers, and nothing else happens.
    if not _may_answer(session, ctx, game, mail.sender, join=True):
        return f"JOIN from {mail.sender}{NOT_ANSWERED}"
    if cmd.game and cmd.game.lower() != game.name.lower():
        _tell(
            session,
            ctx,
            game,
            mail,
            f"JOIN {quote(cmd.game, 60)}: this mail went to {game.name}.",
            "Which game?",
            index,
            counted=True,
        )
        return "join for another game"
    taken = players_of(session, game)
    if len(taken) >= seats(game):
        _tell(
            session,
            ctx,
            game,
            mail,
            f"{game.name} is full.",
            "The game is full",
            index,
            counted=True,
        )
        return "game full"
    problem = _name_problem(game, name) or address_problem(mail.sender)
    if problem is None and any(p.name.lower() == name.lower() for p in taken):
        problem = f"the name {name} is taken in {game.name}; pick another"
    if problem is None and any(p.address == mail.sender for p in taken):
        problem = f"{mail.sender} has a seat in {game.name} already"
    if problem is not None:
        _tell(
            session,
            ctx,
            game,
            mail,
            f"JOIN {game.name} AS {quote(name, 40)}: {problem}.",
            "Joining refused",
            index,
            counted=True,
        )
        return problem
    pending = session.exec(
        select(JoinRequest).where(
            JoinRequest.game_id == game.id,
            JoinRequest.address == mail.sender,
            JoinRequest.confirmed == False,  # noqa: E712
        )
    ).first()
    # One pending request per address and game: a JOIN again is answered
    # again with the same token, no new row; a JOIN under another name gets a
    # new token, so the code mailed for the old name can no longer join under
    # the new one.
    request = pending or JoinRequest(
        game_id=id_of(game), name=name, address=mail.sender, token=secrets.token_hex(4)
    )
    if request.name != name:
        request.token = secrets.token_hex(4)
    request.name, request.created_at = name, ctx.clock.now()
    session.add(request)
    _tell(
        session,
        ctx,
        game,
        mail,
        f"To join {game.name} as {name}, reply to this mail with the line\n\n"
        f"    CONFIRM {request.token}\n\nIf you did not ask to join, ignore this mail.",
        f"Confirm joining as {name}",
        index,
        counted=True,
    )
    return f"join request from {mail.sender} as {name}"


def _confirm(
    session: Session,
    ctx: Context,
    game: Game,
    mail: DecodedMail,
    cmd: Confirm,
    index: int,
) -> str:
    request = session.exec(
        select(JoinRequest).where(
            JoinRequest.game_id == game.id,
            JoinRequest.token == cmd.token.lower(),
            JoinRequest.address == mail.sender,
            JoinRequest.confirmed == False,  # noqa: E712
        )
    ).first()
    if request is None:
        _tell(
            session,
            ctx,
            game,
            mail,
            f"CONFIRM {quote(cmd.token, 40)}: no pending request from {mail.sender} "
            "has that token.",
            "Confirmation refused",
            index,
        )
        return "bad confirmation"
    if len(players_of(session, game)) >= seats(game):
        _tell(
            session,
            ctx,
            game,
            mail,
            f"{game.name} filled up before your confirmation.",
            "The game is full",
            index,
        )
        return "game full"
    try:
        seat_player(session, game, PlayerSpec(request.name, request.address))
    except ServiceError as exc:
        _tell(session, ctx, game, mail, f"{exc}.", "Joining refused", index)
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
            f"You have seat {seated} of {seats(game)} in {game.name} as {request.name}"
            f"{teamplay.joined_team(game, request.name, seated - 1)}. The game starts when "
            "every seat is taken; your password comes with the first game mail.",
            f"You are in, as {request.name}",
            index,
        )
        return f"{request.name} joined ({seated}/{seats(game)})"
    teamplay.seat_by_teams(session, game)  # the GM's teams: seated team after team
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
