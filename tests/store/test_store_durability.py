"""Which commits are synced to disk (docs/RELIABILITY.md, section 8).

SQLite in WAL mode: ``synchronous = FULL`` syncs the WAL at a commit (and
with it every earlier commit), ``NORMAL`` does not (a killed process loses
nothing, a power loss may lose the last commits). The outbox's commit per
sent mail may be lost that way (the mail goes out again, same Message-ID);
the lease before a batch is sent may not. Each commit's level is read on
its own connection at the moment it commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service.tell import outbox
from pbem.store import ServiceState, init_db, session_scope
from tests.outbox_helpers import queue_alerts

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
FULL, NORMAL = 2, 1


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    yield engine
    engine.dispose()


def levels_of_commits(engine: Engine) -> list[int]:
    """The synchronous level of every commit from now on, in order."""
    levels: list[int] = []

    @event.listens_for(engine, "commit")
    def _on_commit(connection: Any) -> None:
        levels.append(connection.exec_driver_sql("PRAGMA synchronous").scalar())

    return levels


def test_commits_are_durable_unless_asked(engine: Engine) -> None:
    levels = levels_of_commits(engine)
    with session_scope(engine) as session:
        session.add(ServiceState(key="a", value="1"))
    with session_scope(engine, durable=False) as session:
        session.add(ServiceState(key="b", value="2"))
    with session_scope(engine, durable=False) as session:
        session.add(ServiceState(key="c", value="3"))
    with session_scope(engine) as session:  # the same pooled connection, set back
        session.add(ServiceState(key="d", value="4"))
    with session_scope(engine, write=False) as session:
        session.exec(text("SELECT 1"))  # type: ignore[call-overload]
    assert levels == [FULL, NORMAL, NORMAL, FULL, FULL]
    with session_scope(engine, write=False) as session:
        query = "SELECT key FROM service_state WHERE key != 'sendlog_key' ORDER BY key"
        keys = session.exec(text(query)).all()  # type: ignore[call-overload]
    assert [k for (k,) in keys] == ["a", "b", "c", "d"]


class Accepting:
    """An SMTP server that takes every mail; ``during`` sees each result's moment."""

    def __init__(self, during: Callable[[], None]) -> None:
        self.during = during

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        results = []
        for message in messages:
            self.during()
            results.append(SendResult(message.key, ok=True))
            if on_result is not None:
                on_result(results[-1])
        return results


def test_the_lease_before_a_batch_is_durable_the_commit_per_sent_mail_is_not(
    engine: Engine,
) -> None:
    rows = outbox.BATCH + 3  # two batches: two leases
    queue_alerts(engine, rows, NOW)
    levels = levels_of_commits(engine)
    marks: list[int] = []  # how many commits had happened when each mail went out

    sent = outbox.send_due(
        engine, Accepting(lambda: marks.append(len(levels))), NOW, "game@pbem.test",
        outbox.Lease("A", seconds=60, retry_base_seconds=0),
    )  # fmt: skip
    assert sent.sent == rows
    # lease (FULL), 50 results (NORMAL), lease (FULL), 3 results (NORMAL), empty lease
    assert levels == [FULL] + [NORMAL] * 50 + [FULL] + [NORMAL] * 3 + [FULL]
    # every mail went out after a durable lease and the results before it
    assert marks[0] == 1 and marks[outbox.BATCH] == 52
