"""Outages are told to the GM once, and `pbem status` says what waits (issue 12).

The poll runs on the embedded Maildir transport; the inbox is made
unreadable (a plain file where its folder should be) for a while, on a
manual clock, and the GM's mailbox and `pbem status` are read.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.config import PollConfig
from pbem.mail.maildir import MaildirSender, spool_mailbox, spool_path
from pbem.service.clock import ManualClock
from pbem.service.context import Context
from pbem.service.ops import demo, poll
from pbem.service.ops.health import Health
from pbem.service.ops.status import Level, describe, read_status
from pbem.store import init_db

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def gm_subjects(config) -> list[str]:  # noqa: ANN001
    box = spool_mailbox(config.mail.maildir_root, config.mail.gm_address)
    parse = BytesParser(policy=policy.default).parsebytes
    return sorted(str(parse(box.get_bytes(k))["Subject"]) for k in box.keys())


def test_an_inbox_outage_is_told_once_when_long_and_once_when_over(tmp_path: Path) -> None:
    config = replace(demo.demo_config(tmp_path), poll=PollConfig(outage_alert_minutes=30))
    engine = init_db(config.database_url)
    clock = ManualClock(START)
    inbox = spool_path(config.mail.maildir_root, config.mail.game_address)
    inbox.parent.mkdir(parents=True)
    inbox.write_text("in the way")  # the inbox cannot be a Maildir

    for minutes in (0, 10, 20):  # an outage, not yet long enough to tell
        clock.set(START + timedelta(minutes=minutes))
        assert len(poll.run_cycle(engine, config, clock).errors) == 1
    found = read_status(engine, config, clock)
    assert found.level is Level.WARNING
    assert found.outages["inbox"]["since"] == START.isoformat()
    assert found.outages["inbox"]["alerted"] is False
    assert gm_subjects(config) == []

    for minutes in (30, 40, 50, 60):  # 30 minutes and more: told once, however many polls
        clock.set(START + timedelta(minutes=minutes))
        poll.run_cycle(engine, config, clock)
    assert gm_subjects(config) == ["[pbem] GM alert: Outage: reading the game's inbox"]
    found = read_status(engine, config, clock)
    assert found.level is Level.CRITICAL and found.outages["inbox"]["alerted"] is True
    assert found.problems[0].startswith("outage of inbox for 60 minutes")

    inbox.unlink()  # repaired: the next poll makes the Maildir and says it is over
    assert poll.run_cycle(engine, config, clock).errors == []
    assert gm_subjects(config) == [
        "[pbem] GM alert: Back to normal: reading the game's inbox",
        "[pbem] GM alert: Outage: reading the game's inbox",
    ]
    assert read_status(engine, config, clock).level is Level.OK


def test_status_json_and_exit_code_suit_a_monitoring_check(tmp_path: Path) -> None:
    runner = CliRunner()
    config_file = tmp_path / "pbem.toml"
    config_file.write_text('[poll]\noutage_alert_minutes = 0\n[mail]\nmaildir_root = "mail"\n')
    env = {"PBEM_CONFIG": str(config_file)}
    assert runner.invoke(app, ["init"], env=env).exit_code == 0
    healthy = runner.invoke(app, ["status", "--json"], env=env)
    assert healthy.exit_code == 0
    data = json.loads(healthy.stdout)
    assert data["ok"] is True and data["level"] == "ok"
    assert data["outbox"] == {"pending": 0, "sending": 0, "failed": 0, "oldest_pending": None}
    assert (data["held"], data["failing"], data["outages"]) == ([], [], {})

    inbox = tmp_path / "mail/pbem@localhost"
    for folder in os.listdir(inbox):  # replace the Maildir by a file: unreadable
        os.rename(inbox / folder, tmp_path / f"old-{folder}")
    inbox.rmdir()
    inbox.write_text("in the way")
    polled = runner.invoke(app, ["poll"], env=env)
    assert polled.exit_code == 2
    critical = runner.invoke(app, ["status", "--json"], env=env)
    assert critical.exit_code == 2
    data = json.loads(critical.stdout)
    assert data["ok"] is False and data["level"] == "critical"
    assert data["outages"]["inbox"]["alerted"] is True
    assert "cannot open the inbox Maildir" in data["outages"]["inbox"]["error"]
    text = runner.invoke(app, ["status"], env=env)
    assert text.stdout.startswith("status: critical\n  outage of inbox for 0 minutes")


def test_a_database_outage_is_mailed_directly_once_and_its_end_through_the_outbox(
    tmp_path: Path,
) -> None:
    """The database cannot hold its own outage: a file does, and the alert goes
    straight to the SMTP server (here the local Maildir sender)."""
    config = replace(demo.demo_config(tmp_path), poll=PollConfig(outage_alert_minutes=30))
    engine = init_db(config.database_url)
    clock = ManualClock(START)
    ctx = Context(config, clock, set())
    health = Health(engine, ctx)
    sender = MaildirSender(config.mail.maildir_root)
    for minutes in (0, 20, 31, 45):
        clock.set(START + timedelta(minutes=minutes))
        health.database_down("cannot connect to database x: refused", sender)
    assert gm_subjects(config) == ["[pbem] GM alert: Outage: the database"]
    found = read_status(engine, config, clock)  # the database works for `pbem status`
    assert found.outages["database"]["alerted"] is True
    assert found.level is Level.CRITICAL
    health.database_up()
    assert poll.run_cycle(engine, config, clock).errors == []
    assert gm_subjects(config) == [
        "[pbem] GM alert: Back to normal: the database",
        "[pbem] GM alert: Outage: the database",
    ]
    assert read_status(engine, config, clock).level is Level.OK


def test_an_outage_folder_nobody_may_write_is_said_in_the_log_and_the_poll_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    config = replace(demo.demo_config(tmp_path), poll=PollConfig(outage_dir=str(blocked)))
    engine = init_db(config.database_url)
    health = Health(engine, Context(config, ManualClock(START), set()))
    health.database_down("cannot connect to database x: refused", None)
    assert "cannot record the database outage (cannot connect to database x: refused)" in (
        caplog.text
    )
    assert "set [poll] outage_dir to a folder every worker may write" in caplog.text
    assert poll.run_cycle(engine, config, ManualClock(START)).errors == []


def test_a_notice_that_cannot_be_told_stays_and_shows_in_status(tmp_path: Path) -> None:
    """One mail's failure never hides: a notice the telling stage cannot render
    (here an alert without its text) is kept and `pbem status` warns of it."""
    from pbem.service.tell import telling
    from pbem.store import Notice, session_scope

    config = demo.demo_config(tmp_path)
    engine = init_db(config.database_url)
    clock = ManualClock(START)
    with session_scope(engine) as session:
        session.add(
            Notice(
                kind="alert",
                recipient="gm@example.org",
                message_id="<broken@example.org>",
                params_json="{}",
                created_at=START,
            )
        )
    assert telling.tell(engine, Context(config, clock)) == 0
    assert read_status(engine, config, clock).level is Level.OK  # just decided
    clock.set(START + timedelta(minutes=11))
    found = read_status(engine, config, clock)
    assert found.level is Level.WARNING
    assert found.problems == [
        "1 decided mail could not be rendered yet (kept; the poll's log says why)"
    ]


def test_status_lists_the_last_days_refused_mail_with_the_reason(tmp_path: Path) -> None:
    config = demo.demo_config(tmp_path)
    engine = init_db(config.database_url)
    clock = ManualClock(START)
    inbox = spool_mailbox(config.mail.maildir_root, config.mail.game_address)
    inbox.add(
        b"From: mallory@evil.example\r\nTo: "
        + config.mail.game_address.encode()
        + b"\r\nSubject: orders\r\nMessage-ID: <stranger-1@evil.example>\r\n\r\nPLACE 3 Alaska\r\n"
    )
    inbox.add(
        b"From: alice@example.org, mallory@evil.example\r\nSubject: hi\r\n"
        b"Message-ID: <two-senders@evil.example>\r\n\r\nHELP\r\n"
    )
    assert poll.run_cycle(engine, config, clock).errors == []
    found = read_status(engine, config, clock)
    assert found.level is Level.OK  # refused mail is no problem of the service
    refused = {m["message_id"]: m for m in found.refused}
    assert set(refused) == {"<stranger-1@evil.example>", "<two-senders@evil.example>"}
    assert refused["<stranger-1@evil.example>"]["sender"] == "mallory@evil.example"
    assert all(m["why"] for m in refused.values())

    text = describe(found)  # what `pbem status` prints
    assert "refused in the last 24 hours: 2" in text
    assert "<stranger-1@evil.example> from mallory@evil.example: " in text
    # what the From line held, and why no sender was read from it
    assert (
        '<two-senders@evil.example> from "alice@example.org, mallory@evil.example" '
        "(2 addresses in its From line; a mail must come from one): not answered"
    ) in text

    clock.set(START + timedelta(hours=25))  # a day later the list is empty again
    assert read_status(engine, config, clock).refused == []
