"""The lexical rules of ORDERS.md: lines, comments, quoted text, tokens.

A mail is read line by line; each line of orders becomes a list of tokens
(words, numbers, ``->`` and ``,``), each knowing its column so that every
problem can point at the text that caused it. Territory names are runs of
words, so the lexer never decides where a name ends: the parser does.
"""

from __future__ import annotations

import re
from functools import lru_cache

WORD = "word"
NUMBER = "number"
ARROW = "arrow"
COMMA = "comma"

ARROWS = ("->", "\u2192")  # "->", and the arrow some mail programs turn it into
COMMENT = "#"
QUOTE = ">"
SIGNATURE = "--"  # a line "-- " (trailing blanks are often lost in transit)
MAX_DIGITS = 6  # numbers are at most 999999: nothing in a game needs more


class Token:
    """One token of a line. Treated as immutable: ``tokenize`` shares the tokens of a
    line among all the mails that contain it (a slotted class, not a frozen
    dataclass, because a frozen dataclass costs an ``object.__setattr__`` per field)."""

    __slots__ = ("kind", "text", "column", "end", "upper")

    kind: str  # WORD | NUMBER | ARROW | COMMA
    text: str  # as written
    column: int  # 1-based column of the first character
    end: int  # 1-based column just after the last character
    upper: str  # the text as a keyword is compared (keywords are ASCII, case-insensitive)

    def __init__(self, kind: str, text: str, column: int, end: int) -> None:
        self.kind = kind
        self.text = text
        self.column = column
        self.end = end
        self.upper = text.upper() if text.isascii() else ""

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.column}, {self.end})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Token):
            return NotImplemented
        return (self.kind, self.text, self.column, self.end) == (
            other.kind,
            other.text,
            other.column,
            other.end,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.text, self.column, self.end))


def source_lines(text: str) -> list[str]:
    """The mail's lines, numbered from 1 by their position in this list plus one.

    Only line feeds and carriage returns end a line, so the numbers match what
    the player sees in a mail program (str.splitlines also splits on form
    feeds and other separators).
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def is_quoted(line: str) -> bool:
    return line.lstrip().startswith(QUOTE)


def is_signature(line: str) -> bool:
    return line.rstrip() == SIGNATURE


def strip_comment(line: str) -> str:
    """The line without its ``#`` comment (columns of what is left are unchanged)."""
    cut = line.find(COMMENT)
    return line if cut < 0 else line[:cut]


# One pass over a line: an arrow, a comma, or a word (a run of anything but
# blanks, commas and arrows). Replays read thousands of lines, so this is one
# compiled pattern rather than a loop over characters; a word is taken in runs
# without a '-', and a '-' only where no '>' follows (no lookahead per character).
_TOKEN = re.compile(r"(->|\u2192)|(,)|((?:[^\s,\-\u2192]++|-(?!>))+)")


def tokenize(line: str) -> tuple[Token, ...]:
    """Split one line (comment already removed) into tokens.

    A word runs until a blank, a comma or an arrow, so ``Alaska->Kamchatka``
    and ``North-Africa`` both read as a person means them. Orders repeat from
    mail to mail (a replay reads the same ATTACK line many times), so the
    tokens of recent lines are kept and shared.
    """
    return _tokenize(line)


@lru_cache(maxsize=4096)
def _tokenize(line: str) -> tuple[Token, ...]:
    tokens: list[Token] = []
    append = tokens.append
    for match in _TOKEN.finditer(line):
        arrow, comma, word = match.groups()
        start, end = match.span()
        if word is not None:
            kind = NUMBER if word.isascii() and word.isdigit() else WORD
            append(Token(kind, word, start + 1, end + 1))
        elif arrow is not None:
            append(Token(ARROW, arrow, start + 1, end + 1))
        else:
            append(Token(COMMA, comma, start + 1, end + 1))
    return tuple(tokens)
