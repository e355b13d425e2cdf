"""A poll survives a mail that trips a bug, and keeps that mail."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from sqlmodel import select

from pbem.mail.maildir import spool_mailbox
from pbem.service import demo, mailflow, poll
from pbem.service.clock import SystemClock
from pbem.store import InboundMessage, init_db, session_scope


def test_a_mail_that_trips_a_bug_is_kept_and_the_poll_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = demo.demo_config(tmp_path)
    Path(config.mail.maildir_root).mkdir(parents=True)
    engine = init_db(config.database_url)
    inbox = spool_mailbox(config.mail.maildir_root, config.mail.game_address)
    inbox.add(b"From: x@example.org\nSubject: one\nMessage-ID: <boom@example.org>\n\nSTATUS\n")
    inbox.add(b"From: z@example.org\nSubject: two\nMessage-ID: <fine@example.org>\n\nSTATUS\n")
    real = mailflow._handle

    def buggy(session, ctx, row):  # noqa: ANN001, ANN202 - the shape of _handle
        if row.message_id == "<boom@example.org>":
            raise RuntimeError("a bug")
        return real(session, ctx, row)

    monkeypatch.setattr(mailflow, "_handle", buggy)
    report = poll.run_cycle(engine, config, SystemClock())

    outcomes = {m.message_id: (m.status, m.outcome) for m in report.mails}
    assert outcomes == {
        "<boom@example.org>": ("rejected", "internal error: RuntimeError: a bug"),
        "<fine@example.org>": ("rejected", "no game for z@example.org"),
    }
    with session_scope(engine, write=False) as session:
        kept = session.exec(
            select(InboundMessage).where(InboundMessage.message_id == "<boom@example.org>")
        ).one()
        assert kept.status == "rejected"
        assert b"Subject: one" in kept.raw
    rejected = spool_mailbox(config.mail.maildir_root, config.mail.game_address)
    folder = rejected.get_folder("rejected")
    assert len(folder) == 2 and len(inbox) == 0
    gm_box = spool_mailbox(config.mail.maildir_root, config.mail.gm_address)
    alerts = [
        BytesParser(policy=policy.default).parsebytes(gm_box.get_bytes(k)) for k in gm_box.keys()
    ]
    assert [str(a["Subject"]) for a in alerts] == ["[pbem] GM alert: A mail could not be processed"]
    assert "<boom@example.org>" in alerts[0].get_body(("plain",)).get_content()
