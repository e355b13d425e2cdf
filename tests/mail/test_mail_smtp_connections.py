"""A batch shared over a few SMTP connections (issue 16, ``mail.smtp.connections``).

Against the real relay of the tests (aiosmtpd delivering into Dovecot over
LMTP), on a port of its own whose hooks also note which connection (the
client's port) each command came over: every mail goes out once, each
connection sends in batch order, a failed transaction does not end its
connection, each row is committed sent right after its own acceptance, and
a lease that runs out stops every connection.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from pbem.config import ConfigError, load_config
from pbem.mail.settings import MailSettings, SmtpSettings, open_sender
from pbem.mail.smtp import SmtpSender
from pbem.mail.transport import OutgoingMail, SendResult
from pbem.service.tell import outbox
from pbem.store import Outbox, init_db, session_scope
from pbem.testing.mailservers import HOST, MailServers, _Handler, free_port
from tests.outbox_helpers import sent_ids, take_over

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 26, 1, 0, tzinfo=UTC)
MESSAGE_ID = re.compile(rb"^Message-ID: <([^>]+)>", re.MULTILINE | re.IGNORECASE)


@dataclass
class Noted:
    """The relay's own hooks, and per accepted mail (client port, Message-ID)."""

    inner: _Handler
    accepted: list[tuple[int, str]] = field(default_factory=list)
    refused: list[tuple[int, str, str]] = field(default_factory=list)  # port, address, reply
    on_data: Callable[[int, str], None] | None = None  # runs before the relay delivers

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        reply: str = await self.inner.handle_RCPT(server, session, envelope, address, options)
        if not reply.startswith("250"):
            self.refused.append((session.peer[1], address, reply[:3]))
        return reply

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        found = MESSAGE_ID.search(envelope.original_content)
        key = found.group(1).decode() if found else "?"
        if self.on_data is not None:
            self.on_data(session.peer[1], key)
        reply: str = await self.inner.handle_DATA(server, session, envelope)
        if reply.startswith("250"):
            self.accepted.append((session.peer[1], key))
        return reply

    def by_connection(self) -> dict[int, list[str]]:
        runs: dict[int, list[str]] = {}
        for port, key in self.accepted:
            runs.setdefault(port, []).append(key)
        return runs


@pytest.fixture
def relay(mail_servers: MailServers) -> Iterator[tuple[Noted, int]]:
    from aiosmtpd.controller import Controller

    noted = Noted(_Handler(mail_servers.smtp))
    port = free_port()
    controller = Controller(noted, hostname=HOST, port=port, ready_timeout=10.0)
    controller.start()
    try:
        yield noted, port
    finally:
        controller.stop()


def mail(n: int, to: str) -> OutgoingMail:
    raw = f"Subject: n{n}\r\nMessage-ID: <m{n:02}@pbem.test>\r\n\r\nbody {n}\r\n.\r\n".encode()
    return OutgoingMail(f"m{n:02}", "pbem@pbem.test", (to,), raw)


def in_order(runs: dict[int, list[str]]) -> bool:
    return all(keys == sorted(keys) for keys in runs.values())


def test_three_connections_send_every_mail_once_each_in_batch_order(
    mail_servers: MailServers, mail_user: str, relay: tuple[Noted, int]
) -> None:
    noted, port = relay
    sender = SmtpSender(HOST, port, tls="none", timeout=10, connections=3)
    reported: list[str] = []
    results = sender.send([mail(n, mail_user) for n in range(12)], lambda r: reported.append(r.key))
    assert results == [SendResult(f"m{n:02}", ok=True) for n in range(12)]
    assert sorted(reported) == [f"m{n:02}" for n in range(12)]
    runs = noted.by_connection()
    assert len(runs) == 3 and in_order(runs)
    assert sorted(key for _, key in noted.accepted) == [f"m{n:02}@pbem.test" for n in range(12)]
    stored = mail_servers.read_mailbox(mail_user)
    assert len(stored) == 12 and all(m.raw.endswith(b"\r\n.\r\n") for m in stored)


def test_a_refused_recipient_and_a_4xx_do_not_end_their_connection(
    mail_servers: MailServers, mail_user: str, relay: tuple[Noted, int]
) -> None:
    noted, port = relay
    busy = mail_servers.new_user("busy")
    mail_servers.smtp.tempfail.add(busy)
    batch = [mail(n, mail_user) for n in range(9)]
    batch[1] = mail(1, "ghost@pbem.test")
    batch[2] = mail(2, busy)
    try:
        results = SmtpSender(HOST, port, tls="none", timeout=10, connections=3).send(batch)
    finally:
        mail_servers.smtp.tempfail.discard(busy)
    assert [(r.key, r.ok, r.permanent) for r in results] == [
        ("m00", True, False),
        ("m01", False, True),
        ("m02", False, False),
        *[(f"m{n:02}", True, False) for n in range(3, 9)],
    ]
    assert results[1].error == "ghost@pbem.test: 550 5.1.1 No such user here"
    assert results[2].error.startswith(f"{busy}: 451 4.3.0")
    # both connections that had a failed transaction went on with later mail
    later = {port for port, key in noted.accepted if key > "m02"}
    assert [(address, code) for _, address, code in noted.refused] == [
        ("ghost@pbem.test", "550"),
        (busy, "451"),
    ]
    assert {p for p, _, _ in noted.refused} <= later
    assert len(mail_servers.read_mailbox(mail_user)) == 7


# --- through the outbox ---------------------------------------------------------------


