"""The outbox lease holds for a whole batch, and a worker that lost it stops.

Two workers on one database, in one process: worker A's SMTP server is
slow, so A stalls past its lease while sending its batch; worker B leases
the rows A has not sent yet and sends them. A must then stop: it may send
again only the one message it had in flight (at most one duplicate), never
the rest of its batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service.tell import outbox
from pbem.store import init_db, session_scope

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ROWS = 6


class Recorder:
    """An SMTP server that takes everything; ``before`` runs before message ``at``."""

    def __init__(self, delivered: Counter[str], at: int = -1, before: Callable[[], None] = print):
        self.delivered = delivered
        self.at = at
        self.before = before

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        results = []
        for index, message in enumerate(messages):
            if index == self.at:
                self.before()  # A stalls here past its lease: B works meanwhile
            self.delivered[message.key] += 1
            results.append(SendResult(message.key, ok=True))
            if on_result is not None:
                on_result(results[-1])
        return results


def test_a_worker_that_stalled_past_its_lease_stops_its_batch(tmp_path: Path) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine) as session:
        for n in range(ROWS):
            outbox.enqueue(
                session, message_id=f"<m{n}@pbem.test>", game_id=None, kind="gm_alert",
                recipient="gm@pbem.test", subject=f"m{n}", raw=b"Subject: x\n\nx\n",
                in_reply_to=None, now=NOW,
            )  # fmt: skip
    delivered: Counter[str] = Counter()
    lease_a = outbox.Lease("A", seconds=60, retry_base_seconds=0)
    lease_b = outbox.Lease("B", seconds=60, retry_base_seconds=0)

    def worker_b() -> None:  # 61 s later by B's clock: A's lease has run out
        later = NOW + timedelta(seconds=61)
        sent = outbox.send_due(engine, Recorder(delivered), later, "game@pbem.test", lease_b)
        assert (sent.sent, sent.errors) == (ROWS - 2, [])  # all but the one A sent

    sent = outbox.send_due(
        engine, Recorder(delivered, at=2, before=worker_b), NOW, "game@pbem.test", lease_a
    )
    # A sent m0 and m1, then its third (in flight while B took over) went out
    # twice; A stopped there instead of sending m3..m5 a second time.
    assert sent.sent == 2
    assert sorted(delivered.values()) == [1] * (ROWS - 1) + [2]
    assert sum(delivered.values()) == ROWS + 1
