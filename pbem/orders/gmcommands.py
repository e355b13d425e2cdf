"""The GM's commands by mail: PAUSE, RESUME, EXTEND hours, PROCESS, KICK
player, STATUS, one a line.

Every problem of the mail is found in one pass. Lines that plainly are not
commands (a greeting, a signature) are kept apart as ignored; a word close
to a command is a problem, so a typo never goes unseen. What each command
does is the service's (pbem.service.intake.gmmail, pbem.service.play.gm).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from pbem.orders.envelope import GAME, PASSWORD
from pbem.orders.lexer import is_signature, strip_comment

COMMANDS = ("PAUSE", "RESUME", "EXTEND", "PROCESS", "KICK", "STATUS")
SKIPPED = (GAME, PASSWORD)  # read by the routing and the authentication
MAX_EXTEND_HOURS = 24 * 366  # beyond a year is a typo (and past year 9999 an overflow)


@dataclass
class GmCommand:
    line: int
    word: str
    argument: str = ""


@dataclass(frozen=True)
class GmProblem:
    """A line that is no command the GM can run: its number, its text
    (without comment) and why."""

    line: int
    text: str
    message: str


@dataclass
class GmMail:
    commands: list[GmCommand] = field(default_factory=list)
    problems: list[GmProblem] = field(default_factory=list)
    ignored: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)


def parse_gm_mail(text: str) -> GmMail:
    """One command a line, up to a signature; every problem of the mail."""
    out = GmMail()
    for number, raw in enumerate(text.splitlines(), start=1):
        if is_signature(raw):
            break
        line = strip_comment(raw).strip()
        if not line:
            continue
        words = line.split()
        word = words[0].upper()
        if word in SKIPPED:
            continue
        rest = words[1:]
        if word in COMMANDS:
            problem = _argument_problem(word, rest)
            if problem:
                out.problems.append(GmProblem(number, line, problem))
            else:
                out.commands.append(GmCommand(number, word, " ".join(rest)))
            continue
        close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.7)
        if close and len(words) <= 3:
            message = f"no such command; did you mean {close[0]}?"
            out.problems.append(GmProblem(number, line, message))
        else:
            out.ignored.append((number, line))
    return out


def _argument_problem(word: str, rest: list[str]) -> str:
    if word == "EXTEND":
        try:
            hours = float(rest[0]) if len(rest) == 1 else 0.0
        except ValueError:
            hours = 0.0
        if not hours > 0:  # nan too
            return "EXTEND takes a positive number of hours, e.g. EXTEND 24"
        if hours > MAX_EXTEND_HOURS:
            return f"EXTEND takes at most {MAX_EXTEND_HOURS} hours (a year), e.g. EXTEND 24"
        return ""
    if word == "KICK":
        return "" if len(rest) == 1 else "KICK takes the name of one player, e.g. KICK bob"
    return f"{word} takes nothing after it" if rest else ""
