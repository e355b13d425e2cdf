"""A problem reply stays small whatever the mail: identical problems after
the first three, and every problem after the first twenty, are folded into
one line naming their lines (pbem.report.folding); the title counts them all.
"""

from __future__ import annotations

from pbem.report import render_error_reply
from pbem.report.context import ErrorReply, Problem
from pbem.report.folding import MOST_SHOWN, fold, line_ranges, total


def bad(line: int, word: str = "Atlantis") -> Problem:
    return Problem(line, f"PLACE 1 {word}", f"{word}: no such territory")


def test_a_short_list_is_unchanged() -> None:
    problems = (bad(1), bad(2), bad(3), Problem(None, "", "no orders"))
    assert fold(problems) == problems


def test_identical_problems_after_three_are_one_line() -> None:
    folded = fold([bad(n) for n in range(1, 301)] + [bad(400, "Mu")])
    assert folded == (
        bad(1),
        bad(2),
        bad(3),
        Problem(None, "", "The same problem 297 more times, not shown: lines 4-300.", more=297),
        bad(400, "Mu"),
    )
    assert total(folded) == 301


def test_after_twenty_problems_the_rest_is_one_line() -> None:
    problems = [bad(n, f"X{n}") for n in range(1, 31)] + [Problem(None, "", "too many armies")]
    folded = fold(problems)
    assert folded[:MOST_SHOWN] == tuple(problems[:MOST_SHOWN])
    assert folded[MOST_SHOWN:] == (
        Problem(
            None,
            "",
            "And 11 more problems, not shown: lines 21-30 and the mail as a whole.",
            more=11,
        ),
    )
    assert total(folded) == 31


def test_repeats_of_a_shown_problem_stay_folded_past_the_cap() -> None:
    same = [bad(n) for n in (1, 2, 3, 21, 22, 23, 24, 25)]
    other = [bad(n, f"X{n}") for n in (*range(4, 21), 26, 27)]
    folded = fold(sorted(same + other, key=lambda p: p.line_no or 0))
    assert [p.line_no for p in folded] == [1, 2, 3, None, *range(4, 21), None]
    assert folded[3].message == "The same problem 5 more times, not shown: lines 21-25."
    assert folded[-1].message == "And 2 more problems, not shown: lines 26-27."
    assert total(folded) == 27


def test_line_ranges_are_bounded() -> None:
    assert line_ranges([3, 5, 6, 7, 9]) == "3, 5-7, 9"
    assert line_ranges(list(range(1, 200, 2)), most=3) == "1, 3, 5 and 97 more"


def test_the_reply_counts_every_problem_and_shows_the_fold() -> None:
    folded = fold([bad(n) for n in range(2, 302)])
    mail = render_error_reply(ErrorReply("ann@example.org", folded))
    assert "Not applied, 300 problems" in mail.subject
    assert "Your mail was not applied: 300 problems\n" in mail.text
    assert "\nThe same problem 297 more times, not shown: lines 5-301.\n" in mail.text
    assert mail.text.count("Atlantis: no such territory") == 3
    assert '<p style="margin:10px 0;">The same problem 297 more times' in mail.html
    assert mail.html.count("Atlantis: no such territory") == 3


def test_a_problem_stored_before_folding_renders_as_before() -> None:
    stored = [3, "PLACE 1 Atlantis", "Atlantis: no such territory", "", ""]  # five fields
    mail = render_error_reply(ErrorReply("ann@example.org", (Problem(*stored),)))
    assert "Line 3: PLACE 1 Atlantis\n  Atlantis: no such territory\n" in mail.text
