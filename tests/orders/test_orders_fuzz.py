"""Fuzzing the parser: whatever the text, it returns a ParsedMail or raises OrdersError.

Hypothesis' deadline (per example) guards against a parser that hangs or
goes quadratic on a bounded input.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.maps import builtin_map
from pbem.orders import OrdersError, ParsedMail, format_problems, parse_orders
from pbem.orders.lexer import source_lines

BOARD = builtin_map("classic")

VALID = """Hello!
ORDERS
GAME world-1
TURN 14
PASSWORD correct-horse-battery
TRADE Alaska, Ontario, Wild
PLACE 2 Ontario, 1 Quebec
ATTACK Kamchatka -> Japan UNTIL 4 LEFT MOVE ALL
ATTACK Ontario -> Quebec WITH 2 DICE UNTIL 3 ROLLS
FORTIFY ALL BUT 2 Ontario -> Quebec   # comment
CLAIM Alaska, Eastern United States
HISTORY 3
PRESS TO carol
hello
ENDPRESS
ABSENT FROM 2025-01-01 TO 2025-01-31
--
Carol
"""

VOCABULARY = [
    "TRADE", "PLACE", "ATTACK", "FORTIFY", "CLAIM", "NEUTRAL", "HQ", "GAME", "TURN",
    "PASSWORD", "STATUS", "MAP", "HISTORY", "HELP", "CHECK", "PRESS", "ENDPRESS", "RESIGN",
    "JOIN", "AS", "CONFIRM", "ABSENT", "FROM", "TO", "ALL", "BUT", "MIN", "WITH", "DICE",
    "UNTIL", "LEFT", "ROLLS", "MOVE", "CONQUERED", "WILD", "END", "ORDERS", "->", "\u2192",
    ",", "#", ">", "-- ", "Alaska", "Kamchatka", "Western United States", "north-africa",
    "W US", "0", "1", "3", "42", "999999", "1234567", "9" * 5000, "2025-02-30",
    "2025-01-01", "\u00e9", "\u0661", "\u00b2", "\ufb00", "\x00", "\t", "\u2028", "\r",
]  # fmt: skip
SEPARATORS = [" ", " ", "  ", "\n", "\r\n", ",", "\t"]

fast = settings(
    max_examples=200,
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def parse_or_problems(text: str) -> ParsedMail | None:
    """Parse; on OrdersError check that each problem points inside the mail."""
    try:
        return parse_orders(text, BOARD)
    except OrdersError as error:
        lines = source_lines(text)
        assert error.problems
        for problem in error.problems:
            assert 0 <= problem.line <= len(lines)
            assert problem.column >= 0
            assert problem.message
        assert format_problems(error.problems, text)
        return None


@fast
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    parse_or_problems(text)


@fast
@given(st.lists(st.tuples(st.sampled_from(VOCABULARY), st.sampled_from(SEPARATORS)), max_size=60))
def test_token_soup(parts: list[tuple[str, str]]) -> None:
    parse_or_problems("".join(word + sep for word, sep in parts))


@fast
@given(st.data())
def test_mutations_of_valid_orders(data: st.DataObject) -> None:
    assert parse_or_problems(VALID) is not None
    text = VALID
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(text)))
        kind = data.draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if kind == "delete":
            end = data.draw(st.integers(at, min(len(text), at + 12)))
            text = text[:at] + text[end:]
        elif kind == "insert":
            text = text[:at] + data.draw(st.sampled_from(VOCABULARY + SEPARATORS)) + text[at:]
        elif kind == "replace":
            text = text[:at] + data.draw(st.text(max_size=3)) + text[at + 1 :]
        else:
            end = data.draw(st.integers(at, min(len(text), at + 40)))
            text = text[:end] + text[at:end] + text[end:]
    parse_or_problems(text)


def test_the_longest_mail_read_is_quick_to_refuse() -> None:
    """A 20,000-character name: read once, no quadratic search for a shorter one."""
    text = "PLACE 1 " + "Alaska " * 2855
    assert len(text) < 20_000
    with pytest.raises(OrdersError) as caught:
        parse_orders(text, BOARD)
    assert [p.message for p in caught.value.problems] == [
        "Alaska: expected a comma or the end of the line after Alaska"
    ]
