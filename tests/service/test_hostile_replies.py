"""Answers to hostile mail say what is true and stay small, through the real
mail path (the Maildir transport, `run_cycle`): a mail cut to the text limit
is not said to have the cut length; a mail of hundreds of bad lines gets a
reply of a few KiB that still names its first problem with its line.
"""

from __future__ import annotations

from pathlib import Path

from pbem.mail import bounds
from pbem.orders.parser import MAX_CHARS
from tests.longgame_helpers import GM_ADDRESS, Mail, World, new_table

PLAYERS = ["ann", "bob", "cat"]


def quiet(tmp_path: Path, name: str):  # noqa: ANN201
    """A running game whose players write only what the test says; the one to move."""
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS)
    table.silence()
    table.read_all()
    return world, table[table.mover()]


def one_reply(world: World, seat) -> Mail:  # noqa: ANN001
    world.poll()
    answers = seat.read()
    assert [m.kind for m in answers] == ["error_reply"], answers
    return answers[0]


def test_a_mail_past_the_text_limit_is_said_to_be_longer_not_of_the_cut_length(
    tmp_path: Path,
) -> None:
    world, mover = quiet(tmp_path, "long")
    line = "PLACE 1 Alaska # padding padding\n"  # 33 characters
    body = line * 10_000  # 330,000 characters: cut to 262,144 by the mail layer
    mover.write(body)
    reply = one_reply(world, mover)
    assert (
        f"the mail is longer than {bounds.MAX_TEXT_CHARS} characters; orders are read "
        f"only from mails of at most {MAX_CHARS} characters"
    ) in reply.flat
    assert f"the mail is {bounds.MAX_TEXT_CHARS} characters long" not in reply.flat
    assert world.game("long").turn == 1  # nothing applied


def test_a_long_mail_within_the_text_limit_is_told_its_true_length(tmp_path: Path) -> None:
    world, mover = quiet(tmp_path, "true")
    body = "PLACE 1 Alaska # padding padding\n" * 1000  # 33,000 characters, not cut
    mover.write(body)
    reply = one_reply(world, mover)
    # the password line and the body, as the parser sees them (trailing line end dropped)
    length = len(f"PASSWORD {mover.password}\n") + len(body) - 1
    assert f"the mail is {length} characters long; orders are read only" in reply.flat


def test_three_hundred_identical_bad_lines_get_a_short_reply_naming_the_first(
    tmp_path: Path,
) -> None:
    world, mover = quiet(tmp_path, "flood")
    mover.write("PLACE 1 Atlantis\n" * 300)  # lines 2-301 (line 1 is the password)
    reply = one_reply(world, mover)
    size = len(reply.msg.as_bytes())
    assert size < 8 * 1024, size  # the whole mail, both its parts (was 112 KB)
    text = reply.text
    assert "Your mail was not applied: 300 problems" in text
    assert text.count("Line ") == 3  # the first three in full, as always
    assert "Line 2: PLACE 1 Atlantis\n  Atlantis: no such territory\n" in text
    assert "The same problem 297 more times, not shown: lines 5-301." in reply.flat
    assert world.game("flood").turn == 1


def test_hundreds_of_different_bad_lines_are_cut_after_twenty(tmp_path: Path) -> None:
    world, mover = quiet(tmp_path, "many")
    mover.write("".join(f"PLACE 1 Atlantis{i}\n" for i in range(300)))
    reply = one_reply(world, mover)
    assert len(reply.msg.as_bytes()) < 16 * 1024
    assert "Your mail was not applied: 300 problems" in reply.text
    assert reply.text.count("Line ") == 20
    assert "Line 2: PLACE 1 Atlantis0\n  Atlantis0: no such territory\n" in reply.text
    assert "And 280 more problems, not shown: lines 22-301." in reply.flat


def test_a_gm_mail_past_the_text_limit_runs_nothing(tmp_path: Path) -> None:
    from tests.service.test_mail_gm import gm_answers, gm_game

    world, _, password = gm_game(tmp_path, "gmcut")
    padding = "# padding padding padding padding\n" * 9_000  # 306,000 characters
    world.send(GM_ADDRESS, f"PASSWORD {password}\nPAUSE\n{padding}", "[gmcut] pause")
    world.poll()
    assert world.game("gmcut").status == "running"  # the PAUSE at its top is not run
    answers = gm_answers(world)
    assert [a.subject for a in answers] == ["[gmcut] GM commands not run: the mail is too long"]
    assert (
        f"Nothing was done: your mail is longer than {bounds.MAX_TEXT_CHARS} characters"
        in answers[0].flat
    )
