"""One poll cycle: the whole life of the mail, in the order it happens.

    1. inbox     fetch new mail; for each: claim -> process (decode, route,
                 apply, decide replies as notices, write the outcome: ONE
                 transaction) -> tell them (render, queue: pbem.service.
                 telling) -> move it out of the inbox. Nothing leaves the
                 inbox before its outcome is committed.
    2. deadlines reminders, missed turns, bots: whatever the inbox did;
                 then every notice still pending is told.
    3. outbox    send due mail, each row leased and marked sent one by one.
    4. health    outages noticed, the GM told once (pbem.service.ops.health).

Each stage runs whatever happened to the one before: an unreachable inbox
never holds back the outbox or the deadlines. Whatever a mail holds,
every step that reads it runs under the per-mail error handling
(``_take_one``): a mail whose processing fails stays in the inbox and is
tried again with backoff; after ``poll.max_attempts`` attempts (counted
when claimed, so a poll killed on a mail counts too) it goes to the held
folder and the GM is told (see pbem.service.intake.claims). Only a database
outage stops the cycle. Several workers (cron runs, daemons, on one
PostgreSQL or SQLite) divide the mail by their claims.

``pbem poll`` runs one cycle under an exclusive file lock, so overlapping
cron runs exit quietly; ``pbem daemon`` runs cycles in a loop.
"""

from __future__ import annotations

import fcntl
import gc
import logging
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from pbem.config import Config
from pbem.mail.errors import MessageGone
from pbem.mail.identity import identify
from pbem.mail.settings import MailSettings, open_inbox, open_sender
from pbem.mail.transport import HELD, PROCESSED, Checkpoint, FetchedMail, Inbox, Sender
from pbem.service.clock import Clock
from pbem.service.context import Context
from pbem.service.intake import claims
from pbem.service.intake.claims import ClaimState
from pbem.service.ops.health import Health
from pbem.service.play import deadlines, digest
from pbem.service.play.deadlines import LAST_POLL, LAST_POLL_REAL
from pbem.service.tell import outbox
from pbem.store import (
    Game,
    InboundMessage,
    MailboxCheckpoint,
    Player,
    ServiceState,
    make_engine,
    session_scope,
)
from pbem.store.errors import ConcurrentUpdateError, DatabaseError
from pbem.store.pending import notices_pending, prune_told
from pbem.store.rawmail import blank_passwords
from pbem.vocab import Component, GameStatus, InboundStatus, SeatStatus

if TYPE_CHECKING:
    from pbem.service.intake.mailflow import MailOutcome

log = logging.getLogger("pbem.poll")

HELD_FOR_PLAYER = (
    "Your mail could not be read: pbem failed on it several times, so nothing of it "
    "was applied. The GM has been told and has the mail. Please send your orders again "
    "as plain text."
)


class PollBusy(Exception):
    """Another poll holds the lock: this run has nothing to do."""


class ServerUnreachable(Exception):
    """A mail server could not be reached; the poll exits non-zero."""


@dataclass
class PollReport:
    mails: list[MailOutcome] = field(default_factory=list)
    sent: int = 0
    deferred: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)  # one line each, for the operator
    deadline_events: list[str] = field(default_factory=list)
    retrying: int = 0  # mails left in the inbox to try again
    held: int = 0


def worker_id(config: Config) -> str:
    """Who holds claims and leases: the configured name, else host:pid."""
    return config.poll.worker_id or f"{socket.gethostname()}:{os.getpid()}"


def outbox_lease(config: Config) -> outbox.Lease:
    return outbox.Lease(
        worker_id(config), config.poll.claim_lease_seconds, config.poll.retry_base_seconds
    )


