"""No mail can stop the poll, and what it keeps of a mail stays small (issue 27, H2).

- hostile mails (NUL bytes in Message-ID, From, Subject, body; a From of
  5,000 nested comments) dropped ahead of a valid order mail, on SQLite and
  PostgreSQL: the cycle goes on, the order is played, each hostile mail is
  refused or held;
- a claim row that cannot be written as read falls back to a stand-in row;
- attempts are counted when the mail is claimed: `pbem poll` killed
  (SIGKILL) on the same mail ``max_attempts`` times holds it at the next
  poll without processing it, the GM and the seated sender told once;
  a clash with another worker gives the attempt back;
- storage: a stranger's 21 MB mail adds a few KB to pbem.db; a player's
  processed mail is kept whole with PASSWORD blanked, as is its copy in the
  processed folder (Maildir and real Dovecot: APPEND, then expunge);
- `pbem status` is not ok while a mail fails or is held, and names it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy.exc import DataError
from sqlmodel import col, select

from pbem.config import load_config
from pbem.mail.imap import ImapInbox
from pbem.mail.maildir import spool_mailbox
from pbem.mail.transport import PROCESSED, FetchedMail
from pbem.service.context import Context
from pbem.service.intake import claims, mailflow
from pbem.service.ops import poll
from pbem.store import InboundMessage, Outbox, init_db, session_scope
from pbem.store.errors import ConcurrentUpdateError
from pbem.store.rawmail import HEADER_CAP, blank_passwords, header_block, kept_headers, unpack
from pbem.testing.mailservers import HOST, MailServers
from pbem.vocab import InboundStatus, RawFormat
from tests.fault_helpers import poll_table
from tests.longgame_helpers import GAME_ADDRESS, GM_ADDRESS, Table, World, address_of

REPO = Path(__file__).resolve().parents[2]
NAMES = ["ada", "brook", "cyrus"]
EVIL = "x@evil.test"

# Each ahead of the valid order mail. The first is the 90-byte mail.
HOSTILE = {
    "nul-message-id": b"From: x@evil.test\r\nTo: pbem@game.test\r\n"
    b"Message-ID: <a\x00b@evil.test>\r\nSubject: hi\r\n\r\nhello\r\n",
    "nul-from": b"From: ada\x00@players.test\r\nMessage-ID: <f@evil.test>\r\n"
    b"Subject: x\r\n\r\nhi\r\n",
    "nul-subject": b"From: x@evil.test\r\nMessage-ID: <s@evil.test>\r\n"
    b"Subject: [g] a\x00b\r\n\r\nhi\r\n",
    "nul-body": b"From: x@evil.test\r\nMessage-ID: <b@evil.test>\r\n"
    b"Subject: [g]\r\n\r\nSTA\x00TUS\r\n",
    "nested-comments": b"From: "
    + b"(" * 5000
    + b"x"
    + b")" * 5000
    + b" <x@evil.test>\r\nMessage-ID: <p@evil.test>\r\nSubject: x\r\n\r\nhi\r\n",
    "control-chars": b"From: \x1b[31m@evil.test\r\nMessage-ID: <\x07c\x7f@evil.test>\r\n"
    b"Subject: \x01\x02\r\n\r\nhi\r\n",
}


def make_world(folder: Path, database_url: str | None = None, **poll_keys: object) -> World:
    """The long-game world (Maildir spool, a clock at the real time) on
    ``database_url``, with a ``[poll]`` table of ``poll_keys``."""
    world = World(folder, start=datetime.now(UTC).replace(microsecond=0))
    text = world.config_path.read_text(encoding="utf-8")
    if database_url:
        text = text.replace(world.config.database_url, database_url)
    world.config_path.write_text(text + poll_table(poll_keys), encoding="utf-8")
    world.config = load_config(world.config_path, env={})
    world.engine = init_db(world.config.database_url)
    world.ctx = Context(world.config, world.clock, world.config.mail.own_addresses)
    return world


def new_table(world: World) -> Table:
    """A game "g" of three bots, placed: its first player's turn waits."""
    table = Table(world, "g", NAMES)
    passwords = world.create("g", NAMES)
    for name, password in passwords.items():
        table[name].password = password
    table.read_all()
    return table


