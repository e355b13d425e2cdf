"""Every mail the service sends, queued in the outbox of the current transaction.

The report layer renders (per recipient: private parts only to their owner);
this module decides who gets what, gives each mail a stable Message-ID and
threading headers, and adds the outbox rows. Nothing is sent here: the
outbox sender does that after the commit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import Session, col, select

from pbem import orders
from pbem.log import replay
from pbem.mail.decode import DecodedMail
from pbem.orders import OrderProblem
from pbem.report import context as rc
from pbem.report import ics, render
from pbem.report.mime import RenderedMail, thread_root_id, to_mime
from pbem.report.shared import render_once
from pbem.rules.dice import salt_of
from pbem.rules.state import ENDED, SETUP_PHASES, GameState
from pbem.service import catchup, outbox, schedule
from pbem.service.context import Context
from pbem.service.games import definition_of, load, players_of
from pbem.service.passwords import turn_token
from pbem.service.settings import mail_mode, settings
from pbem.store import Game, Outbox, Player, TurnResult

STATUS_BY_PLAYER = {
    "active": rc.PLAYING,
    "eliminated": rc.OUT,
    "resigned": rc.RESIGNED,
    "removed": rc.REMOVED,
}


@dataclass
class Reply:
    """The one answer to one player's mail, gathered while the mail is handled."""

    game: Game
    player: Player
    mail: DecodedMail
    canonical: str = ""
    problems: list[OrderProblem] = field(default_factory=list)
    problems_text: str = ""
    text: str = ""
    notes: list[str] = field(default_factory=list)
    commands: list = field(default_factory=list)
    turn: int | None = None  # the turn the orders were played as, once played
    held: bool = False  # deadline mode: kept until the deadline, not played yet
    check_only: bool = False  # CHECK: validated, nothing applied
    waiting: bool = False  # setup orders kept until every player has sent theirs
    forecast: list[str] = field(default_factory=list)  # odds of orders not yet played
    setup: str = ""  # the setup phase the orders were sent in ("" in a turn)
    late: datetime | None = None  # the deadline passed before they came (grace period)


# ----------------------------------------------------------------- helpers
def host_of(ctx: Context) -> str:
    address = ctx.config.mail.game_address
    return address.rpartition("@")[2] or "localhost"


def settings_of(game: Game) -> dict:
    return json.loads(game.settings_json or "{}")


def _epoch(game: Game) -> tuple[int, ...]:
    """Part of the Message-ID of every mail about a turn once the game has been
    rolled back, so the turns played again are reported again."""
    rollbacks = int(settings_of(game).get("rollbacks", 0))
    return (rollbacks,) if rollbacks else ()


def game_info(session: Session, ctx: Context, game: Game) -> rc.GameInfo:
    definition = definition_of(session, game)
    players = []
    for p in players_of(session, game):
        status = rc.WINNER if game.winner_seat == p.seat else STATUS_BY_PLAYER.get(p.status, rc.OUT)
        players.append(rc.PlayerInfo(p.seat, p.name, p.colour, p.address, status))
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
    )


def _message_id(ctx: Context, *parts: object) -> str:
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:20]
    return f"<{digest}@{host_of(ctx)}>"


def queue(
    session: Session,
    ctx: Context,
    rendered: RenderedMail,
    *,
    recipient: str,
    message_id: str,
    game: Game | None,
    seat: int | None = None,
    in_reply_to: str | None = None,
    attachment: tuple[str, str] | None = None,
    attachment_type: str = "plain",
) -> None:
    """Add one mail to the outbox (once: a stable Message-ID already queued is
    skipped). ``attachment`` is (file name, text), e.g. the game record, of type
    text/``attachment_type``."""
    if session.exec(select(Outbox).where(Outbox.message_id == message_id)).first() is not None:
        return
    references = []
    if game is not None:
        references.append(thread_root_id(game.name, seat, host_of(ctx)))
    sender = ctx.config.mail.game_address
    name = ctx.config.mail.from_name
    msg = to_mime(
        rendered,
        sender=f"{name} <{sender}>" if name else sender,
        recipient=recipient,
        message_id=message_id,
        in_reply_to=in_reply_to,
        references=references,
        date=ctx.clock.now(),
    )
    if attachment is not None:
        filename, content = attachment
        msg.add_attachment(content, subtype=attachment_type, filename=filename)
    outbox.enqueue(
        session,
        message_id=message_id,
        game_id=game.id if game else None,
        kind=rendered.kind or "mail",
        recipient=recipient,
        subject=rendered.subject,
        raw=bytes(msg),
        in_reply_to=in_reply_to,
        now=ctx.clock.now(),
    )


