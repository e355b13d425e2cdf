"""One line of an order mail -> an order, a command or a header, by recursive
descent over its tokens (lexer.py). A line's first word picks its definition in
the grammar table (HANDLERS); the functions below read the rest with a LineParser
(linereader.py). parser.py reads a whole mail with these.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from pbem.orders import grammar as g
from pbem.orders.lexer import (
    WORD,
    Token,
)
from pbem.orders.linereader import (
    COMMA_OR_END,
    END_OF_LINE,
    Abort,
    HeaderLine,
    LineParser,
    LineResult,
    PressStart,
    not_adjacent,
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
    Resign,
    SetMail,
    SetTimezone,
    ShowMap,
    Status,
)
from pbem.rules.actions import (
    MOVE_MIN,
    UNTIL_CONQUERED,
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

_ATTACK_AFTER = "WITH, UNTIL, MOVE, REROLL, COMMANDER or the end of the line"


# ------------------------------------------------------------------ turn orders
def _trade(p: LineParser) -> LineResult:
    cards: list[int | None] = []
    columns: list[int] = []
    while True:
        card, column = p.card(after=COMMA_OR_END)
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
    dice, until, move, reroll, commander = 3, UNTIL_CONQUERED, MOVE_MIN, False, False
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
        elif clause == g.COMMANDER:
            commander = True
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
    attack = Attack(source, target, dice, until, move, reroll, commander)
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
    token = p.word("a player's name, ALL or TEAM")
    p.end()
    recipient = token.upper if token.upper in (g.ALL, g.TEAM) else token.text
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