def queue(engine: Any, to: str, count: int) -> None:
    with session_scope(engine) as session:
        for n in range(count):
            m = mail(n, to)
            outbox.enqueue(
                session, message_id=f"<m{n:02}@pbem.test>", game_id=None, kind="test",
                recipient=to, subject=f"n{n}", raw=m.raw, in_reply_to=None, now=NOW,
            )  # fmt: skip


def statuses(database: Path) -> dict[str, tuple[str, str | None, int]]:
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT message_id, status, lease_owner, attempts FROM outbox")
        return {mid.strip("<>"): (status, owner, attempts) for mid, status, owner, attempts in rows}


def sent_keys(database: Path) -> set[str]:
    """The Message-IDs committed as sent."""
    done = sent_ids(database)
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT id, message_id FROM outbox")
        return {mid.strip("<>") for row_id, mid in rows if row_id in done}


def test_the_outbox_over_three_connections_commits_each_mail_after_its_acceptance(
    tmp_path: Path, mail_servers: MailServers, mail_user: str, relay: tuple[Noted, int]
) -> None:
    noted, port = relay
    database = tmp_path / "pbem.db"
    engine = init_db(f"sqlite:///{database}")
    queue(engine, mail_user, 12)
    unsent_before: list[list[str]] = []  # per mail: earlier mails of its connection not sent

    def check(client: int, key: str) -> None:
        sent = sent_keys(database)
        earlier = [k for p, k in noted.accepted if p == client]
        unsent_before.append([k for k in earlier if k not in sent])

    noted.on_data = check
    sender = SmtpSender(HOST, port, tls="none", timeout=10, connections=3)
    report = outbox.send_due(engine, sender, NOW, "pbem@pbem.test", outbox.Lease("w1"))
    assert (report.sent, report.deferred, report.failed, report.errors) == (12, 0, 0, [])
    assert unsent_before == [[]] * 12
    runs = noted.by_connection()
    assert len(runs) == 3 and in_order(runs)
    assert sorted(key for _, key in noted.accepted) == [f"m{n:02}@pbem.test" for n in range(12)]
    with session_scope(engine, write=False) as session:
        rows = list(session.exec(select(Outbox)))
    assert {(r.status, r.lease_owner, r.attempts) for r in rows} == {("sent", None, 1)}


class Batches(SmtpSender):
    """Notes, per batch (call of ``send``), the rows reported and what it raised."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[tuple[list[str], str]] = []

    def send(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None] | None = None
    ) -> list[SendResult]:
        keys: list[str] = []

        def note(result: SendResult) -> None:
            keys.append(result.key)
            if on_result is not None:
                on_result(result)

        try:
            results = super().send(messages, note)
        except Exception as exc:
            self.batches.append((keys, type(exc).__name__))
            raise
        self.batches.append((keys, ""))
        return results


def test_a_lease_that_ran_out_stops_every_connection_and_the_rest_goes_next_batch(
    tmp_path: Path, mail_servers: MailServers, mail_user: str, relay: tuple[Noted, int]
) -> None:
    noted, port = relay
    database = tmp_path / "pbem.db"
    engine = init_db(f"sqlite:///{database}")
    queue(engine, mail_user, 12)
    seen: list[str] = []

    def b_takes_the_last(_client: int, key: str) -> None:
        seen.append(key)
        if len(seen) == 4:  # worker B takes the last row while A sends its 4th mail
            take_over(database, 12, "B")

    noted.on_data = b_takes_the_last
    sender = Batches(HOST, port, tls="none", timeout=10, connections=3)
    report = outbox.send_due(engine, sender, NOW, "pbem@pbem.test", outbox.Lease("A"))
    (first, raised), (second, _) = sender.batches
    # the 4th mail's result stopped the batch; the other two connections could
    # only finish the mail each had in flight, and none sent another
    assert raised == "LeaseRanOut" and 4 <= len(first) <= 6
    # the rows never tried were given back, leased again and sent once each
    assert sorted(first + second, key=int) == [str(i) for i in range(1, 12)]
    assert (report.sent, report.deferred, report.failed) == (11, 0, 0)
    delivered = sorted(key for _, key in noted.accepted)
    assert delivered == [f"m{n:02}@pbem.test" for n in range(11)]
    rows = statuses(database)
    assert rows.pop("m11@pbem.test") == ("pending", "B", 0)
    assert set(rows.values()) == {("sent", None, 1)}
    assert len(mail_servers.read_mailbox(mail_user)) == 11


# --- the setting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "mail.smtp.connections: must be at least 1, got 0"),
        ("17", "mail.smtp.connections: must be at most 16, got 17"),
        ('"3"', 'mail.smtp.connections: expected an integer, got string "3"'),
    ],
)
def test_a_bad_connection_count_fails_at_load_naming_file_and_key(
    tmp_path: Path, value: str, message: str
) -> None:
    file = tmp_path / "pbem.toml"
    file.write_text(f"[mail.smtp]\nconnections = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(file, env={})
    assert str(caught.value) == f"{file}: {message}"


def test_the_setting_reaches_the_sender(tmp_path: Path) -> None:
    file = tmp_path / "pbem.toml"
    file.write_text(
        '[mail]\ntransport = "imap"\n[mail.imap]\nuser = "u"\n[mail.smtp]\nconnections = 3\n',
        encoding="utf-8",
    )
    config = load_config(file, env={})
    assert config.mail.smtp.connections == 3
    sender = open_sender(config.mail)
    assert isinstance(sender, SmtpSender) and sender.connections == 3
    assert SmtpSettings().connections == 1
    default = open_sender(MailSettings(transport="imap", imap=config.mail.imap))
    assert isinstance(default, SmtpSender) and default.connections == 1