def _problems(problems: list[OrderProblem], text: str) -> tuple[rc.Problem, ...]:
    lines = text.split("\n")
    out = []
    for p in problems:
        line = lines[p.line - 1] if p.line and 0 < p.line <= len(lines) else ""
        message = p.message
        out.append(rc.Problem(p.line or None, line, message, p.suggestion or ""))
    return tuple(out)


# --------------------------------------------------------------- replies
def send_reply(session: Session, ctx: Context, reply: Reply) -> None:
    """Exactly one answer per mail: the errors, else the receipt, plus any
    command answers (STATUS, MAP, HISTORY, HELP) asked for."""
    game, player, mail = reply.game, reply.player, reply.mail
    info = game_info(session, ctx, game)
    mid = _message_id(ctx, "reply", mail.reply_key)
    rendered = None
    if reply.problems or reply.problems_text:
        problems = _problems(reply.problems, reply.text)
        if reply.problems_text:
            problems += (rc.Problem(None, "", reply.problems_text),)
        rendered = render.render_error_reply(
            rc.ErrorReply(
                address=player.address,
                problems=problems,
                game=info,
                seat=player.seat,
                original_subject=mail.subject,
                turn=game.turn,
            )
        )
    elif reply.canonical or not reply.commands:
        orders_text = reply.canonical or "\n".join(reply.notes) or "(no orders)"
        if reply.canonical and reply.notes:  # what else became of the mail, as comments
            orders_text += "\n" + "\n".join(f"# {note}" for note in reply.notes)
        played = bool(reply.canonical) and not (reply.check_only or reply.held or reply.waiting)
        rendered = render.render_receipt(
            rc.Receipt(
                game=info,
                seat=player.seat,
                turn=reply.turn or game.turn,
                orders_text=orders_text,
                adjudicated=played,
                check_only=reply.check_only,
                forecast=tuple(reply.forecast),
                setup=reply.setup,
                late=reply.late,
            )
        )
    if rendered is not None:
        queue(
            session,
            ctx,
            rendered,
            recipient=player.address,
            message_id=mid,
            game=game,
            seat=player.seat,
            in_reply_to=mail.message_id,
        )
    for i, cmd in enumerate(reply.commands):
        rendered = _command_answer(session, ctx, info, game, player, cmd)
        if rendered is not None:
            queue(
                session,
                ctx,
                rendered,
                recipient=player.address,
                message_id=_message_id(ctx, "answer", mail.reply_key, i),
                game=game,
                seat=player.seat,
                in_reply_to=mail.message_id,
            )


def _command_answer(
    session: Session,
    ctx: Context,
    info: rc.GameInfo,
    game: Game,
    player: Player,
    cmd,
) -> RenderedMail | None:
    if isinstance(cmd, orders.Help):
        return render.render_help(rc.Help(player.address, orders.help_text(info.board), info))
    if isinstance(cmd, orders.Status | orders.ShowMap):
        state = load(session, game).state
        return render.render_status(rc.Status(info, state, game.deadline), player.seat)
    if isinstance(cmd, orders.History):
        return _history(session, ctx, info, game, player, cmd.turn)
    return None


