"""Lines read before are taken from the parser's line cache: the orders must be the
ones a first reading gives, with this mail's line numbers and text."""

from __future__ import annotations

import pytest

from pbem.maps import builtin_map
from pbem.orders import OrdersError, parse_orders, parser
from pbem.orders.lexer import tokenize


def test_a_cached_line_keeps_this_mails_line_number_and_text() -> None:
    board = builtin_map("classic")
    first = parse_orders("ATTACK Alaska -> Kamchatka UNTIL 2 LEFT # first", board)
    again = parse_orders(
        "Hello\nORDERS\nPLACE 3 Alaska\nATTACK Alaska -> Kamchatka UNTIL 2 LEFT # again", board
    )
    a, b = first.orders[0], again.orders[1]
    assert (a.line, a.text) == (1, "ATTACK Alaska -> Kamchatka UNTIL 2 LEFT # first")
    assert (b.line, b.text) == (4, "ATTACK Alaska -> Kamchatka UNTIL 2 LEFT # again")
    assert (a.action, a.column, a.items) == (b.action, b.column, b.items)
    assert a.items == (8, 18)  # the columns of Alaska and Kamchatka


def test_a_line_with_a_problem_is_reported_every_time() -> None:
    board = builtin_map("classic")
    for _ in range(2):
        with pytest.raises(OrdersError) as err:
            parse_orders("ATTACK Alaska -> Brazil", board)
        problem = err.value.problems[0]
        assert (problem.line, problem.column) == (1, 18)
        assert problem.message.startswith("Alaska and Brazil are not adjacent")


def test_tokens_of_a_line_are_shared_and_read_as_before() -> None:
    tokens = tokenize("ATTACK North-Africa->Egypt, 3")
    assert tokenize("ATTACK North-Africa->Egypt, 3") is tokens
    assert [(t.kind, t.text, t.column, t.end, t.upper) for t in tokens] == [
        ("word", "ATTACK", 1, 7, "ATTACK"),
        ("word", "North-Africa", 8, 20, "NORTH-AFRICA"),
        ("arrow", "->", 20, 22, "->"),
        ("word", "Egypt", 22, 27, "EGYPT"),
        ("comma", ",", 27, 28, ","),
        ("number", "3", 29, 30, "3"),
    ]
    assert tokenize("Zürich")[0].upper == ""  # keywords are ASCII


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("a->b", ["a", "->", "b"]),
        ("-5 --x a- -> b-", ["-5", "--x", "a-", "->", "b-"]),
        ("-->x", ["-", "->", "x"]),
        ("a,,b\u2192c ->->", ["a", ",", ",", "b", "\u2192", "c", "->", "->"]),
        ("\t Ëa-é->ü  ", ["Ëa-é", "->", "ü"]),
        ("", []),
    ],
)
def test_words_end_at_blanks_commas_and_arrows_only(line: str, words: list[str]) -> None:
    assert [t.text for t in tokenize(line)] == words
    assert "".join(t.text for t in tokenize(line)) == "".join(line.split())


def test_prose_around_a_cached_line_is_ignored_as_on_a_first_reading() -> None:
    """A line read before counts as an order when the mail's span of orders is found."""
    board = builtin_map("classic")
    mail = "Hi all\n\nATTACK Alaska -> Kamchatka UNTIL 2 LEFT\nCheers, me"
    parser._NAMES.clear()
    first = parse_orders(mail, board)
    again = parse_orders(mail, board)
    assert first.ignored == again.ignored == [(1, "Hi all"), (4, "Cheers, me")]
    assert first.orders == again.orders


def test_prose_between_cached_lines_is_refused_as_on_a_first_reading() -> None:
    board = builtin_map("classic")
    line = "ATTACK Alaska -> Kamchatka UNTIL 2 LEFT"
    mail = f"Hi all\n{line}\nand then some\n{line}\nBye"
    parser._NAMES.clear()
    parse_orders(line, board)  # both order lines are now known
    with pytest.raises(OrdersError) as err:
        parse_orders(mail, board)
    problem = err.value.problems[0]
    assert (problem.line, problem.column) == (3, 1)
    assert problem.message.startswith("and: no such order")
