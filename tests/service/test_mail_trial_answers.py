"""What a player trial found in the mails: a refused CHECK says it was a check,
a stranger's HELP is titled for what it says, the start mail of a blind
placement says only what is true, the poll log counts in proper plurals.

Real mail through the local Maildir transport, as tests/service/test_mail_answers.py.
"""

from __future__ import annotations

from tests.longgame_helpers import World, new_table
from tests.service.test_mail_answers import PLAYERS, new_mail, quiet, token_in


def test_a_refused_check_says_it_was_only_a_check(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    mover.reply(mover.latest("your_turn"), "CHECK\nPLACE 99 Kamchatca\n")
    report = world.poll()
    assert [m.outcome for m in report.mails] == ["1 problem"]  # not "1 problems"
    got = new_mail(table, mover)
    assert [m.kind for m in got] == ["error_reply"]
    token = token_in(got[0])
    assert got[0].subject == f"[g] Checked, 1 problem: turn 1 (token {token})"
    assert "asked for a CHECK: nothing would be applied anyway." in got[0].flat
    assert (
        "Fix the problems and send the orders again without CHECK to play them (or "
        "with CHECK to check again)." in got[0].flat
    )
    assert "send the whole mail again" not in got[0].flat
    assert world.game("g").turn == 1


def test_a_refused_mail_without_check_is_not_called_a_check(tmp_path) -> None:  # noqa: ANN001
    world, table, mover = quiet(tmp_path)
    mover.reply(mover.latest("your_turn"), "PLACE 99 Kamchatca\n")
    world.poll()
    got = new_mail(table, mover)
    token = token_in(got[0])
    assert got[0].subject == f"[g] Not applied, 1 problem: turn 1 (token {token})"
    assert "fix them all and send the whole mail again." in got[0].flat
    assert "CHECK" not in got[0].flat


def test_the_start_mail_of_a_blind_placement_says_only_who_plays_first(tmp_path) -> None:  # noqa: ANN001
    blind = new_table(World(tmp_path / "b"), "b", PLAYERS, overrides={"placement": "blind"})
    auto = new_table(World(tmp_path / "a"), "a", PLAYERS)  # placement auto: in turn order
    blind.read_all()
    auto.read_all()
    start = blind.mails("ann", "game_start")[0]
    assert "The first in this order plays first." in start.flat
    assert "places first" not in start.flat
    assert "The first in this order places first and plays first." in (
        auto.mails("ann", "game_start")[0].flat
    )
