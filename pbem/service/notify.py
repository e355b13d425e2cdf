"""When the service mails, and to whom: every mail of a game, queued in the
outbox of the current transaction.

What each mail says is the report layer's (report/render.py and its
templates, report/letters.py for the service's own prose); this module
decides who gets which mail and when, and hands each to ``outmail.post``,
which gives it a stable Message-ID from what it is about, threads it and
adds the outbox row. Nothing is sent here: the outbox sender does that
after the commit.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import Session, select

from pbem import orders
from pbem.log import replay
from pbem.mail.decode import DecodedMail
from pbem.orders import OrderProblem
from pbem.report import context as rc
from pbem.report import ics, letters, render
from pbem.report.mime import RenderedMail, thread_root_id
from pbem.report.shared import render_once
from pbem.rules.dice import salt_of
from pbem.rules.state import CLAIM, ENDED, SETUP_PHASES, GameState
from pbem.service import catchup, history, schedule
from pbem.service.context import Context
from pbem.service.games import load, players_of
from pbem.service.outmail import epoch, game_info, host_of, post, queue
from pbem.service.passwords import turn_token
from pbem.service.settings import mail_mode, settings, settings_of
from pbem.store import Game, Player, PressRecord, id_of
from pbem.vocab import SeatStatus


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


# --------------------------------------------------------------- replies
def send_reply(session: Session, ctx: Context, reply: Reply) -> None:
    """Exactly one answer per mail: the errors, else the receipt, plus any
    command answers (STATUS, MAP, HISTORY, HELP) asked for."""
    game, player, mail = reply.game, reply.player, reply.mail
    info = game_info(session, ctx, game)
    rendered = None
    if reply.problems or reply.problems_text:
        problems = letters.problems_of(reply.problems, reply.text)
        if reply.problems_text:
            problems += (rc.Problem(None, "", reply.problems_text),)
        rendered = render.render_error_reply(
            rc.ErrorReply(
                address=player.address,
                problems=problems,
                game=info,
                seat=player.seat,
                original_subject=letters.quote_subject(mail.subject),
                turn=game.turn,
            )
        )
    elif reply.canonical or not reply.commands:
        played = bool(reply.canonical) and not (reply.check_only or reply.held or reply.waiting)
        rendered = render.render_receipt(
            rc.Receipt(
                game=info,
                seat=player.seat,
                turn=reply.turn or game.turn,
                orders_text=letters.receipt_orders(reply.canonical, reply.notes),
                adjudicated=played,
                check_only=reply.check_only,
                forecast=tuple(reply.forecast),
                setup=reply.setup,
                late=reply.late,
            )
        )
    answers: list[tuple[tuple[object, ...], RenderedMail | None]] = [
        (("reply", mail.reply_key), rendered)
    ]
    for i, cmd in enumerate(reply.commands):
        answer = _command_answer(session, info, game, player, cmd)
        answers.append((("answer", mail.reply_key, i), answer))
    for about, answer in answers:
        if answer is not None:
            post(
                session,
                ctx,
                answer,
                player.address,
                about,
                game=game,
                seat=player.seat,
                in_reply_to=mail.message_id,
            )


def _command_answer(
    session: Session, info: rc.GameInfo, game: Game, player: Player, cmd
) -> RenderedMail | None:
    if isinstance(cmd, orders.Help):
        return render.render_help(rc.Help(player.address, orders.help_text(info.board), info))
    if isinstance(cmd, orders.Status | orders.ShowMap):
        state = load(session, game).state
        return render.render_status(rc.Status(info, state, game.deadline), player.seat)
    if isinstance(cmd, orders.History):
        if cmd.turn is None:
            return letters.turns_played(info, player.address, history.turns_played(session, game))
        report = history.stored_report(session, info, game, cmd.turn)
        if report is None:
            return letters.no_report(info, player.address, cmd.turn)
        return render.render_turn_report(report, player.seat)
    return None


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
    rendered = letters.refusal(info, player.address, player.seat, message)
    post(
        session,
        ctx,
        rendered,
        player.address,
        ("reply", in_reply_to),
        game=game,
        seat=player.seat,
        in_reply_to=in_reply_to,
    )


def unknown_sender(
    session: Session, ctx: Context, mail: DecodedMail, games: Sequence[str] = ()
) -> None:
    """Answer a mail that names no game pbem can take it for (report/letters.py)."""
    rendered = letters.unknown_game(mail.sender, mail.subject, games)
    post(
        session,
        ctx,
        rendered,
        mail.sender,
        ("reply", mail.reply_key),
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
    attempts = ctx.config.poll.max_attempts
    rendered = letters.mail_held(gm, attempts, message_id, sender, subject, why)
    line = letters.held_line(message_id, sender, subject)
    _to_gm(session, ctx, gm, rendered, ("internal-error", message_id), None, line)


def _to_gm(
    session: Session,
    ctx: Context,
    gm: str,
    rendered: RenderedMail,
    about: tuple[object, ...],
    game: Game | None,
    line: str,
) -> None:
    """A held/alert mail for the GM, within the GM's alert budget of the hour;
    past it the alert is folded into the GM's digest (pbem.service.digest)."""
    from pbem.service import digest
    from pbem.service.ratelimit import gm_alert_allowed

    if gm_alert_allowed(session, ctx, gm):
        post(session, ctx, rendered, gm, about, game=game)
    else:
        digest.fold_gm_alert(session, ctx, gm, rendered.subject, line)