def _history(
    session: Session,
    ctx: Context,
    info: rc.GameInfo,
    game: Game,
    player: Player,
    turn: int | None,
) -> RenderedMail:
    """HISTORY: the list of turns, or the report of one turn again."""
    if turn is None:
        played = [r.turn for r in _results(session, game) if r.seat is not None]
        text = "Turns played: " + (", ".join(str(t) for t in played) or "none yet")
        text += "\nSend HISTORY N for the report of turn N."
        return render.render_help(rc.Help(player.address, text, info))
    report = stored_report(session, info, game, turn)
    if report is None:
        return render.render_help(
            rc.Help(player.address, f"There is no report of turn {turn}.", info)
        )
    return render.render_turn_report(report, player.seat)


def _results(session: Session, game: Game) -> list[TurnResult]:
    query = select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq))
    return list(session.exec(query))


def stored_report(
    session: Session, info: rc.GameInfo, game: Game, turn: int | None
) -> rc.TurnReport | None:
    """The report of a played turn (the latest when ``turn`` is None), rebuilt
    from the stored events and the snapshots before and after it."""
    from pbem.rules.events import event_from_dict

    results = _results(session, game)
    played = [i for i, r in enumerate(results) if r.seat is not None and r.turn > 0]
    if turn is not None:
        played = [i for i in played if results[i].turn == turn]
    if not played:
        return None
    i = played[-1]
    row = results[i]
    definition = definition_of(session, game)

    def state_of(result: TurnResult) -> GameState:
        data = json.loads(result.snapshot_json)
        return GameState.from_dict(data, definition.board, definition.options)

    after = state_of(row)
    before = state_of(results[i - 1]) if i else after
    events = tuple(event_from_dict(e) for e in json.loads(row.events_json))
    next_seat = after.current if after.phase != ENDED else None
    assert row.seat is not None  # a report is of a player's step
    return rc.TurnReport(
        info, row.turn, row.seat, events, before, after, row.state_hash, None, next_seat
    )


def render_turn(
    session: Session,
    ctx: Context,
    game: Game,
    turn: int | None,
    seat: int | None,
) -> RenderedMail:
    """`pbem render`: a stored turn's report as ``seat`` (None: the GM) sees it."""
    from pbem.service.errors import ServiceError

    report = stored_report(session, game_info(session, ctx, game), game, turn)
    if report is None:
        which = f"turn {turn}" if turn is not None else "any turn"
        raise ServiceError(f"game {game.name} has no report of {which} yet")
    return render.render_turn_report(report, seat)


def error_reply(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    in_reply_to: str,
    message: str,
    problems: list[OrderProblem],
) -> None:
    info = game_info(session, ctx, game)
    rendered = render.render_error_reply(
        rc.ErrorReply(
            address=player.address,
            problems=(rc.Problem(None, "", message),),
            game=info,
            seat=player.seat,
        )
    )
    queue(
        session,
        ctx,
        rendered,
        recipient=player.address,
        message_id=_message_id(ctx, "reply", in_reply_to),
        game=game,
        seat=player.seat,
        in_reply_to=in_reply_to,
    )


def unknown_sender(
    session: Session, ctx: Context, mail: DecodedMail, games: Sequence[str] = ()
) -> None:
    """Answer a mail that names no game pbem can take it for: the sender's own
    games, and how to name one (or, for a stranger, that this address plays
    in none)."""
    if games:
        listed = ", ".join(f"[{name}]" for name in games)
        text = (
            f"Your mail does not say which game it is for, and you play in {len(games)}: "
            f"{listed}. Put the game's name in the subject, like {'[' + games[0] + ']'}, "
            f"or a line GAME {games[0]} above your orders, and send it again. "
            "Nothing was applied."
        )
    else:
        text = (
            "This address plays in no game here, or the mail "
            "names no game. Put the game's name in the subject, like [world-1]."
        )
    rendered = render.render_error_reply(
        rc.ErrorReply(
            address=mail.sender,
            problems=(rc.Problem(None, "", text),),
            original_subject=mail.subject,
        )
    )
    queue(
        session,
        ctx,
        rendered,
        recipient=mail.sender,
        message_id=_message_id(ctx, "reply", mail.reply_key),
        game=None,
        in_reply_to=mail.message_id,
    )