@contextmanager
def poll_lock(state_dir: Path) -> Iterator[None]:
    """An exclusive, non-blocking lock file; PollBusy when another run holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "poll.lock"
    handle = open(path, "a+")  # noqa: SIM115 - held for the whole cycle
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PollBusy(f"another poll holds {path}") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()


def run_cycle(engine: Engine, config: Config, clock: Clock, batch: int | None = None) -> PollReport:
    """Inbox, deadlines, outbox, health: each stage whatever the others did."""
    _freeze_start_up()
    settings = config.mail
    ctx = Context(config, clock, settings.own_addresses)
    health = Health(engine, ctx)
    report = PollReport()
    sender = open_sender(settings)
    envelope_from = settings.game_address
    try:
        inbox_error = _inbox_stage(engine, ctx, settings, batch, report)
        health.database_up()
        if inbox_error is None:
            health.up(Component.INBOX)
        else:  # an alert mail waits in the outbox if SMTP is out too
            health.down(Component.INBOX, inbox_error, mail_works=True)
        _deadline_stage(engine, ctx, report)
        _telling_stage(engine, ctx)  # the mails decided above, rendered and queued
        smtp_error = _outbox_stage(engine, config, sender, clock, envelope_from, report)
        _record_poll(engine, clock)
    except DatabaseError as exc:
        # No stage can work without the database; every mail stays where it is.
        report.errors.append(f"the database cannot be used: {exc}")
        health.database_down(str(exc), sender)
        return report
    if smtp_error is None:
        health.up(Component.SMTP)
    else:  # told in the log and `pbem status`; a mail could not go out anyway
        health.down(Component.SMTP, smtp_error, mail_works=False)
    return report


_frozen = False


def _freeze_start_up() -> None:
    """Once per process, before its first cycle: what start-up made (modules,
    classes, the configuration, the engine) lives as long as the process, so
    the cyclic garbage collector is told to leave it out (``gc.freeze``). Each
    full collection during a cycle then walks the cycle's own objects only
    (docs/PERFORMANCE.md). Objects made later, caches included, are collected
    as usual."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


def database_unusable(config: Config, clock: Clock, error: DatabaseError) -> PollReport:
    """A cycle that could not even open the database: nothing is read or sent,
    every mail stays in the inbox; the outage is recorded (shared with the
    other workers) and the GM alerted once it has lasted long enough."""
    settings = config.mail
    ctx = Context(config, clock, settings.own_addresses)
    health = Health(make_engine(config.database_url), ctx)  # connects to nothing
    health.database_down(str(error), open_sender(settings))
    return PollReport(errors=[f"the database cannot be used: {error}"])


# ---------------------------------------------------------------- 1. inbox
def _inbox_stage(
    engine: Engine, ctx: Context, settings: MailSettings, batch: int | None, report: PollReport
) -> str | None:
    """Take every mail of the inbox; the error that stopped it, if any."""
    try:
        with open_inbox(settings) as inbox:
            _take_mail(engine, ctx, inbox, batch, report)
    except OSError as exc:  # TransportError included: unreachable, login refused, ...
        hint = (
            "" if settings.transport == "maildir" else " (settings: [mail.imap] host, port, user)"
        )
        error = f"cannot read the inbox: {exc}{hint}"
        report.errors.append(error)
        return error
    return None


def _take_mail(
    engine: Engine, ctx: Context, inbox: Inbox, batch: int | None, report: PollReport
) -> None:
    checkpoint = load_checkpoint(engine, inbox.source)
    while True:
        fetched, fetched_to = inbox.fetch_new(checkpoint, batch)
        left: list[FetchedMail] = []  # still in the inbox after this pass
        for mail in fetched:
            if not _take_one(engine, ctx, inbox, mail, report):
                left.append(mail)
        checkpoint = _checkpoint_after(checkpoint, fetched_to, left)
        _save_checkpoint(engine, checkpoint)
        if batch is None or len(fetched) < batch:
            return


