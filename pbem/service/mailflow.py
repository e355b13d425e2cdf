"""The flow of one mail (ARCHITECTURE.md), and the poll cycle around it.

fetch -> record (Message-ID dedup) -> decode -> guard -> authenticate ->
parse + validate -> adjudicate + log + outbox, all in ONE transaction ->
move the mail -> send the outbox. A crash anywhere leaves the database
before or after that transaction; the next run redoes what is missing.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from email import policy
from email.parser import BytesParser
from email.utils import parseaddr

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from pbem.mail.decode import DecodedMail, decode_mail, synthetic_message_id
from pbem.mail.errors import MailError
from pbem.mail.guard import no_reply_reason
from pbem.mail.transport import PROCESSED, REJECTED, FetchedMail
from pbem.orders import (
    Absent,
    Check,
    Command,
    OrderProblem,
    OrdersError,
    ParsedMail,
    Resign,
    parse_orders,
)
from pbem.rules.board import Board
from pbem.service import notify
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.games import board_of, command, find_player, load, players_of, submit
from pbem.service.passwords import turn_token, verify_password
from pbem.service.ratelimit import allow
from pbem.store import Game, InboundMessage, Player, session_scope

log = logging.getLogger("pbem.mail")
TOKEN = re.compile(r"\(token ([0-9a-f]{10})\)")
TAG = re.compile(r"\[([A-Za-z0-9_-]+)\]")


@dataclass
class MailOutcome:
    """One line of the poll log: what became of one mail."""

    message_id: str
    game: str | None
    status: str  # "processed" | "rejected" | "duplicate"
    outcome: str
    folder: str = PROCESSED

    def log_line(self) -> str:
        return f"{self.message_id} game={self.game or '-'} {self.status}: {self.outcome}"


def _headers_only(raw: bytes) -> tuple[str, str, str]:
    """Message-ID, sender and subject, readable even when the body is not."""
    try:
        msg = BytesParser(policy=policy.default).parsebytes(raw, headersonly=True)
        mid = " ".join(str(msg.get("Message-ID", "")).split())
        sender = parseaddr(str(msg.get("From", "")))[1].lower()
        subject = str(msg.get("Subject", ""))
    except Exception:  # a hostile header must not stop the daemon
        return synthetic_message_id(raw), "", ""
    return mid or synthetic_message_id(raw), sender, subject


def process_mail(engine: Engine, ctx: Context, mail: FetchedMail) -> MailOutcome:
    """Everything one mail causes, committed at once (or not at all)."""
    with session_scope(engine) as session:
        return _process(session, ctx, mail)


def record_failure(
    engine: Engine, ctx: Context, mail: FetchedMail, error: Exception
) -> MailOutcome:
    """Keep a mail whose processing failed: stored raw as rejected with the
    error (so the GM can look at it and feed it again), the GM alerted."""
    mid, sender, subject = _headers_only(mail.raw)
    why = f"internal error: {type(error).__name__}: {error}"[:500]
    try:
        with session_scope(engine) as session:
            row = session.exec(
                select(InboundMessage).where(InboundMessage.message_id == mid)
            ).first()
            if row is None:
                row = InboundMessage(
                    message_id=mid,
                    checksum=hashlib.sha256(mail.raw).hexdigest(),
                    mailbox=mail.mailbox,
                    uid=mail.uid,
                    raw=mail.raw,
                    sender=sender,
                    subject=subject[:500],
                    received_at=ctx.clock.now(),
                )
            row.status = "rejected"
            row.outcome = why
            row.processed_at = ctx.clock.now()
            session.add(row)
            notify.internal_error(session, ctx, mid, sender, subject, why)
    except Exception:  # noqa: BLE001 - the database itself is failing: the mail stays put
        log.exception("could not record the failure of %s", mid)
    return MailOutcome(mid, None, "rejected", why, REJECTED)


def _process(session: Session, ctx: Context, mail: FetchedMail) -> MailOutcome:
    mid, sender, subject = _headers_only(mail.raw)
    seen = session.exec(select(InboundMessage).where(InboundMessage.message_id == mid)).first()
    if seen is not None:
        folder = REJECTED if seen.status == "rejected" else PROCESSED
        return MailOutcome(mid, None, "duplicate", f"already {seen.status}", folder)
    row = InboundMessage(
        message_id=mid,
        checksum=hashlib.sha256(mail.raw).hexdigest(),
        mailbox=mail.mailbox,
        uid=mail.uid,
        raw=mail.raw,
        sender=sender,
        subject=subject[:500],
        received_at=ctx.clock.now(),
    )
    session.add(row)
    outcome = _handle(session, ctx, row)
    row.status = outcome.status
    row.outcome = outcome.outcome
    row.processed_at = ctx.clock.now()
    session.add(row)
    return outcome


def _reject(row: InboundMessage, game: Game | None, why: str) -> MailOutcome:
    return MailOutcome(row.message_id, game.name if game else None, "rejected", why, REJECTED)


def _handle(session: Session, ctx: Context, row: InboundMessage) -> MailOutcome:
    limit = ctx.config.mail.max_mail_bytes
    try:
        mail = decode_mail(row.raw, max_bytes=limit)
    except MailError as exc:
        player_games = _games_of_sender(session, row.sender)
        if player_games and not no_reply_reason_raw(row, ctx):
            game, player = player_games[0]
            notify.error_reply(session, ctx, game, player, row.message_id, str(exc), [])
        return _reject(row, None, f"undecodable: {exc}")
    reason = no_reply_reason(mail, ctx.own_addresses)
    if reason:
        return _reject(row, None, f"not answered ({reason})")
    row.game_id = None
    found = _find_game(session, mail)
    if found is None:
        if ctx.config.mail.reply_to_unknown and _may_reply(session, ctx, mail.sender):
            notify.unknown_sender(session, ctx, mail)
        return _reject(row, None, f"no game for {mail.sender}")
    game = found
    row.game_id = game.id
    if game.phase == "open":
        from pbem.service import joining

        parsed, problems = _parse(mail.text, _board_of(game))
        commands = parsed.commands if parsed is not None else []
        return MailOutcome(
            row.message_id,
            game.name,
            "processed",
            joining.handle(session, ctx, game, mail, commands),
        )
    player = next((p for p in players_of(session, game) if p.address == mail.sender), None)
    if player is None:
        if ctx.config.mail.reply_to_unknown and _may_reply(session, ctx, mail.sender):
            notify.unknown_sender(session, ctx, mail)
        return _reject(row, game, f"{mail.sender} does not play in {game.name}")
    loaded = load(session, game)
    parsed, parse_problems = _parse(mail.text, loaded.state.board)
    password = _password(mail.text)
    resigning = parsed is not None and any(isinstance(c, Resign) for c in parsed.commands)
    if not _authenticated(game, player, mail, password, resigning):
        if allow(
            session,
            f"alert:{player.address}",
            ctx.config.mail.alert_budget_per_hour,
            ctx.clock.now(),
        ):
            notify.auth_alert(session, ctx, game, player, mail)
        return _reject(row, game, f"authentication failed for {player.name}")
    if parsed is None:
        reply = notify.Reply(
            game=game, player=player, mail=mail, problems=parse_problems, text=mail.text
        )
        _send_reply(session, ctx, reply)
        return MailOutcome(
            row.message_id, game.name, "processed", f"{len(parse_problems)} problems"
        )
    return _act(session, ctx, game, player, mail, parsed)


def _send_reply(session: Session, ctx: Context, reply: notify.Reply) -> None:
    """The one reply to a mail, within the address's budget per hour (the
    orders are applied either way; only the answer is held back)."""
    if _may_reply(session, ctx, reply.player.address):
        notify.send_reply(session, ctx, reply)
    else:
        log.warning(
            "reply budget of %s spent: no reply to %s", reply.player.address, reply.mail.message_id
        )


def _board_of(game: Game) -> Board:
    return board_of(game.map_text, game.map_name)


def _parse(text: str, board) -> tuple[ParsedMail | None, list[OrderProblem]]:
    try:
        return parse_orders(text, board), []
    except OrdersError as exc:
        return None, exc.problems


def _password(text: str) -> str | None:
    """The PASSWORD line, read leniently so that a mail with other errors can
    still be authenticated (and so answered)."""
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) == 2 and words[0].upper() == "PASSWORD":
            return words[1]
    return None


def no_reply_reason_raw(row: InboundMessage, ctx: Context) -> str | None:
    if not row.sender or row.sender in ctx.own_addresses:
        return "no sender or our own address"
    return None


def _games_of_sender(session: Session, address: str) -> list[tuple[Game, Player]]:
    if not address:
        return []
    rows = session.exec(
        select(Game, Player).where(
            Player.game_id == Game.id, Player.address == address, Game.status != "finished"
        )
    )
    return [(g, p) for g, p in rows]


def _find_game(session: Session, mail: DecodedMail) -> Game | None:
    """The [game] tag of the subject, a GAME line, or the sender's only game."""
    names = TAG.findall(mail.subject)
    for line in mail.text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0].upper() == "GAME":
            names.insert(0, words[1])
        elif len(words) >= 2 and words[0].upper() == "JOIN":
            names.insert(0, words[1])
    for name in names:
        game = session.exec(select(Game).where(Game.name == name)).first()
        if game is not None:
            return game
    if names:
        return None
    games = _games_of_sender(session, mail.sender)
    return games[0][0] if len(games) == 1 else None