def auth_alert(
    session: Session, ctx: Context, game: Game, player: Player, mail: DecodedMail
) -> None:
    """A mail in this player's name failed authentication: tell the registered
    address (never the sender, who may be forging it), and the GM."""
    info = game_info(session, ctx, game)
    rendered = letters.auth_refused(
        info, player.address, mail.sender, mail.subject, mail.message_id
    )
    about = ("alert", mail.reply_key)
    post(session, ctx, rendered, player.address, about, game=game, seat=player.seat)
    gm = game.gm_address or ctx.config.mail.gm_address
    if gm:
        rendered = letters.auth_failed_for_gm(
            info, gm, mail.sender, player.name, player.address, mail.message_id
        )
        line = letters.held_line(mail.message_id, mail.sender, mail.subject)
        _to_gm(session, ctx, gm, rendered, ("gm-alert", mail.reply_key), game, line)


def relay_press(
    session: Session,
    ctx: Context,
    game: Game,
    sender: Player,
    press: orders.Press,
    source: str = "",
) -> str:
    """PRESS TO name|ALL: relayed with the sender's name (or anonymously if the
    game allows it), a copy to the GM by option, and kept as a PressRecord (the
    site's only source of press). Only players still in the game receive it; a
    ServiceError when nobody by that name does.

    Once: the record's key is made from ``source`` (the inbound mail's reply
    key) and the press block's place in it, and a key already stored is not
    relayed again; the record and the mails commit in one transaction, so a
    rolled-back (retried) transaction leaves neither. Anonymous press gets a
    random Message-ID: nothing in its headers is computable from the sender."""
    from pbem.service.errors import ServiceError

    info = game_info(session, ctx, game)
    stored = settings_of(game)
    players = [
        p
        for p in players_of(session, game)
        if p.seat != sender.seat and p.status == SeatStatus.ACTIVE
    ]
    to_all = press.to_all
    targets = (
        players if to_all else [p for p in players if p.name.lower() == press.recipient.lower()]
    )
    if not targets:
        raise ServiceError(f"no other player named {press.recipient} is in {game.name}")
    done = f"press to {press.recipient}"
    anonymous = bool(stored.get("press_anonymous"))
    copy_gm = bool(stored.get("press_copy_gm")) and bool(info.gm_address)
    now = ctx.clock.now()
    body = press.body
    key = _press_key(game, sender, press, source or now.isoformat())
    if session.exec(select(PressRecord.id).where(PressRecord.key == key)).first() is not None:
        return done  # relayed by a transaction that committed: not twice
    seats = tuple(p.seat for p in targets)
    session.add(
        PressRecord(
            game_id=id_of(game),
            turn=game.turn,
            sender_seat=None if anonymous and not copy_gm else sender.seat,
            sender_name="" if anonymous else sender.name,
            anonymous=anonymous,
            to_all=to_all,
            recipients_json=json.dumps(list(seats)),
            body=body.replace("\x00", ""),  # a value both engines store
            sent_at=now,
            key=key,
        )
    )
    message = rc.Press(info, None if anonymous else sender.seat, seats, body, to_all)
    for target in targets:
        rendered = render.render_press(message, target.seat)
        if anonymous:
            mid = f"<{secrets.token_hex(16)}@{host_of(ctx)}>"
            to = target.address
            queue(session, ctx, rendered, recipient=to, message_id=mid, game=game, seat=target.seat)
        else:
            about = ("press", game.name, sender.seat, target.seat, body, now.isoformat())
            post(session, ctx, rendered, target.address, about, game=game, seat=target.seat)
    if copy_gm:
        rendered = letters.press_copy(info, sender.name, press.recipient, body)
        copy = ("press-gm", game.name, sender.seat, body, now.isoformat())
        post(session, ctx, rendered, info.gm_address, copy, game=game)
    return done