def _take_one(
    engine: Engine, ctx: Context, inbox: Inbox, mail: FetchedMail, report: PollReport
) -> bool:
    """Claim, process, move one mail; True when it has left the inbox.

    Whatever the mail holds, every step that reads it runs in here under the
    same rule: an exception marks this mail (an attempt, counted when it was
    claimed; held after the last) and the poll goes on with the next one.
    Only a database outage (DatabaseError) or an unreachable inbox (OSError,
    from the move) leaves this function."""
    from pbem.service.intake.mailflow import MailOutcome  # an idle poll never needs it

    poll = ctx.config.poll
    unreadable: Exception | None = None
    try:
        identity = identify(mail.raw)
    except Exception as exc:  # noqa: BLE001 - any input: claimed under its hash
        log.warning("mail %s: its headers cannot be read: %s", mail.key, _said(exc))
        identity, unreadable = claims.stand_in_identity(mail.raw), exc
    mid = claims.clean(identity.message_id, 200)
    try:
        taken = claims.claim(
            engine,
            mail,
            identity,
            worker_id(ctx.config),
            ctx.clock.now(),
            poll.claim_lease_seconds,
            max_attempts=poll.max_attempts,
        )
    except DatabaseError:
        raise
    except Exception:  # noqa: BLE001 - not even a stand-in row could be written
        log.exception("mail %s could not be claimed; it stays in the inbox", mail.key)
        report.retrying += 1
        return False
    if taken.state is ClaimState.BUSY:
        log.info("%s: left for now (%s)", mid, taken.why)
        return False
    if taken.state is ClaimState.DONE:
        assert taken.folder is not None
        outcome = MailOutcome(mid, None, InboundStatus.DUPLICATE, taken.why, taken.folder)
    elif taken.state is ClaimState.EXHAUSTED:
        assert taken.claim is not None
        log.error("%s: %s; held without processing it", mid, taken.why)
        exhausted = taken.claim
        failure = _telling(
            ctx,
            lambda tell: claims.hold_exhausted(engine, exhausted, ctx.clock.now(), on_held=tell),
        )
        if failure is None:
            return False
        report.held += 1
        outcome = MailOutcome(mid, None, InboundStatus.HELD, failure.row.outcome, HELD)
    else:
        assert taken.claim is not None
        done = _process(engine, ctx, mail, taken.claim, mid, unreadable, report)
        if done is None:
            return False
        outcome = done
    _move(inbox, mail, outcome.folder)
    log.info(outcome.log_line())
    report.mails.append(outcome)
    return True


def _process(
    engine: Engine,
    ctx: Context,
    mail: FetchedMail,
    held: claims.Claim,
    mid: str,
    unreadable: Exception | None,
    report: PollReport,
) -> MailOutcome | None:
    """Process a claimed mail; its outcome, or None while it stays in the inbox."""
    from pbem.service.intake.mailflow import MailOutcome

    poll = ctx.config.poll
    try:
        if unreadable is not None:
            raise unreadable
        return process_mail(engine, ctx, mail, held)
    except claims.LeaseLost as exc:
        log.warning("%s: %s", mid, exc)
        return None
    except ConcurrentUpdateError as exc:  # a clash with another worker: again next cycle
        log.info("%s: %s", mid, exc)
        claims.release(engine, held)
        report.retrying += 1
        return None
    except DatabaseError:
        raise  # the database is out: the whole cycle stops, the mail stays
    except Exception as exc:  # noqa: BLE001 - any bug, any input: keep the daemon up
        log.exception("mail %s could not be processed", mid)
        error = exc
        failure = _telling(
            ctx,
            lambda tell: claims.record_failure(
                engine,
                held,
                error,
                ctx.clock.now(),
                max_attempts=poll.max_attempts,
                retry_base_seconds=poll.retry_base_seconds,
                on_held=tell,
            ),
        )
        if failure is None or not failure.held:
            report.retrying += 1
            return None
        report.held += 1
        return MailOutcome(mid, None, InboundStatus.HELD, failure.row.outcome, HELD)


