"""The order language as ORDERS.md writes it: examples, lexical rules, syntax errors."""

from __future__ import annotations

from datetime import date

import pytest

from pbem.maps import builtin_map
from pbem.orders import (
    WILD_CARD,
    Absent,
    Check,
    Confirm,
    Help,
    History,
    Join,
    OrdersError,
    Resign,
    ShowMap,
    Status,
    help_text,
    parse_orders,
)
from pbem.orders.grammar import KEYWORDS, ORDER_DEFS
from pbem.orders.help import examples
from pbem.rules.actions import (
    MOVE_MIN,
    UNTIL_CONQUERED,
    Amount,
    Attack,
    Claim,
    Fortify,
    Headquarters,
    Place,
    PlaceInitial,
    PlaceNeutral,
    Trade,
    Until,
)

BOARD = builtin_map("classic")
T = BOARD.territory  # name -> index


def actions(text: str) -> list[object]:
    return [o.action for o in parse_orders(text, BOARD).orders]


def messages(text: str) -> list[str]:
    with pytest.raises(OrdersError) as caught:
        parse_orders(text, BOARD)
    return [p.message for p in caught.value.problems]


# ------------------------------------------------------------ ORDERS.md examples
ORDERS_MD_EXAMPLES = [
    (
        "TRADE Alaska, Ontario, Wild            # a set of 3 cards: territory names or WILD",
        Trade((T("Alaska"), T("Ontario"), WILD_CARD)),
    ),
    (
        "PLACE 5 Alaska                         # new armies; all must be placed",
        Place(((5, T("Alaska")),)),
    ),
    (
        "PLACE 2 Ontario, 1 Quebec              # several on one line, comma separated",
        Place(((2, T("Ontario")), (1, T("Quebec")))),
    ),
    (
        "ATTACK Alaska -> Kamchatka             # until conquered or no longer possible",
        Attack(T("Alaska"), T("Kamchatka")),
    ),
    (
        "ATTACK Kamchatka -> Japan UNTIL 4 LEFT MOVE ALL",
        Attack(T("Kamchatka"), T("Japan"), 3, Until("left", 4), Amount("all")),
    ),
    (
        "ATTACK Ontario -> Quebec WITH 2 DICE UNTIL 3 ROLLS",
        Attack(T("Ontario"), T("Quebec"), 2, Until("rolls", 3), MOVE_MIN),
    ),
    (
        "FORTIFY 4 Ontario -> Quebec            # or ALL, or ALL BUT 2",
        Fortify(T("Ontario"), T("Quebec"), Amount("n", 4)),
    ),
    ("FORTIFY ALL Ontario -> Quebec", Fortify(T("Ontario"), T("Quebec"), Amount("all"))),
    (
        "FORTIFY ALL BUT 2 Ontario -> Quebec",
        Fortify(T("Ontario"), T("Quebec"), Amount("all_but", 2)),
    ),
    # setup orders (the "..." of the examples left out)
    (
        "CLAIM Alaska, Kamchatka, Japan         # draft: preference list, best first",
        Claim((T("Alaska"), T("Kamchatka"), T("Japan"))),
    ),
    (
        "PLACE 3 Alaska, 2 Japan                # initial armies, all of them",
        Place(((3, T("Alaska")), (2, T("Japan")))),
    ),
    (
        "NEUTRAL 2 Peru, 1 Egypt                # 2-player game: your share of neutral armies",
        PlaceNeutral(((2, T("Peru")), (1, T("Egypt")))),
    ),
    (
        "HQ Ontario                             # Capital Risk: your headquarters",
        Headquarters(T("Ontario")),
    ),
]


@pytest.mark.parametrize(("line", "expected"), ORDERS_MD_EXAMPLES)
def test_orders_md_example_parses_to_its_action(line: str, expected: object) -> None:
    assert actions(line) == [expected]


