"""A poll survives a mail that trips a bug and keeps that mail; each stage runs
whatever the one before it did."""

from __future__ import annotations

from dataclasses import replace
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from sqlmodel import select

from pbem.config import PollConfig, load_config
from pbem.mail.maildir import spool_mailbox
from pbem.service.clock import SystemClock
from pbem.service.intake import mailflow
from pbem.service.ops import demo, poll
from pbem.service.tell import outbox
from pbem.store import InboundMessage, init_db, session_scope
from pbem.store.rawmail import unpack


def test_a_mail_that_trips_a_bug_stays_is_retried_then_held_and_the_poll_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = replace(
        demo.demo_config(tmp_path), poll=PollConfig(max_attempts=3, retry_base_seconds=0)
    )
    engine = init_db(config.database_url)
    inbox = spool_mailbox(config.mail.maildir_root, config.mail.game_address)
    inbox.add(b"From: x@example.org\nSubject: one\nMessage-ID: <boom@example.org>\n\nSTATUS\n")
    inbox.add(b"From: z@example.org\nSubject: two\nMessage-ID: <fine@example.org>\n\nSTATUS\n")
    real = mailflow._handle

    def buggy(session, ctx, row, raw, key):  # noqa: ANN001, ANN202 - the shape of _handle
        if row.message_id == "<boom@example.org>":
            raise RuntimeError("a bug")
        return real(session, ctx, row, raw, key)

    monkeypatch.setattr(mailflow, "_handle", buggy)
    first = poll.run_cycle(engine, config, SystemClock())
    # The good mail is answered; the bad one stays in the inbox, nothing of it applied.
    assert {m.message_id: (m.status, m.outcome) for m in first.mails} == {
        "<fine@example.org>": ("rejected", "no game for z@example.org"),
    }
    assert first.retrying == 1 and len(inbox) == 1
    second = poll.run_cycle(engine, config, SystemClock())
    assert second.retrying == 1 and second.mails == [] and len(inbox) == 1
    third = poll.run_cycle(engine, config, SystemClock())
    assert [(m.message_id, m.status) for m in third.mails] == [("<boom@example.org>", "held")]
    assert third.held == 1 and len(inbox) == 0
    assert poll.run_cycle(engine, config, SystemClock()).mails == []
    with session_scope(engine, write=False) as session:
        kept = session.exec(
            select(InboundMessage).where(InboundMessage.message_id == "<boom@example.org>")
        ).one()
        assert (kept.status, kept.attempts) == ("held", 3)
        assert kept.last_error == "RuntimeError: a bug"
        assert b"Subject: one" in unpack(kept.raw, kept.raw_format)
    box = spool_mailbox(config.mail.maildir_root, config.mail.game_address)
    assert len(box.get_folder("held")) == 1 and len(box.get_folder("rejected")) == 1
    gm_box = spool_mailbox(config.mail.maildir_root, config.mail.gm_address)
    alerts = [
        BytesParser(policy=policy.default).parsebytes(gm_box.get_bytes(k)) for k in gm_box.keys()
    ]
    # Told once, after the last attempt, naming the mail.
    assert [str(a["Subject"]) for a in alerts] == [
        "[pbem] GM alert: A mail is held: it could not be processed"
    ]
    body = alerts[0].get_body(("plain",)).get_content()
    assert "<boom@example.org>" in body and "after 3 attempts" in body


def test_poll_in_a_fresh_folder_makes_the_inbox_and_exits_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: no configuration, no folders yet: the first poll just works."""
    monkeypatch.chdir(tmp_path)
    config = load_config(None, env={})
    engine = init_db(config.database_url)
    report = poll.run_cycle(engine, config, SystemClock())
    assert report.errors == []
    for folder in ("new", "cur", "tmp", ".processed", ".rejected", ".held"):
        assert (tmp_path / "var/mail/pbem@localhost" / folder).is_dir()


def test_an_unreadable_inbox_holds_back_neither_outbox_nor_deadlines(tmp_path: Path) -> None:
    config = demo.demo_config(tmp_path)
    engine = init_db(config.database_url)
    with session_scope(engine) as session:
        outbox.enqueue(
            session,
            message_id="<waiting@x>",
            game_id=None,
            kind="alert",
            recipient="gm@localhost",
            subject="hello",
            raw=b"Subject: hello\r\nMessage-ID: <waiting@x>\r\n\r\nhi\r\n",
            in_reply_to=None,
            now=SystemClock().now(),
        )
    # The inbox's place is taken by a plain file: it cannot be a Maildir.
    root = Path(config.mail.maildir_root)
    root.mkdir(parents=True)
    (root / config.mail.game_address).write_text("not a folder")
    report = poll.run_cycle(engine, config, SystemClock())
    assert report.sent == 1
    assert len(report.errors) == 1
    assert report.errors[0].startswith("cannot read the inbox: cannot open the inbox Maildir ")
    assert "(mail.maildir_root, mail.game_address)" in report.errors[0]
