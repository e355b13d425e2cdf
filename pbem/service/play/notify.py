"""When the service mails, and to whom: every mail of a game, decided as a
notice in the current transaction.

What each mail says is the report layer's (report/render.py and its
templates, report/letters.py for the service's own prose); this module
decides who gets which mail and when, and records each as a notice
(pbem/service/play/notices.py): its kind, its recipient, the stable Message-ID
it will have (made from what it is about), the step of the order log it is
about and the few inputs the store does not keep. Nothing is rendered or
sent here: after the commit, pbem/service/tell/telling.py renders the notices and
queues them in the outbox, and the outbox sender sends them.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbem import orders
from pbem.mail.decode import DecodedMail
from pbem.orderlog import replay
from pbem.orders import OrderProblem
from pbem.report import context as rc
from pbem.report import letters, moving
from pbem.report.mime import thread_root_id
from pbem.rules.state import CLAIM, ENDED, ROUND, SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.play import catchup, history, notices, roundmail, schedule
from pbem.service.play.games import players_of
from pbem.service.play.gamesettings import mail_mode, settings, settings_of
from pbem.service.play.mailinfo import epoch, game_info, host_of
from pbem.service.play.notices import alert, iso, seq_now, step_seqs  # noqa: F401 - alert: notify.alert
from pbem.service.play.passwords import reply_token
from pbem.service.play.teamplay import press_targets
from pbem.store import Game, Player, PressRecord, id_of
from pbem.vocab import GamePhase, GameStatus, Refusal, SeatStatus
from pbem.vocab import NoticeKind as K


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
    changes: list[bool] = field(default_factory=list)  # per ABSENT, SET, RESIGN: changed?


# --------------------------------------------------------------- replies
def send_reply(session: Session, ctx: Context, reply: Reply) -> None:
    """Exactly one answer per mail: the errors, else the receipt, plus any
    command answers (STATUS, MAP, HISTORY, HELP) asked for."""
    game, player, mail = reply.game, reply.player, reply.mail
    info = game_info(session, ctx, game)
    step = seq_now(session, game)
    common: dict[str, Any] = {
        "game": game,
        "seat": player.seat,
        "step": step,
        "in_reply_to": mail.message_id,
        "token": reply_token(game, player.seat),
    }
    about = ("reply", mail.reply_key)
    if reply.problems or reply.problems_text:
        problems = letters.problems_of(reply.problems, reply.text)
        if reply.problems_text:
            problems += (rc.Problem(None, "", reply.problems_text),)
        subject = letters.quote_subject(mail.subject)  # quoted in the body, not the subject
        notices.add(
            session, ctx, K.ERRORS, player.address, about=about, info=info, **common,
            problems=[[p.line_no, p.line, p.message, p.fix, p.with_fix, p.more] for p in problems],
            subject=subject, turn=game.turn, check=reply.check_only,
        )  # fmt: skip
    elif reply.canonical or not reply.commands:
        played = bool(reply.canonical) and not (reply.check_only or reply.held or reply.waiting)
        notices.add(
            session, ctx, K.RECEIPT, player.address, about=about, info=info, **common,
            turn=reply.turn or game.turn, played=played, check=reply.check_only,
            orders=letters.receipt_orders(reply.canonical, reply.notes),
            forecast=list(reply.forecast), setup=reply.setup, late=iso(reply.late),
            # no orders: ABSENT, SET or RESIGN (changes), or press alone (what its notes say)
            no_orders=not reply.canonical, changed=any(reply.changes) or not reply.changes,
        )  # fmt: skip
    for i, cmd in enumerate(reply.commands):
        _command_answer(
            session, ctx, info, game, player, cmd, ("answer", mail.reply_key, i), common
        )


def _command_answer(
    session: Session,
    ctx: Context,
    info: rc.GameInfo,
    game: Game,
    player: Player,
    cmd: object,
    about: tuple[object, ...],
    common: dict[str, Any],
) -> None:
    to = player.address
    if isinstance(cmd, orders.Help):
        games = _games_of(session, to)
        notices.add(session, ctx, K.HELP, to, about=about, info=info, **common, games=games)
    elif isinstance(cmd, orders.Status | orders.ShowMap):
        deadline = iso(game.deadline)
        notices.add(session, ctx, K.STATUS, to, about=about, info=info, **common, deadline=deadline)
    elif isinstance(cmd, orders.History):
        if cmd.turn is None:
            turns = history.turns_played(session, game)
            notices.add(session, ctx, K.HISTORY, to, about=about, info=info, **common, turns=turns)
            return
        notices.add(session, ctx, K.HISTORY, to, about=about, info=info, **common, turn=cmd.turn)


def _games_of(session: Session, address: str) -> list[str]:
    """The running games an address plays in, by name (the HELP answer lists them)."""
    rows = session.exec(
        select(Game.name)
        .where(Player.game_id == Game.id, Player.address == address)
        .where(Game.status != GameStatus.FINISHED)
    )
    return sorted(set(rows))[:20]


def turn_over(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    mail: DecodedMail,
    stale: int,
    state: GameState,
    resigning: bool,
) -> None:
    """The answer to a reply to a mail of an earlier turn: that turn is over,
    where the game is now, and the seat's current token (so that replying to
    this answer works)."""
    info, token, letter = game_info(session, ctx, game), reply_token(game, player.seat), "turn_over"
    mover = state.players[state.current].name if state.current >= 0 else ""
    args = [player.address, player.seat, stale, game.turn, mover, resigning, token]
    if state.phase == ROUND:  # freestyle: an earlier round's mail
        waiting = moving.waiting_for_names(state)
        letter, args = "round_over", [player.address, player.seat, state.round, waiting,
                                      resigning, token]  # fmt: skip
    notices.add(
        session, ctx, K.LETTER, player.address, about=("reply", mail.reply_key), game=game,
        seat=player.seat, in_reply_to=mail.message_id, info=info, letter=letter, args=args,
    )  # fmt: skip


def stranger_help(session: Session, ctx: Context, mail: DecodedMail) -> None:
    """HELP from an address that plays in no game here: how to join an open game."""
    rows = session.exec(
        select(Game).where(Game.phase == GamePhase.OPEN).order_by(col(Game.name)).limit(10)
    )
    open_games = []
    for game in rows:
        seats = int(json.loads(game.settings_json or "{}").get("seats", 0))
        open_games.append([game.name, max(0, seats - len(players_of(session, game))), seats])
    args = [mail.sender, open_games, ctx.config.mail.gm_address]
    notices.add(
        session, ctx, K.LETTER, mail.sender, about=("reply", mail.reply_key), game=None,
        in_reply_to=mail.message_id, letter="stranger_help", args=args,
    )  # fmt: skip


def error_reply(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    in_reply_to: str,
    message: str,
    problems: list[OrderProblem],
) -> None:
    info, token = game_info(session, ctx, game), reply_token(game, player.seat)
    notices.add(
        session, ctx, K.LETTER, player.address, about=("reply", in_reply_to), game=game,
        seat=player.seat, in_reply_to=in_reply_to, info=info,
        letter="refusal", args=[player.address, player.seat, message, token],
    )  # fmt: skip


def unknown_sender(
    session: Session, ctx: Context, mail: DecodedMail, games: Sequence[str] = ()
) -> None:
    """Answer a mail that names no game pbem can take it for (report/letters.py)."""
    notices.add(
        session, ctx, K.LETTER, mail.sender, about=("reply", mail.reply_key), game=None,
        in_reply_to=mail.message_id,
        letter="unknown_game", args=[mail.sender, mail.subject, list(games)],
    )  # fmt: skip


def mail_held(
    session: Session, ctx: Context, message_id: str, sender: str, subject: str, why: str
) -> None:
    """Tell the GM, once, about a mail pbem failed to handle again and again
    (now in the held folder, nothing of it applied)."""
    gm = ctx.config.mail.gm_address
    if not gm:
        return
    attempts = ctx.config.poll.max_attempts
    args = [gm, attempts, message_id, sender, subject, why]
    line = letters.held_line(message_id, sender, subject)
    _to_gm(session, ctx, gm, ("internal-error", message_id), None, line,
           letter="mail_held", args=args)  # fmt: skip


def _to_gm(
    session: Session,
    ctx: Context,
    gm: str,
    about: tuple[object, ...],
    game: Game | None,
    line: str,
    **letter: Any,
) -> None:
    """A held/alert mail for the GM, within the GM's alert budget of the hour;
    past it the alert is folded into the GM's digest (pbem.service.play.digest)."""
    from pbem.service.play import digest
    from pbem.service.play.ratelimit import gm_alert_allowed

    if gm_alert_allowed(session, ctx, gm):
        notices.add(session, ctx, K.LETTER, gm, about=about, game=game, **letter)
    else:  # the subject the alert would have had, in the digest's line
        args = [letter["info"], *letter["args"]] if "info" in letter else letter["args"]
        subject = getattr(letters, letter["letter"])(*args).subject
        digest.fold_gm_alert(session, ctx, gm, subject, line)