def process_mail(
    engine: Engine, ctx: Context, mail: FetchedMail, held: claims.Claim
) -> MailOutcome:
    """pbem.service.intake.mailflow.process_mail, imported with the first mail: the
    orders, rules and reports it needs are no cost of an idle poll."""
    from pbem.service.intake import mailflow

    return mailflow.process_mail(engine, ctx, mail, held)


def _move(inbox: Inbox, mail: FetchedMail, folder: str) -> None:
    """Move the mail out of the inbox; into the processed folder with its
    PASSWORD lines blanked (a new copy: see Inbox.move)."""
    replacement: bytes | None = None
    if folder == PROCESSED:
        try:
            blanked = blank_passwords(mail.raw)
            replacement = blanked if blanked != mail.raw else None
        except Exception:  # noqa: BLE001 - the mail moves as it is rather than stay
            log.exception("mail %s: its PASSWORD lines could not be blanked", mail.key)
    try:
        if replacement is None:  # the usual case: a plain move (IMAP MOVE where offered)
            inbox.move(mail.key, folder)
        else:
            inbox.move(mail.key, folder, replacement)
    except MessageGone as exc:  # moved by another worker or client meanwhile
        log.info("%s: %s", mail.key, exc)


def _said(exc: BaseException) -> str:
    return claims.clean(f"{type(exc).__name__}: {exc}", 300)


OnHeld = Callable[[Session, InboundMessage], None]


def _telling_stage(engine: Engine, ctx: Context) -> None:
    """Pending notices told (the report layer imported only when there are some);
    notices told past the retention pruned."""
    now = ctx.clock.now()
    prune_told(engine, now - timedelta(days=ctx.config.poll.retention_days))
    if notices_pending(engine):
        from pbem.service.tell import telling

        telling.tell(engine, ctx)


def _telling(
    ctx: Context, record: Callable[[OnHeld], claims.Failure | None]
) -> claims.Failure | None:
    """``record`` (a failure, or a hold) telling the GM and the player when the
    mail is held; if telling them fails in a way that spoils the transaction,
    the mail is still counted and held, without the mails (said in the log)."""
    try:
        return record(lambda session, row: _tell_gm_held(session, ctx, row))
    except DatabaseError:
        raise
    except Exception:  # noqa: BLE001 - the failure must be recorded, told or not
        log.exception("the mails about a held mail could not be queued")
        return record(lambda session, row: None)


def _tell_gm_held(session: Session, ctx: Context, row: InboundMessage) -> None:
    """The GM is told of a held mail, once (in the transaction that holds it);
    so is its sender when a seated player of a running game (only the
    registered address is ever written to)."""
    from pbem.service.play import notify

    why = row.last_error or row.outcome
    try:
        notify.mail_held(session, ctx, row.message_id, row.sender, row.subject, why)
    except DatabaseError:
        raise
    except Exception:  # noqa: BLE001 - a mail that cannot be rendered: the log says it
        log.exception("the GM's mail about held mail %s could not be made", row.message_id)
    if not row.sender:
        return
    seated = session.exec(
        select(Game, Player).where(
            Player.game_id == Game.id,
            Player.address == row.sender,
            Player.status == SeatStatus.ACTIVE,
            Game.status == GameStatus.RUNNING,
        )
    ).first()
    if seated is not None:
        game, player = seated
        notify.error_reply(session, ctx, game, player, row.message_id, HELD_FOR_PLAYER, [])


def _checkpoint_after(
    before: Checkpoint | None, fetched_to: Checkpoint | None, left: list[FetchedMail]
) -> Checkpoint | None:
    """How far the inbox is done: up to just before the first mail still in it.

    A mail left in the inbox (failing, or claimed by another worker) must be
    fetched again, so the checkpoint never passes it.
    """
    if fetched_to is None:
        return None
    uids = [mail.uid for mail in left if mail.uid is not None]
    if not uids:
        return fetched_to
    last = min(uids) - 1
    if before is not None and before.uidvalidity == fetched_to.uidvalidity:
        last = max(last, before.last_uid)
    return Checkpoint(fetched_to.mailbox, fetched_to.uidvalidity, last)


