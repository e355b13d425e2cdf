"""Claims on inbound mail: which worker handles a mail, and what a failure costs.

The row of a mail in ``inbound_message`` is its claim. A worker inserts it
(the header block and the hash of the whole: see pbem.store.rawmail)
before doing anything, with a lease; a second worker
that meets the row leaves the mail alone while the lease runs, and takes it
over when the lease has expired (its worker died). The outcome is written in
the same transaction as the mail's effects, by the lease holder only
(``hold_for_processing``), so a loser can never write over a winner.

An attempt is counted when the claim is taken, before any work: a poll
killed on a mail (out of memory, SIGKILL) has spent it too. A mail whose
attempts already reached ``max_attempts`` when it is claimed again is held
without being processed (``ClaimState.EXHAUSTED``). A failure leaves the
mail in the inbox with a backoff; the failure that comes with the last
attempt holds the mail (moved to the held folder by the caller) and the GM
is told, once. A release after a clash with another worker gives the
attempt back. A failure that cannot even be recorded (the database is
down) changes nothing more: the claim stays with this worker, which takes
it again at its next cycle.

Every text written into the row is scrubbed (``clean``): no NUL or other
control character, bounded, so the row is valid on SQLite and PostgreSQL
whatever the mail holds. If the row still cannot be written as read from
the mail, it is written under a stand-in identity made of the mail's hash
(``stand_in_identity``), so the mail is counted and held like any other.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import or_, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, col, select

from pbem.mail.bounds import scrub_line, scrub_text
from pbem.mail.identity import MailIdentity, identify
from pbem.mail.retry import backoff_delay
from pbem.mail.transport import HELD, PROCESSED, REJECTED, FetchedMail
from pbem.store import InboundMessage, session_scope
from pbem.store.db import is_postgresql
from pbem.store.errors import DatabaseError
from pbem.store.rawmail import kept_copy, kept_headers
from pbem.vocab import InboundStatus

log = logging.getLogger("pbem.claims")

_RETRY_CAP_SECONDS = 3600.0
PUT_BACK = "put back into the inbox by the GM"
# Bounds of what a claim row holds of a mail's headers (characters).
MESSAGE_ID_CHARS = 900
SENDER_CHARS = 320
SUBJECT_CHARS = 500
OUTCOME_CHARS = 4000
ERROR_CHARS = 2000


def clean(text: str, limit: int, *, lines: bool = False) -> str:
    """``text`` fit for any column on both engines, at most ``limit``
    characters: the mail layer's scrubbing (pbem.mail.bounds), one line
    unless ``lines`` (then tabs and line ends are kept)."""
    text = text[: limit * 4]
    return scrub_text(text, limit) if lines else scrub_line(text, limit)


def stand_in_identity(raw: bytes) -> MailIdentity:
    """An identity made only of safe values (the SHA-256 of the whole mail),
    for a mail whose own headers cannot be read or stored."""
    digest = hashlib.sha256(raw).hexdigest()
    return MailIdentity(f"<{digest[:40]}@pbem.invalid>", digest, "", "")


def _scrubbed(identity: MailIdentity) -> MailIdentity:
    message_id = clean(identity.message_id, MESSAGE_ID_CHARS).strip()
    return MailIdentity(
        message_id or f"<{identity.content_hash[:40]}@pbem.invalid>",
        clean(identity.content_hash, 64),
        clean(identity.sender, SENDER_CHARS),
        clean(identity.subject, SUBJECT_CHARS),
    )


class ClaimState(StrEnum):
    TAKEN = "taken"  # this worker holds the mail: process it
    EXHAUSTED = "exhausted"  # held by this worker, but its attempts are spent: hold it
    DONE = "done"  # its outcome is committed: only move it out of the inbox
    BUSY = "busy"  # another worker holds it, or its next attempt is not due


@dataclass(frozen=True)
class Claim:
    """This worker's hold on one mail."""

    row_id: int
    owner: str
    attempts: int  # attempts counted so far, this one included


@dataclass(frozen=True)
class ClaimResult:
    state: ClaimState
    claim: Claim | None = None
    folder: str | None = None  # where a DONE mail goes
    why: str = ""


class LeaseLost(Exception):
    """Another worker took this mail over (our lease expired): our work is void."""