def auth_alert(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    mail: DecodedMail,
    cause: Refusal = Refusal.WRONG_PASSWORD,
) -> None:
    """A mail in this player's name failed authentication: tell the registered
    address (never the sender, who may be forging it) why, with the seat's
    current token, and the GM."""
    info = game_info(session, ctx, game)
    token = reply_token(game, player.seat)
    args: list[object] = [
        player.address, mail.sender, mail.subject, mail.message_id, str(cause), player.seat,
        token,
    ]  # fmt: skip
    notices.add(
        session, ctx, K.LETTER, player.address, about=("alert", mail.reply_key), game=game,
        seat=player.seat, info=info, letter="auth_refused", args=args,
    )  # fmt: skip
    gm = game.gm_address or ctx.config.mail.gm_address
    if gm:
        args = [gm, mail.sender, player.name, player.address, mail.message_id, str(cause)]
        line = letters.held_line(mail.message_id, mail.sender, mail.subject)
        _to_gm(session, ctx, gm, ("gm-alert", mail.reply_key), game, line,
               info=info, letter="auth_failed_for_gm", args=args)  # fmt: skip


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
    relayed again; the record and the notices commit in one transaction, so a
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
    targets = press_targets(game, sender.seat, press, players)  # (TO TEAM: the teammates)
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
    message: dict[str, Any] = {
        "sender": None if anonymous else sender.seat,
        "seats": list(seats),
        "body": body,
    }
    for target in targets:
        to = target.address
        if anonymous:
            mid = f"<{secrets.token_hex(16)}@{host_of(ctx)}>"
            about: tuple[object, ...] = ()
        else:
            mid = ""
            about = ("press", game.name, sender.seat, target.seat, body, now.isoformat())
        notices.add(
            session, ctx, K.PRESS, to, about=about, mid=mid, game=game, seat=target.seat,
            info=info, all=to_all, token=reply_token(game, target.seat), **message,
        )  # fmt: skip
    if copy_gm:
        copy = ("press-gm", game.name, sender.seat, body, now.isoformat())
        notices.add(
            session, ctx, K.LETTER, info.gm_address, about=copy, game=game, info=info,
            letter="press_copy", args=[sender.name, press.recipient, body],
        )  # fmt: skip
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
    notice to whoever must act next."""
    if not steps:
        return
    info = game_info(session, ctx, game)
    players = players_of(session, game)
    seqs = step_seqs(session, game, steps)
    deadline = iso(game.deadline)
    for step, seq in zip(steps, seqs, strict=True):
        if step.seat is None and step.turn == 0 and step.state.phase not in SETUP_PHASES:
            _setup_report(session, ctx, game, step, seq, info, players)
        if step.seat is None or step.before is None:
            continue
        if step.entries and step.entries[-1].kind == "command":
            _announce_command(session, ctx, game, step)
            continue
        common: dict[str, Any] = {"game": game, "step": seq, "info": info, "deadline": deadline}
        for p in players:
            if p.seat != step.seat and mail_mode(game, p.seat) != "every":
                continue  # SET MAIL MYTURN / DIGEST: others' turns come in the digest
            about = ("report", game.name, step.state_hash, p.seat, *epoch(game))
            notices.add(session, ctx, K.REPORT, p.address, about=about, seat=p.seat, **common,
                        hash=step.state_hash, token=reply_token(game, p.seat))  # fmt: skip
        if info.gm_address:
            about = ("report", game.name, step.state_hash, "gm", *epoch(game))
            notices.add(session, ctx, K.REPORT, info.gm_address, about=about, **common,
                        hash=step.state_hash)  # fmt: skip
    state = steps[-1].state
    if state.phase == ENDED:
        for p in players:
            about = ("over", game.name, p.seat, *epoch(game))
            notices.add(session, ctx, K.GAME_OVER, p.address, about=about, game=game,
                        seat=p.seat, step=seqs[-1], info=info,
                        token=reply_token(game, p.seat))  # fmt: skip
        return
    prompt_next(session, ctx, game, state, info, step=seqs[-1])


def _setup_report(
    session: Session,
    ctx: Context,
    game: Game,
    step: replay.Step,
    seq: int,
    info: rc.GameInfo,
    players: list[Player],
) -> None:
    """The setup's last step: the setup report to every player (whatever their
    SET MAIL) and the GM, each with their own cards and mission only."""
    common: dict[str, Any] = {"game": game, "step": seq, "info": info,
                              "deadline": iso(game.deadline), "hash": step.state_hash}  # fmt: skip
    for p in players:
        about = ("setup-report", game.name, step.state_hash, p.seat, *epoch(game))
        notices.add(session, ctx, K.SETUP_REPORT, p.address, about=about, seat=p.seat, **common,
                    token=reply_token(game, p.seat))  # fmt: skip
    if info.gm_address:
        about = ("setup-report", game.name, step.state_hash, "gm", *epoch(game))
        notices.add(session, ctx, K.SETUP_REPORT, info.gm_address, about=about, **common)


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
    step: int | None = None,
) -> None:
    """The 'your turn' notice (with its token), or the setup prompt to everyone;
    ``state`` is the game's state now (after log entry ``step``)."""
    info = info or game_info(session, ctx, game)
    step = seq_now(session, game) if step is None else step
    players = players_of(session, game)
    deadline = iso(game.deadline)
    if state.phase in SETUP_PHASES:
        for p in players:
            about = ("setup", game.name, *_setup_round(state), p.seat, p.address)
            notices.add(session, ctx, K.SETUP_PROMPT, p.address, about=about, game=game,
                        seat=p.seat, step=step, info=info, deadline=deadline,
                        token=reply_token(game, p.seat))  # fmt: skip
        return
    if state.phase == ROUND:  # freestyle: one "your move" mail a round to each still to move
        roundmail.round_open(session, ctx, game, state, info, step)
        return
    seat = state.current
    if seat in settings_of(game).get("bot_seats", []):  # the bot moves at once
        return
    player = players[seat]
    since = catchup.since_last_turn(session, game, player, state)
    about = ("turn", game.name, state.turn, seat, player.address, *epoch(game))
    notices.add(session, ctx, K.YOUR_TURN, player.address, about=about, game=game, seat=seat,
                step=step, info=info, deadline=deadline, since=list(since))  # fmt: skip


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
    from pbem.service.play.games import load

    state = load(session, game).state
    if only_seat is None:
        schedule.start_period(session, ctx, game, state)
    info = game_info(session, ctx, game)
    step = seq_now(session, game)
    deadline = iso(game.deadline)
    for p in players_of(session, game):
        if only_seat is not None and p.seat != only_seat:
            continue
        what: dict[str, Any] = {
            "password": passwords.get(p.name, ""),
            "holder": holder,
            "turn": game.turn,
            "token": reply_token(game, p.seat),
        }
        if only_seat is None:  # the root of the seat's thread: its id is the thread's
            root = thread_root_id(game.name, p.seat, host_of(ctx))
            notices.add(session, ctx, K.GAME_START, p.address, mid=root, game=game, seat=p.seat,
                        step=step, info=info, deadline=deadline, root=True, **what)  # fmt: skip
        else:
            about = ("start", game.name, p.seat, p.address, game.turn)
            notices.add(session, ctx, K.GAME_START, p.address, about=about, game=game,
                        seat=p.seat, step=step, info=info, deadline=deadline, **what)  # fmt: skip
    if only_seat is not None:
        return
    if state.phase not in SETUP_PHASES and state.phase != ENDED:
        prompt_next(session, ctx, game, state, info, step=step)


