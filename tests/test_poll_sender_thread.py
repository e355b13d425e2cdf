"""A poll sends full batches while its inbox is still being read
(pbem/service/sender_thread.py), and every promise of the outbox holds.

Real Dovecot and SMTP relay, a SQLite file (the sender commits in its send
log beside it). The sender the poll opens is wrapped to note, at each batch,
how many order mails the database held as processed at that moment (read
over its own connection) and which thread sent it; the mail still goes
through the real relay.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pbem.mail.settings import MailSettings
from pbem.mail.transport import OutgoingMail, Sender, SendResult
from pbem.service import poll
from pbem.service.sender_thread import may_overlap
from pbem.service.sending import BATCH
from pbem.store import init_db
from pbem.testing.mailservers import MailServers
from tests.fault_helpers import answer_all, check_exactly_once, make_world, new_games

pytestmark = pytest.mark.integration

GAMES = 24  # an order mail each, and 5-6 mails to send for each


class Observing:
    """The real sender, noting (batch size, order mails processed, thread) per batch."""

    def __init__(self, inner: Sender, database: Path) -> None:
        self.inner = inner
        self.database = database
        self.batches: list[tuple[int, int, str]] = []

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        with sqlite3.connect(self.database) as db:
            (done,) = db.execute(
                "SELECT count(*) FROM inbound_message WHERE status = 'processed'"
            ).fetchone()
        self.batches.append((len(messages), done, threading.current_thread().name))
        return self.inner.send(messages, on_result)


def test_full_batches_go_out_while_the_inbox_is_read_and_each_mail_once(
    mail_servers: MailServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, GAMES)
    database = tmp_path / "pbem.db"
    with sqlite3.connect(database) as db:
        (before,) = db.execute(
            "SELECT count(*) FROM inbound_message WHERE status = 'processed'"
        ).fetchone()
    assert answer_all(world, games) == GAMES
    opened: list[Observing] = []
    real_open = poll.open_sender

    def observed(settings: MailSettings) -> Sender:
        opened.append(Observing(real_open(settings), database))
        return opened[-1]

    monkeypatch.setattr(poll, "open_sender", observed)
    report = world.poll()
    assert len(report.mails) == GAMES and report.errors == []
    (sender,) = opened
    early = [b for b in sender.batches if b[2] == "pbem-outbox"]
    # at least one full batch went out before the last order mail was processed
    assert early and early[0][0] == BATCH and early[0][1] < before + GAMES, sender.batches
    assert all(size == BATCH for size, _, _ in early)
    # the poll's own outbox stage sent the rest, after the inbox
    late = [b for b in sender.batches if b[2] != "pbem-outbox"]
    assert all(done == before + GAMES for _, done, _ in late)
    assert report.sent == sum(size for size, _, _ in sender.batches)
    check_exactly_once(world, games)


def test_no_thread_for_a_database_in_memory(tmp_path: Path) -> None:
    """One connection shared by the whole process: the stages run one after the other."""
    assert not may_overlap(init_db("sqlite://"))
    assert may_overlap(init_db(f"sqlite:///{tmp_path / 'pbem.db'}"))
