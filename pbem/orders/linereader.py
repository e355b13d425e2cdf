"""The cursor over one line's tokens (``LineParser``): words, numbers, territory
and card names read with their problems, for the definitions of lines.py. A
problem that leaves the line unreadable stops it (``Abort``); an unknown name does
not, so one line can report several.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from pbem.orders import grammar as g
from pbem.orders.errors import (
    OrderProblem,
    closest,
    did_you_mean,
    keyword_candidates,
)
from pbem.orders.lexer import (
    ARROW,
    COMMA,
    MAX_DIGITS,
    NUMBER,
    WORD,
    Token,
)
from pbem.orders.model import (
    WILD_CARD,
    Command,
    Header,
    Order,
)
from pbem.rules.actions import (
    MOVE_MIN,
    Amount,
    AmountKind,
)
from pbem.rules.board import Board, fold_name

END_OF_LINE = "the end of the line"
COMMA_OR_END = "a comma or the end of the line"
_TERRITORY = "a territory name"
_CARD = "a card: a territory name or WILD"
_ARMIES = "a number of armies before each territory"


class Abort(Exception):
    """The rest of the line cannot be read; its problem is already recorded."""


@dataclass(frozen=True)
class HeaderLine:
    name: str
    header: Header


@dataclass(frozen=True)
class PressStart:
    recipient: str
    line: int
    column: int
    text: str


LineResult = Order | Command | HeaderLine | PressStart | None


def not_adjacent(board: Board, a: int, b: int) -> str:
    """The message for two territories that do not border each other."""
    first, second = board.territories[a], board.territories[b]
    borders = sorted(board.territories[n].name for n in first.neighbours)
    one_way = (
        f" (the border goes one way only, from {second.name} to {first.name})"
        if board.adjacent(b, a)
        else ""
    )
    return (
        f"{first.name} and {second.name} are not adjacent{one_way}; "
        f"{first.name} borders {', '.join(borders)}"
    )


class LineParser:
    """Reads one line's tokens; ``tokens[0]`` is the order's keyword."""

    def __init__(
        self,
        tokens: tuple[Token, ...],
        line: int,
        raw: str,
        content: str,
        board: Board,
        names: dict[str, str],
        longest_name: int,
    ) -> None:
        self.tokens = tokens
        self.pos = 1
        self.head = tokens[0]
        self.keyword = tokens[0].upper
        self.line = line
        self.raw = raw
        self.content = content
        self.board = board
        self.names = names
        self.longest_name = longest_name
        self.problems: list[OrderProblem] = []

    # -- reading ---------------------------------------------------------------
    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def accept_word(self, *words: str) -> Token | None:
        token = self.peek()
        if token is not None and token.kind == WORD and token.upper in words:
            return self.advance()
        return None

    def accept(self, kind: str) -> Token | None:
        token = self.peek()
        if token is not None and token.kind == kind:
            return self.advance()
        return None

    def expect_word(self, *words: str, expected: str) -> str:
        token = self.accept_word(*words)
        if token is None:
            self.fail(expected, words)
        return token.upper

    def expect_arrow(self) -> None:
        if self.accept(ARROW) is None:
            self.fail("->")

    def end(self) -> None:
        if self.peek() is not None:
            self.fail(END_OF_LINE)

    def list_continues(self) -> bool:
        """After an item of a comma-separated list: True when another follows."""
        if self.accept(COMMA) is not None:
            return True
        if self.peek() is None:
            return False
        self.fail(COMMA_OR_END)

    # -- problems --------------------------------------------------------------
    def problem(
        self, column: int, text: str, message: str, expected: str = "", suggestion: str = ""
    ) -> None:
        self.problems.append(OrderProblem(self.line, column, text, message, expected, suggestion))

    def fail(self, expected: str, suggest_from: tuple[str, ...] = ()) -> NoReturn:
        token = self.peek()
        if token is None:
            column = len(self.content.rstrip()) + 1
            message = f"{self.keyword}: the line ends where {expected} was expected"
            self.problem(column, "", message, expected)
        else:
            hints = []
            if suggest_from and token.kind == WORD:
                hints = closest(token.text, keyword_candidates(suggest_from), n=1)
            message = f"{token.text}: expected {expected}{did_you_mean(hints)}"
            self.problem(token.column, token.text, message, expected, "".join(hints))
        raise Abort

    # -- pieces ------------------------------------------------------------------
    def number(
        self,
        expected: str,
        low: int,
        high: int | None,
        out_of_range: str,
        suggest_from: tuple[str, ...] = (),
    ) -> tuple[int, Token]:
        token = self.peek()
        if token is None or token.kind != NUMBER:
            self.fail(expected, suggest_from)
        self.advance()
        if len(token.text) > MAX_DIGITS:
            message = f"{token.text}: a number has at most {MAX_DIGITS} digits"
            self.problem(token.column, token.text, message, expected)
            return low, token
        value = int(token.text)
        if value < low or (high is not None and value > high):
            self.problem(token.column, token.text, f"{value}: {out_of_range}", expected)
        return value, token

    def word(self, expected: str) -> Token:
        token = self.peek()
        if token is None or token.kind not in (WORD, NUMBER):
            self.fail(expected)
        return self.advance()

    def territory(self, after: str, stop: tuple[str, ...] = ()) -> tuple[int | None, int]:
        return self._name(self.board.lookup, after, stop, _TERRITORY, "territory", self.names)

    def card(self, after: str) -> tuple[int | None, int]:
        def lookup(text: str) -> int | None:
            return WILD_CARD if fold_name(text) == "wild" else self.board.lookup(text)

        return self._name(lookup, after, (), _CARD, "card", {**self.names, "wild": "Wild"})

    def _display(self, index: int) -> str:
        return "Wild" if index == WILD_CARD else self.board.territories[index].name

    def _span(self, tokens: list[Token] | tuple[Token, ...]) -> str:
        return self.content[tokens[0].column - 1 : tokens[-1].end - 1]

    def _name(
        self,
        lookup: Callable[[str], int | None],
        after: str,
        stop: tuple[str, ...],
        expected: str,
        noun: str,
        names: dict[str, str],
    ) -> tuple[int | None, int]:
        """Read a name: the words up to an arrow, a comma, the end or a ``stop`` word.

        Returns the index (None after recording a problem) and the name's column.
        """
        tokens: list[Token] = []
        while (token := self.peek()) is not None and token.kind in (WORD, NUMBER):
            if token.kind == WORD and token.upper in stop:
                break
            tokens.append(self.advance())
        if not tokens:
            self.fail(expected)
        column = tokens[0].column
        found = lookup(self._span(tokens))
        if found is not None:
            return found, column
        # A known name followed by something else: point at what follows it, and
        # read no further (the rest of the line was swallowed into the name).
        for cut in range(min(len(tokens) - 1, self.longest_name), 0, -1):
            prefix = lookup(self._span(tokens[:cut]))
            if prefix is not None:
                extra = tokens[cut]
                hints = closest(extra.text, keyword_candidates(stop), n=1) if stop else []
                message = (
                    f"{extra.text}: expected {after} after {self._display(prefix)}"
                    f"{did_you_mean(hints)}"
                )
                self.problem(extra.column, extra.text, message, after, "".join(hints))
                raise Abort
        first = tokens[0]
        if first.kind == NUMBER:
            message = f"{first.text}: a number where {expected} belongs"
            self.problem(first.column, first.text, message, expected)
            return None, column
        text = self._span(tokens)
        hints = closest(text, names)
        message = f"{text}: no such {noun}{did_you_mean(hints)}"
        self.problem(column, text, message, expected, hints[0] if hints else "")
        return None, column

    def placements(self) -> tuple[tuple[tuple[int, int], ...], list[int]] | None:
        """``n territory, n territory, ...`` (PLACE and NEUTRAL)."""
        items: list[tuple[int, int | None]] = []
        columns: list[int] = []
        while True:
            armies, _ = self.number(_ARMIES, 1, None, "armies to place must be at least 1")
            territory, column = self.territory(after=COMMA_OR_END)
            items.append((armies, territory))
            columns.append(column)
            if not self.list_continues():
                break
        if self.problems:
            return None
        return tuple((n, t) for n, t in items if t is not None), columns

    def territory_list(self) -> tuple[list[int], list[int]] | None:
        """``territory, territory, ...`` with no repeats (CLAIM)."""
        found: list[int] = []
        columns: list[int] = []
        if self.peek() is None:
            return found, columns
        while True:
            territory, column = self.territory(after=COMMA_OR_END)
            if territory is not None and territory in found:
                name = self.board.territories[territory].name
                self.problem(column, name, f"{name} is listed twice")
            elif territory is not None:
                found.append(territory)
                columns.append(column)
            if not self.list_continues():
                break
        return (found, columns) if not self.problems else None

    def amount(self, allow_min: bool) -> Amount:
        """``n``, ``ALL``, ``ALL BUT n`` and, after MOVE, ``MIN``."""
        expected = "a number, ALL, ALL BUT n or MIN" if allow_min else "a number, ALL or ALL BUT n"
        token = self.peek()
        if token is not None and token.kind == NUMBER:
            n, _ = self.number(expected, 1, None, "armies to move must be at least 1")
            return Amount(AmountKind.N, n)
        if self.accept_word(g.ALL) is not None:
            if self.accept_word(g.BUT) is not None:
                n, _ = self.number("a number after ALL BUT", 1, None, "ALL BUT needs at least 1")
                return Amount(AmountKind.ALL_BUT, n)
            return Amount(AmountKind.ALL)
        if allow_min and self.accept_word(g.MIN) is not None:
            return MOVE_MIN
        self.fail(expected, (g.ALL, g.MIN) if allow_min else (g.ALL,))

    def order(self, action: object, items: list[int]) -> Order:
        return Order(action, self.line, self.head.column, self.raw, tuple(items))  # type: ignore[arg-type]