def _press_key(game: Game, sender: Player, press: orders.Press, source: str) -> str:
    """Where one press block came from (the game, the sender, the mail, the block's
    place in it and its text), hashed: the same block relayed again has the same key."""
    parts = (game.id, game.name, sender.seat, source, press.line, press.column, press.recipient)
    text = "\x00".join(str(p) for p in parts) + "\x00" + press.body
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
            about = ("report", game.name, step.state_hash, p.seat, *epoch(game))
            post(session, ctx, rendered, p.address, about, game=game, seat=p.seat)
        if info.gm_address:
            rendered = render.render_turn_report(report, None)
            about = ("report", game.name, step.state_hash, "gm", *epoch(game))
            post(session, ctx, rendered, info.gm_address, about, game=game)
    state = last.state
    if state.phase == ENDED:
        from pbem.service.archive import export_record

        over = rc.GameOver(game_info(session, ctx, game), state)
        record = (f"{game.name}.pgn", export_record(session, game))
        for p in players:
            post(
                session,
                ctx,
                render.render_game_over(over, p.seat),
                p.address,
                ("over", game.name, p.seat, *epoch(game)),
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
    announce(session, ctx, game, letters.resigned(step.state.players[entry.seat].name))


def _setup_round(state: GameState) -> tuple[str, ...]:
    """The setup step a prompt is for: the phase, and with claim = turns the
    territories still free (one prompt per round of claims)."""
    if state.phase == CLAIM and state.options.claim == "turns":
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
            about = ("setup", game.name, *_setup_round(state), p.seat, p.address)
            rendered = render.render_setup_prompt(prompt)
            post(session, ctx, rendered, p.address, about, game=game, seat=p.seat)
        return
    seat = state.current
    if seat in settings_of(game).get("bot_seats", []):  # the bot moves at once
        return
    player = players[seat]
    token = turn_token(bytes.fromhex(game.secret), game.name, seat, state.turn)
    since = tuple(catchup.since_last_turn(session, game, player, state))
    notice = rc.YourTurn(info, state, seat, token, game.deadline, since)
    post(
        session,
        ctx,
        render.render_your_turn(notice),
        player.address,
        ("turn", game.name, state.turn, seat, player.address, *epoch(game)),
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
        rendered = render.render_game_start(start)
        if only_seat is None:  # the root of the seat's thread: its id is the thread's
            root = thread_root_id(game.name, p.seat, host_of(ctx))
            queue(
                session, ctx, rendered, recipient=p.address, message_id=root, game=None, seat=p.seat
            )
        else:
            about = ("start", game.name, p.seat, p.address, game.turn)
            post(session, ctx, rendered, p.address, about, game=game, seat=p.seat)
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
    stamp = ctx.clock.now().isoformat()
    about = ("reminder", game.name, state.turn, state.phase, player.seat, stamp)
    rendered = render.render_reminder(notice)
    post(session, ctx, rendered, player.address, about, game=game, seat=player.seat)


def announce(session: Session, ctx: Context, game: Game, text: str, subject: str = "") -> None:
    """A note from the GM to every player of the game (and the GM)."""
    info = game_info(session, ctx, game)
    subject = subject or text.split(";")[0].split(".")[0][:60]
    stamp = ctx.clock.now().isoformat()
    for p in players_of(session, game):
        rendered = render.render_gm_alert(rc.GmAlert(subject, text, info, p.address))
        about = ("announce", game.name, text, p.seat, stamp)
        post(session, ctx, rendered, p.address, about, game=game, seat=p.seat)
    gm_note(session, ctx, game, text, key=f"announce:{stamp}", subject=subject)


def gm_note(
    session: Session, ctx: Context, game: Game, text: str, key: str, subject: str = ""
) -> None:
    info = game_info(session, ctx, game)
    if not info.gm_address:
        return
    subject = subject or "Note for the GM"
    rendered = render.render_gm_alert(rc.GmAlert(subject, text, info, info.gm_address))
    post(session, ctx, rendered, info.gm_address, ("gm-note", game.name, key, text), game=game)


def late_notice(
    session: Session, ctx: Context, game: Game, state: GameState, names: list[str]
) -> None:
    grace = settings(game)["grace_hours"]
    who = ", ".join(names) or "nobody"
    what = "for setup orders" if state.phase in SETUP_PHASES else f"of turn {state.turn}"
    text, subject = letters.deadline_passed(what, who, grace)
    announce(session, ctx, game, text, subject=subject)


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
    n, m = conf["remove_after_of_last"]
    of_last = None
    if n and m:
        of_last = (sum(json.loads(player.misses_json or "[]")[-m:]), m, n)
    rendered = letters.missed_turn(
        info,
        player.address,
        turn,
        player.missed_in_row,
        conf["remove_after_misses"],
        of_last,
        removed,
    )
    about = ("missed", game.name, turn, player.seat, *epoch(game))
    post(session, ctx, rendered, player.address, about, game=game, seat=player.seat)
