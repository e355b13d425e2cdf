"""IMAP inbox and SMTP sender against real Dovecot and SMTP servers on 127.0.0.1."""

from __future__ import annotations

import threading
import time

import pytest
from imapclient import IMAPClient

from pbem.mail.decode import decode_mail
from pbem.mail.errors import MessageGone, TlsUnavailable, TransportError
from pbem.mail.imap import ImapInbox
from pbem.mail.settings import ImapSettings, MailSettings, SmtpSettings, open_inbox, open_sender
from pbem.mail.smtp import SmtpSender
from pbem.mail.transport import (
    PROCESSED,
    REJECTED,
    Checkpoint,
    Inbox,
    OutgoingMail,
    SendResult,
)
from pbem.testing.mailservers import HOST, MailServers, free_port
from tests.fixtures_mail import TlsMailServers

pytestmark = pytest.mark.integration

PLAYER = "player@pbem.test"


def order_mail(n: int, to: str) -> bytes:
    return (
        f"From: Player <{PLAYER}>\r\nTo: {to}\r\nSubject: [world-1] orders {n}\r\n"
        f"Message-ID: <order-{n}.{to}>\r\n\r\nPLACE {n} Alaska\r\n"
        f"ATTACK Alaska -> Kamchatka UNTIL 3 LEFT\r\n"
    ).encode()


def outgoing(n: int, to: str | list[str]) -> OutgoingMail:
    recipients = [to] if isinstance(to, str) else to
    return OutgoingMail(f"out-{n}", PLAYER, recipients, order_mail(n, recipients[0]))


def imap_inbox(servers: MailServers, user: str, **options: object) -> ImapInbox:
    port = options.pop("port", servers.dovecot.imap_port)
    tls = options.pop("tls", "none")
    return ImapInbox(HOST, port, user, "secret", tls=tls, timeout=10, **options)  # type: ignore[arg-type]


def smtp_sender(servers: MailServers, **options: object) -> SmtpSender:
    return SmtpSender(HOST, servers.smtp.port, tls="none", timeout=10, **options)  # type: ignore[arg-type]


# --- fetching ---------------------------------------------------------------------


def test_send_over_smtp_and_fetch_over_imap_leaves_mail_unseen(
    mail_servers: MailServers, mail_user: str
) -> None:
    results = smtp_sender(mail_servers).send([outgoing(1, mail_user), outgoing(2, mail_user)])
    assert results == [SendResult("out-1", ok=True), SendResult("out-2", ok=True)]
    with imap_inbox(mail_servers, mail_user) as inbox:
        mails, checkpoint = inbox.fetch_new(None)
    assert [m.uid for m in mails] == [1, 2]
    assert [m.key for m in mails] == [f"{checkpoint.uidvalidity}:1", f"{checkpoint.uidvalidity}:2"]
    assert checkpoint == Checkpoint(inbox.source, checkpoint.uidvalidity, 2)
    assert mails[0].raw.endswith(order_mail(1, mail_user))  # the server adds trace headers on top
    decoded = decode_mail(mails[1].raw)
    assert decoded.message_id == f"<order-2.{mail_user}>"
    assert decoded.text == "PLACE 2 Alaska\nATTACK Alaska -> Kamchatka UNTIL 3 LEFT"
    stored = mail_servers.read_mailbox(mail_user)
    assert [m.uid for m in stored] == [1, 2]
    assert all(b"\\Seen" not in m.flags for m in stored)


def test_checkpoint_advances_and_limit_takes_the_oldest_first(
    mail_servers: MailServers, mail_user: str
) -> None:
    mail_servers.deliver(mail_user, order_mail(1, mail_user))
    with imap_inbox(mail_servers, mail_user) as inbox:
        first, checkpoint = inbox.fetch_new(None)
        assert [m.uid for m in first] == [1]
        assert inbox.fetch_new(checkpoint) == ([], checkpoint)
        for n in (2, 3, 4):
            mail_servers.deliver(mail_user, order_mail(n, mail_user))
        batch, checkpoint = inbox.fetch_new(checkpoint, limit=2)
        assert [m.uid for m in batch] == [2, 3]
        assert checkpoint.last_uid == 3
        rest, checkpoint = inbox.fetch_new(checkpoint, limit=2)
        assert [m.uid for m in rest] == [4]
        assert [decode_mail(m.raw).text.split("\n")[0] for m in batch + rest] == [
            "PLACE 2 Alaska",
            "PLACE 3 Alaska",
            "PLACE 4 Alaska",
        ]
        assert checkpoint.last_uid == 4
        assert inbox.fetch_new(checkpoint)[0] == []