def _authenticated(
    game: Game, player: Player, mail: DecodedMail, password: str | None, needs_password: bool
) -> bool:
    """Registered sender (checked by the caller) AND the password or the live turn token."""
    if password:
        return verify_password(password, player.secret_hash)
    if needs_password:
        return False
    match = TOKEN.search(mail.subject)
    if match is None:
        return False
    expected = turn_token(bytes.fromhex(game.secret), game.name, player.seat, game.turn)
    return match.group(1) == expected


def _may_reply(session: Session, ctx: Context, address: str) -> bool:
    return allow(
        session, f"reply:{address}", ctx.config.mail.reply_budget_per_hour, ctx.clock.now()
    )


def _act(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    mail: DecodedMail,
    parsed: ParsedMail,
) -> MailOutcome:
    """Commands, press and orders of an authenticated mail; exactly one reply."""
    reply = notify.Reply(game=game, player=player, mail=mail)
    summary: list[str] = []
    for cmd in parsed.commands:
        summary.append(_command(session, ctx, game, player, cmd, reply, mail.message_id))
    for press in parsed.press:
        if allow(session, f"press:{player.address}", _press_budget(game), ctx.clock.now()):
            try:
                summary.append(notify.relay_press(session, ctx, game, player, press))
            except ServiceError as exc:
                reply.notes.append(f"Your press to {press.recipient} was not relayed: {exc}.")
                continue
            reply.notes.append(f"Your press to {press.recipient} was relayed.")
        else:
            reply.notes.append(
                f"Your press to {press.recipient} was not relayed: "
                "too many press messages this hour."
            )
    if parsed.orders and game.status != "finished":
        summary.append(_orders(session, ctx, game, player, mail, parsed, reply))
    _send_reply(session, ctx, reply)
    return MailOutcome(mail.message_id, game.name, "processed", "; ".join(summary) or "read")


