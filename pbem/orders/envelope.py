"""What a mail says about itself before its orders are read: the games it
names (GAME and JOIN lines), its PASSWORD, its JOIN or CONFIRM line.

These lines decide where a mail goes and whether its sender is who they
say, so they are read leniently, each alone: a mail whose orders have
errors is still routed and authenticated, and so answered with them.
"""

from __future__ import annotations

from pbem.orders.errors import OrdersError
from pbem.orders.lexer import strip_comment
from pbem.orders.model import Command
from pbem.orders.parser import parse_orders
from pbem.rules.board import Board

PASSWORD = "PASSWORD"
GAME = "GAME"
JOIN = "JOIN"
CONFIRM = "CONFIRM"


def _words(line: str) -> list[str]:
    """The words of a line without its comment."""
    return strip_comment(line).split()


def password_of(text: str) -> str | None:
    """The word after the first line ``PASSWORD word`` (a comment after it
    allowed), or None."""
    for line in text.splitlines():
        words = _words(line)
        if len(words) == 2 and words[0].upper() == PASSWORD:
            return words[1]
    return None


def asks_check(text: str) -> bool:
    """A line of the mail (before a signature line or END, quoted lines aside)
    says CHECK: even a mail refused for its problems asked only for a check."""
    for line in text.splitlines():
        if line.rstrip() == "--" or line.strip().upper() == "END":
            return False
        if not line.lstrip().startswith(">") and [w.upper() for w in _words(line)] == ["CHECK"]:
            return True
    return False


def only_help(text: str) -> bool:
    """The mail says HELP and nothing else (quoted lines, comments, blank lines
    and whatever follows a signature line or END aside): a request anyone may
    make, read before the mail's game or sender is known."""
    said = []
    for line in text.splitlines():
        if line.rstrip() == "--" or line.strip().upper() == "END":
            break
        if line.lstrip().startswith(">"):
            continue
        said += _words(line)
        if len(said) > 1:
            return False
    return [w.upper() for w in said] == ["HELP"]


def named_games(text: str, most: int) -> list[str]:
    """The names the first ``most`` lines ``GAME name`` or ``JOIN name ...``
    give, in the mail's order (the words as written, a comment included: a
    name is matched whole, so a line with more than a name names no game)."""
    names: list[str] = []
    for line in text.splitlines():
        words = line.split(maxsplit=2)
        if (
            len(words) >= 2
            and words[0].upper() == JOIN
            or (len(words) == 2 and words[0].upper() == GAME)
        ):
            names.append(words[1])
            if len(names) == most:
                break
    return names


def join_commands(text: str, board: Board) -> list[Command]:
    """The commands of the first JOIN or CONFIRM line of a mail, read alone:
    whatever else the mail says (a greeting, a signature, the same line
    twice) neither spoils it nor joins twice. No commands for a line that
    does not read (the service answers how to join)."""
    for line in text.splitlines():
        words = _words(line)
        if words and words[0].upper() in (JOIN, CONFIRM):
            try:
                return parse_orders(line, board).commands
            except OrdersError:
                return []
    return []
