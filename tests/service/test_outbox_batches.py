"""The outbox sends a whole lease over one SMTP connection and commits each
accepted mail before the next goes out (issue 16; docs/RELIABILITY.md).

A real SMTP server (aiosmtpd) on 127.0.0.1 notes, for every mail it takes,
the connection it came over and how many outbox rows the database already
holds as sent at that moment (read over its own connection).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from pbem.mail.smtp import SmtpSender
from pbem.service.tell import outbox, sending
from pbem.store import Outbox, init_db, session_scope
from pbem.testing.mailservers import HOST, free_port
from tests.outbox_helpers import sent_ids

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


@dataclass
class Recorder:
    database: Path
    # (the client's address and port: one per connection, rows sent before, the mail)
    seen: list[tuple[tuple[str, int], int, bytes]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        sent = len(sent_ids(self.database))
        self.seen.append((tuple(session.peer), sent, envelope.content))
        return "250 OK"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Any, Recorder, SmtpSender]]:
    from aiosmtpd.controller import Controller

    database = tmp_path / "pbem.db"
    engine = init_db(f"sqlite:///{database}")
    recorder = Recorder(database)
    port = free_port()
    controller = Controller(recorder, hostname=HOST, port=port, ready_timeout=10.0)
    controller.start()
    try:
        yield engine, recorder, SmtpSender(HOST, port, tls="none", timeout=10.0)
    finally:
        controller.stop()


def queue_mails(engine: Any, count: int) -> None:
    with session_scope(engine) as session:
        for i in range(count):
            raw = f"Subject: mail {i}\r\nMessage-ID: <m{i}@x>\r\n\r\nbody {i}\r\n".encode()
            outbox.enqueue(
                session,
                message_id=f"<m{i}@x>",
                game_id=None,
                kind="test",
                recipient=f"p{i}@example.org",
                subject=f"mail {i}",
                raw=raw,
                in_reply_to=None,
                now=NOW,
            )


def test_a_lease_goes_over_one_connection_each_mail_committed_before_the_next(
    world: tuple[Any, Recorder, SmtpSender],
) -> None:
    engine, recorder, sender = world
    queue_mails(engine, 7)
    report = outbox.send_due(engine, sender, NOW, "pbem@example.org", outbox.Lease("w1"))
    assert (report.sent, report.deferred, report.failed) == (7, 0, 0)
    assert len({connection for connection, _, _ in recorder.seen}) == 1
    # the k-th mail reached the server when the k mails before it were committed as sent
    assert [sent for _, sent, _ in recorder.seen] == list(range(7))
    assert [body.split(b"\r\n")[0] for _, _, body in recorder.seen] == [
        f"Subject: mail {i}".encode() for i in range(7)
    ]


def test_one_connection_per_lease_of_batch_rows(
    world: tuple[Any, Recorder, SmtpSender], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, recorder, sender = world
    monkeypatch.setattr(sending, "BATCH", 3)
    queue_mails(engine, 7)
    report = outbox.send_due(engine, sender, NOW, "pbem@example.org", outbox.Lease("w1"))
    assert report.sent == 7
    connections = [connection for connection, _, _ in recorder.seen]
    runs = [connections.count(c) for c in dict.fromkeys(connections)]
    assert runs == [3, 3, 1]
    assert [sent for _, sent, _ in recorder.seen] == list(range(7))
    with session_scope(engine, write=False) as session:
        rows = list(session.exec(select(Outbox)))
    assert {r.status for r in rows} == {"sent"} and {r.attempts for r in rows} == {1}