def mail_held(
    session: Session, ctx: Context, message_id: str, sender: str, subject: str, why: str
) -> None:
    """Tell the GM, once, about a mail pbem failed to handle again and again
    (now in the held folder, nothing of it applied)."""
    gm = ctx.config.mail.gm_address
    if not gm:
        return
    text = (
        f"pbem could not process a mail after {ctx.config.poll.max_attempts} attempts; "
        "nothing of it was applied and nobody was answered. The raw mail is kept in the "
        "database and in the held folder of the game's mailbox. Once the cause is fixed, "
        "move it back to the inbox and the next poll takes it again.\n\n"
        f"From: {sender}\nSubject: {subject}\nMessage-ID: {message_id}\n\n"
        f"The last error:\n{why}"
    )
    rendered = render.render_gm_alert(
        rc.GmAlert("A mail is held: it could not be processed", text, None, gm)
    )
    queue(
        session,
        ctx,
        rendered,
        recipient=gm,
        message_id=_message_id(ctx, "internal-error", message_id),
        game=None,
    )


def auth_alert(
    session: Session, ctx: Context, game: Game, player: Player, mail: DecodedMail
) -> None:
    """A mail in this player's name failed authentication: tell the registered
    address (never the sender, who may be forging it)."""
    info = game_info(session, ctx, game)
    text = (
        f"A mail claiming to be from you ({mail.sender}) reached game {game.name} "
        f"without your password or a valid turn token, so nothing in it was applied.\n\n"
        f"Subject: {mail.subject}\nMessage-ID: {mail.message_id}\n\n"
        "If you sent it, reply to your latest 'your turn' mail, or add a line\n"
        "PASSWORD your-password to your orders. If you did not, someone may be\n"
        "trying to play in your name; the GM has been told too."
    )
    rendered = render.render_gm_alert(
        rc.GmAlert(
            subject="A mail in your name was refused",
            text=text,
            game=info,
            address=player.address,
        )
    )
    queue(
        session,
        ctx,
        rendered,
        recipient=player.address,
        message_id=_message_id(ctx, "alert", mail.reply_key),
        game=game,
        seat=player.seat,
    )
    gm = game.gm_address or ctx.config.mail.gm_address
    if gm:
        gm_mail = render.render_gm_alert(
            rc.GmAlert(
                subject=f"Authentication failed for {player.name}",
                text=f"A mail from {mail.sender} for {player.name} failed authentication "
                f"({mail.message_id}). Nothing was applied; {player.address} was told.",
                game=info,
                address=gm,
            )
        )
        queue(
            session,
            ctx,
            gm_mail,
            recipient=gm,
            message_id=_message_id(ctx, "gm-alert", mail.reply_key),
            game=game,
        )


def relay_press(session: Session, ctx: Context, game: Game, sender: Player, press) -> str:
    """PRESS TO name|ALL: relayed with the sender's name (or anonymously if the
    game allows it), a copy to the GM by option. Only players still in the
    game receive it; a ServiceError when nobody by that name does."""
    from pbem.service.errors import ServiceError

    info = game_info(session, ctx, game)
    settings = settings_of(game)
    players = [
        p for p in players_of(session, game) if p.seat != sender.seat and p.status == "active"
    ]
    to_all = press.to_all
    targets = (
        players if to_all else [p for p in players if p.name.lower() == press.recipient.lower()]
    )
    if not targets:
        raise ServiceError(f"no other player named {press.recipient} is in {game.name}")
    anonymous = bool(settings.get("press_anonymous"))
    seats = tuple(p.seat for p in targets)
    body = press.body
    message = rc.Press(info, None if anonymous else sender.seat, seats, body, to_all)
    for target in targets:
        rendered = render.render_press(message, target.seat)
        queue(
            session,
            ctx,
            rendered,
            recipient=target.address,
            message_id=_message_id(
                ctx, "press", game.name, sender.seat, target.seat, body, ctx.clock.now().isoformat()
            ),
            game=game,
            seat=target.seat,
        )
    if settings.get("press_copy_gm") and info.gm_address:
        rendered = render.render_gm_alert(
            rc.GmAlert(f"Press from {sender.name} to {press.recipient}", body, info)
        )
        queue(
            session,
            ctx,
            rendered,
            recipient=info.gm_address,
            message_id=_message_id(
                ctx, "press-gm", game.name, sender.seat, body, ctx.clock.now().isoformat()
            ),
            game=game,
        )
    return f"press to {press.recipient}"