def test_orders_md_turn_orders_as_one_mail_keep_their_lines() -> None:
    text = "\n".join(line for line, _ in ORDERS_MD_EXAMPLES[:7])
    mail = parse_orders(text, BOARD)
    assert [o.action for o in mail.turn_orders] == [a for _, a in ORDERS_MD_EXAMPLES[:7]]
    assert [o.line for o in mail.orders] == [1, 2, 3, 4, 5, 6, 7]
    assert mail.orders[2].text == ORDERS_MD_EXAMPLES[2][0]
    assert mail.orders[2].items == (9, 20)  # the columns of Ontario and Quebec


def test_orders_md_header_lines() -> None:
    text = (
        "GAME world-1          # which game; may instead be in the subject as [world-1]\n"
        "TURN 14               # optional guard: reject if the game is not at turn 14\n"
        "PASSWORD correct-horse-battery\n"
    )
    mail = parse_orders(text, BOARD)
    assert (mail.game.value, mail.game.line, mail.game.column) == ("world-1", 1, 6)
    assert (mail.turn.value, mail.turn.line, mail.turn.column) == (14, 2, 6)
    assert (mail.password.value, mail.password.line) == ("correct-horse-battery", 3)
    assert mail.orders == []


def test_orders_md_commands() -> None:
    text = (
        "STATUS            # current board, whose turn, deadline (reply to sender only)\n"
        "MAP               # the map picture again\n"
        "HISTORY 12        # the report of turn 12 again\n"
        "HISTORY\n"
        "HELP              # this language, as the project documents it\n"
        "CHECK             # with orders below it: validate and reply, apply nothing\n"
        "PRESS TO carol    # a message relayed to carol (or TO ALL); the text follows\n"
        "  ...             # up to a line ENDPRESS\n"
        "ENDPRESS\n"
        "RESIGN            # leave the game; needs the password even on a reply\n"
    )
    mail = parse_orders(text, BOARD)
    assert mail.commands == [
        Status(1, 1, text.split("\n")[0]),
        ShowMap(2, 1, text.split("\n")[1]),
        History(3, 1, text.split("\n")[2], 12),
        History(4, 1, "HISTORY", None),
        Help(5, 1, text.split("\n")[4]),
        Check(6, 1, text.split("\n")[5]),
        Resign(10, 1, text.split("\n")[9]),
    ]
    assert mail.check is True
    assert len(mail.press) == 1
    press = mail.press[0]
    assert (press.recipient, press.line, press.to_all) == ("carol", 7, False)
    assert press.body == "  ...             # up to a line ENDPRESS"


def test_more_commands() -> None:
    text = (
        "JOIN world-2 AS alice\n"
        "confirm 7f3a9c\n"
        "ABSENT FROM 2025-07-01 TO 2025-07-14\n"
        "PRESS TO all\n"
        "> kept\n"
        "- kept\n"
        "END\n"
        "-- \n"
        "# kept too\n"
        "ENDPRESS\n"
    )
    mail = parse_orders(text, BOARD)
    assert mail.commands == [
        Join(1, 1, "JOIN world-2 AS alice", "world-2", "alice"),
        Confirm(2, 1, "confirm 7f3a9c", "7f3a9c"),
        Absent(3, 1, "ABSENT FROM 2025-07-01 TO 2025-07-14", date(2025, 7, 1), date(2025, 7, 14)),
    ]
    assert mail.press[0].recipient == "ALL"
    assert mail.press[0].to_all
    assert mail.press[0].body == "> kept\n- kept\nEND\n-- \n# kept too"
    assert mail.check is False


# ----------------------------------------------------------------- lexical rules
def test_keywords_are_case_insensitive_and_blanks_free() -> None:
    assert actions("  attack   alaska->KAMCHATKA   until 4 left   move all but 1 ") == [
        Attack(T("Alaska"), T("Kamchatka"), 3, Until("left", 4), Amount("all_but", 1))
    ]


