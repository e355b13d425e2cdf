"""GM commands by mail (issue 13): the GM's address with the GM password.

Each test sends the GM's mail through the real mail path (the Maildir
transport, `run_cycle`) and reads the answer in the GM's mailbox, and what
the players were told.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlmodel import select
from typer.testing import CliRunner

from pbem.cli import app
from pbem.orders.gmcommands import parse_gm_mail
from pbem.store import InboundMessage
from pbem.testing.mailservers import MailServers
from tests.longgame_helpers import GM_ADDRESS, World, new_table
from tests.mailloop_helpers import MailPlayer, MailWorld, order_mail, plain_text, wait_until

PLAYERS = ["ann", "bob", "cat"]
GM_PASSWORD = re.compile(r"GM password of \S+: ([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})")


def gm_game(tmp_path, name: str):  # noqa: ANN001, ANN201
    """A quiet running game and its GM password, set by `pbem gm-password`."""
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS)
    table.silence()
    table.clear()
    result = CliRunner().invoke(app, ["gm-password", name, "--config", str(world.config_path)])
    assert result.exit_code == 0, result.stdout
    found = GM_PASSWORD.search(result.stdout)
    assert found is not None, result.stdout
    return world, table, found.group(1)


def gm_answers(world: World) -> list:  # noqa: ANN001
    return [m for m in world.take(GM_ADDRESS) if "GM commands" in m.subject]


def test_gm_extends_and_asks_status_by_mail(tmp_path) -> None:  # noqa: ANN001
    world, table, password = gm_game(tmp_path, "gmx")
    before = world.game("gmx").deadline
    assert before is not None
    mover = table.mover()
    world.send(GM_ADDRESS, f"Hi all,\nPASSWORD {password}\nSTATUS\nEXTEND 24\n", "[gmx] commands")
    world.poll()
    assert world.game("gmx").deadline == before + timedelta(hours=24)
    answers = gm_answers(world)
    assert len(answers) == 1
    text = answers[0].text
    assert answers[0].subject == "[gmx] GM commands done: STATUS, EXTEND"
    assert "Send HELP for the order language." not in answers[0].text
    assert "GM commands by mail, one a line under PASSWORD" in answers[0].flat
    assert f"STATUS: gmx: running, phase playing, turn {world.game('gmx').turn}" in text
    assert f"to move: {mover}" in text
    assert "0 missed in a row" in text
    due = before + timedelta(hours=24)
    assert f"EXTEND 24: deadline of gmx now {due:%Y-%m-%d %H:%M} UTC" in text
    assert 'Not read as commands: line 1 "Hi all,".' in answers[0].flat
    table.read_all()
    for name in PLAYERS:
        told = [m for m in table.mails(name) if "Deadline extended by 24 hours" in m.subject]
        assert len(told) == 1, table.mails(name)
        assert all("GM alert" not in m.subject for m in table.mails(name))


def test_gm_pauses_resumes_kicks_and_processes_by_mail(tmp_path) -> None:  # noqa: ANN001
    world, table, password = gm_game(tmp_path, "gmp")
    world.send(GM_ADDRESS, f"PASSWORD {password}\nPAUSE\n", "[gmp] pause")
    world.poll()
    assert world.game("gmp").status == "paused"
    assert "PAUSE: gmp paused" in gm_answers(world)[0].text
    world.advance(hours=5)
    world.send(GM_ADDRESS, f"PASSWORD {password}\nRESUME\n", "[gmp] resume")
    world.poll()
    assert world.game("gmp").status == "running"
    assert "RESUME: gmp resumed; deadline" in gm_answers(world)[0].text
    turn = world.game("gmp").turn
    mover = table.mover()
    victim = next(n for n in PLAYERS if n != mover)
    world.send(GM_ADDRESS, f"PASSWORD {password}\nKICK {victim}\nPROCESS\n", "[gmp] kick")
    world.poll()
    text = gm_answers(world)[0].text
    assert world.player("gmp", victim).status == "removed"
    assert f"KICK {victim}:" in text and "PROCESS: " in text
    assert world.game("gmp").turn == turn + 1  # the mover's turn played by default
    assert world.log("gmp")[-1].source == "gm"


def test_a_wrong_gm_password_is_refused_and_counted(tmp_path) -> None:  # noqa: ANN001
    world, table, password = gm_game(tmp_path, "gmw")
    before = world.game("gmw").deadline
    for _ in range(6):
        world.send(GM_ADDRESS, "PASSWORD amber-amber-amber-00\nEXTEND 24\n", "[gmw] extend")
    world.poll()
    assert world.game("gmw").deadline == before
    refused = [m for m in world.take(GM_ADDRESS) if "GM commands refused" in m.subject]
    assert len(refused) == 5  # the alert budget of the address: 5 an hour
    assert (
        "The GM password in your mail to gmw is wrong (the line PASSWORD must carry the "
        "password `pbem gm-password` printed last), so nothing in it was done." in refused[0].flat
    )
    with world.session(write=False) as session:
        rows = session.exec(select(InboundMessage)).all()
        assert sorted({(r.status, r.outcome) for r in rows}) == [
            ("rejected", "authentication failed for the GM of gmw")
        ]
    table.read_all()
    assert all(not table.mails(n) for n in PLAYERS)  # nothing reached the players


def test_a_gm_mail_without_a_gm_password_set_says_how_to_set_one(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    new_table(world, "gmn", PLAYERS).silence()
    world.take(GM_ADDRESS)
    world.send(GM_ADDRESS, "STATUS\n", "[gmn] status")
    world.poll()
    refused = [m for m in world.take(GM_ADDRESS) if "GM commands refused" in m.subject]
    assert len(refused) == 1
    assert "Set one with `pbem gm-password gmn`" in refused[0].flat


def test_every_problem_of_a_gm_mail_in_one_answer_and_nothing_done(tmp_path) -> None:  # noqa: ANN001
    world, table, password = gm_game(tmp_path, "gme")
    body = f"PASSWORD {password}\nEXTEND soon\nPAUES\nKICK\n"
    world.send(GM_ADDRESS, body, "[gme] oops")
    world.poll()
    answer = gm_answers(world)[0]
    assert answer.subject == "[gme] GM commands not run: 3 problems"
    assert (
        "Nothing was done: 3 problems in your mail (all that were found); a mail with any "
        'problem does nothing: line 2 "EXTEND soon": EXTEND takes a positive number of '
        'hours, e.g. EXTEND 24 line 3 "PAUES": no such command; did you mean PAUSE? line 4 '
        '"KICK": KICK takes the name of one player, e.g. KICK bob' in answer.flat
    )
    assert world.game("gme").status == "running"


def test_a_gm_mail_with_a_wrong_command_does_nothing_and_lists_every_problem(tmp_path) -> None:  # noqa: ANN001
    world, table, password = gm_game(tmp_path, "gma")
    before = world.game("gma").deadline
    world.send(GM_ADDRESS, f"PASSWORD {password}\nEXTEND 1\nKICK zed\n", "[gma] go")
    world.poll()
    (answer,) = gm_answers(world)
    assert answer.subject == "[gma] GM commands not run: 1 problem"
    assert 'line 3 "KICK zed": game gma has no player zed' in answer.flat
    assert "deadline of gma now" not in answer.flat
    assert world.game("gma").deadline == before  # the EXTEND above it is not done
    # a command the game refuses when it runs: the one before it undone too
    world.send(GM_ADDRESS, f"PASSWORD {password}\nEXTEND 2\nRESUME\n", "[gma] again")
    world.poll()
    (answer,) = gm_answers(world)
    assert answer.subject == "[gma] GM commands not run: 1 problem"
    assert 'line 3 "RESUME": refused: ' in answer.flat
    assert world.game("gma").deadline == before
    # the upfront problems and the game's, in one list
    world.send(GM_ADDRESS, f"PASSWORD {password}\nPAUES\nEXTEND soon\nKICK zed\n", "[gma] 3")
    world.poll()
    (answer,) = gm_answers(world)
    assert "Nothing was done: 3 problems in your mail" in answer.flat
    assert 'line 4 "KICK zed"' in answer.flat
    table.read_all()
    assert all(not table.mails(n) for n in PLAYERS)  # nothing reached the players


def test_parse_reads_one_command_a_line_up_to_the_signature() -> None:
    parsed = parse_gm_mail("GAME g\nPASSWORD x\nstatus\nextend 1.5\n--\nPAUSE\n")
    assert [(c.word, c.argument) for c in parsed.commands] == [("STATUS", ""), ("EXTEND", "1.5")]
    assert parsed.problems == [] and parsed.ignored == []


@pytest.mark.integration
def test_gm_commands_by_mail_over_imap_and_smtp(mail_servers: MailServers, tmp_path) -> None:  # noqa: ANN001
    """The same through Dovecot and the SMTP relay: the real `pbem gm-password`,
    the GM's mail client sending, the answer read over IMAP."""
    world = MailWorld.create(mail_servers, tmp_path)
    world.new_game("imapgm", PLAYERS, overrides={"placement": "auto"})
    done = world.pbem("gm-password", "imapgm")
    assert done.returncode == 0, done.stderr
    found = GM_PASSWORD.search(done.stdout)
    assert found is not None, done.stdout
    gm = MailPlayer("gm", world.gm_address, mail_servers)
    gm.new_mail()  # what the game start sent the GM so far
    wrong = gm.send(
        world.game_address,
        order_mail(gm.address, world.game_address, "[imapgm] pause", "PASSWORD x-y-z-00\nPAUSE\n"),
    )
    right = gm.send(
        world.game_address,
        order_mail(
            gm.address,
            world.game_address,
            "[imapgm] pause",
            f"PASSWORD {found.group(1)}\nPAUSE\nSTATUS\n",
        ),
    )
    report = world.poll()
    assert [(m.message_id, m.status, m.outcome) for m in report.mails] == [
        (wrong, "rejected", "authentication failed for the GM of imapgm"),
        (right, "processed", "GM mail: GM commands done: PAUSE, STATUS"),
    ]
    assert world.game("imapgm").status == "paused"
    assert world.rejected() == [wrong]
    answers = wait_until(
        lambda: [m for m in gm.mailbox() if "GM commands" in str(m["Subject"])], what="answers"
    )
    subjects = sorted(str(m["Subject"]) for m in answers)
    assert subjects == [
        "[imapgm] GM alert: GM commands refused",
        "[imapgm] GM commands done: PAUSE, STATUS",
    ]
    done_text = plain_text(next(m for m in answers if "done" in str(m["Subject"])))
    assert "PAUSE: imapgm paused" in done_text
    assert "STATUS: imapgm: paused, phase playing" in done_text
    assert {str(m["In-Reply-To"]) for m in answers} == {wrong, right}


