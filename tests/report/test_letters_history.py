"""HISTORY's answers are titled for what they hold, not as the order language
(the HELP answer's title was used for both until the issue-29 follow-up)."""

from __future__ import annotations

from pbem.report import letters
from pbem.testing.sample import play_sample


def test_history_without_a_turn_lists_the_turns_under_its_own_subject() -> None:
    info = play_sample(seed=7, turns=1).game
    mail = letters.turns_played(info, "ann@example.org", [1, 2, 3], token="t0k")
    assert "History: the turns played" in mail.subject
    assert "Help" not in mail.subject
    assert "Turns played: 1, 2, 3" in mail.text


def test_history_of_a_turn_without_a_report_says_which() -> None:
    info = play_sample(seed=7, turns=1).game
    mail = letters.no_report(info, "ann@example.org", 9)
    assert "History: no report of turn 9" in mail.subject
    assert "There is no report of turn 9." in mail.text
