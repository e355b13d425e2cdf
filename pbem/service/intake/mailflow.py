"""What one mail causes: decode, guard, route, authenticate, apply, answer.

The poll (pbem/service/ops/poll.py) claims the mail first; ``process_mail`` then
does everything in ONE transaction that also writes the mail's outcome into
its claimed row: decode -> guard -> find the game -> authenticate -> parse +
validate -> adjudicate + log -> replies queued in the outbox. A crash or an
error anywhere rolls all of it back, and the mail stays in the inbox.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.mail.decode import DecodedMail, decode_mail
from pbem.mail.errors import MailError
from pbem.mail.guard import no_reply_reason
from pbem.mail.transport import PROCESSED, REJECTED, FetchedMail
from pbem.orderlog import replay
from pbem.orders import (
    Absent,
    Check,
    Command,
    Help,
    OrderProblem,
    OrdersError,
    ParsedMail,
    Resign,
    SetMail,
    SetTimezone,
    parse_orders,
)
from pbem.orders.check import all_problems
from pbem.orders.envelope import asks_check, join_commands, only_help, password_of
from pbem.report import letters, views
from pbem.report.textfmt import plural
from pbem.rules.board import Board
from pbem.rules.freestyle import turn_taken
from pbem.rules.state import SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.intake import claims, gmmail, mailcheck, pressrelay, proof, refusals, seatguard
from pbem.service.intake.claims import Claim
from pbem.service.play import deadlines, notify, schedule, turns
from pbem.service.play.games import board_of, command, load, players_of
from pbem.service.play.gamesettings import apply_set, settings
from pbem.service.play.ratelimit import allow, may_answer
from pbem.store import Game, InboundMessage, Player, lock_game, session_scope
from pbem.vocab import GamePhase, GameStatus, InboundStatus, Proof, Refusal

log = logging.getLogger("pbem.mail")


@dataclass
class MailOutcome:
    """One line of the poll log: what became of one mail."""

    message_id: str
    game: str | None
    status: InboundStatus  # processed, rejected, duplicate or held
    outcome: str
    folder: str = PROCESSED

    def log_line(self) -> str:
        return f"{self.message_id} game={self.game or '-'} {self.status}: {self.outcome}"


def process_mail(
    engine: Engine, ctx: Context, mail: FetchedMail, held: Claim | None = None
) -> MailOutcome:
    """Everything one mail causes, committed at once with its outcome (or not at all).

    ``held`` is the poll's claim on the mail (see pbem.service.intake.claims), made
    from the identity the poll read: the mail is not identified again. Without
    one (a GM feeding a mail by hand, tests) the mail is claimed here. The
    whole mail goes to ``claims.finish``, which keeps it only when it was
    processed for a game.
    """
    if held is None:
        identity, taken = claims.claim_here(engine, mail, ctx.clock.now())
        if taken.claim is None:
            folder = taken.folder or PROCESSED
            return MailOutcome(
                identity.message_id, None, InboundStatus.DUPLICATE, taken.why, folder
            )
        held = taken.claim
    # Durable (synced to disk): the mail leaves the inbox after this commit,
    # so a commit lost in a power loss would be a mail never answered.
    with session_scope(engine) as session:
        row = claims.hold_for_processing(session, held)
        outcome = _handle(session, ctx, row, mail.raw, _reply_key(session, row))
        claims.finish(
            row,
            InboundStatus(outcome.status),
            outcome.outcome,
            ctx.clock.now(),
            raw=mail.raw,
            max_bytes=ctx.config.mail.max_mail_bytes,
        )
        session.add(row)
    from pbem.service.tell import telling

    telling.tell(engine, ctx)  # its mails, rendered and queued once it committed
    return outcome


def _reply_key(session: Session, row: InboundMessage) -> str:
    """The Message-ID, or for a mail reusing the Message-ID of an earlier,
    different mail, that plus its content hash: each gets its own answer."""
    earlier = session.exec(
        select(InboundMessage.id).where(
            InboundMessage.message_id == row.message_id,
            InboundMessage.content_hash != row.content_hash,
            col(InboundMessage.id) < row.id,
        )
    ).first()
    return f"{row.message_id}#{row.content_hash[:16]}" if earlier is not None else ""


def _reject(row: InboundMessage, game: Game | None, why: str) -> MailOutcome:
    name = game.name if game else None
    return MailOutcome(row.message_id, name, InboundStatus.REJECTED, why, REJECTED)


def _handle(
    session: Session, ctx: Context, row: InboundMessage, raw: bytes, reply_key: str
) -> MailOutcome:
    limit = ctx.config.mail.max_mail_bytes
    try:
        mail = decode_mail(raw, max_bytes=limit, budget=ctx.config.mail.decode_budget())
    except MailError as exc:
        player_games = _games_of_sender(session, row.sender)
        if (
            player_games
            and not mailcheck.no_reply_reason_raw(row.sender, ctx.own_addresses)
            and _may_reply(session, ctx, row.sender)
        ):
            game, player = player_games[0]
            notify.error_reply(session, ctx, game, player, row.message_id, str(exc), [])
        return _reject(row, None, f"undecodable: {exc}")
    if reply_key:
        mail = replace(mail, key=reply_key)
    if not mailcheck.readable_address(mail.sender):
        return _unreadable_sender(session, ctx, row, mail)
    reason = no_reply_reason(mail, ctx.own_addresses)
    if reason:
        return _reject(row, None, f"not answered ({reason})")
    row.game_id = None
    found = _find_game(session, mail)
    if found is None:
        return _unnamed(session, ctx, row, mail)
    # One worker at a time adjudicates a game: the row stays locked until
    # this mail's transaction ends (FOR UPDATE on PostgreSQL).
    assert found.id is not None
    game = lock_game(session, found.id)
    row.game_id = game.id
    gm_mail = _gm_mail(session, ctx, row, game, mail)
    if gm_mail is not None:
        return gm_mail
    if game.phase == GamePhase.OPEN:
        from pbem.service.intake import joining

        commands = join_commands(mail.text, board_of(game.map_text, game.map_name))
        return MailOutcome(
            row.message_id,
            game.name,
            InboundStatus.PROCESSED,
            joining.handle(session, ctx, game, mail, commands),
        )
    sender = next((p for p in players_of(session, game) if p.address == mail.sender), None)
    if sender is None:
        if leaked := seatguard.leaked_password(session, ctx, game, mail, password_of(mail.text)):
            return _reject(row, game, leaked)  # a seat's password from another address
        if only_help(mail.text):
            return _help_without_game(session, ctx, row, mail, [])
        if ctx.config.mail.reply_to_unknown and _may_reply(
            session, ctx, mail.sender, stranger=True
        ):
            notify.unknown_sender(session, ctx, mail)
        return _reject(row, game, f"{mail.sender} does not play in {game.name}")
    player = sender
    loaded = load(session, game)
    parsed, parse_problems = _parse(mail, loaded.state.board, loaded.state, player.seat)
    password = password_of(mail.text)
    resigning = parsed is not None and any(isinstance(c, Resign) for c in parsed.commands)
    proven = proof.proof(game, player, mail, password, resigning)
    if proven is Proof.NONE:
        if password is None and proof.requests_only(parsed):  # HELP, STATUS...: no proof
            return _requests(session, ctx, row, game, player, mail, parsed)
        return _unproven(session, ctx, row, game, player, mail, password, resigning, loaded)
    if parsed is None:
        reply = notify.Reply(
            game=game, player=player, mail=mail, problems=parse_problems, text=mail.text
        )
        _send_reply(session, ctx, reply)
        return MailOutcome(
            row.message_id,
            game.name,
            InboundStatus.PROCESSED,
            plural(len(parse_problems), "problem"),
        )
    return _act(session, ctx, game, player, mail, parsed, loaded, proven)


def _requests(
    session: Session,
    ctx: Context,
    row: InboundMessage,
    game: Game,
    player: Player,
    mail: DecodedMail,
    parsed: ParsedMail | None,
) -> MailOutcome:
    """A mail of a seat's address that only asks (HELP, STATUS, MAP, HISTORY)
    and proves nothing: answered at the registered address (never the
    sender's Reply-To), within the budget of unproven answers, no alert."""
    asked = list(parsed.commands) if parsed is not None else []
    _send_reply(session, ctx, notify.Reply(game, player, mail, commands=asked), proven=False)
    names = ", ".join(type(c).__name__.lower() for c in asked)
    return MailOutcome(row.message_id, game.name, InboundStatus.PROCESSED, f"answered {names}")


def _help_without_game(
    session: Session,
    ctx: Context,
    row: InboundMessage,
    mail: DecodedMail,
    seats: list[tuple[Game, Player]],
) -> MailOutcome:
    """HELP that names no game of the sender: a player of several games gets the
    order language and their games; a stranger how to join an open game
    (within the budgets of strangers). No password, no alert."""
    if not _may_reply(session, ctx, mail.sender, stranger=not seats):
        return _reject(row, None, f"help for {mail.sender} (not answered: a budget is spent)")
    if seats:
        game, player = seats[0]
        asked = notify.Reply(game, player, mail, commands=[Help(0, 0, "HELP")])
        notify.send_reply(session, ctx, asked)
        return MailOutcome(row.message_id, None, InboundStatus.PROCESSED, "answered help")
    notify.stranger_help(session, ctx, mail)
    return _reject(row, None, f"help for {mail.sender}, who plays in no game")


def _unnamed(session: Session, ctx: Context, row: InboundMessage, mail: DecodedMail) -> MailOutcome:
    """A mail that names no game pbem can take it for: the GM's, HELP, a player
    of several games told which, a stranger (answered by reply_to_unknown)."""
    seats = sorted(_games_of_sender(session, mail.sender), key=lambda gp: gp[0].name)
    own = [g.name for g, _ in seats]
    run = [] if own else gmmail.games_of_gm(session, ctx, mail.sender)
    if run and _may_reply(session, ctx, mail.sender):
        gmmail.answer_unnamed(session, ctx, mail, run)
        return _reject(row, None, f"no game named by the GM {mail.sender}")
    if only_help(mail.text):  # HELP from a player of several games, or a stranger
        return _help_without_game(session, ctx, row, mail, seats)
    if (own or ctx.config.mail.reply_to_unknown) and _may_reply(
        session, ctx, mail.sender, stranger=not own
    ):
        notify.unknown_sender(session, ctx, mail, own)  # a player is always answered
    return _reject(row, None, f"no game for {mail.sender}")


def _unproven(
    session: Session,
    ctx: Context,
    row: InboundMessage,
    game: Game,
    player: Player,
    mail: DecodedMail,
    password: str | None,
    resigning: bool,
    loaded: replay.Game,
) -> MailOutcome:
    """A player's mail without the right password or turn token: an old
    mail of pbem's answered, the player's own mistake, or an impostor's (a wrong
    password counted on the seat; an alert within the alert budget)."""
    stale = None if password else proof.stale_token_turn(game, player, mail)
    if stale is not None:  # the player answered an old mail: no impostor
        if may_answer(session, ctx, player.address, stranger=False):
            notify.turn_over(session, ctx, game, player, mail, stale, loaded.state, resigning)
        return MailOutcome(
            row.message_id, game.name, InboundStatus.PROCESSED, refusals.stale_token(stale)
        )
    if password is None and mailcheck.no_other_token(game, player, mail):
        # forwarded orders, an empty mail, a fresh mail without the
        # PASSWORD line: the player's own mistake, not an impostor's
        reply = notify.Reply(game=game, player=player, mail=mail)
        reply.problems_text = mailcheck.missing_proof_answer(game, resigning)
        _send_reply(session, ctx, reply, proven=False)
        return MailOutcome(row.message_id, game.name, InboundStatus.PROCESSED, refusals.NO_PROOF)
    if password:  # counted on the seat; the GM told at the 3rd, 10th, 30th...
        seatguard.wrong_password(session, ctx, game, player)
    cause = Refusal.WRONG_PASSWORD if password else Refusal.FOREIGN_TOKEN
    if allow(
        session,
        f"alert:{player.address}",
        ctx.config.mail.alert_budget_per_hour,
        ctx.clock.now(),
    ):
        notify.auth_alert(session, ctx, game, player, mail, cause)
    return _reject(row, game, f"authentication failed for {player.name}")


def _unreadable_sender(
    session: Session, ctx: Context, row: InboundMessage, mail: DecodedMail
) -> MailOutcome:
    """A From address that is no address (a byte that is not text in it):
    refused, and when what is left of it is a player's address, that player
    is told (at the registered address, within its budget) what was wrong."""
    kept = mailcheck.kept_address(mail.sender)
    shown = mailcheck.shown_address(mail.sender)
    games = _games_of_sender(session, kept)
    if games and _may_reply(session, ctx, kept):
        game, player = games[0]
        notify.error_reply(
            session,
            ctx,
            game,
            player,
            mail.reply_key,
            f"The From line of a mail to {game.name} is not readable ({shown}): it holds "
            "a character that is not text before or inside your address. Nothing in the "
            "mail was applied. Send it again from your usual mail program.",
            [],
        )
    return _reject(row, None, f"unreadable From address {shown}")


def _gm_mail(
    session: Session, ctx: Context, row: InboundMessage, game: Game, mail: DecodedMail
) -> MailOutcome | None:
    """The GM's commands by mail (pbem.service.intake.gmmail), or None for any other
    mail. A GM who also plays a seat from the same address acts as the GM
    only with the GM password; without it their mail is a player's."""
    if not gmmail.is_gm_mail(ctx, game, mail):
        return None
    password = password_of(mail.text)
    plays = any(p.address == mail.sender for p in players_of(session, game))
    if plays and not gmmail.has_gm_password(session, game, password):
        return None
    authenticated, line = gmmail.handle(session, ctx, game, mail, password)
    if not authenticated:
        return _reject(row, game, line)
    return MailOutcome(row.message_id, game.name, InboundStatus.PROCESSED, line)


def _send_reply(
    session: Session, ctx: Context, reply: notify.Reply, *, proven: bool = True
) -> None:
    """The one reply to a mail, within the address's budget per hour (the
    orders are applied either way; only the answer is held back). ``proven``:
    the mail carried the password or turn token (a budget of its own)."""
    if reply.problems or reply.problems_text:  # refused: did it ask only for a CHECK?
        reply.check_only = asks_check(reply.mail.text)
    if may_answer(session, ctx, reply.player.address, stranger=False, proven=proven):
        notify.send_reply(session, ctx, reply)
    else:
        log.warning(
            "reply budget of %s spent: no reply to %s", reply.player.address, reply.mail.message_id
        )


def _parse(
    mail: DecodedMail, board: Board, state: GameState | None = None, seat: int | None = None
) -> tuple[ParsedMail | None, list[OrderProblem]]:
    """The parsed mail, or every problem one pass finds (unreadable lines, and
    the readable orders before them validated against ``state``). A text the
    mail layer cut is never read (a part of a mail is not the mail)."""
    try:
        return parse_orders(mail.text, board, cut=mail.text_cut), []
    except OrdersError as exc:
        return None, all_problems(exc, state, seat, mail.text)


def _games_of_sender(session: Session, address: str) -> list[tuple[Game, Player]]:
    if not address:
        return []
    rows = session.exec(
        select(Game, Player).where(
            Player.game_id == Game.id, Player.address == address, Game.status != GameStatus.FINISHED
        )
    )
    return [(g, p) for g, p in rows]


def _find_game(session: Session, mail: DecodedMail) -> Game | None:
    """The [game] tag of the subject, a GAME line, or the sender's only game.

    Only the first few names are considered, in one query: a subject of
    thousands of tags costs no more than one of three."""
    names = mailcheck.named_games(mail)
    if not names:
        games = _games_of_sender(session, mail.sender)
        return games[0][0] if len(games) == 1 else None
    found = {g.name: g for g in session.exec(select(Game).where(col(Game.name).in_(names)))}
    return next((found[name] for name in names if name in found), None)


def _may_reply(session: Session, ctx: Context, address: str, *, stranger: bool = False) -> bool:
    """One more answer to ``address`` within its budget; ``stranger``: an
    address that is no seated player and no GM, so the budget of all
    strangers together counts too (pbem.service.play.ratelimit)."""
    return may_answer(session, ctx, address, stranger=stranger)


def _act(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    mail: DecodedMail,
    parsed: ParsedMail,
    loaded: replay.Game,
    proven: Proof = Proof.PASSWORD,
) -> MailOutcome:
    """Commands, orders and press of an authenticated mail; exactly one reply.
    ``loaded``: the game as this mail's transaction loaded it, handed down.

    Press is relayed only from a mail whose orders were applied (or that
    has none): a refused mail changes nothing, so a player who sends it
    again, corrected, does not relay the press twice."""
    reply = notify.Reply(game=game, player=player, mail=mail)
    if proven is Proof.TOKEN_WRONG_PASSWORD:
        reply.notes.append(mailcheck.WRONG_PASSWORD_BESIDE_TOKEN.format(game=game.name))
    if again := seatguard.repeated(session, game, player, mail):  # same text, new Message-ID
        reply.problems_text = again
        _send_reply(session, ctx, reply)
        return MailOutcome(mail.message_id, game.name, InboundStatus.PROCESSED, "already applied")
    logged = seatguard.last_seq(session, game)  # what the mail adds to the log: see remember
    # The receipt names the turn (or setup phase) the orders were sent for, and
    # says "late" only for orders after their deadline (in the grace period).
    phase = loaded.state.phase
    reply.setup = phase if phase in SETUP_PHASES else ""
    reply.turn = turn_taken(loaded.state)
    deadline = schedule.aware_utc(game.deadline)
    if deadline is not None and ctx.clock.now() > deadline:
        reply.late = deadline
    summary: list[str] = []
    if parsed.ignored:
        lines = letters.quoted_lines(parsed.ignored)
        reply.notes.append(f"Not read as orders (a greeting or a signature): {lines}.")
    if not (parsed.orders or parsed.commands or parsed.press):
        reply.problems_text = (
            "There are no orders in your mail: nothing was applied. Write one order "
            "per line, e.g. PLACE 3 Alaska; HELP replies with the order language."
        )
        _send_reply(session, ctx, reply)
        return MailOutcome(mail.message_id, game.name, InboundStatus.PROCESSED, refusals.NO_ORDERS)
    refused = mailcheck.command_problems(session, ctx, game, player, parsed)
    if refused:
        reply.problems, reply.text = refused, mail.text
        _send_reply(session, ctx, reply)
        return MailOutcome(
            mail.message_id, game.name, InboundStatus.PROCESSED, plural(len(refused), "problem")
        )
    for cmd in parsed.commands:
        summary.append(_command(session, ctx, game, player, cmd, reply, mail.message_id, loaded))
    if parsed.orders and game.status != GameStatus.FINISHED:
        summary.append(_orders(session, ctx, game, player, mail, parsed, reply, loaded))
    applied = not (reply.problems or reply.problems_text or parsed.check)
    seatguard.remember(session, player, game, mail, parsed, reply, applied, logged)
    summary += pressrelay.relay_all(session, ctx, game, player, parsed, reply, mail, applied)
    _send_reply(session, ctx, reply)
    done = "; ".join(summary) or "read"
    return MailOutcome(mail.message_id, game.name, InboundStatus.PROCESSED, done)


def _orders(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    mail: DecodedMail,
    parsed: ParsedMail,
    reply: notify.Reply,
    loaded: replay.Game,
) -> str:
    """The orders of the mail played once: now; or, in deadline mode, kept for
    the deadline (a turn's, after a dry run that checks them; setup orders are
    kept by games.submit itself until every player has sent theirs)."""
    held = settings(game)["adjudicate"] == "deadline" and not parsed.check
    playing = game.phase == GamePhase.PLAYING  # before the orders: setup may end with them
    # what a CLAIM leaves to the rules, said of the board before the draft is played
    rest = views.claim_rest(loaded.state, player.seat, [o.action for o in parsed.orders])
    try:
        outcome = turns.play(  # played now, unless CHECK or held for the deadline
            session,
            ctx,
            game,
            player,
            mail.text,
            source="mail",
            message_id=mail.message_id,
            dry_run=parsed.check or (held and playing),
            parsed=parsed,  # read once, in handle()
            tell=False,  # told below, outside the try: a failure there is no refusal
            loaded=loaded,  # loaded once, in handle()
        )
    except ServiceError as exc:
        reply.problems_text = str(exc)
        return str(exc)
    if not outcome.accepted:
        reply.problems = outcome.problems
        reply.text = mail.text
        return plural(len(outcome.problems), "problem")
    reply.canonical = outcome.canonical
    reply.notes += [rest] if rest else []
    if (parsed.check or held) and playing:  # the odds of orders not played yet
        from pbem.orders.forecast import forecast_lines

        reply.forecast = forecast_lines(loaded.state, parsed.orders, player.seat)
    if parsed.check:
        reply.check_only = True
        reply.notes.append("CHECK: valid, nothing applied")
        return "checked"
    if held and playing:
        replaced = deadlines.hold(session, game, player, outcome.canonical, mail.message_id)
        reply.held = True
        reply.notes.append(
            "These orders replace the ones you sent earlier; they will be played at the deadline."
            if replaced
            else "These orders will be played at the deadline; until then a "
            "later mail replaces them."
        )
        return "held for the deadline" + (" (replacing earlier orders)" if replaced else "")
    reply.notes.append(outcome.message)
    reply.waiting = bool(outcome.waiting_for)
    turns.report(session, ctx, game, outcome.steps)
    turns.play_bot_turns(session, ctx, game, loaded)
    return outcome.message


def _command(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    cmd: Command,
    reply: notify.Reply,
    message_id: str,
    loaded: replay.Game,
) -> str:
    if isinstance(cmd, Resign):
        step = command(
            session, game, player, "RESIGN", source="mail", message_id=message_id, loaded=loaded
        )
        turns.report(session, ctx, game, [step])
        reply.notes.append(f"You have resigned from {game.name}.")
        reply.changes.append(True)
        return "resigned"
    if isinstance(cmd, Absent):
        state = loaded.state
        answer, changed = schedule.absence(session, ctx, game, player, cmd.start, cmd.end, state)
        reply.notes.append(answer)
        reply.changes.append(changed)
        return "absence" if changed else "absence already noted"
    if isinstance(cmd, Check):
        return "check"
    if isinstance(cmd, SetTimezone | SetMail):  # a SET of what is set changes nothing
        note, changed = apply_set(game, player.seat, cmd)
        session.add(game)
        reply.notes.append(note)
        reply.changes.append(changed)
        what = f"timezone {cmd.zone}" if isinstance(cmd, SetTimezone) else f"mail {cmd.mode}"
        return what if changed else f"{what} already"
    reply.commands.append(cmd)
    return type(cmd).__name__.lower()
