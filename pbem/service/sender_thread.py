"""The outbox sent while the inbox is still being read: a poll's two stages overlap.

A poll's inbox stage spends its time on the processor (the turn, its reports,
its pictures: ~60 ms an order mail), its outbox stage waiting for the SMTP
server (~60 ms for the seven mails of an order mail through the test relay).
One after the other they take the sum; side by side, about the larger. This
thread sends whole batches of what the inbox has committed so far; the
poll's own outbox stage then sends the rest and folds the marks (see
pbem/service/sending.py), exactly as without it.

The promises are the outbox's own (leases, one commit per accepted mail;
docs/RELIABILITY.md §3): the thread is one more sender, leasing as every
sender does. It needs the inbox not to hold the write lock the sender
commits under: PostgreSQL's row locks, or SQLite's send log beside the
file. An in-memory SQLite database (one connection, shared) gets no thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Engine

from pbem.mail.transport import Sender
from pbem.service import sending
from pbem.service.clock import Clock
from pbem.store.sendlog import path_for

log = logging.getLogger("pbem.poll")

PAUSE_S = 0.2  # how often the thread looks for a batch's worth of new mail


def may_overlap(engine: Engine) -> bool:
    """Can a sender commit while the inbox holds its transaction open?"""
    return engine.url.get_backend_name() == "postgresql" or path_for(engine) is not None


class SenderThread:
    """Full batches sent while the poll reads its inbox; started and stopped by ``beside``."""

    def __init__(
        self,
        engine: Engine,
        sender: Sender,
        clock: Clock,
        envelope_from: str,
        lease: sending.Lease,
    ) -> None:
        self.engine = engine
        self.sender = sender
        self.clock = clock
        self.envelope_from = envelope_from
        self.lease = lease
        self.report = sending.SendReport()
        self.raised: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pbem-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> sending.SendReport:
        """Wait for the batch in hand, then hand over what was sent. What the
        thread raised is raised here (the database out, a bug), except a mail
        server's failure, which is reported: the poll's own outbox stage meets
        it again and records it for the health check."""
        self.halt()
        if self.raised is not None and not isinstance(self.raised, OSError):
            raise self.raised
        if isinstance(self.raised, OSError):
            self.report.errors.append(f"cannot send mail: {self.raised}")
        return self.report

    def halt(self) -> None:
        """Ask the thread to stop after the batch in hand, and wait for it."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        ledger = sending.ledger_for(self.engine)
        try:
            while not self._stop.is_set():
                done = self._done()
                sending.send_due(
                    self.engine,
                    self.sender,
                    self.clock.now(),
                    self.envelope_from,
                    self.lease,
                    report=self.report,
                    ledger=ledger,
                    at_least=sending.BATCH,
                )
                if self.report.errors:  # a server failing: the poll's outbox stage tries again
                    log.info("sending beside the inbox stopped: %s", self.report.errors[0])
                    return
                if self._done() == done:  # less than a batch waits
                    self._stop.wait(PAUSE_S)
        except BaseException as exc:  # noqa: BLE001 - handed to the poll's thread in stop()
            self.raised = exc
        finally:
            ledger.close()  # its marks stay in the log: the outbox stage folds them

    def _done(self) -> int:
        return self.report.sent + self.report.deferred + self.report.failed


@contextmanager
def beside(
    engine: Engine,
    sender: Sender,
    clock: Clock,
    envelope_from: str,
    lease: sending.Lease,
) -> Iterator[SenderThread | None]:
    """A sender thread for the duration of the block (None where the database
    cannot let it commit beside the inbox). Call ``stop`` on it in the block
    to have its report; it is stopped in any case when the block ends."""
    if not may_overlap(engine):
        yield None
        return
    # Python's switch interval is left at its 5 ms: the inbox's thread lets go
    # of the interpreter at each SQLite call and picture deflate anyway (0.5 ms
    # measured no faster: docs/PERFORMANCE.md, "The poll, sixth pass").
    thread = SenderThread(engine, sender, clock, envelope_from, lease)
    thread.start()
    try:
        yield thread
    finally:
        thread.halt()
