"""Mail text -> ParsedMail, by recursive descent over the tokens of each line.

The mail is read line by line (lexer.py). A line's first word picks its
definition in the grammar table; the functions below read the rest. A
problem that leaves the line unreadable stops that line; an unknown name
does not, so one line can report several. Every problem of the mail is
collected, and OrdersError is the only exception that leaves this module.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import NoReturn

from pbem.orders import grammar as g
from pbem.orders.errors import (
    OrderProblem,
    OrdersError,
    closest,
    did_you_mean,
    keyword_candidates,
    territory_candidates,
)
from pbem.orders.lexer import (
    ARROW,
    COMMA,
    MAX_DIGITS,
    NUMBER,
    WORD,
    Token,
    is_quoted,
    is_signature,
    source_lines,
    strip_comment,
    tokenize,
)
from pbem.orders.model import (
    WILD_CARD,
    Absent,
    Check,
    Command,
    Confirm,
    Header,
    Help,
    History,
    Join,
    Order,
    ParsedMail,
    Press,
    Resign,
    SetMail,
    SetTimezone,
    ShowMap,
    Status,
)
from pbem.rules.actions import (
    MOVE_MIN,
    UNTIL_CONQUERED,
    Amount,
    AmountKind,
    Attack,
    Claim,
    Defend,
    Fortify,
    Headquarters,
    Place,
    PlaceNeutral,
    Trade,
    Until,
    UntilKind,
)
from pbem.rules.board import Board, fold_name

MAX_CHARS = 20_000

_END = "the end of the line"
_COMMA_OR_END = "a comma or the end of the line"
_ATTACK_AFTER = "WITH, UNTIL, MOVE, REROLL or the end of the line"
_TERRITORY = "a territory name"
_CARD = "a card: a territory name or WILD"
_ARMIES = "a number of armies before each territory"


class _Abort(Exception):
    """The rest of the line cannot be read; its problem is already recorded."""


@dataclass(frozen=True)
class _HeaderLine:
    name: str
    header: Header


@dataclass(frozen=True)
class _PressStart:
    recipient: str
    line: int
    column: int
    text: str


_Result = Order | Command | _HeaderLine | _PressStart | None


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


class _LineParser:
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
            self.fail(_END)

    def list_continues(self) -> bool:
        """After an item of a comma-separated list: True when another follows."""
        if self.accept(COMMA) is not None:
            return True
        if self.peek() is None:
            return False
        self.fail(_COMMA_OR_END)

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
        raise _Abort

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
                raise _Abort
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
            territory, column = self.territory(after=_COMMA_OR_END)
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
            territory, column = self.territory(after=_COMMA_OR_END)
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


# ------------------------------------------------------------------ turn orders
def _trade(p: _LineParser) -> _Result:
    cards: list[int | None] = []
    columns: list[int] = []
    while True:
        card, column = p.card(after=_COMMA_OR_END)
        cards.append(card)
        columns.append(column)
        if not p.list_continues():
            break
    if len(cards) != 3 and not p.problems:
        count = f"{len(cards)} card" + ("" if len(cards) == 1 else "s")
        p.problem(p.head.column, p.head.text, f"TRADE names {count}; a set is 3 cards", "3 cards")
    for i, card in enumerate(cards):
        if card is not None and card != WILD_CARD and card in cards[:i]:
            name = p.board.territories[card].name
            p.problem(columns[i], name, f"the {name} card is named twice")
    if p.problems:
        return None
    return p.order(Trade(tuple(cards)), columns)  # type: ignore[arg-type]


def _place(p: _LineParser) -> _Result:
    read = p.placements()
    return None if read is None else p.order(Place(read[0]), read[1])


def _attack(p: _LineParser) -> _Result:
    source, source_column = p.territory(after="->")
    p.expect_arrow()
    target, target_column = p.territory(after=_ATTACK_AFTER, stop=g.ATTACK_CLAUSES)
    dice, until, move, reroll = 3, UNTIL_CONQUERED, MOVE_MIN, False
    seen: set[str] = set()
    while (token := p.peek()) is not None:
        clause = token.upper if token.kind == WORD else ""
        if clause not in g.ATTACK_CLAUSES:
            p.fail(_ATTACK_AFTER, g.ATTACK_CLAUSES)
        if clause in seen:
            p.problem(token.column, token.text, f"{clause} is given twice")
            raise _Abort
        seen.add(clause)
        p.advance()
        if clause == g.WITH:
            dice, _ = p.number("a number of dice", 1, 3, "an attacker rolls 1 to 3 dice")
            p.expect_word(*g.DICE, expected="DICE")
        elif clause == g.REROLL:
            reroll = True
        elif clause == g.UNTIL:
            if p.accept_word(g.CONQUERED) is not None:
                until = UNTIL_CONQUERED
            else:
                expected = "CONQUERED, n LEFT or n ROLLS"
                n, _ = p.number(expected, 1, None, "UNTIL needs at least 1", (g.CONQUERED,))
                unit = p.expect_word(g.LEFT, *g.ROLLS, expected="LEFT or ROLLS")
                until = Until(UntilKind.LEFT if unit == g.LEFT else UntilKind.ROLLS, n)
        else:
            move = p.amount(allow_min=True)
    if source is not None and target is not None:
        if source == target:
            name = p.board.territories[source].name
            p.problem(source_column, name, f"{name} -> {name}: a territory cannot attack itself")
        elif not p.board.adjacent(source, target):
            message = not_adjacent(p.board, source, target)
            p.problem(
                target_column, p.board.territories[target].name, message, "adjacent territories"
            )
    if p.problems or source is None or target is None:
        return None
    attack = Attack(source, target, dice, until, move, reroll)
    return p.order(attack, [source_column, target_column])


def _defend(p: _LineParser) -> _Result:
    p.expect_word(g.WITH, expected="WITH")
    dice, _ = p.number("1 or 2 dice", 1, 2, "a defender rolls 1 or 2 dice")
    p.accept_word(*g.DICE)
    p.expect_word(g.IN, expected="IN")
    territory, column = p.territory(after=_END)
    p.end()
    if p.problems or territory is None:
        return None
    return p.order(Defend(territory, dice), [column])


def _fortify(p: _LineParser) -> _Result:
    token = p.peek()
    amount = p.amount(allow_min=False)
    source, source_column = p.territory(after="->")
    p.expect_arrow()
    target, target_column = p.territory(after=_END)
    p.end()
    if source is not None and source == target:
        name = p.board.territories[source].name
        p.problem(source_column, name, f"{name} -> {name}: FORTIFY needs two different territories")
    if p.problems or source is None or target is None or token is None:
        return None
    return p.order(Fortify(source, target, amount), [token.column, source_column, target_column])


# ----------------------------------------------------------------- setup orders
def _claim(p: _LineParser) -> _Result:
    read = p.territory_list()
    return None if read is None else p.order(Claim(tuple(read[0])), read[1])


def _neutral(p: _LineParser) -> _Result:
    read = p.placements()
    return None if read is None else p.order(PlaceNeutral(read[0]), read[1])


def _hq(p: _LineParser) -> _Result:
    territory, column = p.territory(after=_END)
    p.end()
    if p.problems or territory is None:
        return None
    return p.order(Headquarters(territory), [column])


# --------------------------------------------------------------------- headers
def _game(p: _LineParser) -> _Result:
    token = p.word("the game's name")
    p.end()
    return _HeaderLine("GAME", Header(token.text, p.line, token.column))


def _turn(p: _LineParser) -> _Result:
    n, token = p.number("the turn number", 1, None, "turns are numbered from 1")
    p.end()
    return _HeaderLine("TURN", Header(n, p.line, token.column))


def _password(p: _LineParser) -> _Result:
    token = p.peek()
    if token is None:
        p.fail("a password")
    password = p.content[token.column - 1 :].strip()
    if any(c.isspace() for c in password):
        p.problem(token.column, password, "a password is one word, without blanks", "one word")
        return None
    return _HeaderLine("PASSWORD", Header(password, p.line, token.column))


MAX_SALT = 200  # characters: a SALT is a phrase, not a document


def _salt(p: _LineParser) -> _Result:
    token = p.peek()
    if token is None:
        p.fail("some text of your choice (your share in the dice)")
    salt = " ".join(p.content[token.column - 1 :].split())
    if len(salt) > MAX_SALT:
        p.problem(token.column, salt[:20], f"a SALT is at most {MAX_SALT} characters long")
        return None
    return _HeaderLine("SALT", Header(salt, p.line, token.column))


# -------------------------------------------------------------------- commands
def _plain(kind: type[Command]) -> Callable[[_LineParser], _Result]:
    def read(p: _LineParser) -> _Result:
        p.end()
        return kind(p.line, p.head.column, p.raw)

    return read


def _history(p: _LineParser) -> _Result:
    turn = None
    if p.peek() is not None:
        turn, _ = p.number("a turn number or the end of the line", 1, None, "turns start at 1")
        p.end()
    return History(p.line, p.head.column, p.raw, turn)


def _join(p: _LineParser) -> _Result:
    game = p.word("the game's name")
    p.expect_word(g.AS, expected="AS")
    player = p.word("your player name")
    p.end()
    return Join(p.line, p.head.column, p.raw, game.text, player.text)


def _confirm(p: _LineParser) -> _Result:
    token = p.word("the token from the mail")
    p.end()
    return Confirm(p.line, p.head.column, p.raw, token.text)


def _date(p: _LineParser) -> tuple[date, Token]:
    token = p.peek()
    expected = "a date written yyyy-mm-dd"
    if token is None:
        p.fail(expected)
    text = token.text
    shape = len(text) == 10 and text[4] == "-" and text[7] == "-"
    digits = (text[:4] + text[5:7] + text[8:]) if shape else ""
    if not (shape and digits.isascii() and digits.isdigit()):
        p.fail(expected)
    p.advance()
    try:
        return date(int(text[:4]), int(text[5:7]), int(text[8:])), token
    except ValueError:
        p.problem(token.column, text, f"{text}: no such date", expected)
        raise _Abort from None


def _absent(p: _LineParser) -> _Result:
    p.expect_word(g.FROM, expected="FROM")
    start, _ = _date(p)
    p.expect_word(g.TO, expected="TO")
    end, end_token = _date(p)
    p.end()
    if end < start:
        p.problem(
            end_token.column, end_token.text, f"{end_token.text}: the absence ends before it starts"
        )
        return None
    return Absent(p.line, p.head.column, p.raw, start, end)


def _press(p: _LineParser) -> _Result:
    p.expect_word(g.TO, expected="TO")
    token = p.word("a player's name or ALL")
    p.end()
    recipient = "ALL" if token.upper == "ALL" else token.text
    return _PressStart(recipient, p.line, p.head.column, p.raw)


def _set(p: _LineParser) -> _Result:
    what = p.expect_word("MAIL", "TIMEZONE", expected="MAIL or TIMEZONE")
    if what == "TIMEZONE":
        token = p.word("a time zone such as Europe/Paris")
        p.end()
        if not _known_zone(token.text):
            p.problem(
                token.column, token.text, f"{token.text}: no such time zone (e.g. Europe/Paris)"
            )
            return None
        return SetTimezone(p.line, p.head.column, p.raw, token.text)
    mode = p.expect_word(*g.MAIL_MODES, expected="EVERY, MYTURN or DIGEST")
    p.end()
    return SetMail(p.line, p.head.column, p.raw, mode.lower())


def _known_zone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


_HANDLERS: dict[str, Callable[[_LineParser], _Result]] = {
    "GAME": _game,
    "TURN": _turn,
    "PASSWORD": _password,
    "SALT": _salt,
    "TRADE": _trade,
    "PLACE": _place,
    "ATTACK": _attack,
    "FORTIFY": _fortify,
    "DEFEND": _defend,
    "CLAIM": _claim,
    "NEUTRAL": _neutral,
    "HQ": _hq,
    "STATUS": _plain(Status),
    "MAP": _plain(ShowMap),
    "HISTORY": _history,
    "HELP": _plain(Help),
    "CHECK": _plain(Check),
    "PRESS": _press,
    "RESIGN": _plain(Resign),
    "JOIN": _join,
    "CONFIRM": _confirm,
    "ABSENT": _absent,
    "SET": _set,
}
assert set(_HANDLERS) == set(g.KEYWORDS), "every order of the grammar table has a reader"


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

_NAMES: dict[int, tuple[Board, dict[str, str], int, _LineCache]] = {}


def _names_of(board: Board) -> tuple[dict[str, str], int, _LineCache]:
    """The board's folded names and aliases, the most words in one, and its line
    cache; kept per board (the board is kept too, so its id stays its own)."""
    cached = _NAMES.get(id(board))
    if cached is None or cached[0] is not board:
        names = territory_candidates(board)
        cached = (board, names, max(len(name.split()) for name in names), {})
        if len(_NAMES) > 64:
            _NAMES.clear()
        _NAMES[id(board)] = cached
    return cached[1], cached[2], cached[3]


_MARKERS = frozenset({g.END, g.ORDERS, g.ENDPRESS})
# Keywords long enough that a near miss is a misspelt order, not a word of prose.
_ATTEMPTED = [k for k in g.KEYWORDS if len(k) >= 4]


def _looks_like_an_order(tokens: tuple[Token, ...]) -> bool:
    """An order, or an attempt at one: a keyword, a misspelt keyword, an arrow."""
    head = tokens[0]
    if head.kind == WORD and (head.upper in _HANDLERS or head.upper in _MARKERS):
        return True
    if any(t.kind == ARROW for t in tokens):
        return True
    # A misspelt keyword keeps its first letter ("ATACK", "PLCE", "Helo"); a
    # word of prose that merely resembles one does not ("sent" is no ABSENT).
    word = head.text.rstrip(",.:;!").upper()
    near = difflib.get_close_matches(word, _ATTEMPTED, n=1, cutoff=0.75)
    return len(word) >= 4 and bool(near) and near[0][0] == word[0]


def _order_span(lines: list[str], start: int, known: _LineCache | None = None) -> tuple[int, int]:
    """The indices of the first and last line that look like orders (before a
    signature or END); lines outside the span that are not orders are prose.
    ``known``: order lines read before, which are orders without a look at them."""
    first, last = len(lines), -1
    for index in range(start, len(lines)):
        raw = lines[index]
        if is_signature(raw):
            break
        if is_quoted(raw):
            continue
        content = strip_comment(raw)
        if known is not None and content in known:
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
        self.names, self.longest_name, self.lines = _names_of(board)
        self.mail = ParsedMail()
        self.problems: list[OrderProblem] = []
        self.header_lines: dict[str, int] = {}

    def read(self, lines: list[str]) -> ParsedMail:
        press: _PressStart | None = None
        body: list[str] = []
        start = orders_start(lines)
        first, last = _order_span(lines, start, self.lines)
        for index in range(start, len(lines)):
            raw = lines[index]
            if press is not None:
                if raw.strip().upper() == g.ENDPRESS:
                    self.mail.press.append(
                        Press(
                            press.recipient, "\n".join(body), press.line, press.column, press.text
                        )
                    )
                    press, body = None, []
                else:
                    body.append(raw)
                continue
            if is_quoted(raw):
                continue
            if is_signature(raw):
                break
            content = strip_comment(raw)
            known = self.lines.get(content)  # an order line read before (never END & co.)
            if known is not None:
                action, column, items = known
                self.mail.orders.append(Order(action, index + 1, column, raw, items))  # type: ignore[arg-type]
                continue
            tokens = tokenize(content)
            if not tokens:
                continue
            head = tokens[0]
            keyword = head.upper if head.kind == WORD else ""
            if keyword == g.END:
                if len(tokens) > 1:
                    extra = tokens[1]
                    self._problem(
                        index + 1, extra, f"{extra.text}: expected {_END} after END", _END
                    )
                break
            if keyword == g.ORDERS and len(tokens) == 1:
                continue
            if keyword == g.ENDPRESS:
                self._problem(index + 1, head, "ENDPRESS without a PRESS line before it")
                continue
            handler = _HANDLERS.get(keyword)
            if handler is None:
                if not first <= index <= last:  # a greeting or a sign-off: not an order
                    self.mail.ignored.append((index + 1, raw.strip()))
                else:
                    self._unknown(index + 1, head)
                continue
            parser = _LineParser(
                tokens, index + 1, raw, content, self.board, self.names, self.longest_name
            )
            try:
                result = handler(parser)
            except _Abort:
                result = None
            if parser.problems:
                self.problems += parser.problems
                continue
            if isinstance(result, _PressStart):
                press = result
            else:
                if isinstance(result, Order):
                    if len(self.lines) >= _LINES_KEPT:
                        self.lines.clear()
                    self.lines[content] = (result.action, result.column, result.items)
                self._record(result)
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
        return self.mail

    def _problem(self, line: int, token: Token, message: str, expected: str = "") -> None:
        self.problems.append(OrderProblem(line, token.column, token.text, message, expected))

    def _unknown(self, line: int, head: Token) -> None:
        hints = closest(head.text, keyword_candidates(g.KEYWORDS), n=1)
        expected = "an order (HELP lists them; a greeting goes above a line ORDERS)"
        message = f"{head.text}: no such order{did_you_mean(hints)}"
        self.problems.append(
            OrderProblem(line, head.column, head.text, message, expected, "".join(hints))
        )

    def _record(self, result: _Result) -> None:
        mail = self.mail
        if isinstance(result, Order):
            mail.orders.append(result)
        elif isinstance(result, _HeaderLine):
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


def parse_orders(text: str, board: Board, *, max_chars: int = MAX_CHARS) -> ParsedMail:
    """Read a mail body; raise OrdersError listing every problem in it."""
    if not isinstance(text, str):
        raise OrdersError([OrderProblem(0, 0, "", "the orders must be text")])
    if len(text) > max_chars:
        message = (
            f"the mail is {len(text)} characters long; orders are read only from mails "
            f"of at most {max_chars} characters"
        )
        raise OrdersError([OrderProblem(0, 0, "", message, f"at most {max_chars} characters")])
    reader = _MailReader(board)
    mail = reader.read(source_lines(text))
    if reader.problems:
        raise OrdersError(reader.problems, partial=mail)
    return mail
