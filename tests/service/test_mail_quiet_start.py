"""A player's first mails, quiet and their own (issue 29, points 9 and 12).

Each test goes through the real mail path (the Maildir transport, `run_cycle`)
and reads the mails as the player gets them: the rules that apply to this
game only, examples on the player's own territories, what a CLAIM leaves to
the rules, an ABSENT that changed nothing, and who takes over a seat.
"""

from __future__ import annotations

from datetime import timedelta

from pbem.service.play import gm
from tests.longgame_helpers import World, new_table

PLAYERS = ["alice", "bob", "carol"]


# ------------------------------------------------------- ABSENT, takeovers
def test_an_absent_sent_twice_is_answered_that_nothing_changed(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "abs", PLAYERS, settings={"absence_days_per_year": 10})
    table.silence()
    table.read_all()
    alice = table["alice"]
    alice.write("ABSENT FROM 2024-03-10 TO 2024-03-12")
    world.poll()
    first = alice.read()
    assert [m.subject for m in first] == ["[abs] Noted"]
    assert "Your mail had no orders; this is what it did: Absence noted from 2024-03-10 to " in (
        first[0].flat
    )
    assert world.player("abs", "alice").absence_days_used == 3

    alice.write("ABSENT FROM 2024-03-10 TO 2024-03-12")  # the very same mail again
    world.poll()
    copy = alice.read()
    assert [m.kind for m in copy] == ["error_reply"]
    assert "Already applied: this mail says what your last mail said" in copy[0].flat

    alice.write("# back on the 13th\nABSENT FROM 2024-03-11 TO 2024-03-12")  # inside it
    world.poll()
    second = alice.read()
    assert [(m.kind, m.subject) for m in second] == [("receipt", "[abs] Nothing changed")]
    assert second[0].text.split("\n\n")[:3] == "\n\n".join(
        [
            "Nothing changed\n===============\n\n"
            "Thank you, alice. Your mail had no orders; it changed nothing:\n\n"
            "  You were already marked absent from 2024-03-11 to 2024-03-12 in abs (noted:\n"
            "    2024-03-10 to 2024-03-12); nothing changed."
        ]
    ).split("\n\n")
    assert "Orders accepted" not in second[0].text
    assert world.player("abs", "alice").absence_days_used == 3


def test_a_set_mail_that_is_set_already_changed_nothing(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "set", PLAYERS)
    table.silence()
    table.read_all()
    bob = table["bob"]
    bob.write("SET MAIL DIGEST")
    world.poll()
    assert [m.subject for m in bob.read()] == ["[set] Noted"]
    bob.write("set mail digest")
    world.poll()
    again = bob.read()
    assert [m.subject for m in again] == ["[set] Nothing changed"]
    assert "Your mail is set to DIGEST already; nothing changed." in again[0].flat


def test_the_takeover_notice_names_the_newcomer_and_the_seat(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "take", PLAYERS)
    table.silence()
    table.read_all()
    state = world.state("take")
    turn = state.turn
    world.gm(gm.replace, "take", "carol", "dave@players.test")  # no --name: the address's
    notice = [m for m in table["alice"].read() if "takes over" in m.subject]
    assert [m.subject for m in notice] == ["[take] A new player takes over carol's seat"]
    assert (
        f"dave takes over the seat of carol from turn {turn} on; the seat keeps its name, "
        "carol, and its former player no longer plays it." in notice[0].flat
    )
    welcome = [m for m in world.take("dave@players.test") if m.kind == "game_start"]
    assert len(welcome) == 1
    assert f"Welcome, dave. From turn {turn} on you play the seat of carol" in welcome[0].flat
    assert world.holders("take")[-1][1:3] == ("dave", "dave@players.test")


def test_a_newcomer_named_like_the_seat_is_not_read_as_its_old_player(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "same", PLAYERS)
    table.silence()
    table.read_all()
    world.gm(gm.replace, "same", "carol", "carol@elsewhere.test")
    notice = [m for m in table["bob"].read() if "takes over" in m.subject]
    assert len(notice) == 1
    assert "A new player, also called carol, takes over the seat of carol from turn" in (
        notice[0].flat
    )
    assert "carol takes over the seat of carol" not in notice[0].flat


# ------------------------------------------------------------------- CLAIM
def test_a_claim_answer_says_how_the_rest_are_chosen(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "draft", PLAYERS, overrides={"claim": "draft", "placement": "auto"})
    table.silence()
    table.read_all()
    state = world.state("draft")
    alice = table["alice"]
    picks = 14  # 42 territories, 3 players
    alice.write("CLAIM Alaska, Japan, Peru")
    world.poll()
    receipt = [m for m in alice.read() if m.kind == "receipt"]
    assert len(receipt) == 1
    assert state.owner.count(-1) == 42
    assert (
        "  CLAIM Alaska, Japan, Peru\n\n"
        "  # You listed 3 of the 42 free territories and get 14 in the draft, one pick\n"
        "    each round in turn order: each pick takes the first territory on your list\n"
        "    still free; the other 11 (or more, if others take yours first) are each\n"
        "    the first free territory in map order when its pick comes.\n"
    ) in receipt[0].text
    assert f"get {picks} in the draft" in receipt[0].flat
    # and so it is: at the deadline the silent players get the default (empty lists)
    deadline = world.game("draft").deadline
    assert deadline is not None
    world.poll_until(deadline + timedelta(hours=30), every_hours=6)
    after = world.state("draft")
    seat = next(i for i, p in enumerate(after.players) if p.name == "alice")
    names = [after.board.territories[t].name for t in after.territories_of(seat)]
    assert len(names) == picks and {"Alaska", "Japan", "Peru"} <= set(names)
