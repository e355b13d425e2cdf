"""Problems with a mail's orders, the error that carries them, and the reply that lists them.

A mail is applied completely or not at all, so every problem is collected
and sent back at once, each pointing at its line with a suggestion where
one exists.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pbem.orders.lexer import source_lines
from pbem.orders.model import Order
from pbem.rules.board import Board, fold_name
from pbem.rules.state import GameState


@dataclass(frozen=True, slots=True)
class OrderProblem:
    """One thing wrong with the orders, written for the player."""

    line: int  # 1-based line of the mail; 0 when the problem is the mail as a whole
    column: int  # 1-based column of ``text``; 0 when there is nothing to point at
    text: str  # the offending text
    message: str  # the whole sentence, suggestion included
    expected: str = ""  # what the language expected there, when that helps
    suggestion: str = ""  # the fix on its own ("Kamchatka"), when there is one
    with_fix: str = ""  # what the line, with that fix, would still get wrong

    def __str__(self) -> str:
        if not self.line:
            return self.message
        return f"line {self.line}: {self.message}"


class OrdersError(Exception):
    """The orders cannot be applied; ``problems`` lists every reason."""

    def __init__(self, problems: list[OrderProblem], partial: Any = None) -> None:
        self.problems = list(problems)
        # The parser's ParsedMail of the lines it could read, so that a reply
        # can also validate them (see pbem.orders.check.all_problems).
        self.partial = partial
        if not self.problems:
            summary = "the orders cannot be applied"
        elif len(self.problems) == 1:
            summary = str(self.problems[0])
        else:
            summary = f"{self.problems[0]} (and {len(self.problems) - 1} more problems)"
        super().__init__(summary)


def in_line_order(problems: Sequence[OrderProblem]) -> list[OrderProblem]:
    """The problems in the order of the mail's lines: by line, those of one line as
    they were found (stable), the mail's as a whole (line 0: a total, a missing
    order) after every line's, as they come after reading all of them."""
    return sorted(problems, key=lambda p: p.line or _AFTER_EVERY_LINE)


_AFTER_EVERY_LINE = 1 << 62


def one_of(words: list[str], last: str = "or") -> str:
    """'A', 'A or B', 'A, B or C'."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def closest(word: str, candidates: dict[str, str], n: int = 3) -> list[str]:
    """Display names whose folded key is nearest to ``word`` (best first, no repeats)."""
    keys = difflib.get_close_matches(fold_name(word), list(candidates), n=n * 3, cutoff=0.6)
    names: list[str] = []
    for key in keys:
        name = candidates[key]
        if name not in names:
            names.append(name)
    return names[:n]


def territory_candidates(board: Board) -> dict[str, str]:
    """Folded name or alias -> the territory's name as on the map."""
    found: dict[str, str] = {}
    for t in board.territories:
        found[fold_name(t.name)] = t.name
        for alias in t.aliases:
            found.setdefault(fold_name(alias), t.name)
    return found


def keyword_candidates(keywords: list[str] | tuple[str, ...]) -> dict[str, str]:
    return {fold_name(k): k for k in keywords}


def did_you_mean(names: list[str]) -> str:
    return f"; did you mean {one_of(names)}?" if names else ""


def format_problems(problems: list[OrderProblem], text: str) -> str:
    """The reply to a mail whose orders were refused: every problem with its
    line as written, a mark under the offending text, and the fix."""
    count = len(problems)
    head = "1 problem" if count == 1 else f"{count} problems"
    out = [f"Your orders were not applied: {head} found. Nothing in this mail was applied.", ""]
    out += problem_lines(problems, text)
    out.append("Send all the orders again, corrected. HELP replies with the order language.")
    return "\n".join(out) + "\n"


def format_problems_for_gm(
    problems: list[OrderProblem], text: str, what: str, player: str = ""
) -> str:
    """The same problems as the GM's command line says them (``pbem check
    --game``, ``pbem adjudicate``): ``what`` names the orders refused, e.g.
    "alice's orders in turn.txt"; no word of mail or HELP. The messages are the
    player's reply's, which say "you": with ``player`` a line says who that is
    (one line, rather than a second wording of every message)."""
    count = len(problems)
    head = "1 problem" if count == 1 else f"{count} problems"
    out = [f"{what} refused ({head}); nothing was applied:", ""]
    if player and any(_YOU.search(p.message) for p in problems):
        out += [f'("you" below means {player}: the messages are those of {player}\'s reply)', ""]
    lines = problem_lines(problems, text, whole="the orders as a whole:")
    return "\n".join(out + lines).rstrip("\n") + "\n"


_YOU = re.compile(r"\byou(rs?)?\b", re.IGNORECASE)


def problem_lines(
    problems: list[OrderProblem], text: str, whole: str = "the mail as a whole:"
) -> list[str]:
    """Every problem with its line as written, a mark under the offending
    text, and the fix; a blank line after each."""
    lines = source_lines(text)
    out: list[str] = []
    for problem in in_line_order(problems):
        if 0 < problem.line <= len(lines):
            shown = lines[problem.line - 1].replace("\t", " ")
            prefix = f"line {problem.line}: "
            out.append(prefix + shown)
            if problem.column > 0:
                width = max(1, len(problem.text))
                out.append(" " * (len(prefix) + problem.column - 1) + "^" * width)
        else:
            out.append(whole)
        out.append(f"  {problem.message}")
        if problem.expected and problem.expected not in problem.message:
            out.append(f"  expected: {problem.expected}")
        if problem.with_fix:
            out.append(f"  with that fix: {problem.with_fix}")
        out.append("")
    return out


# -- problems of validation (validate.py, setupcheck.py) ------------------------
def whole_problem(message: str, orders: Sequence[Order] = ()) -> OrderProblem:
    """A problem with the mail as a whole, shown on its first order when there is one."""
    if orders:
        first = orders[0]
        return OrderProblem(first.line, first.column, first.keyword, message)
    return OrderProblem(0, 0, "", message)


def problem_at(order: Order, message: str, item: int | None = None, text: str = "") -> OrderProblem:
    """A problem at ``order``'s keyword, or at its item number ``item``."""
    column = order.column if item is None else order.item_column(item)
    return OrderProblem(order.line, column, text or order.keyword, message)


def not_yours(state: GameState, territory: int) -> str:
    """The message for a territory of someone else (or no one)."""
    name = state.board.territories[territory].name
    owner = state.owner[territory]
    if owner < 0 or state.options.fog:  # under fog an owner may be out of sight: never named
        return f"{name} is not yours"
    return f"{name} is not yours; it is {state.players[owner].name}'s"
