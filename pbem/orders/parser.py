"""Mail text -> ParsedMail: where the orders start and end (greetings and
signatures around them are prose), each line read by lines.py (a line seen
before on the same board comes from a cache), headers, press and commands
gathered. Every problem of the mail is collected, and OrdersError is the
only exception that leaves this module.
"""

from __future__ import annotations

import difflib

from pbem.orders import grammar as g
from pbem.orders.canonical import CanonicalReader
from pbem.orders.errors import (
    OrderProblem,
    OrdersError,
    closest,
    did_you_mean,
    in_line_order,
    keyword_candidates,
    territory_candidates,
)
from pbem.orders.lexer import (
    ARROW,
    WORD,
    Token,
    is_quoted,
    is_signature,
    source_lines,
    strip_comment,
    tokenize,
)
from pbem.orders.linereader import (
    END_OF_LINE,
    Abort,
    HeaderLine,
    LineParser,
    LineResult,
    PressStart,
)
from pbem.orders.lines import HANDLERS
from pbem.orders.model import (
    Check,
    Command,
    Order,
    ParsedMail,
    Press,
)
from pbem.rules.board import Board

MAX_CHARS = 20_000


# ------------------------------------------------------------------ the mail
def orders_start(lines: list[str]) -> int:
    """Index of the first line to read: after a line ORDERS, else the first line."""
    for i, line in enumerate(lines):
        if is_quoted(line) or "orders" not in line.lower():
            continue
        tokens = tokenize(strip_comment(line))
        if len(tokens) == 1 and tokens[0].upper == g.ORDERS:
            return i + 1
    return 0


# An order line read without a problem, by its text (comment removed): the action,
# the keyword's column and the items' columns. Reading a line depends only on its
# text and the board, and actions are values, so a line seen before (replays see
# the same ATTACK lines over and over) is not read again.
_LineCache = dict[str, tuple[object, int, tuple[int, ...]]]
_LINES_KEPT = 8192  # per board; the cache starts afresh when it is full

_NAMES: dict[int, tuple[Board, dict[str, str], int, _LineCache, CanonicalReader]] = {}


def _names_of(board: Board) -> tuple[dict[str, str], int, _LineCache, CanonicalReader]:
    """The board's folded names and aliases, the most words in one, its line cache
    and its reader of canonical lines; kept per board (the board is kept too, so its
    id stays its own)."""
    cached = _NAMES.get(id(board))
    if cached is None or cached[0] is not board:
        names = territory_candidates(board)
        longest = max(len(name.split()) for name in names)
        cached = (board, names, longest, {}, CanonicalReader(board))
        if len(_NAMES) > 64:
            _NAMES.clear()
        _NAMES[id(board)] = cached
    return cached[1], cached[2], cached[3], cached[4]


def _known_line(
    content: str, known: _LineCache, canonical: CanonicalReader
) -> tuple[object, int, tuple[int, ...]] | None:
    """The order line ``content`` as read before, or read now by the short cut for
    canonical lines (then kept); None: the line must be read in full."""
    entry = known.get(content)
    if entry is None:
        entry = canonical.read(content)
        if entry is not None:
            if len(known) >= _LINES_KEPT:
                known.clear()
            known[content] = entry
    return entry


_MARKERS = frozenset({g.END, g.ORDERS, g.ENDPRESS})
# Keywords long enough that a near miss is a misspelt order, not a word of prose.
_ATTEMPTED = [k for k in g.KEYWORDS if len(k) >= 4]
# The keywords a misspelt one is told to be: orders only (grammar.SUGGESTED_KEYWORDS).
_SUGGESTED = keyword_candidates(g.SUGGESTED_KEYWORDS)


def _looks_like_an_order(tokens: tuple[Token, ...]) -> bool:
    """An order, or an attempt at one: a keyword, a misspelt keyword, an arrow."""
    head = tokens[0]
    if head.kind == WORD and (head.upper in HANDLERS or head.upper in _MARKERS):
        return True
    if any(t.kind == ARROW for t in tokens):
        return True
    # A misspelt keyword keeps its first letter ("ATACK", "PLCE", "Helo"); a
    # word of prose that merely resembles one does not ("sent" is no ABSENT).
    word = head.text.rstrip(",.:;!").upper()
    near = difflib.get_close_matches(word, _ATTEMPTED, n=1, cutoff=0.75)
    return len(word) >= 4 and bool(near) and near[0][0] == word[0]