def test_changed_uidvalidity_restarts_from_the_beginning(
    mail_servers: MailServers, mail_user: str
) -> None:
    admin = mail_servers.dovecot.imap(mail_user)
    try:
        admin.create_folder("orders")
        admin.append("orders", order_mail(1, mail_user))
        admin.append("orders", order_mail(2, mail_user))
        with imap_inbox(mail_servers, mail_user, inbox="orders") as inbox:
            old, checkpoint = inbox.fetch_new(None)
        assert [m.uid for m in old] == [1, 2]
        assert inbox.fetch_new(checkpoint)[0] == []
        inbox.close()
        admin.delete_folder("orders")  # the mailbox is recreated: UIDs start again
        admin.create_folder("orders")
        admin.append("orders", order_mail(2, mail_user))
        admin.append("orders", order_mail(3, mail_user))
    finally:
        admin.logout()
    with imap_inbox(mail_servers, mail_user, inbox="orders") as inbox:
        again, new_checkpoint = inbox.fetch_new(checkpoint)
        assert new_checkpoint.uidvalidity != checkpoint.uidvalidity
        assert new_checkpoint == Checkpoint(inbox.source, new_checkpoint.uidvalidity, 2)
        assert [m.raw for m in again] == [order_mail(2, mail_user), order_mail(3, mail_user)]
        with pytest.raises(MessageGone, match="recreated"):
            inbox.move(old[0].key, PROCESSED)


# --- moving ------------------------------------------------------------------------


@pytest.mark.parametrize("use_move", [True, False], ids=["MOVE", "COPY+EXPUNGE"])
def test_move_to_processed_and_rejected(
    mail_servers: MailServers, mail_user: str, use_move: bool
) -> None:
    for n in (1, 2, 3):
        mail_servers.deliver(mail_user, order_mail(n, mail_user))
    # Someone else marked message 3 \Deleted without expunging it: a move of
    # another message must not expunge it (UID EXPUNGE, never a bare EXPUNGE).
    other = mail_servers.dovecot.imap(mail_user)
    try:
        other.select_folder("INBOX")
        other.add_flags([3], [b"\\Deleted"])
    finally:
        other.logout()
    with imap_inbox(mail_servers, mail_user, use_move=use_move) as inbox:
        mails, checkpoint = inbox.fetch_new(None)
        inbox.move(mails[0].key, PROCESSED)
        inbox.move(mails[1].key, REJECTED)
        with pytest.raises(MessageGone):
            inbox.move(mails[0].key, PROCESSED)
        assert inbox.fetch_new(checkpoint)[0] == []
    assert [m.uid for m in mail_servers.read_mailbox(mail_user)] == [3]
    processed = mail_servers.read_mailbox(mail_user, "processed")
    rejected = mail_servers.read_mailbox(mail_user, "rejected")
    assert [m.raw for m in processed] == [mails[0].raw]
    assert [m.raw for m in rejected] == [mails[1].raw]
    assert all(b"\\Seen" not in m.flags and b"\\Deleted" not in m.flags for m in processed)


def test_configured_folders_are_created_on_connect(
    mail_servers: MailServers, mail_user: str
) -> None:
    with imap_inbox(mail_servers, mail_user, processed_folder="pbem.done", rejected_folder="bad"):
        pass
    client = mail_servers.dovecot.imap(mail_user)
    try:
        names = {name for _, _, name in client.list_folders()}
    finally:
        client.logout()
    assert {"INBOX", "pbem.done", "bad"} <= names