# --------------------------------------------------------- after a step
def after_steps(session: Session, ctx: Context, game: Game, steps: list[replay.Step]) -> None:
    """Reports to every player (and the GM) for each adjudicated step, then the
    notice to whoever must act next; the parts every reader shares rendered once."""
    with render_once():
        _after_steps(session, ctx, game, steps)


def _after_steps(session: Session, ctx: Context, game: Game, steps: list[replay.Step]) -> None:
    if not steps:
        return
    info = game_info(session, ctx, game)
    players = players_of(session, game)
    last = steps[-1]
    for step in steps:
        if step.seat is None or step.before is None:
            continue
        if step.entries and step.entries[-1].kind == "command":
            _announce_command(session, ctx, game, step)
            continue
        report = rc.TurnReport(
            info,
            step.turn,
            step.seat,
            tuple(step.events),
            step.before,
            step.state,
            step.state_hash,
            game.deadline,
            step.state.current if step.state.phase != ENDED else None,
            missed=any(e.source == "default" and e.kind == "turn" for e in step.entries),
            by_gm=any(e.source == "gm" and e.kind == "turn" for e in step.entries),
            dice_inputs=_dice_inputs(step, players),
        )
        for p in players:
            if p.seat != step.seat and mail_mode(game, p.seat) != "every":
                continue  # SET MAIL MYTURN / DIGEST: others' turns come in the digest
            rendered = render.render_turn_report(report, p.seat)
            queue(
                session,
                ctx,
                rendered,
                recipient=p.address,
                message_id=_message_id(
                    ctx, "report", game.name, step.state_hash, p.seat, *_epoch(game)
                ),
                game=game,
                seat=p.seat,
            )
        if info.gm_address:
            rendered = render.render_turn_report(report, None)
            queue(
                session,
                ctx,
                rendered,
                recipient=info.gm_address,
                message_id=_message_id(
                    ctx, "report", game.name, step.state_hash, "gm", *_epoch(game)
                ),
                game=game,
            )
    state = last.state
    if state.phase == ENDED:
        from pbem.service.archive import export_record

        over = rc.GameOver(game_info(session, ctx, game), state)
        record = (f"{game.name}.pgn", export_record(session, game))
        for p in players:
            queue(
                session,
                ctx,
                render.render_game_over(over, p.seat),
                recipient=p.address,
                message_id=_message_id(ctx, "over", game.name, p.seat, *_epoch(game)),
                game=game,
                seat=p.seat,
                attachment=record,
            )
        return
    prompt_next(session, ctx, game, state, info)


def _dice_inputs(step: replay.Step, players: list) -> tuple[tuple[str, str, str], ...]:
    """Whose contribution went into the step's dice (v2), as the turn report names it."""
    names = {p.seat: p.name for p in players}
    return tuple(
        (names.get(seat, "the GM") if seat is not None else "the GM", kind, digest)
        for (seat, digest), entry in zip(step.contributions, step.entries, strict=False)
        for kind in ("SALT" if salt_of(entry.text) is not None else "orders",)
    )


