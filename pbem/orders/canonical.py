"""A short cut for order lines in canonical form (render.py), as replays read them.

The order log, records and receipts hold canonical lines only (``ATTACK Alaska ->
Kamchatka UNTIL 2 LEFT MOVE ALL BUT 1``): upper-case keywords, single blanks,
names exactly as on the map, defaults left out. A `pbem verify` reads hundreds of
distinct such lines once each, and the tokenizer plus the recursive descent of
lines.py are the larger part of reading them. Here one compiled pattern per order
reads them (docs/PERFORMANCE.md has what it saves).

The short cut gives an answer only where the full reading gives the same order
without a problem; for anything else (a problem, another spelling or order of
clauses, a name written otherwise) it answers None and the line is read by
lines.py as always. So grammar and messages are those of lines.py, and the line
cache of parser.py holds the same entries either way
(tests/orders/test_orders_canonical.py compares both on every line of the pinned records
and on variations of them).
"""

from __future__ import annotations

import re

from pbem.orders import grammar as g
from pbem.orders.model import WILD_CARD
from pbem.rules.actions import (
    MOVE_MIN,
    UNTIL_CONQUERED,
    Amount,
    AmountKind,
    Attack,
    Fortify,
    Place,
    Trade,
    Until,
    UntilKind,
)
from pbem.rules.board import Board

# What a line read before is kept as in parser.py: the action, the keyword's
# column and the columns of its items.
Known = tuple[object, int, tuple[int, ...]]

_N = r"([0-9]{1,6})"  # a number as lines.py reads it (ASCII digits, at most 6)
_AMOUNT = rf"(?:{_N}|ALL BUT {_N}|(ALL))"
_ATTACK = re.compile(
    rf"ATTACK (.+?) -> (.+?)(?: WITH ([1-3]) DICE)?(?: UNTIL {_N} (LEFT|ROLLS))?"
    rf"(?: MOVE {_AMOUNT})?( REROLL)?( COMMANDER)?"
)
_FORTIFY = re.compile(rf"FORTIFY {_AMOUNT} (.+?) -> (.+)")
_PLACE_ITEM = re.compile(rf"{_N} ([^,]+)")
_TRADE = re.compile(r"TRADE ([^,]+), ([^,]+), ([^,]+)")

# Words that mean something inside an order: a map name holding one of them (in any
# case) is read by the full parser, which knows where such a name stops.
_GRAMMAR_WORDS = frozenset(
    {g.WITH, *g.DICE, g.UNTIL, g.CONQUERED, g.LEFT, *g.ROLLS, g.MOVE, g.ALL, g.BUT, g.MIN}
    | {
        g.WILD,
        g.TO,
        g.AS,
        g.FROM,
        g.ENDPRESS,
        g.REROLL,
        g.COMMANDER,
        g.IN,
        g.ORDERS,
        g.END,
        *g.KEYWORDS,
    }
)


def _plain_name(name: str, board: Board, index: int) -> bool:
    """Does the full parser read ``name``, written exactly, as territory ``index``?"""
    words = name.split(" ")
    return (
        board.lookup(name) == index
        and name.isprintable()
        and not any(c in name for c in ",#>\u2192\t")
        and all(w and not w.isdigit() and w.upper() not in _GRAMMAR_WORDS for w in words)
    )


class CanonicalReader:
    """Reads the canonical lines of one board (built once per board)."""

    def __init__(self, board: Board) -> None:
        self.board = board
        self.index = {
            t.name: t.index for t in board.territories if _plain_name(t.name, board, t.index)
        }
        self.cards = {**self.index, "Wild": WILD_CARD}

    def read(self, content: str) -> Known | None:
        """The order of a canonical line as lines.py reads it, or None (read it fully)."""
        head = content[:6]
        if head == "ATTACK":
            return self._attack(content)
        if head == "PLACE ":
            return self._place(content)
        if head == "FORTIF":
            return self._fortify(content)
        if head == "TRADE ":
            return self._trade(content)
        return None

    def _attack(self, content: str) -> Known | None:
        m = _ATTACK.fullmatch(content)
        if m is None:
            return None
        index = self.index
        source, target = index.get(m[1]), index.get(m[2])
        if source is None or target is None or source == target:
            return None
        if not self.board.adjacent(source, target):
            return None
        until = UNTIL_CONQUERED
        if m[4] is not None:
            n = int(m[4])
            if n < 1:
                return None
            until = Until(UntilKind.LEFT if m[5] == g.LEFT else UntilKind.ROLLS, n)
        move = MOVE_MIN
        if m[6] is not None or m[7] is not None or m[8] is not None:
            amount = _amount(m[6], m[7])
            if amount is None:
                return None
            move = amount
        dice = int(m[3]) if m[3] is not None else 3
        attack = Attack(source, target, dice, until, move, m[9] is not None, m[10] is not None)
        return attack, 1, (m.start(1) + 1, m.start(2) + 1)

    def _fortify(self, content: str) -> Known | None:
        m = _FORTIFY.fullmatch(content)
        if m is None:
            return None
        source, target = self.index.get(m[4]), self.index.get(m[5])
        amount = _amount(m[1], m[2])
        if source is None or target is None or source == target or amount is None:
            return None
        return Fortify(source, target, amount), 1, (9, m.start(4) + 1, m.start(5) + 1)

    def _place(self, content: str) -> Known | None:
        index = self.index
        items: list[tuple[int, int]] = []
        columns: list[int] = []
        at = 6  # after "PLACE "
        for part in content[6:].split(", "):
            m = _PLACE_ITEM.fullmatch(part)
            if m is None:
                return None
            armies = int(m[1])
            territory = index.get(m[2])
            if territory is None or armies < 1:
                return None
            items.append((armies, territory))
            columns.append(at + m.start(2) + 1)
            at += len(part) + 2
        return Place(tuple(items)), 1, tuple(columns)

    def _trade(self, content: str) -> Known | None:
        m = _TRADE.fullmatch(content)
        if m is None:
            return None
        cards = self.cards
        found = (cards.get(m[1]), cards.get(m[2]), cards.get(m[3]))
        if None in found:
            return None
        a, b, c = found
        if a != WILD_CARD and (a == b or a == c) or b != WILD_CARD and b == c:
            return None  # a card named twice: a problem, told by lines.py
        return Trade(found), 1, (m.start(1) + 1, m.start(2) + 1, m.start(3) + 1)  # type: ignore[arg-type]


def _amount(n: str | None, all_but: str | None) -> Amount | None:
    """``n``, ``ALL BUT n`` or ``ALL`` (regex groups); None for a number below 1."""
    if n is not None:
        value = int(n)
        return Amount(AmountKind.N, value) if value >= 1 else None
    if all_but is not None:
        value = int(all_but)
        return Amount(AmountKind.ALL_BUT, value) if value >= 1 else None
    return Amount(AmountKind.ALL)
