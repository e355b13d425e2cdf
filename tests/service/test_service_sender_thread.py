"""The sender thread's own rules (pbem/service/sender_thread.py), one layer
alone: what it raised is raised by ``stop`` in the poll's thread, except a
mail server's failure, which is reported; a batch's worth must wait before
it sends; it folds nothing (the outbox stage does). The mail server here is
a stand-in; tests/faults/test_poll_sender_thread.py runs the real ones."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.mail.errors import TransportError
from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service.clock import ManualClock
from pbem.service.sender_thread import PAUSE_S, SenderThread, beside
from pbem.service.sending import BATCH, Lease
from pbem.store import init_db
from pbem.store.sendlog import in_flight_for
from tests.mailloop_helpers import wait_until
from tests.sendlog_helpers import queue_alerts

NOW = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)


class Server:
    """Takes every mail, or raises ``fails`` at the first batch."""

    def __init__(self, fails: BaseException | None = None) -> None:
        self.fails = fails
        self.sent: list[str] = []

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        if self.fails is not None:
            raise self.fails
        results = [SendResult(m.key, ok=True) for m in messages]
        for result in results:
            self.sent.append(result.key)
            if on_result is not None:
                on_result(result)
        return results


def started(tmp_path: Path, rows: int, server: Server) -> tuple[object, SenderThread]:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    queue_alerts(engine, rows, NOW)
    thread = SenderThread(engine, server, ManualClock(NOW), "g@pbem.test", Lease("A"))
    thread.start()
    return engine, thread


def test_full_batches_only_and_nothing_folded(tmp_path: Path) -> None:
    server = Server()
    engine, thread = started(tmp_path, BATCH + 7, server)
    wait_until(lambda: len(server.sent) >= BATCH, 10, "a batch sent")
    time.sleep(2 * PAUSE_S)  # it looks again: 7 rows are less than a batch
    report = thread.stop()
    assert server.sent == [str(i) for i in range(1, BATCH + 1)]
    assert (report.sent, report.errors) == (BATCH, [])
    assert in_flight_for(engine, NOW)[0] == set(range(1, BATCH + 1))  # marks, not folded


def test_a_mail_server_failure_is_reported_not_raised(tmp_path: Path) -> None:
    refused = TransportError("the SMTP server refused the login of 'pbem'")
    _, thread = started(tmp_path, BATCH, Server(fails=refused))
    wait_until(lambda: thread.raised is not None, 10, "the thread stopped by the failure")
    report = thread.stop()
    assert report.errors == ["cannot send mail: the SMTP server refused the login of 'pbem'"]


def test_a_bug_in_the_thread_is_raised_in_the_poll(tmp_path: Path) -> None:
    _, thread = started(tmp_path, BATCH, Server(fails=RuntimeError("a bug")))
    wait_until(lambda: thread.raised is not None, 10, "the thread stopped by the bug")
    with pytest.raises(RuntimeError, match="a bug"):
        thread.stop()


def test_no_thread_beside_an_in_memory_database() -> None:
    engine = init_db("sqlite://")
    with beside(engine, Server(), ManualClock(NOW), "g@pbem.test", Lease("A")) as thread:
        assert thread is None