def drop(world: World, raw: bytes) -> None:
    spool_mailbox(world.root, GAME_ADDRESS).add(raw)


def rows(world: World) -> list[InboundMessage]:
    with world.session(write=False) as session:
        return list(session.exec(select(InboundMessage).order_by(col(InboundMessage.id))))


def order_mids(world: World) -> set[str]:
    return {e.message_id for e in world.log("g") if e.message_id}


def inbox_left(world: World) -> int:
    return len(spool_mailbox(world.root, GAME_ADDRESS))


def test_hostile_mails_ahead_of_an_order_are_refused_or_held_and_the_order_is_played(
    tmp_path: Path, db_url: str
) -> None:
    world = make_world(tmp_path, db_url, max_attempts=1, retry_base_seconds=0)
    table = new_table(world)
    for raw in HOSTILE.values():
        drop(world, raw)
    mover = table[table.mover()]
    assert mover.answer() == 1
    report = world.poll()
    assert report.errors == []
    played = [m for m in report.mails if m.status == InboundStatus.PROCESSED]
    assert len(played) == 1 and played[0].message_id in order_mids(world)
    others = [m for m in report.mails if m.status != InboundStatus.PROCESSED]
    assert len(others) == len(HOSTILE), report
    assert {m.status for m in others} <= {InboundStatus.REJECTED, InboundStatus.HELD}
    assert inbox_left(world) == 0 and report.retrying == 0
    stored = rows(world)
    assert len(stored) == len(HOSTILE) + 1
    for row in stored:  # every text scrubbed: no NUL, no control character
        for text in (row.message_id, row.sender, row.subject, row.outcome, row.last_error or ""):
            assert not any(ord(c) < 32 and c not in "\t\n" for c in text), (row.id, text)
    assert world.poll().mails == []  # nothing tried again