# ------------------------------------------------------------ deadlines
def reminder(session: Session, ctx: Context, game: Game, state: GameState, player: Player) -> None:
    info = game_info(session, ctx, game)
    token = reply_token(game, player.seat)  # the setup's too: a reply needs no password
    conf = settings(game)
    stamp = ctx.clock.now().isoformat()
    about = ("reminder", game.name, state.turn, state.phase, player.seat, stamp)
    notices.add(
        session, ctx, K.REMINDER, player.address, about=about, game=game, seat=player.seat,
        step=seq_now(session, game), info=info, token=token, deadline=iso(game.deadline),
        missed=player.missed_in_row, limit=conf["remove_after_misses"],
        grace=float(conf["grace_hours"]), on_removal=str(conf["on_removal"]),
    )  # fmt: skip


def announce(session: Session, ctx: Context, game: Game, text: str, subject: str = "") -> None:
    """A note from the GM to every player of the game (and the GM)."""
    info = game_info(session, ctx, game)
    subject = subject or text.split(";")[0].split(".")[0][:60]
    stamp = ctx.clock.now().isoformat()
    for p in players_of(session, game):
        about = ("announce", game.name, text, p.seat, stamp)
        notices.add(session, ctx, K.ALERT, p.address, about=about, game=game, seat=p.seat,
                    info=info, subject=subject, text=text,
                    token=reply_token(game, p.seat))  # fmt: skip
    gm_note(session, ctx, game, text, key=f"announce:{stamp}", subject=subject)