def folder_of(status: str) -> str:
    """The folder for a mail whose outcome is committed."""
    if status == InboundStatus.REJECTED:
        return REJECTED
    if status == InboundStatus.HELD:
        return HELD
    return PROCESSED


def claim(
    engine: Engine,
    mail: FetchedMail,
    identity: MailIdentity,
    worker: str,
    now: datetime,
    lease_seconds: float,
    max_attempts: int | None = None,
) -> ClaimResult:
    """Take the mail for this worker (counting an attempt), or say why not.

    With ``max_attempts``, a mail whose attempts are spent is taken but not
    counted again: ``EXHAUSTED``, for the caller to hold (``hold_exhausted``).
    A row that cannot be written from the mail's own headers is written
    under ``stand_in_identity``; only a database outage raises."""
    try:
        return _claim(engine, mail, _scrubbed(identity), worker, now, lease_seconds, max_attempts)
    except DatabaseError:
        raise
    except (SQLAlchemyError, ValueError, TypeError, UnicodeError) as exc:
        log.warning(
            "the claim of a mail could not be stored as read (%s); stored under its hash",
            clean(f"{type(exc).__name__}: {exc}", 300),
        )
    stand_in = stand_in_identity(mail.raw)
    return _claim(engine, mail, stand_in, worker, now, lease_seconds, max_attempts)


def claim_here(
    engine: Engine, mail: FetchedMail, now: datetime, lease_seconds: float = 600.0
) -> tuple[MailIdentity, ClaimResult]:
    """A mail handled outside the poll (fed by hand, a test): identified here,
    the one time it is, and claimed by the worker "local"."""
    identity = identify(mail.raw)
    return identity, claim(engine, mail, identity, "local", now, lease_seconds)


def _claim(
    engine: Engine,
    mail: FetchedMail,
    identity: MailIdentity,
    worker: str,
    now: datetime,
    lease_seconds: float,
    max_attempts: int | None,
) -> ClaimResult:
    lease_until = now + timedelta(seconds=lease_seconds)
    data, fmt = kept_headers(mail.raw)
    row = InboundMessage(
        message_id=identity.message_id,
        content_hash=identity.content_hash,
        checksum=hashlib.sha256(mail.raw).hexdigest(),
        mailbox=clean(mail.mailbox, 500),
        uid=mail.uid,
        raw=data,
        raw_format=fmt,
        sender=identity.sender,
        subject=identity.subject,
        received_at=now,
        status=InboundStatus.CLAIMED,
        attempts=1,  # this one: counted before the work starts
        lease_owner=worker,
        lease_until=lease_until,
    )
    # A claim's commits need not reach the disk: a lost claim leaves the mail
    # in the inbox to be claimed again (the outcome's commit is durable).
    try:
        with session_scope(engine, durable=False) as session:
            session.add(row)
            session.flush()
            assert row.id is not None
            return ClaimResult(ClaimState.TAKEN, Claim(row.id, worker, 1))
    except IntegrityError:
        pass  # the mail is known: see who has it
    with session_scope(engine, durable=False) as session:
        return _claim_known(session, mail, identity, worker, now, lease_until, max_attempts)


