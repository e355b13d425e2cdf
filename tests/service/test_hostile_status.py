"""`pbem status` hides no refused mail and prints nothing a stranger's mail may
use against a terminal, through the real mail path (Maildir, `run_cycle`):
a From line of several addresses is shown as it was (bounded, no control
character) with the reason; a player's own mail without a password, with a
wrong one, with an old token or with bad lines is listed with its reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from pbem.mail.maildir import spool_mailbox
from pbem.service.intake.refusals import NO_ORDERS, NO_PROOF, applied_nothing, stale_token
from pbem.service.ops.refused import FROM_CHARS
from pbem.service.ops.status import Level, describe, read_status
from tests.longgame_helpers import GAME_ADDRESS, World, new_table

PLAYERS = ["ann", "bob", "cat"]
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but TAB and LF


def quiet(tmp_path: Path, name: str = "g"):  # noqa: ANN201
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS)
    table.silence()
    table.read_all()
    return world, table, table[table.mover()]


def drop(world: World, raw: bytes) -> None:
    spool_mailbox(world.root, GAME_ADDRESS).add(raw)


def test_a_from_line_of_two_addresses_is_shown_as_it_was_and_why(tmp_path: Path) -> None:
    world = World(tmp_path)
    drop(
        world,
        b"From: ann@players.test, \x1b[2Jmallory@evil.example\xc2\x9b\r\n"
        b"To: pbem@localhost\r\nSubject: [g] hi\r\nMessage-ID: <two@evil.example>\r\n\r\nHELP\r\n",
    )
    long_from = b"From: " + b", ".join(b"x%d@evil.example" % i for i in range(60))
    drop(world, long_from + b"\r\nSubject: hi\r\nMessage-ID: <many@evil.example>\r\n\r\nHELP\r\n")
    drop(world, b"Subject: hi\r\nMessage-ID: <none@evil.example>\r\n\r\nHELP\r\n")
    world.poll()
    found = read_status(world.engine, world.config, world.clock)
    assert found.level is Level.OK
    text = describe(found)
    assert not CONTROLS.search(text)
    assert (
        '  <two@evil.example> from "ann@players.test,  [2Jmallory@evil.example " '
        "(2 addresses in its From line; a mail must come from one): not answered (no "
        "sender address (or more than one))"
    ) in text
    many = next(line for line in text.split("\n") if "<many@evil.example>" in line)
    shown = many.split('"')[1]
    assert len(shown) == FROM_CHARS and shown.startswith("x0@evil.example, x1@evil.example")
    assert shown.endswith("\u2026")
    # the line was read up to the parser's limit: the addresses in it, "or more"
    assert "(56 or more addresses in its From line; a mail must come from one)" in many
    assert "  <none@evil.example> from (no From line): not answered" in text
    by_id = {m["message_id"]: m for m in found.refused}
    assert by_id["<two@evil.example>"]["from_line"] == (
        "ann@players.test, \x1b[2Jmallory@evil.example\x9b"
    )  # --json: as it was (JSON escapes it)
    assert by_id["<none@evil.example>"]["from_line"] is None


def test_a_players_refused_mail_is_listed_whatever_the_reason(tmp_path: Path) -> None:
    world, table, mover = quiet(tmp_path)
    ids = {
        "no password": world.send(mover.address, "PLACE 3 Alaska\n", "[g] orders"),
        "wrong password": world.send(
            mover.address, "PASSWORD wrong-wrong-wrong-11\nPLACE 3 Alaska\n", "[g] orders"
        ),
        "bad lines": mover.write("PLACE 1 Atlantis\n"),
        "no orders": mover.write("Hello!\n"),
    }
    world.poll()
    short = mover.write("PLACE 1 Alaska\n")  # refused too: one problem (armies due)
    world.poll()
    found = read_status(world.engine, world.config, world.clock)
    assert found.level is Level.OK
    by_id = {m["message_id"]: m for m in found.refused}
    assert {k: (by_id[i]["status"], by_id[i]["why"]) for k, i in ids.items()} == {
        "no password": ("processed", "no password or turn token"),
        "wrong password": ("rejected", "authentication failed for " + mover.name),
        "bad lines": ("processed", "1 problem"),
        "no orders": ("processed", "no orders"),
    }
    assert short in by_id
    text = describe(found)
    assert f"refused in the last 24 hours: {len(found.refused)}" in text
    assert (
        f"  {ids['no password']} from {mover.address}: no password or turn token "
        "(answered; nothing applied)"
    ) in text


def test_the_outcomes_of_an_answered_mail_that_applied_nothing() -> None:
    assert [applied_nothing(o) for o in (NO_PROOF, NO_ORDERS, stale_token(3))] == [True] * 3
    assert applied_nothing("1 problem") and applied_nothing("300 problems")
    for done in ("check; 2 problems", "absence; 2 problems", "checked", "already applied"):
        assert not applied_nothing(done), done