def _announce_command(session: Session, ctx: Context, game: Game, step: replay.Step) -> None:
    """A resignation is news for everyone, but no turn: an announcement, not a
    turn report (a removal is announced by whoever removed the player)."""
    entry = step.entries[-1]
    if entry.text.strip().upper() != "RESIGN" or entry.seat is None:
        return
    name = step.state.players[entry.seat].name
    announce(session, ctx, game, f"{name} has resigned; their territories are neutral now.")


def _setup_round(state: GameState) -> tuple[str, ...]:
    """The setup step a prompt is for: the phase, and with claim = turns the
    territories still free (one prompt per round of claims)."""
    if state.phase == "claim" and state.options.claim == "turns":
        return (state.phase, str(state.owner.count(-1)))
    return (state.phase,)


def prompt_next(
    session: Session,
    ctx: Context,
    game: Game,
    state: GameState,
    info: rc.GameInfo | None = None,
) -> None:
    """The 'your turn' notice (with its token), or the setup prompt to everyone."""
    info = info or game_info(session, ctx, game)
    players = players_of(session, game)
    if state.phase in SETUP_PHASES:
        for p in players:
            prompt = rc.SetupPrompt(info, state, p.seat, game.deadline)
            queue(
                session,
                ctx,
                render.render_setup_prompt(prompt),
                recipient=p.address,
                message_id=_message_id(
                    ctx, "setup", game.name, *_setup_round(state), p.seat, p.address
                ),
                game=game,
                seat=p.seat,
            )
        return
    seat = state.current
    if seat in settings_of(game).get("bot_seats", []):  # the bot moves at once
        return
    player = players[seat]
    token = turn_token(bytes.fromhex(game.secret), game.name, seat, state.turn)
    since = tuple(catchup.since_last_turn(session, game, player, state))
    notice = rc.YourTurn(info, state, seat, token, game.deadline, since)
    queue(
        session,
        ctx,
        render.render_your_turn(notice),
        recipient=player.address,
        message_id=_message_id(
            ctx, "turn", game.name, state.turn, seat, player.address, *_epoch(game)
        ),
        game=game,
        seat=seat,
        attachment=_deadline_ics(ctx, game, state, player),
        attachment_type="calendar",
    )


def _deadline_ics(
    ctx: Context, game: Game, state: GameState, player: Player
) -> tuple[str, str] | None:
    """The deadline of this turn as a calendar file, when the game has deadlines."""
    if game.deadline is None:
        return None
    due = ics.Deadline(game.name, state.turn, player.name, game.deadline, player.seat)
    text = ics.calendar([due], host_of(ctx), ctx.clock.now())
    return f"{game.name}-turn{state.turn}.ics", text


def game_start(
    session: Session,
    ctx: Context,
    game: Game,
    passwords: dict[str, str],
    only_seat: int | None = None,
    holder: str = "",
) -> None:
    """The first mail to each player (or to ``holder``, the new holder of one
    seat: a welcome to the game under way, with the seat's cards): rules,
    map, turn order, their own password, the dice commitment. The first one
    to a seat is the root of that player's thread for the game."""
    state = load(session, game).state
    if only_seat is None:
        schedule.start_period(session, ctx, game, state)
    info = game_info(session, ctx, game)
    for p in players_of(session, game):
        if only_seat is not None and p.seat != only_seat:
            continue
        start = rc.GameStart(
            info, state, p.seat, passwords.get(p.name, ""), game.deadline, holder, game.turn
        )
        if only_seat is None:
            message_id, thread = thread_root_id(game.name, p.seat, host_of(ctx)), None
        else:
            message_id = _message_id(ctx, "start", game.name, p.seat, p.address, game.turn)
            thread = game
        queue(
            session,
            ctx,
            render.render_game_start(start),
            recipient=p.address,
            message_id=message_id,
            game=thread,
            seat=p.seat,
        )
    if only_seat is not None:
        return
    if state.phase not in SETUP_PHASES and state.phase != ENDED:
        prompt_next(session, ctx, game, state, info)