def test_a_gm_mail_naming_no_game_is_told_the_gms_games(tmp_path) -> None:  # noqa: ANN001
    world, table, password = gm_game(tmp_path, "gmu")
    new_table(world, "gmv", PLAYERS).silence()
    world.take(GM_ADDRESS)
    world.send(GM_ADDRESS, f"PASSWORD {password}\nPAUSE\n", "pause please")
    world.poll()
    answers = [m for m in world.take(GM_ADDRESS) if "Which game?" in m.subject]
    assert len(answers) == 1
    assert (
        "Your mail does not say which game it is for; you are the GM of [gmu], [gmv]. "
        "Put the game's name in the subject, like [gmu], or a line GAME gmu, and send it "
        "again. Nothing was done." in answers[0].flat
    )
    assert world.game("gmu").status == "running" and world.game("gmv").status == "running"


def test_a_new_gm_password_replaces_the_old_one(tmp_path) -> None:  # noqa: ANN001
    world, table, old = gm_game(tmp_path, "gmr")
    result = CliRunner().invoke(app, ["gm-password", "gmr", "--config", str(world.config_path)])
    found = GM_PASSWORD.search(result.stdout)
    assert found is not None and found.group(1) != old
    world.send(GM_ADDRESS, f"PASSWORD {old}\nPAUSE\n", "[gmr] pause")
    world.poll()
    assert world.game("gmr").status == "running"
    assert [m.subject for m in world.take(GM_ADDRESS)] == ["[gmr] GM alert: GM commands refused"]
    world.send(GM_ADDRESS, f"PASSWORD {found.group(1)}\nPAUSE\n", "[gmr] pause")
    world.poll()
    assert world.game("gmr").status == "paused"
