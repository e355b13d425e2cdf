"""One line of an order mail -> an order, a command or a header, by recursive
descent over its tokens (lexer.py). A line's first word picks its definition in
the grammar table; the functions below read the rest. A problem that leaves the
line unreadable stops that line (``Abort``); an unknown name does not, so one
line can report several. parser.py reads a whole mail with these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
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
    Absent,
    Check,
    Command,
    Confirm,
    Header,
    Help,
    History,
    Join,
    Order,
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

END_OF_LINE = "the end of the line"
_COMMA_OR_END = "a comma or the end of the line"
_ATTACK_AFTER = "WITH, UNTIL, MOVE, REROLL or the end of the line"
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
def _trade(p: LineParser) -> LineResult:
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


def _place(p: LineParser) -> LineResult:
    read = p.placements()
    return None if read is None else p.order(Place(read[0]), read[1])


def _attack(p: LineParser) -> LineResult:
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
            raise Abort
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


def _defend(p: LineParser) -> LineResult:
    p.expect_word(g.WITH, expected="WITH")
    dice, _ = p.number("1 or 2 dice", 1, 2, "a defender rolls 1 or 2 dice")
    p.accept_word(*g.DICE)
    p.expect_word(g.IN, expected="IN")
    territory, column = p.territory(after=END_OF_LINE)
    p.end()
    if p.problems or territory is None:
        return None
    return p.order(Defend(territory, dice), [column])


def _fortify(p: LineParser) -> LineResult:
    token = p.peek()
    amount = p.amount(allow_min=False)
    source, source_column = p.territory(after="->")
    p.expect_arrow()
    target, target_column = p.territory(after=END_OF_LINE)
    p.end()
    if source is not None and source == target:
        name = p.board.territories[source].name
        p.problem(source_column, name, f"{name} -> {name}: FORTIFY needs two different territories")
    if p.problems or source is None or target is None or token is None:
        return None
    return p.order(Fortify(source, target, amount), [token.column, source_column, target_column])


# ----------------------------------------------------------------- setup orders
def _claim(p: LineParser) -> LineResult:
    read = p.territory_list()
    return None if read is None else p.order(Claim(tuple(read[0])), read[1])


def _neutral(p: LineParser) -> LineResult:
    read = p.placements()
    return None if read is None else p.order(PlaceNeutral(read[0]), read[1])


def _hq(p: LineParser) -> LineResult:
    territory, column = p.territory(after=END_OF_LINE)
    p.end()
    if p.problems or territory is None:
        return None
    return p.order(Headquarters(territory), [column])


# --------------------------------------------------------------------- headers
def _game(p: LineParser) -> LineResult:
    token = p.word("the game's name")
    p.end()
    return HeaderLine("GAME", Header(token.text, p.line, token.column))


def _turn(p: LineParser) -> LineResult:
    n, token = p.number("the turn number", 1, None, "turns are numbered from 1")
    p.end()
    return HeaderLine("TURN", Header(n, p.line, token.column))


def _password(p: LineParser) -> LineResult:
    token = p.peek()
    if token is None:
        p.fail("a password")
    password = p.content[token.column - 1 :].strip()
    if any(c.isspace() for c in password):
        p.problem(token.column, password, "a password is one word, without blanks", "one word")
        return None
    return HeaderLine("PASSWORD", Header(password, p.line, token.column))


MAX_SALT = 200  # characters: a SALT is a phrase, not a document


def _salt(p: LineParser) -> LineResult:
    token = p.peek()
    if token is None:
        p.fail("some text of your choice (your share in the dice)")
    salt = " ".join(p.content[token.column - 1 :].split())
    if len(salt) > MAX_SALT:
        p.problem(token.column, salt[:20], f"a SALT is at most {MAX_SALT} characters long")
        return None
    return HeaderLine("SALT", Header(salt, p.line, token.column))


# -------------------------------------------------------------------- commands
def _plain(kind: type[Command]) -> Callable[[LineParser], LineResult]:
    def read(p: LineParser) -> LineResult:
        p.end()
        return kind(p.line, p.head.column, p.raw)

    return read


def _history(p: LineParser) -> LineResult:
    turn = None
    if p.peek() is not None:
        turn, _ = p.number("a turn number or the end of the line", 1, None, "turns start at 1")
        p.end()
    return History(p.line, p.head.column, p.raw, turn)


def _join(p: LineParser) -> LineResult:
    game = p.word("the game's name")
    p.expect_word(g.AS, expected="AS")
    player = p.word("your player name")
    p.end()
    return Join(p.line, p.head.column, p.raw, game.text, player.text)


def _confirm(p: LineParser) -> LineResult:
    token = p.word("the token from the mail")
    p.end()
    return Confirm(p.line, p.head.column, p.raw, token.text)


def _date(p: LineParser) -> tuple[date, Token]:
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
        raise Abort from None


def _absent(p: LineParser) -> LineResult:
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


def _press(p: LineParser) -> LineResult:
    p.expect_word(g.TO, expected="TO")
    token = p.word("a player's name or ALL")
    p.end()
    recipient = "ALL" if token.upper == "ALL" else token.text
    return PressStart(recipient, p.line, p.head.column, p.raw)


def _set(p: LineParser) -> LineResult:
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


HANDLERS: dict[str, Callable[[LineParser], LineResult]] = {
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
assert set(HANDLERS) == set(g.KEYWORDS), "every order of the grammar table has a reader"