# ------------------------------------------------------------ deadlines
def reminder(session: Session, ctx: Context, game: Game, state: GameState, player: Player) -> None:
    info = game_info(session, ctx, game)
    token = None
    if state.phase not in SETUP_PHASES:
        token = turn_token(bytes.fromhex(game.secret), game.name, player.seat, state.turn)
    conf = settings(game)
    notice = rc.Reminder(
        info,
        state,
        player.seat,
        token,
        game.deadline,
        player.missed_in_row,
        conf["remove_after_misses"],
        float(conf["grace_hours"]),
        str(conf["on_removal"]),
    )
    queue(
        session,
        ctx,
        render.render_reminder(notice),
        recipient=player.address,
        message_id=_message_id(
            ctx,
            "reminder",
            game.name,
            state.turn,
            state.phase,
            player.seat,
            ctx.clock.now().isoformat(),
        ),
        game=game,
        seat=player.seat,
    )


def announce(session: Session, ctx: Context, game: Game, text: str, subject: str = "") -> None:
    """A note from the GM to every player of the game (and the GM)."""
    info = game_info(session, ctx, game)
    subject = subject or text.split(";")[0].split(".")[0][:60]
    stamp = ctx.clock.now().isoformat()
    for p in players_of(session, game):
        rendered = render.render_gm_alert(rc.GmAlert(subject, text, info, p.address))
        queue(
            session,
            ctx,
            rendered,
            recipient=p.address,
            message_id=_message_id(ctx, "announce", game.name, text, p.seat, stamp),
            game=game,
            seat=p.seat,
        )
    gm_note(session, ctx, game, text, key=f"announce:{stamp}", subject=subject)


def gm_note(
    session: Session, ctx: Context, game: Game, text: str, key: str, subject: str = ""
) -> None:
    info = game_info(session, ctx, game)
    if not info.gm_address:
        return
    subject = subject or "Note for the GM"
    rendered = render.render_gm_alert(rc.GmAlert(subject, text, info, info.gm_address))
    queue(
        session,
        ctx,
        rendered,
        recipient=info.gm_address,
        message_id=_message_id(ctx, "gm-note", game.name, key, text),
        game=game,
    )


def late_notice(
    session: Session, ctx: Context, game: Game, state: GameState, names: list[str]
) -> None:
    grace = settings(game)["grace_hours"]
    who = ", ".join(names) or "nobody"
    what = "for setup orders" if state.phase in SETUP_PHASES else f"of turn {state.turn}"
    announce(
        session,
        ctx,
        game,
        f"The deadline {what} has passed; still waiting for {who}. "
        f"After {grace:g} more hours the default orders are played.",
        subject=f"Deadline passed, waiting for {who}",
    )


def missed_turn(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    turn: int,
    removed: bool,
) -> None:
    info = game_info(session, ctx, game)
    conf = settings(game)
    limit = conf["remove_after_misses"]
    text = (
        f"No valid orders from you arrived for turn {turn} by the end of the grace "
        f"period, so the default orders were played for you (forced trades, armies "
        f"spread on your borders, no attacks).\n\nTurns missed in a row: "
        f"{player.missed_in_row}" + (f" of {limit} allowed." if limit else ".")
    )
    n, m = conf["remove_after_of_last"]
    if n and m:
        recent = sum(json.loads(player.misses_json or "[]")[-m:])
        text += f"\nTurns missed among your last {m}: {recent} (removal at {n})."
    if removed:
        text += "\n\nBy the rules of this game you are now removed from it."
    rendered = render.render_gm_alert(
        rc.GmAlert(f"You missed turn {turn}", text, info, player.address)
    )
    queue(
        session,
        ctx,
        rendered,
        recipient=player.address,
        message_id=_message_id(ctx, "missed", game.name, turn, player.seat, *_epoch(game)),
        game=game,
        seat=player.seat,
    )