@pytest.mark.parametrize(
    "name",
    ["north africa", "North-Africa", "NORTH_AFRICA", "north  -  africa", "N Africa", "naf"],
)
def test_names_fold_case_blanks_dashes_and_aliases(name: str) -> None:
    assert actions(f"PLACE 1 {name}") == [Place(((1, T("North Africa")),))]


def test_aliases_of_orders_md() -> None:
    assert actions("PLACE 1 E Africa, 2 W US") == [
        Place(((1, T("East Africa")), (2, T("Western United States"))))
    ]


def test_prefixes_are_not_names() -> None:
    assert actions("PLACE 1 Kamch") == [Place(((1, T("Kamchatka")),))]  # an alias
    assert messages("PLACE 1 Kamcha") == ["Kamcha: no such territory; did you mean Kamchatka?"]


def test_comments_blank_lines_and_quotes_are_ignored() -> None:
    text = "\n# a comment\n> PLACE 99 Nowhere\n   \nPLACE 1 Alaska # the rest\n"
    mail = parse_orders(text, BOARD)
    assert [(o.action, o.line) for o in mail.orders] == [(Place(((1, T("Alaska")),)), 5)]


def test_orders_line_ignores_everything_before_it() -> None:
    text = "Hello all,\nhere are my moves!\nORDERS\nPLACE 1 Alaska\n"
    mail = parse_orders(text, BOARD)
    assert [(o.action, o.line) for o in mail.orders] == [(Place(((1, T("Alaska")),)), 4)]


@pytest.mark.parametrize("stop", ["END", "end", "-- ", "--"])
def test_end_and_signature_end_the_orders(stop: str) -> None:
    text = f"PLACE 1 Alaska\n{stop}\nBest wishes, Carol\nPLACE 5 Nowhere\n"
    assert actions(text) == [Place(((1, T("Alaska")),))]


def test_unicode_arrow_reads_as_arrow() -> None:
    assert actions("ATTACK Alaska \u2192 Kamchatka") == [Attack(T("Alaska"), T("Kamchatka"))]


def test_singular_die_and_roll() -> None:
    assert actions("ATTACK Alaska -> Kamchatka WITH 1 DIE UNTIL 1 ROLL") == [
        Attack(T("Alaska"), T("Kamchatka"), 1, Until("rolls", 1), MOVE_MIN)
    ]


def test_clauses_in_any_order_and_defaults_written_out() -> None:
    assert actions("ATTACK Alaska -> Kamchatka MOVE MIN UNTIL CONQUERED WITH 3 DICE") == [
        Attack(T("Alaska"), T("Kamchatka"), 3, UNTIL_CONQUERED, MOVE_MIN)
    ]


def test_setup_orders_view() -> None:
    mail = parse_orders(
        "PLACE 3 Alaska\nNEUTRAL 2 Peru\nHQ Ontario\nATTACK Alaska -> Kamchatka", BOARD
    )
    assert [o.action for o in mail.setup_orders] == [
        PlaceInitial(((3, T("Alaska")),)),
        PlaceNeutral(((2, T("Peru")),)),
        Headquarters(T("Ontario")),
    ]
    assert [o.keyword for o in mail.turn_orders] == ["PLACE", "ATTACK"]


def test_empty_claim_is_a_list_that_runs_out_at_once() -> None:
    assert actions("CLAIM") == [Claim(())]


def test_multiword_names_run_until_a_keyword() -> None:
    assert actions("ATTACK Eastern United States -> Western United States WITH 2 DICE") == [
        Attack(T("Eastern United States"), T("Western United States"), 2)
    ]


