"""Which mail a player gets: SET MAIL EVERY | MYTURN | DIGEST, and the GM's
default (issue 19), through the mail path on the local Maildir transport."""

from __future__ import annotations

from datetime import timedelta

from pbem.maps import builtin_map
from pbem.orders import parse_orders
from pbem.service.play.gamesettings import mail_mode
from tests.longgame_helpers import START, World, new_table

PLAYERS = ["ann", "bob", "cat"]


def reports_of(table, name: str) -> list[int]:  # noqa: ANN001
    """The turn numbers of the turn reports a player got."""
    return [
        int(m.subject.split("Turn ")[1].split(":")[0]) for m in table.mails(name, "turn_report")
    ]


def test_set_mail_myturn_keeps_only_your_own_turns_reports(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "pref", PLAYERS)
    table.read_all()
    table["ann"].write("SET MAIL MYTURN\n")
    world.poll()
    table.read_all()
    note = [m for m in table.mails("ann") if "own turns only" in m.flat]
    assert len(note) == 1
    assert mail_mode(world.game("pref"), world.player("pref", "ann").seat) == "myturn"
    table.clear()
    table.run(lambda: world.game("pref").turn >= 7)
    table.read_all()
    state = world.state("pref")
    ann = world.player("pref", "ann").seat
    own = {t.turn for t in world.log("pref") if t.seat == ann and t.kind == "turn"}
    assert reports_of(table, "ann") and set(reports_of(table, "ann")) <= own
    assert len(reports_of(table, "bob")) > len(reports_of(table, "ann"))
    assert table.mails("ann", "your_turn")  # the mail that asks for orders still comes
    assert state.turn >= 7


def test_a_digest_default_sends_one_mail_a_day_with_the_other_turns(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "dig", PLAYERS, settings={"mail_default": "digest"})
    table.read_all()
    world.poll()  # the digest clock starts
    table.run(lambda: world.game("dig").turn >= 7)
    table.read_all()
    ann = world.player("dig", "ann").seat
    own = {t.turn for t in world.log("dig") if t.kind == "turn" and t.seat == ann}
    assert reports_of(table, "ann") and set(reports_of(table, "ann")) <= own
    world.poll_until(START + timedelta(hours=25))
    table.read_all()
    digests = [m for m in table.mails("ann") if "Daily digest" in m.subject]
    assert len(digests) == 1
    others = [t.turn for t in world.log("dig") if t.kind == "turn" and t.seat != ann and t.turn < 7]
    for turn in others:
        assert f"Turn {turn}:" in digests[0].flat
    world.poll_until(START + timedelta(hours=30))
    table.read_all()
    assert len([m for m in table.mails("ann") if "Daily digest" in m.subject]) == 1


def test_set_mail_is_part_of_the_order_language() -> None:
    board = builtin_map("classic")
    assert parse_orders("SET MAIL digest", board).commands[0].mode == "digest"  # type: ignore[attr-defined]