def test_a_folder_another_worker_creates_first_is_no_error(
    mail_servers: MailServers, mail_user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers starting at once on a new mailbox all see no "processed" folder;
    the one that creates it second gets ALREADYEXISTS from the server."""
    client = mail_servers.dovecot.imap(mail_user)
    try:
        client.create_folder("done")  # the other worker was quicker
    finally:
        client.logout()
    real = IMAPClient.folder_exists
    asked: list[str] = []

    def too_early(self: IMAPClient, folder: str) -> bool:
        asked.append(folder)
        return False if asked.count(folder) == 1 else real(self, folder)

    monkeypatch.setattr(IMAPClient, "folder_exists", too_early)
    with imap_inbox(mail_servers, mail_user, processed_folder="done") as inbox:
        assert inbox.fetch_new(None)[0] == []
    assert asked.count("done") == 2  # asked again after the server's refusal


# --- waiting -----------------------------------------------------------------------


def test_idle_wakes_up_when_new_mail_arrives(mail_servers: MailServers, mail_user: str) -> None:
    inbox = imap_inbox(mail_servers, mail_user)
    inbox.connect()
    outcome: list[bool] = []
    waiter = threading.Thread(target=lambda: outcome.append(inbox.wait_for_mail(60)))
    waiter.start()
    try:
        deadline = time.monotonic() + 10
        while not inbox.idling and waiter.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert inbox.idling, "the inbox never entered IDLE"
        mail_servers.deliver(mail_user, order_mail(1, mail_user))
    finally:
        waiter.join(timeout=60)
    assert outcome == [True]
    mails, _ = inbox.fetch_new(None)
    assert [m.uid for m in mails] == [1]
    inbox.close()


def test_mail_that_arrived_after_the_last_fetch_counts_at_once(
    mail_servers: MailServers, mail_user: str
) -> None:
    with imap_inbox(mail_servers, mail_user) as inbox:
        inbox.fetch_new(None)
        mail_servers.deliver(mail_user, order_mail(1, mail_user))
        assert inbox.wait_for_mail(30) is True
        assert inbox.idling is False


def test_wait_for_mail_returns_false_when_nothing_arrives(
    mail_servers: MailServers, mail_user: str
) -> None:
    with imap_inbox(mail_servers, mail_user) as inbox:
        inbox.fetch_new(None)
        assert inbox.wait_for_mail(0.3) is False
        # the connection is still usable after IDLE
        mail_servers.deliver(mail_user, order_mail(1, mail_user))
        assert [m.uid for m in inbox.fetch_new(None)[0]] == [1]


# --- sending -----------------------------------------------------------------------


def test_smtp_down_gives_temporary_failures(mail_servers: MailServers, mail_user: str) -> None:
    sender = smtp_sender(mail_servers)
    with mail_servers.smtp.stopped():
        results = sender.send([outgoing(1, mail_user), outgoing(2, mail_user)])
    assert [(r.key, r.ok, r.permanent) for r in results] == [
        ("out-1", False, False),
        ("out-2", False, False),
    ]
    assert all(r.error.startswith(f"cannot connect to SMTP server {HOST}:") for r in results)
    assert sender.send([outgoing(3, mail_user)]) == [SendResult("out-3", ok=True)]
    assert [decode_mail(m.raw).subject for m in mail_servers.read_mailbox(mail_user)] == [
        "[world-1] orders 3"
    ]


def test_5xx_is_permanent_4xx_temporary_and_the_batch_goes_on(
    mail_servers: MailServers, mail_user: str
) -> None:
    busy = mail_servers.new_user("busy")
    mail_servers.smtp.tempfail.add(busy)
    try:
        results = smtp_sender(mail_servers).send(
            [
                outgoing(1, mail_user),
                outgoing(2, "no-such-user@pbem.test"),
                outgoing(3, busy),
                outgoing(4, mail_user),
            ]
        )
    finally:
        mail_servers.smtp.tempfail.discard(busy)
    assert [(r.key, r.ok, r.permanent) for r in results] == [
        ("out-1", True, False),
        ("out-2", False, True),
        ("out-3", False, False),
        ("out-4", True, False),
    ]
    assert results[1].error == "no-such-user@pbem.test: 550 5.1.1 No such user here"
    assert results[2].error.startswith(f"{busy}: 451 4.3.0")
    assert len(mail_servers.read_mailbox(mail_user)) == 2


def test_a_mail_accepted_for_some_recipients_counts_as_sent(
    mail_servers: MailServers, mail_user: str
) -> None:
    (result,) = smtp_sender(mail_servers).send([outgoing(1, [mail_user, "ghost@pbem.test"])])
    assert (result.ok, result.error) == (True, "ghost@pbem.test: 550 5.1.1 No such user here")
    assert len(mail_servers.read_mailbox(mail_user)) == 1


def test_smtp_login(mail_servers: MailServers, mail_user: str) -> None:
    good = smtp_sender(mail_servers, user=mail_user, password="secret")
    assert good.send([outgoing(1, mail_user)]) == [SendResult("out-1", ok=True)]
    bad = smtp_sender(mail_servers, user=mail_user, password="wrong")
    with pytest.raises(TransportError, match="refused the login"):
        bad.send([outgoing(2, mail_user)])
    assert len(mail_servers.read_mailbox(mail_user)) == 1


# --- connection errors and TLS -------------------------------------------------------


def test_imap_errors_are_clear(mail_servers: MailServers, mail_user: str) -> None:
    with pytest.raises(TransportError, match="refused the login"):
        ImapInbox(HOST, mail_servers.dovecot.imap_port, mail_user, "wrong", tls="none").connect()
    with pytest.raises(TransportError, match="cannot connect to IMAP server"):
        ImapInbox(HOST, free_port(), mail_user, "secret", tls="none", timeout=5).connect()


def test_starttls_never_falls_back_to_plain_text(mail_servers: MailServers, mail_user: str) -> None:
    with pytest.raises(TlsUnavailable, match="does not offer STARTTLS"):
        imap_inbox(mail_servers, mail_user, tls="starttls").connect()
    with pytest.raises(TlsUnavailable, match="does not offer STARTTLS"):
        SmtpSender(HOST, mail_servers.smtp.port, tls="starttls").send([outgoing(1, mail_user)])
    assert mail_servers.read_mailbox(mail_user) == []


@pytest.mark.parametrize("mode", ["starttls", "implicit"])
def test_tls_round_trip(tls_mail_servers: TlsMailServers, mode: str) -> None:
    servers = tls_mail_servers
    user = servers.new_user(f"tls-{mode}")
    relay = servers.smtp if mode == "starttls" else servers.smtp_implicit
    sender = SmtpSender(HOST, relay.port, tls=mode, timeout=10, ca_file=servers.ca_file)
    assert sender.send([outgoing(1, user)]) == [SendResult("out-1", ok=True)]
    port = servers.dovecot.imap_port if mode == "starttls" else servers.dovecot.imaps_port
    inbox = ImapInbox(HOST, port, user, "secret", tls=mode, timeout=10, ca_file=servers.ca_file)
    with inbox:
        mails, _ = inbox.fetch_new(None)
    assert [decode_mail(m.raw).message_id for m in mails] == [f"<order-1.{user}>"]


def test_untrusted_certificates_are_refused(tls_mail_servers: TlsMailServers) -> None:
    servers = tls_mail_servers
    user = servers.new_user("untrusted")
    with pytest.raises(TransportError, match="certificate was refused"):
        ImapInbox(HOST, servers.dovecot.imaps_port, user, "secret", tls="implicit").connect()
    with pytest.raises(TransportError, match="certificate was refused"):
        ImapInbox(HOST, servers.dovecot.imap_port, user, "secret", tls="starttls").connect()
    with pytest.raises(TransportError, match="certificate was refused"):
        SmtpSender(HOST, servers.smtp.port, tls="starttls").send([outgoing(1, user)])
    assert servers.read_mailbox(user) == []


def test_settings_open_the_imap_transport(mail_servers: MailServers, mail_user: str) -> None:
    settings = MailSettings(
        transport="imap",
        game_address=mail_user,
        imap=ImapSettings(
            host=HOST,
            port=mail_servers.dovecot.imap_port,
            user=mail_user,
            password="secret",
            tls="none",
            timeout=10,
            processed_folder="done",
        ),
        smtp=SmtpSettings(host=HOST, port=mail_servers.smtp.port, tls="none", timeout=10),
    )
    assert open_sender(settings).send([outgoing(1, mail_user)])[0].ok
    with open_inbox(settings) as inbox:
        assert isinstance(inbox, Inbox) and isinstance(inbox, ImapInbox)
        (mail,), _ = inbox.fetch_new(None)
        inbox.move(mail.key, PROCESSED)
    assert [m.raw for m in mail_servers.read_mailbox(mail_user, "done")] == [mail.raw]


def test_server_without_move_uidplus_or_idle(mail_servers: MailServers) -> None:
    user = mail_servers.new_user("old", minimal_imap=True)
    for n in (1, 2):
        mail_servers.deliver(user, order_mail(n, user))
    with imap_inbox(mail_servers, user) as inbox:  # use_move=True, but there is no MOVE
        (first, second), checkpoint = inbox.fetch_new(None)
        inbox.move(first.key, PROCESSED)
        assert [m.uid for m in inbox.fetch_new(None)[0]] == [2]
        assert inbox.wait_for_mail(0.2) is False  # no IDLE: it just waits
        mail_servers.deliver(user, order_mail(3, user))
        assert [m.uid for m in inbox.fetch_new(checkpoint)[0]] == [3]
    assert [m.raw for m in mail_servers.read_mailbox(user, "processed")] == [first.raw]
    assert [m.uid for m in mail_servers.read_mailbox(user)] == [2, 3]


def test_a_mail_moved_by_another_worker_between_search_and_fetch_is_left_out(
    mail_servers: MailServers, mail_user: str
) -> None:
    """Two workers on one inbox: B moves a mail away after A's SEARCH found it
    and before A's FETCH. Dovecot answers A's FETCH with a NIL body; A leaves
    the mail out (it was a crash in identify() under two daemons)."""
    for n in (1, 2):
        mail_servers.deliver(mail_user, order_mail(n, mail_user))
    with imap_inbox(mail_servers, mail_user) as a, imap_inbox(mail_servers, mail_user) as b:
        client = a._connection()
        search = client.search

        def search_then_b_moves(criteria: object) -> object:
            found = search(criteria)
            mails, _ = b.fetch_new(None)
            b.move(mails[0].key, PROCESSED)  # uid 1 leaves the inbox
            return found

        client.search = search_then_b_moves  # type: ignore[method-assign]
        mails, checkpoint = a.fetch_new(None)
    assert [m.uid for m in mails] == [2]
    assert mails[0].raw.endswith(order_mail(2, mail_user))
    assert checkpoint.last_uid == 2