# ------------------------------------------------------------------- bad syntax
BAD_SYNTAX = [
    ("PLACE 5 Kamchatca", ["Kamchatca: no such territory; did you mean Kamchatka?"]),
    (
        "ATTACK Alaska -> Japan",
        [
            "Alaska and Japan are not adjacent; "
            "Alaska borders Alberta, Kamchatka, Northwest Territory"
        ],
    ),
    ("ATACK Alaska -> Kamchatka", ["ATACK: no such order; did you mean ATTACK?"]),
    ("PLACE 1 Alaska\nGreetings everyone\nPLACE 1 Alaska", ["Greetings: no such order"]),
    ("Helo", ["Helo: no such order"]),  # a request is never proposed: HELP would change the mail
    ("ATTACK 5 -> Japan", ["5: a number where a territory name belongs"]),
    ("PLACE 3 5", ["5: a number where a territory name belongs"]),
    ("PLACE Alaska 5", ["Alaska: expected a number of armies before each territory"]),
    ("PLACE 5", ["PLACE: the line ends where a territory name was expected"]),
    (
        "PLACE 5 Alaska,",
        ["PLACE: the line ends where a number of armies before each territory was expected"],
    ),
    ("PLACE 0 Alaska", ["0: armies to place must be at least 1"]),
    ("PLACE 5 Alaska 3 Ontario", ["3: expected a comma or the end of the line after Alaska"]),
    ("PLACE 1234567 Alaska", ["1234567: a number has at most 6 digits"]),
    (
        "ATTACK Alaska -> Kamchatka UNTILL 4 LEFT",
        [
            "UNTILL: expected WITH, UNTIL, MOVE, REROLL, COMMANDER or the end of the line "
            "after Kamchatka; did you mean UNTIL?"
        ],
    ),
    ("ATTACK Alaska Kamchatka", ["Kamchatka: expected -> after Alaska"]),
    ("ATTACK Alaska -> Alaska", ["Alaska -> Alaska: a territory cannot attack itself"]),
    ("ATTACK Alaska -> Kamchatka WITH 4 DICE", ["4: an attacker rolls 1 to 3 dice"]),
    ("ATTACK Alaska -> Kamchatka WITH 2", ["ATTACK: the line ends where DICE was expected"]),
    ("ATTACK Alaska -> Kamchatka UNTIL 0 LEFT", ["0: UNTIL needs at least 1"]),
    ("ATTACK Alaska -> Kamchatka UNTIL 3 TIMES", ["TIMES: expected LEFT or ROLLS"]),
    (
        "ATTACK Alaska -> Kamchatka UNTIL CONQUERD",
        ["CONQUERD: expected CONQUERED, n LEFT or n ROLLS; did you mean CONQUERED?"],
    ),
    ("ATTACK Alaska -> Kamchatka MOVE ALL MOVE 3", ["MOVE is given twice"]),
    (
        "ATTACK Alaska -> Kamchatka MOVE EVERYTHING",
        ["EVERYTHING: expected a number, ALL, ALL BUT n or MIN"],
    ),
    (
        "ATTACK Alaska -> Kamchatka, Japan",
        [",: expected WITH, UNTIL, MOVE, REROLL, COMMANDER or the end of the line"],
    ),
    ("FORTIFY Ontario -> Quebec", ["Ontario: expected a number, ALL or ALL BUT n"]),
    ("FORTIFY MIN Ontario -> Quebec", ["MIN: expected a number, ALL or ALL BUT n"]),
    ("FORTIFY ALL BUT Ontario -> Quebec", ["Ontario: expected a number after ALL BUT"]),
    (
        "FORTIFY 2 Ontario -> Ontario",
        ["Ontario -> Ontario: FORTIFY needs two different territories"],
    ),
    ("TRADE Alaska, Ontario", ["TRADE names 2 cards; a set is 3 cards"]),
    ("TRADE Alaska, Alaska, Wild", ["the Alaska card is named twice"]),
    (
        "TRADE Alaska Ontario Wild",
        ["Ontario: expected a comma or the end of the line after Alaska"],
    ),
    ("TRADE Alaska, Wyld, Wild", ["Wyld: no such card; did you mean Wild?"]),
    ("CLAIM Alaska, Japan, Alaska", ["Alaska is listed twice"]),
    ("HQ Alaska, Japan", [",: expected the end of the line"]),
    ("TURN x", ["x: expected the turn number"]),
    ("PASSWORD two words", ["a password is one word, without blanks"]),
    ("GAME a\nGAME b", ["GAME is given twice (first on line 1)"]),
    ("PLACE 1 Alaska\nGAME a", ["GAME must come before the orders"]),
    ("HISTORY 0", ["0: turns start at 1"]),
    ("ABSENT FROM 2025-02-30 TO 2025-03-01", ["2025-02-30: no such date"]),
    ("ABSENT FROM 2025-03-01 TO 2025-02-01", ["2025-02-01: the absence ends before it starts"]),
    ("ABSENT FROM tomorrow TO 2025-02-01", ["tomorrow: expected a date written yyyy-mm-dd"]),
    ("JOIN world-2 alice", ["alice: expected AS"]),
    ("PRESS TO carol\nhello", ["PRESS without a line ENDPRESS after the message"]),
    ("ENDPRESS", ["ENDPRESS without a PRESS line before it"]),
    ("STATUS now", ["now: expected the end of the line"]),
    ("END now", ["now: expected the end of the line after END"]),
]


