"""One poll cycle (fetch, process, move, send) and the outbox sender.

`pbem poll` runs one cycle under an exclusive file lock, so overlapping cron
runs exit quietly; `pbem daemon` runs cycles in a loop, waiting with IMAP
IDLE where the server has it, and stops cleanly on SIGTERM.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbem.config import Config
from pbem.mail.errors import MessageGone
from pbem.mail.retry import backoff_delay
from pbem.mail.settings import MailSettings, open_inbox, open_sender
from pbem.mail.transport import Checkpoint, FetchedMail, Inbox, OutgoingMail, Sender
from pbem.service.clock import Clock
from pbem.service.context import Context
from pbem.service.mailflow import MailOutcome, process_mail, record_failure
from pbem.store import MailboxCheckpoint, Outbox, ServiceState, session_scope

log = logging.getLogger("pbem.poll")


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
    errors: list[str] = field(default_factory=list)
    deadline_events: list[str] = field(default_factory=list)


def mail_settings(config: Config) -> MailSettings:
    """The mail layer's settings from the [mail] table of the config."""
    mail = config.mail
    return MailSettings(
        transport=mail.transport,
        from_address=mail.game_address,
        max_mail_bytes=mail.max_mail_bytes,
        replies_per_hour=mail.reply_budget_per_hour,
        maildir_root=str(mail.maildir_root),
        inbox_address=mail.game_address,
        imap_host=mail.imap.host,
        imap_port=mail.imap.port,
        imap_user=mail.imap.user,
        imap_password=mail.imap.password,
        imap_tls=mail.imap.tls,
        imap_timeout=mail.imap.timeout,
        imap_inbox=mail.imap.mailbox,
        imap_processed_folder=mail.imap.processed_folder,
        imap_rejected_folder=mail.imap.rejected_folder,
        smtp_host=mail.smtp.host,
        smtp_port=mail.smtp.port,
        smtp_user=mail.smtp.user,
        smtp_password=mail.smtp.password,
        smtp_tls=mail.smtp.tls,
        smtp_timeout=mail.smtp.timeout,
        tls_ca_file=mail.tls_ca_file,
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


def load_checkpoint(engine: Engine, mailbox: str) -> Checkpoint | None:
    """The stored (UIDVALIDITY, last UID) of a mailbox, None before its first poll."""
    with session_scope(engine, write=False) as session:
        row = session.exec(
            select(MailboxCheckpoint).where(MailboxCheckpoint.mailbox == mailbox)
        ).first()
        return Checkpoint(mailbox, row.uidvalidity, row.last_uid) if row else None


def _save_checkpoint(engine: Engine, checkpoint: Checkpoint | None) -> None:
    if checkpoint is None:
        return
    with session_scope(engine) as session:
        row = session.exec(
            select(MailboxCheckpoint).where(MailboxCheckpoint.mailbox == checkpoint.mailbox)
        ).first() or MailboxCheckpoint(mailbox=checkpoint.mailbox, uidvalidity=0)
        row.uidvalidity = checkpoint.uidvalidity
        row.last_uid = checkpoint.last_uid
        session.add(row)


def run_cycle(engine: Engine, config: Config, clock: Clock, batch: int | None = None) -> PollReport:
    """Fetch, process and move every new mail, run deadlines, then send the outbox."""
    from pbem.service import deadlines

    settings = mail_settings(config)
    ctx = Context(config, clock, settings.own_addresses)
    report = PollReport()
    try:
        inbox = open_inbox(settings)
        inbox.__enter__()  # connects (IMAP); closed in the finally below
    except OSError as exc:
        raise ServerUnreachable(f"cannot reach the inbox: {exc}") from exc
    try:
        # Checkpoints are stored under the folder name the inbox puts in them.
        _take_mail(engine, ctx, inbox, settings.imap_inbox, batch, report)
    finally:
        inbox.close()
    report.deadline_events = deadlines.run(engine, ctx)
    _record_poll(engine, clock)
    try:
        send_outbox(engine, open_sender(settings), clock, settings.from_address, report)
    except OSError as exc:  # TransportError: TLS refused, login refused, ...
        raise ServerUnreachable(f"cannot send mail: {exc}") from exc
    return report


def _take_mail(
    engine: Engine, ctx: Context, inbox: Inbox, mailbox: str, batch: int | None, report: PollReport
) -> None:
    """Every new mail: processed (one transaction each), then moved; the
    checkpoint is saved after the moves, so a crash re-reads, never skips."""
    checkpoint = load_checkpoint(engine, mailbox)
    while True:
        try:
            fetched, new_checkpoint = inbox.fetch_new(checkpoint, batch)
        except OSError as exc:
            raise ServerUnreachable(f"cannot fetch mail: {exc}") from exc
        for mail in fetched:
            outcome = _process_safely(engine, ctx, mail)
            try:
                inbox.move(mail.key, outcome.folder)
            except MessageGone as exc:  # moved by another client meanwhile: stored anyway
                log.warning("%s: %s", mail.key, exc)
            except OSError as exc:
                raise ServerUnreachable(f"cannot move mail {mail.key}: {exc}") from exc
            log.info(outcome.log_line())
            report.mails.append(outcome)
        _save_checkpoint(engine, new_checkpoint)
        checkpoint = new_checkpoint
        if batch is None or len(fetched) < batch:
            return


def _process_safely(engine: Engine, ctx: Context, mail: FetchedMail) -> MailOutcome:
    """Process one mail; a mail that trips a bug in pbem must neither stop the
    poll nor be lost: its transaction is rolled back, the raw mail is kept
    (database and rejected folder) with the error, and the GM is told."""
    try:
        return process_mail(engine, ctx, mail)
    except Exception as exc:  # noqa: BLE001 - any bug, any input: keep the daemon up
        log.exception("mail %s could not be processed", mail.key)
        return record_failure(engine, ctx, mail, exc)


def _record_poll(engine: Engine, clock: Clock) -> None:
    with session_scope(engine) as session:
        row = session.exec(select(ServiceState).where(ServiceState.key == "last_poll")).first()
        row = row or ServiceState(key="last_poll")
        row.value = clock.now().isoformat()
        session.add(row)


def send_outbox(
    engine: Engine,
    sender: Sender,
    clock: Clock,
    envelope_from: str,
    report: PollReport | None = None,
    retry_all: bool = False,
    batch: int = 200,
) -> PollReport:
    """Send every due outbox row; mark each sent only after the server took it.
    Temporary failures wait with backoff, permanent ones are marked for the GM."""
    report = report or PollReport()
    while True:
        now = clock.now()
        with session_scope(engine, write=False) as session:
            query = select(Outbox).where(Outbox.status == "pending")
            if not retry_all:
                query = query.where(Outbox.next_attempt_at <= now)
            rows = list(session.exec(query.order_by(col(Outbox.id)).limit(batch)))
            mails = [OutgoingMail(str(r.id), envelope_from, [r.recipient], r.raw) for r in rows]
        if not mails:
            return report
        results = sender.send(mails)
        with session_scope(engine) as session:
            for result in results:
                row = session.get(Outbox, int(result.key))
                if row is None:
                    continue
                row.attempts += 1
                if result.ok:
                    row.status = "sent"
                    row.sent_at = now
                    row.last_error = None
                    report.sent += 1
                elif result.permanent:
                    row.status = "failed"
                    row.last_error = result.error
                    report.failed += 1
                    log.warning(
                        "outbox %s to %s failed for good: %s",
                        row.message_id,
                        row.recipient,
                        result.error,
                    )
                else:
                    row.next_attempt_at = now + timedelta(seconds=backoff_delay(row.attempts))
                    row.last_error = result.error
                    report.deferred += 1
                session.add(row)
        if any(not r.ok and not r.permanent for r in results):
            report.errors.append(next(r.error for r in results if not r.ok and not r.permanent))
            return report
