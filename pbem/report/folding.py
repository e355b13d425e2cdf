"""A reply's list of problems, bounded in size whatever the mail.

The game's address is public: a mail of thousands of bad lines must not get
a reply that lists each of them. The first problems are shown in full, as
always; an identical problem (the same message, fix and with-fix) after its
first ``SAME_SHOWN`` is folded into one line naming its lines, and after
``MOST_SHOWN`` problems in full the rest is one line naming their lines.
A folded line is a ``Problem`` whose ``more`` counts the problems it stands
for, so a reply still says how many problems the mail has.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.report.context import Problem

SAME_SHOWN = 3  # identical problems shown in full before the others are folded
MOST_SHOWN = 20  # problems shown in full in one reply
RANGES_NAMED = 20  # line numbers or ranges ("4-300") named in one folded line

Key = tuple[str, str, str]


def fold(problems: Sequence[Problem]) -> tuple[Problem, ...]:
    """``problems`` (in the mail's line order) with the repeats and the
    surplus folded; the ones shown in full are unchanged and in their order."""
    shown: list[Problem] = []
    seen: dict[Key, int] = {}
    repeats: dict[Key, list[Problem]] = {}
    rest: list[Problem] = []
    for problem in problems:
        key = (problem.message, problem.fix, problem.with_fix)
        if seen.get(key, 0) >= SAME_SHOWN:
            repeats.setdefault(key, []).append(problem)
        elif len(shown) < MOST_SHOWN:
            shown.append(problem)
            seen[key] = seen.get(key, 0) + 1
        else:
            rest.append(problem)
    if not repeats and not rest:
        return tuple(problems)
    out: list[Problem] = []
    count: dict[Key, int] = {}
    for problem in shown:
        out.append(problem)
        key = (problem.message, problem.fix, problem.with_fix)
        count[key] = count.get(key, 0) + 1
        if count[key] == SAME_SHOWN and key in repeats:
            out.append(_folded("The same problem", repeats[key]))
    if rest:
        out.append(_folded("And", rest, other=True))
    return tuple(out)


def total(problems: Sequence[Problem]) -> int:
    """How many problems a (folded) list stands for."""
    return sum(p.more or 1 for p in problems)


def _folded(start: str, problems: list[Problem], other: bool = False) -> Problem:
    n = len(problems)
    what = f"{n} more problem{'s' if n != 1 else ''}" if other else _times(n)
    lines = sorted({p.line_no for p in problems if p.line_no is not None})
    where = []
    if lines:
        where.append(f"line{'s' if len(lines) > 1 else ''} {line_ranges(lines)}")
    if any(p.line_no is None for p in problems):
        where.append("the mail as a whole")
    return Problem(None, "", f"{start} {what}, not shown: {' and '.join(where)}.", more=n)


def _times(n: int) -> str:
    return "once more" if n == 1 else f"{n} more times"


def line_ranges(lines: Sequence[int], most: int = RANGES_NAMED) -> str:
    """'4-300', '3, 5-7, 9': sorted line numbers, runs joined, at most
    ``most`` runs named and how many lines more."""
    runs: list[tuple[int, int]] = []
    for line in lines:
        if runs and line == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    named = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:most]]
    left = sum(b - a + 1 for a, b in runs[most:])
    return ", ".join(named) + (f" and {left} more" if left else "")