@pytest.mark.parametrize(("text", "expected"), BAD_SYNTAX)
def test_bad_syntax_has_exact_message(text: str, expected: list[str]) -> None:
    assert messages(text) == expected


def test_every_problem_of_a_mail_is_reported_with_its_place() -> None:
    text = "PLACE 5 Kamchatca, 3 Alsaka\nATTACK Alaska -> Japan\nFORTIFY 3 Ontario -> Quebek\n"
    with pytest.raises(OrdersError) as caught:
        parse_orders(text, BOARD)
    found = [(p.line, p.column, p.text, p.suggestion) for p in caught.value.problems]
    assert found == [
        (1, 9, "Kamchatca", "Kamchatka"),
        (1, 22, "Alsaka", "Alaska"),
        (2, 18, "Japan", ""),
        (3, 22, "Quebek", "Quebec"),
    ]


def test_too_long_a_mail_is_refused_with_one_problem() -> None:
    with pytest.raises(OrdersError) as caught:
        parse_orders("PLACE 1 Alaska\n" * 10, BOARD, max_chars=100)
    assert [p.message for p in caught.value.problems] == [
        "the mail is 150 characters long; orders are read only from mails of at most 100 characters"
    ]


def test_not_text_is_refused() -> None:
    with pytest.raises(OrdersError) as caught:
        parse_orders(b"PLACE 1 Alaska", BOARD)  # type: ignore[arg-type]
    assert caught.value.problems[0].message == "the orders must be text"


# ------------------------------------------------------------------------ HELP
@pytest.mark.parametrize("map_name", ["classic", "fantasy"])
def test_every_help_example_parses(map_name: str) -> None:
    board = builtin_map(map_name)
    for definition, example in examples(board):
        mail = parse_orders(example, board)
        things = mail.orders + mail.commands + mail.press
        if definition.keyword in ("GAME", "TURN", "PASSWORD", "SALT"):
            assert getattr(mail, definition.keyword.lower()) is not None, example
        else:
            assert len(things) == 1, example
        if mail.orders:
            assert mail.orders[0].keyword == definition.keyword


def test_help_text_lists_every_order_and_the_map_names() -> None:
    text = help_text(BOARD)
    for definition in ORDER_DEFS:
        assert definition.syntax.split()[0] in text
    assert "ATTACK Alaska -> Northwest Territory UNTIL 4 LEFT MOVE ALL" in text
    assert "  Kamchatka: Kam, Kamch\n" in text
    assert set(KEYWORDS) == {d.keyword for d in ORDER_DEFS}


def test_reference_document_is_the_help_text() -> None:
    from pathlib import Path

    from pbem.orders.reference import reference_document

    path = Path(__file__).parents[2] / "docs" / "ORDERS-REFERENCE.md"
    assert path.read_text(encoding="utf-8") == reference_document(BOARD)