def load_checkpoint(engine: Engine, source: str) -> Checkpoint | None:
    """The stored (UIDVALIDITY, last UID) of a mailbox, None before its first poll."""
    with session_scope(engine, write=False) as session:
        row = session.exec(
            select(MailboxCheckpoint).where(MailboxCheckpoint.mailbox == source)
        ).first()
        return Checkpoint(source, row.uidvalidity, row.last_uid) if row else None


def _save_checkpoint(engine: Engine, checkpoint: Checkpoint | None) -> None:
    """Store how far the inbox is read; a checkpoint only saves work, so when
    another worker stores its own at the same moment, theirs stands."""
    if checkpoint is None:
        return
    try:  # not durable: a lost checkpoint only makes a fetch go further back
        with session_scope(engine, durable=False) as session:
            row = session.exec(
                select(MailboxCheckpoint).where(MailboxCheckpoint.mailbox == checkpoint.mailbox)
            ).first() or MailboxCheckpoint(mailbox=checkpoint.mailbox, uidvalidity=0)
            row.uidvalidity = checkpoint.uidvalidity
            row.last_uid = checkpoint.last_uid
            session.add(row)
    except IntegrityError:
        log.info("checkpoint of %s stored by another worker just now", checkpoint.mailbox)


# ------------------------------------------------------------ 2. deadlines
def _deadline_stage(engine: Engine, ctx: Context, report: PollReport) -> None:
    report.deadline_events = deadlines.run(engine, ctx) + digest.run(engine, ctx)


# --------------------------------------------------------------- 3. outbox
def _outbox_stage(
    engine: Engine,
    config: Config,
    sender: Sender,
    clock: Clock,
    envelope_from: str,
    report: PollReport,
) -> str | None:
    """Send the due mail and prune old mail; the error that stopped sending, if any."""
    sent = outbox.SendReport()
    try:
        lease = outbox_lease(config)
        outbox.send_due(engine, sender, clock.now(), envelope_from, lease, report=sent)
    except OSError as exc:  # TransportError: TLS refused, login refused, ...
        sent.errors.append(f"cannot send mail: {exc}")
    report.sent += sent.sent
    report.deferred += sent.deferred
    report.failed += sent.failed
    prefix = "cannot send mail"
    errors = [e if e.startswith(prefix) else f"{prefix}: {e}" for e in sent.errors]
    report.errors.extend(errors)
    outbox.prune_sent(engine, clock.now(), config.poll.retention_days)
    return errors[0] if errors else None


def send_outbox(
    engine: Engine,
    sender: Sender,
    clock: Clock,
    envelope_from: str,
    report: PollReport | None = None,
    retry_all: bool = False,
    lease: outbox.Lease | None = None,
) -> PollReport:
    """Send every due outbox row (see pbem.service.tell.outbox); counts go into ``report``."""
    report = report or PollReport()
    sent = outbox.send_due(
        engine,
        sender,
        clock.now(),
        envelope_from,
        lease or outbox.Lease(f"{socket.gethostname()}:{os.getpid()}"),
        retry_all=retry_all,
    )
    report.sent += sent.sent
    report.deferred += sent.deferred
    report.failed += sent.failed
    report.errors.extend(sent.errors)
    return report


def _record_poll(engine: Engine, clock: Clock) -> None:
    """The poll's time on the game's clock (``last_poll``, what the GM reads)
    and on the real one (``last_poll_real``, what an outage is measured on:
    a GM's ``--now`` moves the first, never the second)."""
    try:
        with session_scope(engine, durable=False) as session:
            for key, when in ((LAST_POLL, clock.now()), (LAST_POLL_REAL, clock.real())):
                row = session.exec(select(ServiceState).where(ServiceState.key == key)).first()
                row = row or ServiceState(key=key)
                row.value = when.isoformat()
                session.add(row)
    except IntegrityError:
        pass  # another worker wrote its own poll time at the same moment