def _order_span(
    lines: list[str],
    start: int,
    known: _LineCache | None = None,
    canonical: CanonicalReader | None = None,
) -> tuple[int, int]:
    """The indices of the first and last line that look like orders (before a
    signature or END); lines outside the span that are not orders are prose.
    ``known``: order lines read before, which are orders without a look at them
    (``canonical``: with the lines the short cut reads)."""
    first, last = len(lines), -1
    for index in range(start, len(lines)):
        raw = lines[index]
        if is_signature(raw):
            break
        if is_quoted(raw):
            continue
        content = strip_comment(raw)
        if known is not None and (
            content in known
            or (canonical is not None and _known_line(content, known, canonical) is not None)
        ):
            first, last = min(first, index), index
            continue
        tokens = tokenize(content)
        if not tokens:
            continue
        if tokens[0].upper == g.END and tokens[0].kind == WORD:
            break
        if _looks_like_an_order(tokens):
            first, last = min(first, index), index
    return first, last


class _MailReader:
    def __init__(self, board: Board) -> None:
        self.board = board
        self.names, self.longest_name, self.lines, self.canonical = _names_of(board)
        self.mail = ParsedMail()
        self.problems: list[OrderProblem] = []
        self.header_lines: dict[str, int] = {}
        self.press: PressStart | None = None  # the PRESS being read, to its ENDPRESS
        self.body: list[str] = []  # its lines so far
        self.unread: list[tuple[int, str]] = []  # (line, the order it may have been)

    def read(self, lines: list[str]) -> ParsedMail:
        """The whole mail: the span of orders, then each line in turn."""
        start = orders_start(lines)
        first, last = _order_span(lines, start, self.lines, self.canonical)
        for index in range(start, len(lines)):
            raw = lines[index]
            if self.press is not None:
                self._press_line(raw)
                continue
            if is_quoted(raw):
                continue
            if is_signature(raw):
                break
            if not self._line(index, raw, first <= index <= last):
                break  # END
        press = self.press
        if press is not None:
            self.problems.append(
                OrderProblem(
                    press.line,
                    press.column,
                    "PRESS",
                    "PRESS without a line ENDPRESS after the message",
                    "a line ENDPRESS",
                )
            )
            # the rest of the mail went unread: any order
            self.unread += [(press.line, keyword) for keyword in g.SUGGESTED_KEYWORDS]
        self.mail.unread = tuple(self.unread)
        return self.mail

    def _press_line(self, raw: str) -> None:
        """A line of a press message, or the ENDPRESS that ends it."""
        press = self.press
        assert press is not None
        if raw.strip().upper() == g.ENDPRESS:
            self.mail.press.append(
                Press(press.recipient, "\n".join(self.body), press.line, press.column, press.text)
            )
            self.press, self.body = None, []
        else:
            self.body.append(raw)

    def _line(self, index: int, raw: str, in_span: bool) -> bool:
        """Read line ``index`` (not quoted, no signature); False at END."""
        content = strip_comment(raw)
        # an order line read before or in canonical form (never END & co.)
        known = _known_line(content, self.lines, self.canonical)
        if known is not None:
            action, column, items = known
            self.mail.orders.append(Order(action, index + 1, column, raw, items))  # type: ignore[arg-type]
            return True
        tokens = tokenize(content)
        if not tokens:
            return True
        head = tokens[0]
        keyword = head.upper if head.kind == WORD else ""
        if keyword == g.END:
            if len(tokens) > 1:
                extra = tokens[1]
                message = f"{extra.text}: expected {END_OF_LINE} after END"
                self._problem(index + 1, extra, message, END_OF_LINE)
            return False
        if keyword == g.ORDERS and len(tokens) == 1:
            return True
        if keyword == g.ENDPRESS:
            self._problem(index + 1, head, "ENDPRESS without a PRESS line before it")
            return True
        handler = HANDLERS.get(keyword)
        if handler is None:
            if not in_span:  # a greeting or a sign-off: not an order
                self.mail.ignored.append((index + 1, raw.strip()))
            else:
                self._unknown(index + 1, head)
            return True
        parser = LineParser(
            tokens, index + 1, raw, content, self.board, self.names, self.longest_name
        )
        try:
            result = handler(parser)
        except Abort:
            result = None
        if parser.problems:
            self.problems += parser.problems
            self.unread.append((index + 1, keyword))
        elif isinstance(result, PressStart):
            self.press = result
        else:
            if isinstance(result, Order):
                if len(self.lines) >= _LINES_KEPT:
                    self.lines.clear()
                self.lines[content] = (result.action, result.column, result.items)
            self._record(result)
        return True

    def only_orders(self, lines: list[str]) -> ParsedMail | None:
        """The mail when every line is empty or an order line read before or in
        canonical form (the order log, a record: what replays read), else None.
        ``read`` gives the same mail for these: no ORDERS line, no prose, no comment,
        so every line is in the span of orders and is an order."""
        known, canonical = self.lines, self.canonical
        orders: list[Order] = []
        for index, raw in enumerate(lines):
            if not raw:
                continue
            if "#" in raw:
                return None
            entry = known.get(raw) or _known_line(raw, known, canonical)
            if entry is None:
                return None
            orders.append(Order(entry[0], index + 1, entry[1], raw, entry[2]))  # type: ignore[arg-type]
        self.mail.orders = orders
        return self.mail

    def _problem(self, line: int, token: Token, message: str, expected: str = "") -> None:
        self.problems.append(OrderProblem(line, token.column, token.text, message, expected))

    def _unknown(self, line: int, head: Token) -> None:
        # Only orders are proposed: "Hello!" is never told to be HELP (or CHECK,
        # JOIN, ...), which would turn a mail of orders into a request.
        hints = closest(head.text, _SUGGESTED, n=1)
        self.unread.append((line, "".join(hints)))
        expected = "an order (HELP lists them; a greeting goes above a line ORDERS)"
        message = f"{head.text}: no such order{did_you_mean(hints)}"
        self.problems.append(
            OrderProblem(line, head.column, head.text, message, expected, "".join(hints))
        )

    def _record(self, result: LineResult) -> None:
        mail = self.mail
        if isinstance(result, Order):
            mail.orders.append(result)
        elif isinstance(result, HeaderLine):
            header = result.header
            first = self.header_lines.get(result.name)
            if first is not None:
                message = f"{result.name} is given twice (first on line {first})"
                self.problems.append(
                    OrderProblem(header.line, header.column, str(header.value), message)
                )
            elif mail.orders and result.name != "SALT":  # a SALT may stand anywhere
                message = f"{result.name} must come before the orders"
                self.problems.append(
                    OrderProblem(header.line, header.column, str(header.value), message)
                )
            else:
                self.header_lines[result.name] = header.line
                setattr(mail, result.name.lower(), header)
        elif isinstance(result, Command):
            mail.commands.append(result)
            if isinstance(result, Check):
                mail.check = True


def parse_orders(
    text: str | object, board: Board, *, max_chars: int = MAX_CHARS, cut: bool = False
) -> ParsedMail:
    """Read a mail body; raise OrdersError listing every problem in it.

    ``cut``: the mail layer cut ``text`` to its limits, so the mail is longer
    than ``text`` and its length is not known here.

    (``text`` is checked here, not by its annotation: compiled, a declared str would
    refuse bytes with a bare TypeError before the problem is named.)"""
    if not isinstance(text, str):
        raise OrdersError([OrderProblem(0, 0, "", "the orders must be text")])
    if cut or len(text) > max_chars:
        length = f"longer than {len(text)} characters" if cut else f"{len(text)} characters long"
        message = (
            f"the mail is {length}; orders are read only from mails "
            f"of at most {max_chars} characters"
        )
        raise OrdersError([OrderProblem(0, 0, "", message, f"at most {max_chars} characters")])
    reader = _MailReader(board)
    lines = source_lines(text)
    quick = reader.only_orders(lines)
    if quick is not None:
        return quick
    mail = reader.read(lines)
    if reader.problems:
        raise OrdersError(in_line_order(reader.problems), partial=mail)
    return mail
