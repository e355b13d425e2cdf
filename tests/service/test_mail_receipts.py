"""Receipts name the right turn and say "late" only when late (issue 13):
setup orders, a turn in time, and orders in the grace period, each sent
through the real mail path (Maildir, `run_cycle`)."""

from __future__ import annotations

from datetime import timedelta

from tests.longgame_helpers import World, new_table

PLAYERS = ["ann", "bob", "cat"]


def receipts(mails: list) -> list:  # noqa: ANN001
    return [m for m in mails if m.kind == "receipt"]


def titled(mails: list) -> list[str]:  # noqa: ANN001
    """The subjects without the token every receipt ends with (issue 29)."""
    assert all(" (token " in m.subject for m in mails)
    return [m.subject.rsplit(" (token ", 1)[0] for m in mails]


def test_setup_receipts_name_the_setup_and_late_only_after_the_deadline(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "rs", PLAYERS, overrides={"placement": "blind"})
    table.silence("cat")
    table.step()
    table.step()
    for name in ("ann", "bob"):
        got = receipts(table.mails(name))
        assert titled(got) == ["[rs] Setup orders accepted (placement)"]
        assert "late" not in got[0].flat and "turn 0" not in got[0].flat
        assert "They are played once every player has sent their setup orders" in got[0].flat
    deadline = world.game("rs").deadline
    assert deadline is not None
    world.poll_until(deadline + timedelta(hours=2), every_hours=6)  # cat is late
    table["cat"].auto = True
    table.step()
    table.step()
    got = receipts(table.mails("cat"))
    assert titled(got) == [
        "[rs] Setup orders accepted (placement) (late, in the grace period)"
    ]
    assert (
        "They came after the deadline, Thu 7 Mar 2024 12:00 UTC, but within the grace "
        "period, so they count: the turn is not missed." in got[0].flat
    )
    assert world.state("rs").phase not in ("place",)


def test_a_turn_receipt_names_its_turn_and_late_only_in_the_grace_period(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "rt", PLAYERS)
    table.silence()
    table.read_all()
    first = table[table.mover()]
    state = world.state("rt")
    first.reply(first.latest("your_turn"), first.bot.write_turn(state))  # type: ignore[union-attr]
    world.poll()
    got = receipts(first.read())
    assert titled(got) == [f"[rt] Orders accepted for turn {state.turn}"]
    assert "late" not in got[0].flat
    # the next player answers two hours after the deadline: late, but in the grace period
    table.read_all()
    second = table[table.mover()]
    state = world.state("rt")
    deadline = world.game("rt").deadline
    assert deadline is not None
    world.poll_until(deadline + timedelta(hours=2), every_hours=6)
    second.read()
    second.reply(second.latest("your_turn"), second.bot.write_turn(state))  # type: ignore[union-attr]
    world.poll()
    got = receipts(second.read())
    assert titled(got) == [
        f"[rt] Orders accepted for turn {state.turn} (late, in the grace period)"
    ]
    due = f"{deadline:%a} {deadline.day} {deadline:%b %Y %H:%M} UTC"
    assert f"They came after the deadline, {due}, but within the grace period" in got[0].flat
    assert world.game("rt").turn == state.turn + 1
    assert world.player("rt", second.name).missed_in_row == 0
