"""A poll's stages run one after the other (inbox, deadlines, outbox), and
every promise of the outbox holds with the outbox table as its one record.

Real Dovecot and SMTP relay; a SQLite file and PostgreSQL. The sender the
poll opens is wrapped to note, at each batch, how many order mails the
database held as processed at that moment (read over a connection of its
own) and which thread sent it; the mail still goes through the real relay.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pbem.mail.settings import MailSettings
from pbem.mail.transport import OutgoingMail, Sender, SendResult
from pbem.service.ops import poll
from pbem.testing.mailservers import MailServers
from pbem.vocab import InboundStatus
from tests.fault_helpers import (
    all_answered,
    answer_all,
    check_exactly_once,
    make_world,
    new_games,
    outbox_sent,
    poll_ok,
    start_command,
    stop,
)
from tests.mailloop_helpers import MailWorld, wait_until

pytestmark = pytest.mark.integration

GAMES = 24  # an order mail each, and 5-6 mails to send for each
LEASE = 2.1  # FAST_POLL's claim_lease_seconds (claims and leases), and a little more


def processed(world: MailWorld) -> int:
    """Inbound mails the database holds as processed, read on a connection of its own."""
    return sum(1 for row in world.inbound() if row.status == InboundStatus.PROCESSED)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """The world's database: a SQLite file or PostgreSQL."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("pg_db_url"))


class Observing:
    """The real sender, noting (batch size, order mails processed, thread) per batch."""

    def __init__(self, inner: Sender, world: MailWorld) -> None:
        self.inner = inner
        self.world = world
        self.batches: list[tuple[int, int, str]] = []

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        done = processed(self.world)
        self.batches.append((len(messages), done, threading.current_thread().name))
        return self.inner.send(messages, on_result)


def test_the_outbox_goes_out_after_the_inbox_in_the_polls_thread_each_mail_once(
    mail_servers: MailServers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    database_url: str | None,
) -> None:
    world = make_world(mail_servers, tmp_path, database_url=database_url)
    games = new_games(world, GAMES)
    before = processed(world)
    assert answer_all(world, games) == GAMES
    opened: list[Observing] = []
    real_open = poll.open_sender

    def observed(settings: MailSettings) -> Sender:
        opened.append(Observing(real_open(settings), world))
        return opened[-1]

    monkeypatch.setattr(poll, "open_sender", observed)
    report = world.poll()
    assert len(report.mails) == GAMES and report.errors == []
    (sender,) = opened
    assert len(sender.batches) > 1, sender.batches  # more than one batch: a real outbox stage
    assert {done for _, done, _ in sender.batches} == {before + GAMES}
    assert {name for _, _, name in sender.batches} == {threading.main_thread().name}
    assert report.sent == sum(size for size, _, _ in sender.batches)
    check_exactly_once(world, games)


def test_a_poll_killed_while_it_sends_loses_nothing_and_duplicates_at_most_one(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    """`pbem poll` SIGKILLed once it has marked a mail sent (in the outbox
    table, its outbox stage still sending), three times; then a poll
    finishes. Every order mail applied and answered once, every row sent, at
    most one duplicate per kill."""
    world = make_world(mail_servers, tmp_path)
    games = new_games(world, GAMES)
    total = processed(world) + answer_all(world, games)
    chance = random.Random(2611)
    kills = 0
    while kills < 3 and not all_answered(world, games):
        before = outbox_sent(world)
        run = start_command(world, "poll")
        wait_until(lambda b=before, r=run: outbox_sent(world) > b or r.poll() is not None, 60)
        time.sleep(chance.uniform(0.0, 0.2))
        if run.poll() is None:
            assert processed(world) == total  # sending starts after the inbox
            stop(run, signal.SIGKILL)
            kills += 1
        time.sleep(LEASE)  # the dead run's claims and leases run out
    poll_ok(world)
    assert kills == 3
    figures = check_exactly_once(world, games, kills=kills)
    assert figures.answers == figures.mails == GAMES