def _claim_known(
    session: Session,
    mail: FetchedMail,
    identity: MailIdentity,
    worker: str,
    now: datetime,
    lease_until: datetime,
    max_attempts: int | None,
) -> ClaimResult:
    """A mail already known: who has it, and whether this worker may take it."""
    known = _find(session, identity, lock=True)
    if known is None:  # locked by the worker processing it (or deleted meanwhile)
        return ClaimResult(ClaimState.BUSY, why="being processed by another worker")
    status = InboundStatus(known.status)
    if status == InboundStatus.HELD and _moved_back(known, mail):
        return _try_afresh(session, known, mail, worker, lease_until)
    if status != InboundStatus.CLAIMED:
        return ClaimResult(ClaimState.DONE, folder=folder_of(status), why=f"already {status}")
    if known.next_attempt_at is not None and known.next_attempt_at > now:
        return ClaimResult(ClaimState.BUSY, why=f"next attempt at {known.next_attempt_at}")
    free = (
        known.lease_owner is None
        or known.lease_owner == worker
        or (known.lease_until is not None and known.lease_until <= now)
    )
    if not free:
        return ClaimResult(ClaimState.BUSY, why=f"claimed by {known.lease_owner}")
    before = known.attempts  # the update below refreshes ``known``
    spent = max_attempts is not None and before >= max_attempts
    taken = session.execute(
        update(InboundMessage)
        .where(col(InboundMessage.id) == known.id)
        .where(col(InboundMessage.status) == InboundStatus.CLAIMED)
        .where(col(InboundMessage.attempts) == before)
        .where(
            or_(
                col(InboundMessage.lease_owner).is_(None),
                col(InboundMessage.lease_owner) == worker,
                col(InboundMessage.lease_until) <= now,
            )
        )
        .values(
            lease_owner=worker,
            lease_until=lease_until,
            attempts=before + (0 if spent else 1),
        )
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        return ClaimResult(ClaimState.BUSY, why="taken by another worker just now")
    assert known.id is not None
    if spent:
        spent_claim = Claim(known.id, worker, before)
        why = f"its {before} attempts are spent"
        return ClaimResult(ClaimState.EXHAUSTED, spent_claim, why=why)
    return ClaimResult(ClaimState.TAKEN, Claim(known.id, worker, before + 1))


def _moved_back(row: InboundMessage, mail: FetchedMail) -> bool:
    """Did the GM move this held mail back into the inbox?

    A held mail met in the inbox was either moved back (IMAP gives it a new
    UID) or never moved out (the worker died between the commit and the
    move: same UID, it only needs moving). A Maildir has no UIDs: a held
    mail in its inbox counts as moved back.
    """
    if mail.uid is None or row.uid is None:
        return True
    return (mail.mailbox, mail.uid) != (row.mailbox, row.uid)


def _try_afresh(
    session: Session,
    row: InboundMessage,
    mail: FetchedMail,
    worker: str,
    lease_until: datetime,
) -> ClaimResult:
    """A held mail the GM put back: claimable again, its count started afresh
    (this attempt the first).

    Its history stays: ``last_error`` keeps the error that held it, and the
    outcome says it was put back until this try writes its own."""
    assert row.id is not None
    previous = row.attempts
    taken = session.execute(
        update(InboundMessage)
        .where(col(InboundMessage.id) == row.id)
        .where(col(InboundMessage.status) == InboundStatus.HELD)
        .values(
            status=InboundStatus.CLAIMED,
            attempts=1,
            next_attempt_at=None,
            processed_at=None,
            outcome=clean(f"{PUT_BACK}; before that: {row.outcome}", ERROR_CHARS, lines=True),
            mailbox=mail.mailbox,
            uid=mail.uid,
            lease_owner=worker,
            lease_until=lease_until,
        )
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        return ClaimResult(ClaimState.BUSY, why="taken by another worker just now")
    log.warning(
        "%s: put back into the inbox after %d failed attempts; tried afresh",
        row.message_id,
        previous,
    )
    return ClaimResult(ClaimState.TAKEN, Claim(row.id, worker, 1))


def _find(session: Session, identity: MailIdentity, *, lock: bool) -> InboundMessage | None:
    query = select(InboundMessage).where(
        InboundMessage.message_id == identity.message_id,
        InboundMessage.content_hash == identity.content_hash,
    )
    if lock and is_postgresql(session):
        # A row locked now is being processed: never wait for it (SKIP LOCKED).
        query = query.with_for_update(skip_locked=True)
    return session.exec(query.execution_options(populate_existing=True)).first()


def hold_for_processing(session: Session, held: Claim) -> InboundMessage:
    """The claimed row, locked for this transaction; LeaseLost if it is no longer ours.

    Called first in the transaction that processes the mail: while it runs,
    nobody can take the mail over, and if somebody already did, nothing of
    ours is committed.
    """
    query = select(InboundMessage).where(InboundMessage.id == held.row_id)
    if is_postgresql(session):
        query = query.with_for_update()
    row = session.exec(query.execution_options(populate_existing=True)).first()
    if row is None or row.status != InboundStatus.CLAIMED or row.lease_owner != held.owner:
        owner = row.lease_owner if row is not None else None
        raise LeaseLost(f"mail {held.row_id} is no longer ours (now {owner or 'done'})")
    return row


def finish(
    row: InboundMessage,
    status: InboundStatus,
    outcome: str,
    now: datetime,
    *,
    raw: bytes | None = None,
    max_bytes: int = 0,
) -> None:
    """Write the outcome into the claimed row (in the processing transaction).

    ``raw``: the whole mail, kept (``kept_copy``: PASSWORD lines blanked, at
    most ``max_bytes``) only when it was processed for a game; any other
    mail keeps the header block its claim stored."""
    if row.outcome.startswith(PUT_BACK):  # keep the history of a mail held before
        outcome = f"{outcome} ({row.outcome})"
    row.status = status
    row.outcome = clean(outcome, OUTCOME_CHARS, lines=True)
    row.processed_at = now
    row.lease_owner = None
    row.lease_until = None
    row.next_attempt_at = None
    if raw is not None and keeps_whole(status, row.game_id) and max_bytes > 0:
        row.raw, row.raw_format = kept_copy(raw, max_bytes)


def keeps_whole(status: InboundStatus, game_id: int | None) -> bool:
    """Is the whole mail kept? Only one processed for a game (a player's or
    the GM's): a stranger's, a refused, duplicate or held mail is not."""
    return status == InboundStatus.PROCESSED and game_id is not None


def release(engine: Engine, held: Claim) -> None:
    """Give the mail back, and its attempt (a clash with another worker, not
    the mail's fault): any worker may take it at once."""
    with session_scope(engine) as session:
        session.execute(
            update(InboundMessage)
            .where(col(InboundMessage.id) == held.row_id)
            .where(col(InboundMessage.lease_owner) == held.owner)
            .where(col(InboundMessage.attempts) > 0)
            .values(lease_owner=None, lease_until=None, attempts=col(InboundMessage.attempts) - 1)
        )


@dataclass(frozen=True)
class Failure:
    """What a failed attempt led to."""

    attempts: int
    held: bool
    row: InboundMessage


def record_failure(
    engine: Engine,
    held: Claim,
    error: BaseException,
    now: datetime,
    *,
    max_attempts: int,
    retry_base_seconds: float,
    on_held: Callable[[Session, InboundMessage], None],
) -> Failure | None:
    """A failed attempt (already counted by its claim): a backoff, or held
    after the last; None if the mail is no longer ours. Raises DatabaseError
    when the database is down: then nothing is written and the claim stays ours."""
    why = clean(f"{type(error).__name__}: {error}", ERROR_CHARS, lines=True)
    return _fail(engine, held, why, now, max_attempts, retry_base_seconds, on_held)


def hold_exhausted(
    engine: Engine,
    held: Claim,
    now: datetime,
    *,
    on_held: Callable[[Session, InboundMessage], None],
) -> Failure | None:
    """Hold a mail claimed with its attempts spent, without processing it:
    earlier polls died on it (killed for memory, SIGKILL) before they could
    record any failure. None if the mail is no longer ours."""
    why = (
        f"processing it never finished, {held.attempts} times: the poll stopped on it "
        "(killed, e.g. for lack of memory)"
    )
    return _fail(engine, held, why, now, held.attempts, 0.0, on_held)


def _fail(
    engine: Engine,
    held: Claim,
    why: str,
    now: datetime,
    max_attempts: int,
    retry_base_seconds: float,
    on_held: Callable[[Session, InboundMessage], None],
) -> Failure | None:
    with session_scope(engine) as session:
        try:
            row = hold_for_processing(session, held)
        except LeaseLost:
            return None
        row.attempts = max(row.attempts, 1)
        row.last_error = why
        row.lease_owner = None
        row.lease_until = None
        if row.attempts >= max_attempts:
            finish(
                row, InboundStatus.HELD, f"held after {row.attempts} failed attempts: {why}", now
            )
            on_held(session, row)  # the GM is told in the same transaction: once
        else:
            delay = (
                backoff_delay(row.attempts, retry_base_seconds, _RETRY_CAP_SECONDS)
                if retry_base_seconds > 0
                else 0.0
            )
            row.next_attempt_at = now + timedelta(seconds=delay)
        session.add(row)
        return Failure(row.attempts, row.status == InboundStatus.HELD, row)
