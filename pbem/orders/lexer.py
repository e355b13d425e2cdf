"""The lexical rules of ORDERS.md: lines, comments, quoted text, tokens.

A mail is read line by line; each line of orders becomes a list of tokens
(words, numbers, ``->`` and ``,``), each knowing its column so that every
problem can point at the text that caused it. Territory names are runs of
words, so the lexer never decides where a name ends: the parser does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WORD = "word"
NUMBER = "number"
ARROW = "arrow"
COMMA = "comma"

ARROWS = ("->", "\u2192")  # "->", and the arrow some mail programs turn it into
COMMENT = "#"
QUOTE = ">"
SIGNATURE = "--"  # a line "-- " (trailing blanks are often lost in transit)
MAX_DIGITS = 6  # numbers are at most 999999: nothing in a game needs more


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # WORD | NUMBER | ARROW | COMMA
    text: str  # as written
    column: int  # 1-based column of the first character
    end: int  # 1-based column just after the last character

    @property
    def upper(self) -> str:
        """The text as a keyword is compared (keywords are ASCII, case-insensitive)."""
        return self.text.upper() if self.text.isascii() else ""


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
# compiled pattern rather than a loop over characters.
_TOKEN = re.compile(r"(->|\u2192)|(,)|((?:(?!->|\u2192)[^\s,])+)")


def tokenize(line: str) -> list[Token]:
    """Split one line (comment already removed) into tokens.

    A word runs until a blank, a comma or an arrow, so ``Alaska->Kamchatka``
    and ``North-Africa`` both read as a person means them.
    """
    tokens: list[Token] = []
    for match in _TOKEN.finditer(line):
        arrow, comma, word = match.groups()
        start, end = match.start() + 1, match.end() + 1
        if arrow is not None:
            tokens.append(Token(ARROW, arrow, start, end))
        elif comma is not None:
            tokens.append(Token(COMMA, comma, start, end))
        else:
            kind = NUMBER if word.isascii() and word.isdigit() else WORD
            tokens.append(Token(kind, word, start, end))
    return tokens
