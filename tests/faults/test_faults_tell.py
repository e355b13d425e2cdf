"""Decide, then tell, against the real servers on loopback and a real `pbem poll`.

A poll killed (SIGKILL) after a turn's transaction committed and before its
notices were told leaves the turn played, its notices pending and nothing
queued; the next poll tells them (the same bytes: the notice keeps the
Message-ID and the Date) and sends each mail exactly once, counted from the
SMTP server's mailboxes. A notice told twice (two workers, or a tell killed
after the outbox commit) is queued once.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import col, select

from pbem.service.tell import telling
from pbem.service.tell.outbox import raw_of
from pbem.store import Notice, session_scope
from pbem.testing.mailservers import MailServers
from tests.mailloop_helpers import MailWorld, kind, message_ids, parse, replies_to

pytestmark = pytest.mark.integration

NAMES = ["ada", "brook", "cyrus"]
AUTO = {"placement": "auto"}
MAILS_PER_TURN = 6  # the report to 3 players and the GM, the next notice, the receipt

KILL_BEFORE_TELL = """
import os, signal, sys
import pbem.service.tell.telling as telling
def die(engine, ctx):
    os.kill(os.getpid(), signal.SIGKILL)  # the decision has committed; nothing told
telling.tell = die
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


def _notices(world: MailWorld) -> list[Notice]:
    with session_scope(world.engine, write=False) as session:
        return list(session.exec(select(Notice).order_by(col(Notice.id))))


def _received(world: MailWorld, addresses: list[str]) -> Counter[str]:
    """Every Message-ID the SMTP server delivered to these mailboxes, counted."""
    got: Counter[str] = Counter()
    for address in addresses:
        got += message_ids([parse(m.raw) for m in world.servers.read_mailbox(address)])
    return got


def test_a_poll_killed_before_the_tell_is_told_by_the_next_one_once(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("tell", NAMES, overrides=AUTO, bots=True)
    addresses = [p.address for p in players.values()] + [world.gm_address]
    before = _received(world, addresses)
    mover, raw = world.turn_mail("tell", players)
    mid = mover.send(world.game_address, raw)

    killed = world.pbem("poll", script=KILL_BEFORE_TELL)
    assert killed.returncode == -9, killed.stderr
    # Decided: the turn is played, its notices are in; told: nothing.
    assert [(e.turn, e.message_id) for e in world.order_log("tell")] == [(1, mid)]
    pending = [n for n in _notices(world) if n.told_at is None]
    assert len(pending) == MAILS_PER_TURN
    assert {n.message_id for n in pending}.isdisjoint(r.message_id for r in world.outbox())
    assert replies_to(mover.mailbox(), mid) == []

    rerun = world.pbem("poll")
    assert rerun.returncode == 0, rerun.stderr
    assert f"{MAILS_PER_TURN} sent, 0 deferred, 0 failed" in rerun.stdout
    assert all(n.told_at is not None for n in _notices(world))
    got = _received(world, addresses) - before
    assert set(got) == {n.message_id for n in pending}
    assert all(count == 1 for count in got.values()), got
    assert [kind(m) for m in replies_to(mover.mailbox(), mid)] == ["receipt"]
    assert world.game("tell").turn == 2


def test_a_notice_told_again_gives_the_same_bytes_and_is_queued_once(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("again", NAMES, overrides=AUTO, bots=True)
    mover, raw = world.turn_mail("again", players)
    mover.send(world.game_address, raw)
    world.poll()
    queued = {r.message_id: r for r in world.outbox()}
    with session_scope(world.engine, write=False) as session:
        notices = list(session.exec(select(Notice).order_by(col(Notice.id))))
        assert len(notices) == len(queued)  # the start mails and the turn's
        for notice in notices:
            again = telling.mail_again(session, world.ctx, notice)
            assert raw_of(session, queued[notice.message_id].id) == again, notice.kind
    # Told once more: every Message-ID is queued already, nothing is added.
    with session_scope(world.engine) as session:
        for notice in session.exec(select(Notice)):
            notice.told_at = None
            session.add(notice)
    telling.tell(world.engine, world.ctx)
    assert len(world.outbox()) == len(queued)