def gm_note(
    session: Session, ctx: Context, game: Game, text: str, key: str, subject: str = ""
) -> None:
    info = game_info(session, ctx, game)
    if not info.gm_address:
        return
    subject = subject or "Note for the GM"
    about = ("gm-note", game.name, key, text)
    notices.add(session, ctx, K.ALERT, info.gm_address, about=about, game=game, info=info,
                subject=subject, text=text)  # fmt: skip


def late_notice(
    session: Session, ctx: Context, game: Game, state: GameState, names: list[str]
) -> None:
    grace = settings(game)["grace_hours"]
    who = ", ".join(names) or "nobody"
    what = "for setup orders" if state.phase in SETUP_PHASES else f"of turn {state.turn}"
    if state.phase == ROUND:
        what = f"of round {state.round}"
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
        of_last = [sum(json.loads(player.misses_json or "[]")[-m:]), m, n]
    limit = conf["remove_after_misses"]
    token = reply_token(game, player.seat)
    args = [player.address, turn, player.missed_in_row, limit, of_last, removed, token]
    about = ("missed", game.name, turn, player.seat, *epoch(game))
    notices.add(session, ctx, K.LETTER, player.address, about=about, game=game, seat=player.seat,
                info=info, letter="missed_turn", args=args)  # fmt: skip
