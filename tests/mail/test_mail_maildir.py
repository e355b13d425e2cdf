"""The embedded Maildir transport: delivery, fetching, moving, and nothing lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.mail.errors import MessageGone
from pbem.mail.maildir import MaildirInbox, MaildirSender, spool_mailbox, spool_path
from pbem.mail.settings import MailSettings, open_inbox, open_sender
from pbem.mail.transport import PROCESSED, REJECTED, Inbox, OutgoingMail, Sender, SendResult

GAME = "game@pbem.test"


def order_mail(n: int, sender: str = "alice@x.test") -> bytes:
    return (
        f"From: Alice <{sender}>\r\nTo: {GAME}\r\nSubject: orders {n}\r\n"
        f"Message-ID: <order-{n}@x.test>\r\n\r\nPLACE {n} Alaska\r\n"
    ).encode()


def test_sender_delivers_exact_bytes_to_every_recipient(tmp_path: Path) -> None:
    raw = order_mail(1)
    out = OutgoingMail("o1", GAME, ["alice@x.test", "Bob@X.test"], raw)
    assert MaildirSender(tmp_path).send([out]) == [SendResult("o1", ok=True)]
    for address in ("alice@x.test", "bob@x.test"):
        box = spool_mailbox(tmp_path, address)
        assert [box.get_bytes(key) for key in box.keys()] == [raw]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alice@x.test", "bob@x.test"]


def test_fetch_returns_everything_not_moved_and_leaves_it_unread(tmp_path: Path) -> None:
    MaildirSender(tmp_path).send([OutgoingMail("o1", "alice@x.test", [GAME], order_mail(1))])
    with MaildirInbox(spool_path(tmp_path, GAME)) as inbox:
        first, checkpoint = inbox.fetch_new(None)
        again, _ = inbox.fetch_new(None)
    assert checkpoint is None
    assert [(m.raw, m.mailbox, m.uid) for m in first] == [(order_mail(1), "INBOX", None)]
    assert again == first
    new_dir = spool_path(tmp_path, GAME) / "new"
    assert [p.name for p in new_dir.iterdir()] == [first[0].key]  # still in new/: unread


def test_move_puts_the_exact_bytes_into_the_folder(tmp_path: Path) -> None:
    sender = MaildirSender(tmp_path)
    sender.send([OutgoingMail(f"o{n}", "alice@x.test", [GAME], order_mail(n)) for n in (1, 2)])
    inbox = MaildirInbox(spool_path(tmp_path, GAME))
    mails, _ = inbox.fetch_new(None)
    assert [m.raw for m in mails] == [order_mail(1), order_mail(2)]
    inbox.move(mails[0].key, PROCESSED)
    inbox.move(mails[1].key, REJECTED)
    assert inbox.fetch_new(None) == ([], None)
    assert inbox.folder_bytes(PROCESSED) == [order_mail(1)]
    assert inbox.folder_bytes(REJECTED) == [order_mail(2)]
    # Maildir++ sub-folders, as Dovecot would show them
    assert (spool_path(tmp_path, GAME) / ".processed" / "new").is_dir()


def test_nothing_is_lost_when_fetching_in_batches(tmp_path: Path) -> None:
    sender = MaildirSender(tmp_path)
    outgoing = [OutgoingMail(f"o{n}", "alice@x.test", [GAME], order_mail(n)) for n in range(25)]
    assert all(r.ok for r in sender.send(outgoing))
    inbox = MaildirInbox(spool_path(tmp_path, GAME))
    seen: list[bytes] = []
    while True:
        mails, _ = inbox.fetch_new(None, limit=10)
        if not mails:
            break
        assert len(mails) <= 10
        for mail in mails:
            seen.append(mail.raw)
            inbox.move(mail.key, PROCESSED)
    assert sorted(seen) == sorted(order_mail(n) for n in range(25))
    assert sorted(inbox.folder_bytes(PROCESSED)) == sorted(seen)
    assert inbox.fetch_new(None) == ([], None)


def test_moving_twice_or_to_an_unknown_folder_fails_clearly(tmp_path: Path) -> None:
    MaildirSender(tmp_path).send([OutgoingMail("o1", "alice@x.test", [GAME], order_mail(1))])
    inbox = MaildirInbox(spool_path(tmp_path, GAME))
    (mail,), _ = inbox.fetch_new(None)
    with pytest.raises(ValueError, match="unknown folder 'trash'"):
        inbox.move(mail.key, "trash")
    inbox.move(mail.key, PROCESSED)
    with pytest.raises(MessageGone):
        inbox.move(mail.key, PROCESSED)
    assert inbox.folder_bytes(PROCESSED) == [order_mail(1)]


def test_wait_for_mail_reports_only_mail_not_fetched_yet(tmp_path: Path) -> None:
    inbox = MaildirInbox(spool_path(tmp_path, GAME))
    assert inbox.wait_for_mail(0) is False
    MaildirSender(tmp_path).send([OutgoingMail("o1", "alice@x.test", [GAME], order_mail(1))])
    assert inbox.wait_for_mail(0) is True
    inbox.fetch_new(None)
    assert inbox.wait_for_mail(0) is False
    MaildirSender(tmp_path).send([OutgoingMail("o2", "alice@x.test", [GAME], order_mail(2))])
    assert inbox.wait_for_mail(5) is True


@pytest.mark.parametrize("address", ["../etc@x.test", "a/b@x.test", "no-at-sign", ".hidden@x.test"])
def test_spool_refuses_addresses_that_are_no_plain_mailbox(tmp_path: Path, address: str) -> None:
    with pytest.raises(ValueError, match="cannot be a local mailbox"):
        spool_mailbox(tmp_path, address)
    assert list(tmp_path.iterdir()) == []


def test_bad_recipients_fail_permanently_and_partial_delivery_counts_as_sent(
    tmp_path: Path,
) -> None:
    results = MaildirSender(tmp_path).send(
        [
            OutgoingMail("bad", GAME, ["../x@y.test"], order_mail(1)),
            OutgoingMail("partial", GAME, ["alice@x.test", "a/b@x.test"], order_mail(2)),
            OutgoingMail("none", GAME, [], order_mail(3)),
        ]
    )
    assert [(r.key, r.ok, r.permanent) for r in results] == [
        ("bad", False, True),
        ("partial", True, False),
        ("none", False, True),
    ]
    assert "cannot be a local mailbox" in results[0].error
    assert "a/b@x.test" in results[1].error


def test_disk_errors_are_temporary(tmp_path: Path) -> None:
    (tmp_path / "alice@x.test").write_text("a file where the Maildir should be")
    (result,) = MaildirSender(tmp_path).send([OutgoingMail("o1", GAME, ["alice@x.test"], b"x")])
    assert (result.ok, result.permanent) == (False, False)
    assert result.error.startswith("alice@x.test: ")


def test_settings_open_the_maildir_transport(tmp_path: Path) -> None:
    settings = MailSettings(transport="maildir", maildir_root=tmp_path, game_address=GAME)
    sender = open_sender(settings)
    assert isinstance(sender, Sender) and isinstance(sender, MaildirSender)
    sender.send([OutgoingMail("o1", "alice@x.test", [GAME], order_mail(7))])
    with open_inbox(settings) as inbox:
        assert isinstance(inbox, Inbox)
        mails, _ = inbox.fetch_new(None)
    assert [m.raw for m in mails] == [order_mail(7)]


def test_fetch_order_is_delivery_time_even_across_digit_lengths(tmp_path: Path) -> None:
    new = spool_path(tmp_path, GAME) / "new"
    spool_mailbox(tmp_path, GAME)  # creates new/, cur/, tmp/
    names = ["1700000000.M99999P1Q9.h", "1700000000.M100000P1Q10.h", "1699999999.M5P1Q1.h"]
    for index, name in enumerate(names):
        (new / name).write_bytes(order_mail(index))
    mails, _ = MaildirInbox(spool_path(tmp_path, GAME)).fetch_new(None)
    assert [m.key for m in mails] == [names[2], names[0], names[1]]