def _press_budget(game: Game) -> int:
    from pbem.service.deadlines import settings

    return int(settings(game)["press_per_hour"])


def _orders(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    mail: DecodedMail,
    parsed: ParsedMail,
    reply: notify.Reply,
) -> str:
    from pbem.service import deadlines

    held = deadlines.settings(game)["adjudicate"] == "deadline" and not parsed.check
    try:
        outcome = submit(
            session,
            game,
            player,
            mail.text,
            source="mail",
            message_id=mail.message_id,
            dry_run=parsed.check or held,
        )
    except ServiceError as exc:
        reply.problems_text = str(exc)
        return str(exc)
    if not outcome.accepted:
        reply.problems = outcome.problems
        reply.text = mail.text
        return f"{len(outcome.problems)} problems"
    reply.canonical = outcome.canonical
    if (parsed.check or held) and game.phase == "playing":
        reply.forecast = _forecast(session, game, player, parsed)
    if parsed.check:
        reply.check_only = True
        reply.notes.append("CHECK: valid, nothing applied")
        return "checked"
    if held and game.phase == "playing":
        replaced = deadlines.hold(session, game, player, outcome.canonical, mail.message_id)
        reply.held = True
        reply.notes.append(
            "These orders replace the ones you sent earlier; they will be played at the deadline."
            if replaced
            else "These orders will be played at the deadline; until then a "
            "later mail replaces them."
        )
        return "held for the deadline" + (" (replacing earlier orders)" if replaced else "")
    if held:  # setup orders are always held until everyone has sent theirs
        outcome = submit(
            session, game, player, mail.text, source="mail", message_id=mail.message_id
        )
    reply.notes.append(outcome.message)
    reply.waiting = bool(outcome.waiting_for)
    reply.turn = next((st.turn for st in outcome.steps if st.seat is not None), None)
    notify.after_steps(session, ctx, game, outcome.steps)
    deadlines.play_bot_turns(session, ctx, game)
    return outcome.message


def _forecast(session: Session, game: Game, player: Player, parsed: ParsedMail) -> list[str]:
    """The odds of accepted orders that are not played yet (held or CHECK)."""
    from pbem.orders.forecast import forecast_lines

    return forecast_lines(load(session, game).state, parsed.orders, player.seat)


def _command(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    cmd: Command,
    reply: notify.Reply,
    message_id: str,
) -> str:
    if isinstance(cmd, Resign):
        step = command(session, game, player, "RESIGN", source="mail", message_id=message_id)
        notify.after_steps(session, ctx, game, [step])
        reply.notes.append(f"You have resigned from {game.name}.")
        return "resigned"
    if isinstance(cmd, Absent):
        from pbem.service import deadlines

        reply.notes.append(deadlines.absence(session, ctx, game, player, cmd.start, cmd.end))
        return "absence"
    if isinstance(cmd, Check):
        return "check"
    reply.commands.append(cmd)
    return type(cmd).__name__.lower()


def player_by_name(session: Session, game: Game, name: str) -> Player:
    return find_player(session, game, name)