def test_a_claim_row_that_cannot_be_written_as_read_falls_back_to_a_stand_in(
    tmp_path: Path, pg_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL refuses NUL in text (psycopg's DataError): unscrubbed, the
    claim is written under the mail's hash instead, counted like any other."""
    engine = init_db(pg_db_url)
    raw = HOSTILE["nul-message-id"]
    mail = FetchedMail("k", raw, "INBOX", None)
    identity = claims.MailIdentity("<a\x00b@evil.test>", "0" * 64, EVIL, "hi")
    monkeypatch.setattr(claims, "_scrubbed", lambda identity: identity)
    now = datetime.now(UTC)
    with pytest.raises(DataError):  # what the poll met before (issue 27)
        claims._claim(engine, mail, identity, "w", now, 60.0, 3)
    taken = claims.claim(engine, mail, identity, "w", now, 60.0, max_attempts=3)
    assert taken.state is claims.ClaimState.TAKEN and taken.claim is not None
    with session_scope(engine, write=False) as session:
        (row,) = session.exec(select(InboundMessage)).all()
    stand_in = claims.stand_in_identity(raw)
    assert (row.message_id, row.content_hash, row.sender, row.attempts) == (
        stand_in.message_id,
        stand_in.content_hash,
        "",
        1,
    )
    again = claims.claim(engine, mail, identity, "w", now, 60.0, max_attempts=3)
    assert again.claim is not None and again.claim.row_id == row.id  # the same row, counted
    assert again.claim.attempts == 2


def test_scrubbing_keeps_text_valid_and_bounded() -> None:
    assert claims.clean("a\x00b\x1bc\r\nd\te\udcff", 100) == "a b c d e\ufffd"
    assert claims.clean("a\x00b\r\nd\te", 100, lines=True) == "ab\nd\te"
    assert claims.clean("x" * 10_000, 7) == "x" * 7


# ---------------------------------------------------------------- attempts
KILL_ON_BOOM = """
import os, signal, sys
import pbem.service.ops.poll as poll
real = poll.process_mail
def process_or_die(engine, ctx, mail, held=None):
    if b"<boom@players.test>" in mail.raw:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer does
    return real(engine, ctx, mail, held)
poll.process_mail = process_or_die
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


def pbem(world: World, *args: str, script: str | None = None) -> subprocess.CompletedProcess[str]:
    python = [sys.executable, "-c", script] if script else [sys.executable, "-m", "pbem"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update(PYTHONPATH=str(REPO), PBEM_NATIVE="0")
    return subprocess.run(
        [*python, *args, "--config", str(world.config_path)],
        cwd=world.folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def status(world: World) -> tuple[int, dict]:
    done = pbem(world, "status", "--json")
    return done.returncode, json.loads(done.stdout)


def test_a_poll_killed_on_a_mail_max_attempts_times_holds_it_and_tells_the_gm_once(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path, max_attempts=3, worker_id="w", retry_base_seconds=0)
    table = new_table(world)
    boom = EmailMessage(policy=policy.SMTP)
    boom["From"], boom["To"], boom["Subject"] = address_of("ada"), GAME_ADDRESS, "[g] hi"
    boom["Message-ID"] = "<boom@players.test>"
    boom.set_content("STATUS\n")
    drop(world, bytes(boom))
    mover = table[table.mover()]
    assert mover.answer() == 1
    assert status(world)[0] == 0
    for kill in (1, 2, 3):
        done = pbem(world, "poll", script=KILL_ON_BOOM)
        assert done.returncode == -9, done.stderr
        (row,) = [r for r in rows(world) if r.message_id == "<boom@players.test>"]
        assert (row.status, row.attempts) == (InboundStatus.CLAIMED, kill)
        assert inbox_left(world) == 2  # the order behind it waits too
    code, found = status(world)  # failing: three attempts spent, none finished
    assert code == 1 and [m["message_id"] for m in found["failing"]] == ["<boom@players.test>"]
    # The next poll (dying too, if it processed the mail) holds it unprocessed.
    done = pbem(world, "poll", script=KILL_ON_BOOM)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = [r for r in rows(world) if r.message_id == "<boom@players.test>"]
    assert (row.status, row.attempts) == (InboundStatus.HELD, 3)
    assert "never finished, 3 times" in (row.last_error or "")
    assert len(spool_mailbox(world.root, GAME_ADDRESS).get_folder("held")) == 1
    assert inbox_left(world) == 0 and order_mids(world)  # the order was played
    code, found = status(world)
    assert code == 1 and [m["message_id"] for m in found["held"]] == ["<boom@players.test>"]
    assert found["failing"] == []
    assert "<boom@players.test>" in pbem(world, "status").stdout
    assert pbem(world, "poll").returncode == 0  # nothing more: told once
    gm = [m.subject for m in world.take(GM_ADDRESS)]
    assert gm.count("[pbem] GM alert: A mail is held: it could not be processed") == 1
    ada = [m for m in world.take(address_of("ada")) if "could not be read" in m.text]
    assert len(ada) == 1 and ada[0].msg["In-Reply-To"] == "<boom@players.test>"


def test_a_clash_with_another_worker_gives_the_attempt_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, max_attempts=2)
    world.send(EVIL, "hello")

    def clash(*args: object) -> object:
        raise ConcurrentUpdateError("changed by another process")

    monkeypatch.setattr(poll, "process_mail", clash)
    for _ in range(3):  # more than max_attempts: never held, never counted
        assert world.poll().retrying == 1
        (row,) = rows(world)
        assert (row.status, row.attempts, row.lease_owner) == (InboundStatus.CLAIMED, 0, None)
    monkeypatch.undo()
    assert [m.status for m in world.poll().mails] == [InboundStatus.REJECTED]
    assert rows(world)[0].attempts == 1  # the attempt that succeeded


def test_a_failure_counts_once_and_status_names_the_failing_mail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, max_attempts=2, retry_base_seconds=0)
    mid = world.send(EVIL, "hello")

    def buggy(*args: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(mailflow, "_handle", buggy)
    assert world.poll().retrying == 1
    (row,) = rows(world)
    assert (row.attempts, row.last_error) == (1, "RuntimeError: a bug")
    code, found = status(world)
    assert code == 1 and [m["message_id"] for m in found["failing"]] == [mid]
    assert any("1 mail failing" in line for line in found["problems"])
    assert [m.status for m in world.poll().mails] == [InboundStatus.HELD]
    (row,) = rows(world)
    assert (row.status, row.attempts) == (InboundStatus.HELD, 2)
    code, found = status(world)
    assert code == 1 and [m["message_id"] for m in found["held"]] == [mid]


# ----------------------------------------------------------------- storage
def db_bytes(world: World) -> int:
    """pbem.db's size with its write-ahead log folded in."""
    world.engine.dispose()  # no connection of the pool in the way
    path = Path(world.config.database_url.removeprefix("sqlite:///"))
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def big_mail(size: int) -> bytes:
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"], msg["To"], msg["Subject"] = EVIL, GAME_ADDRESS, "a big one"
    msg["Message-ID"] = make_msgid("big", "evil.test")
    msg.set_content("x" * 76 + "\n")
    msg.add_attachment(os.urandom(size * 3 // 4), maintype="application", subtype="octet-stream")
    return bytes(msg)


def test_a_21_mb_mail_from_a_stranger_adds_a_few_kb_to_the_database(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    world.send(EVIL, "a first, small one")  # the tables have their first pages
    world.poll()
    before = db_bytes(world)
    raw = big_mail(21 * 1024 * 1024)
    assert len(raw) > 21_000_000
    drop(world, raw)
    (outcome,) = world.poll().mails
    assert outcome.status == InboundStatus.REJECTED
    grown = db_bytes(world) - before
    print(f"\n21 MB mail from a stranger: pbem.db grew by {grown} bytes")
    assert grown <= 16 * 1024
    row = rows(world)[-1]
    assert row.raw_format == RawFormat.PRUNED and bytes(row.raw) == header_block(raw)
    assert row.checksum == hashlib.sha256(raw).hexdigest()


def test_header_block_kept_is_capped() -> None:
    raw = b"From: x@evil.test\r\n" + b"X-Junk: " + b"y" * 100_000 + b"\r\n\r\nbody"
    kept, fmt = kept_headers(raw)
    assert fmt == RawFormat.PRUNED and len(kept) == HEADER_CAP and raw.startswith(kept)


def test_a_players_processed_mail_is_kept_whole_with_its_password_blanked(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    table = new_table(world)
    mover = table[table.mover()]
    body = f"PASSWORD {mover.password}\n" + mover.bot.write_turn(world.state("g"))  # type: ignore[union-attr]
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"], msg["To"], msg["Subject"] = mover.address, GAME_ADDRESS, "[g] orders"
    msg["Message-ID"] = mid = make_msgid("orders", "players.test")
    msg.set_content(body, cte="base64")  # the password hidden from a plain search
    raw = bytes(msg)
    drop(world, raw)
    world.send(EVIL, f"PASSWORD {mover.password}\nhello")  # a stranger's: headers only
    report = world.poll()
    assert {m.message_id: m.status for m in report.mails}[mid] == InboundStatus.PROCESSED
    assert mid in order_mids(world)
    kept, stranger = rows(world)
    assert kept.raw_format == RawFormat.ZLIB
    whole = unpack(kept.raw, kept.raw_format)
    text = mailflow.decode_mail(whole).text
    assert "PASSWORD ********" in text and mover.password not in text
    assert mover.bot is not None and len(whole) > len(header_block(whole))
    assert stranger.raw_format == RawFormat.PRUNED and b"PASSWORD" not in bytes(stranger.raw)
    (copy,) = spool_mailbox(world.root, GAME_ADDRESS).get_folder("processed").values()
    copied = mailflow.decode_mail(bytes(copy.as_bytes())).text
    assert "PASSWORD ********" in copied and mover.password not in copied


@pytest.mark.parametrize("cte", ["7bit", "quoted-printable", "base64"])
def test_password_lines_are_blanked_in_any_text_encoding(cte: str) -> None:
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"], msg["Subject"] = "a@b.test", "orders"
    text = "ATTACK x\n> PASSWORD quoted-one\npassword: plain-two-22\nyour password is fine\n"
    msg.set_content(text, cte=cte)
    html = "<p>PASSWORD html-three</p>"
    msg.add_alternative(html, subtype="html", cte="base64" if cte == "7bit" else cte)
    blanked = blank_passwords(bytes(msg))
    parsed = mailflow.decode_mail(blanked)
    for secret in ("quoted-one", "plain-two-22", "html-three"):
        assert secret.encode() not in blanked and secret not in parsed.text
        assert base64.b64encode(secret.encode())[:8] not in blanked
    assert "ATTACK x" in parsed.text and "password ******** fine" not in parsed.text


@pytest.fixture
def imap_user(mail_servers: MailServers) -> Iterator[str]:
    yield mail_servers.new_user("game")


@pytest.mark.integration
def test_imap_move_with_a_replacement_appends_it_then_removes_the_original(
    mail_servers: MailServers, imap_user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = b"From: a@b.test\r\nMessage-ID: <m1@b.test>\r\nSubject: o\r\n\r\nPASSWORD abc-def\r\n"
    mail_servers.deliver(imap_user, raw)
    inbox = ImapInbox(HOST, mail_servers.dovecot.imap_port, imap_user, "secret", tls="none")
    with inbox:
        (mail,) = inbox.fetch_new(None)[0]
        replacement = blank_passwords(mail.raw)
        assert replacement != mail.raw

        def dies(*args: object, **kwargs: object) -> None:
            raise OSError("the worker died here")

        # A crash after the APPEND: the original stays, the copy is there.
        with monkeypatch.context() as patch:
            patch.setattr("imapclient.IMAPClient.add_flags", dies)
            with pytest.raises(OSError):
                inbox.move(mail.key, PROCESSED, replacement)
        (mail,) = inbox.fetch_new(None)[0]
        inbox.move(mail.key, PROCESSED, replacement)
    assert mail_servers.read_mailbox(imap_user) == []
    copies = mail_servers.read_mailbox(imap_user, "processed")
    assert len(copies) == 2  # a second copy, never none
    assert all(b"abc-def" not in m.raw and b"PASSWORD ********" in m.raw for m in copies)


def test_outbox_has_nothing_for_a_stranger(tmp_path: Path) -> None:
    """A stranger's hostile mail is answered by nobody (reply_to_unknown off)."""
    world = make_world(tmp_path, max_attempts=1)
    for raw in HOSTILE.values():
        drop(world, raw)
    assert world.poll().errors == []
    with world.session(write=False) as session:
        sent_to = {r.recipient for r in session.exec(select(Outbox))}
    assert EVIL not in sent_to


def test_a_mail_is_held_even_when_the_mails_about_it_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path, max_attempts=1)
    world.send(EVIL, "hello")

    def buggy(*args: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(mailflow, "_handle", buggy)
    monkeypatch.setattr(poll, "_tell_gm_held", buggy)  # telling spoils the transaction
    report = world.poll()
    assert [m.status for m in report.mails] == [InboundStatus.HELD] and report.errors == []
    (row,) = rows(world)
    assert (row.status, row.attempts) == (InboundStatus.HELD, 1)
