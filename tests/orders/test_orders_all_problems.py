"""Issue 29, points 1 and 8: one reply names every problem of a mail, in line order,
and a misspelt word is never told to be a request (HELP, CHECK, JOIN, ...).

An unreadable line is reported and skipped; every line that was read is checked
against the state the lines read before it make, the armies due included unless
an unreadable line may have changed them. The positions are
test_orders_validate's: p3 (seat 2) to move, six territories, p2 everything else.
"""

from __future__ import annotations

import pytest

from pbem.orders import OrderProblem, OrdersError, check_text, parse_orders, validate_mail
from pbem.orders import grammar as g
from pbem.orders.check import all_problems
from pbem.orders.errors import in_line_order
from pbem.rules.options import Options
from pbem.rules.state import GameState
from tests.orders.test_orders_validate import BOARD, ME, T, position, setup_state

# The mail of the issue: five mistakes, one per line from line 2 (and the PLACE
# below what is to be an ATTACK: the fix of line 2 puts it out of place).
MOVE_IT = "line 2 is to be an ATTACK, so move this line above it"
MAIL = (
    "TURN 1\n"
    "ATACK Kamchatka -> Japan\n"
    "PLACE 57 Alaska\n"
    "ATTACK Alberta -> Western United States\n"
    "FORTIFY 2 Ontario -> Eastern United States\n"
    "DEFEND WITH 1 IN Kamchatca\n"
)
EXPECTED = [
    (2, "ATACK: no such order; did you mean ATTACK?", "ATTACK"),
    (3, f"PLACE must come before ATTACK: {MOVE_IT}", ""),
    (3, "PLACE orders place 57 armies; 4 are due this turn", ""),
    (4, "Alberta is not yours; it is p2's, and no earlier ATTACK takes it", ""),
    (5, "Eastern United States is not yours; it is p2's", ""),
    (6, "Kamchatca: no such territory; did you mean Kamchatka?", "Kamchatka"),
]


def four_due() -> GameState:
    state = position(cards=())  # no cards: no forced trade
    state.reinforcements = 4
    return state


def every_problem(text: str, state: GameState, seat: int = ME) -> list[OrderProblem]:
    """What the reply to a player's mail lists (pbem.service.intake.mailflow._parse)."""
    try:
        mail = parse_orders(text, BOARD)
    except OrdersError as error:
        return all_problems(error, state, seat, text)
    return validate_mail(state, seat, mail)


def test_every_problem_of_the_issues_mail_once_and_in_line_order() -> None:
    found = every_problem(MAIL, four_due())
    assert [(p.line, p.message, p.suggestion) for p in found] == EXPECTED


def test_the_reply_of_check_lists_them_in_line_order() -> None:
    report = check_text(MAIL, BOARD, four_due(), ME)
    assert not report.ok
    assert report.report == (
        "Your orders were not applied: 6 problems found. Nothing in this mail was applied.\n"
        "\n"
        "line 2: ATACK Kamchatka -> Japan\n"
        "        ^^^^^\n"
        "  ATACK: no such order; did you mean ATTACK?\n"
        "  expected: an order (HELP lists them; a greeting goes above a line ORDERS)\n"
        "\n"
        "line 3: PLACE 57 Alaska\n"
        "        ^^^^^\n"
        "  PLACE must come before ATTACK: line 2 is to be an ATTACK, so move this line above it\n"
        "\n"
        "line 3: PLACE 57 Alaska\n"
        "        ^^^^^\n"
        "  PLACE orders place 57 armies; 4 are due this turn\n"
        "\n"
        "line 4: ATTACK Alberta -> Western United States\n"
        "               ^^^^^^^\n"
        "  Alberta is not yours; it is p2's, and no earlier ATTACK takes it\n"
        "\n"
        "line 5: FORTIFY 2 Ontario -> Eastern United States\n"
        "                             ^^^^^^^^^^^^^^^^^^^^^\n"
        "  Eastern United States is not yours; it is p2's\n"
        "\n"
        "line 6: DEFEND WITH 1 IN Kamchatca\n"
        "                         ^^^^^^^^^\n"
        "  Kamchatca: no such territory; did you mean Kamchatka?\n"
        "  expected: a territory name\n"
        "\n"
        "Send all the orders again, corrected. HELP replies with the order language.\n"
    )


def test_the_mail_corrected_has_no_problem() -> None:
    fixed = (
        "TURN 1\n"
        "PLACE 4 Alaska\n"
        "ATTACK Kamchatka -> Japan\n"
        "ATTACK Alaska -> Alberta\n"
        "FORTIFY 2 Ontario -> Quebec\n"
        "DEFEND WITH 1 IN Kamchatka\n"
    )
    assert every_problem(fixed, four_due()) == []


def test_lines_after_an_unreadable_one_see_the_attacks_read_before_it() -> None:
    """The state a line is checked against is the one the lines read before it make:
    Alberta taken on line 2 may attack on line 4, past the unreadable line 3."""
    text = "PLACE 3 Alaska\nATTACK Alaska -> Alberta\nATACK Kamchatka -> Japan\n"
    text += "ATTACK Alberta -> Western United States\nATTACK Quebec -> Quebec\n"
    found = every_problem(text, position(cards=()))
    assert [(p.line, p.message) for p in found] == [
        (3, "ATACK: no such order; did you mean ATTACK?"),
        (5, "Quebec -> Quebec: a territory cannot attack itself"),
    ]


def test_an_order_below_a_line_to_be_a_later_order_is_told_to_move() -> None:
    """The fix of an unreadable line may put a line below it out of place: said
    at once. A PLACE below an unreadable ATTACK, with the turn's PLACE read above
    it, is the PLACE of an elimination's trades (the dice decide): not checked."""
    state = position(cards=())
    text = "PLACE 3 Alaska\nFORTFY 1 Ontario -> Quebec\nATTACK Alaska -> Alberta\n"
    move = "ATTACK must come before FORTIFY: line 2 is to be a FORTIFY, so move this line above it"
    assert [(p.line, p.message) for p in every_problem(text, state)] == [
        (2, "FORTFY: no such order; did you mean FORTIFY?"),
        (3, move),
    ]
    # Alberta is the target of line 2: were line 3 checked, "Alberta is not yours"
    text = "PLACE 3 Alaska\nATTACK Alaska -> Alberta WITH 4 DICE\nPLACE 2 Alberta\n"
    assert [(p.line, p.message) for p in every_problem(text, state)] == [
        (2, "4: an attacker rolls 1 to 3 dice"),
    ]


def test_validation_problems_come_in_line_order() -> None:
    """The total of the PLACE orders is found last but told on their line: before
    the attack of line 2 (it used to come after it)."""
    text = "PLACE 2 Alaska\nATTACK Alberta -> Western United States\n"
    problems = validate_mail(position(cards=()), ME, parse_orders(text, BOARD))
    assert [(p.line, p.message) for p in problems] == [
        (1, "PLACE orders place 2 armies; 3 are due this turn"),
        (2, "Alberta is not yours; it is p2's, and no earlier ATTACK takes it"),
    ]


def test_the_mails_own_problems_come_after_every_lines() -> None:
    state = position()  # four cards, forced trade at five: none
    state.must_trade = True
    text = "ATACK Kamchatka -> Japan\nATTACK Alberta -> Western United States\n"
    assert [(p.line, p.message) for p in every_problem(text, state)] == [
        (1, "ATACK: no such order; did you mean ATTACK?"),
        (2, "Alberta is not yours; it is p2's, and no earlier ATTACK takes it"),
        (0, "you hold 4 cards, so you must trade a set this turn (TRADE)"),
        (0, "no PLACE order: 3 armies must be placed this turn"),
    ]


def test_in_line_order_is_stable_within_a_line() -> None:
    a, b = OrderProblem(2, 9, "x", "second"), OrderProblem(2, 1, "y", "first told")
    whole, one = OrderProblem(0, 0, "", "whole"), OrderProblem(1, 5, "z", "one")
    assert in_line_order([whole, a, b, one]) == [one, a, b, whole]


# ------------------------------------------- totals an unreadable line may change
def test_an_unreadable_place_leaves_only_too_many_armies_certain() -> None:
    state = four_due()
    too_many = "PLACE 57 Alaska\nPLACE 1 Ontario Quebec\n"  # no fix to read it with
    assert [(p.line, p.message) for p in every_problem(too_many, state)] == [
        (1, "the PLACE orders that could be read place 57 armies; 4 are due this turn"),
        (2, "Quebec: expected a comma or the end of the line after Ontario"),
    ]
    # a line with one fix is read with it: its armies are counted
    fixed = "PLACE 57 Alaska\nPLCE 1 Ontario\n"
    assert [(p.line, p.message) for p in every_problem(fixed, state)] == [
        (1, "PLACE orders place 58 armies; 4 are due this turn"),
        (2, "PLCE: no such order; did you mean PLACE?"),
    ]
    # 2 + 2 may be right, and a PLACE line there is: no total, no "no PLACE order"
    too_few = "PLACE 2 Alaska\nPLCE 2 Ontario\n"
    assert [(p.line, p.message) for p in every_problem(too_few, state)] == [
        (2, "PLCE: no such order; did you mean PLACE?")
    ]
    none_read = "PLCE 4 Ontario\nATTACK Alaska -> Alberta\n"
    assert [(p.line, p.message) for p in every_problem(none_read, state)] == [
        (1, "PLCE: no such order; did you mean PLACE?")
    ]


def test_an_unreadable_trade_leaves_the_armies_due_unknown() -> None:
    state = position()  # Alaska, Alberta, Ontario and a Wild: a set worth 4 more
    for placed in (3, 7, 57):  # the armies due are 3, or 7 with the set: not told
        text = f"TRADE Alaska, Alberta, Wlid\nPLACE {placed} Alaska\n"
        assert [(p.line, p.message) for p in every_problem(text, state)] == [
            (1, "Wlid: no such card; did you mean Wild or Indonesia?")
        ]
    state.must_trade = True  # the line may be the trade: "you must trade" is not told
    assert [(p.line, p.message) for p in every_problem(text, state)] == [
        (1, "Wlid: no such card; did you mean Wild or Indonesia?")
    ]


def test_an_unterminated_press_hides_the_rest_of_the_mail() -> None:
    text = "PRESS TO p2\nhello\nPLACE 3 Alaska\n"
    assert [(p.line, p.message) for p in every_problem(text, position(cards=()))] == [
        (1, "PRESS without a line ENDPRESS after the message")
    ]


def test_setup_orders_on_unreadable_lines_are_not_missing() -> None:
    state = setup_state(Options(claim="draft", goal="capital"))
    assert [(p.line, p.message) for p in every_problem("CLAIM Alsaka", state, 0)] == [
        (1, "Alsaka: no such territory; did you mean Alaska?")
    ]
    placing = setup_state(Options())
    seat = placing.order[0]
    name = BOARD.territories[placing.territories_of(seat)[0]].name
    due = placing.players[seat].to_place
    text = f"PLACE {due + 5} {name}\nPLACE 1 {name} Quebec\n"  # no fix to read it with
    assert [(p.line, p.message) for p in every_problem(text, placing, seat)] == [
        (1, f"the PLACE orders that could be read place {due + 5} armies; {due} are due"),
        (2, f"Quebec: expected a comma or the end of the line after {name}"),
    ]
    fixed = f"PLACE {due + 5} {name}\nPLCE 1 {name}\n"  # read with its fix: counted
    assert [(p.line, p.message) for p in every_problem(fixed, placing, seat)] == [
        (1, f"PLACE orders place {due + 6} armies; {due} are due"),
        (2, "PLCE: no such order; did you mean PLACE?"),
    ]
    too_few = f"PLACE 1 {name}\nPLACE 1 {name} Quebec\n"
    assert [(p.line, p.message) for p in every_problem(too_few, placing, seat)] == [
        (2, f"Quebec: expected a comma or the end of the line after {name}")
    ]


# ------------------------------------------------------------- no request proposed
def test_a_greeting_below_check_is_not_told_to_be_help() -> None:
    text = "CHECK\nHello!\nPLACE 3 Alaska\n"
    with pytest.raises(OrdersError) as caught:
        parse_orders(text, BOARD)
    assert caught.value.problems == [
        OrderProblem(
            2,
            1,
            "Hello!",
            "Hello!: no such order",
            "an order (HELP lists them; a greeting goes above a line ORDERS)",
            "",
        )
    ]


REQUESTS = [k for k in g.KEYWORDS if k not in g.SUGGESTED_KEYWORDS]


def test_the_words_that_are_never_proposed() -> None:
    assert g.SUGGESTED_KEYWORDS == (
        "TRADE",
        "PLACE",
        "ATTACK",
        "DEFEND",
        "FORTIFY",
        "CLAIM",
        "NEUTRAL",
        "HQ",
    )
    assert REQUESTS == [
        "GAME",
        "TURN",
        "PASSWORD",
        "SALT",
        "STATUS",
        "MAP",
        "HISTORY",
        "HELP",
        "CHECK",
        "PRESS",
        "RESIGN",
        "JOIN",
        "CONFIRM",
        "ABSENT",
        "SET",
    ]


@pytest.mark.parametrize("keyword", REQUESTS)
def test_a_misspelt_request_is_never_proposed(keyword: str) -> None:
    """Between two orders (so read as an attempt at one), with its second letter
    doubled ("HEELP"): a problem, and no fix that would make the mail a request."""
    misspelt = keyword[:2] + keyword[1:]
    text = f"PLACE 3 Alaska\n{misspelt} x\nATTACK Alaska -> Alberta\n"
    with pytest.raises(OrdersError) as caught:
        parse_orders(text, BOARD)
    (problem,) = caught.value.problems
    assert (problem.line, problem.message, problem.suggestion) == (
        2,
        f"{misspelt}: no such order",
        "",
    )


# The player trial: bob's four mistakes, one a misspelt name whose one fix still
# gives a wrong line (Venezuela has 1 army): told in the same reply.
BOB = (
    "PLACE 6 Brazil\n"
    "ATACK Brazil -> Peru\n"
    "ATTACK Venezuala -> Central America\n"
    "ATTACK Kamchatka -> Alaska\n"
)


def bobs_position() -> GameState:
    return position(cards=(), mine={"Brazil": 5, "Venezuela": 1, "Kamchatka": 4, "Alaska": 2})


def test_a_line_with_one_fix_is_checked_with_that_fix_in_the_same_reply() -> None:
    report = check_text(BOB, BOARD, bobs_position(), ME)
    assert report.report == (
        "Your orders were not applied: 4 problems found. Nothing in this mail was applied.\n"
        "\n"
        "line 1: PLACE 6 Brazil\n"
        "        ^^^^^\n"
        "  PLACE orders place 6 armies; 3 are due this turn\n"
        "\n"
        "line 2: ATACK Brazil -> Peru\n"
        "        ^^^^^\n"
        "  ATACK: no such order; did you mean ATTACK?\n"
        "  expected: an order (HELP lists them; a greeting goes above a line ORDERS)\n"
        "\n"
        "line 3: ATTACK Venezuala -> Central America\n"
        "               ^^^^^^^^^\n"
        "  Venezuala: no such territory; did you mean Venezuela?\n"
        "  expected: a territory name\n"
        "  with that fix: Venezuela has 1 army; an attack needs at least 2\n"
        "\n"
        "line 4: ATTACK Kamchatka -> Alaska\n"
        "                            ^^^^^^\n"
        "  Alaska is already yours\n"
        "\n"
        "Send all the orders again, corrected. HELP replies with the order language.\n"
    )
    found = every_problem(BOB, bobs_position())
    assert [(p.line, p.suggestion, p.with_fix) for p in found if p.suggestion] == [
        (2, "ATTACK", ""),
        (3, "Venezuela", "Venezuela has 1 army; an attack needs at least 2"),
    ]


def test_following_every_fix_of_bobs_reply_gives_a_valid_mail() -> None:
    fixed = "PLACE 3 Brazil\nATTACK Brazil -> Peru\n"
    assert every_problem(fixed, bobs_position()) == []


def test_a_fixed_line_that_is_fine_makes_the_state_of_the_lines_below() -> None:
    """ATACK Brazil -> Peru, fixed, takes Peru: the attack from Peru below it is
    not told that Peru is not bob's."""
    mail = "PLACE 3 Brazil\nATACK Brazil -> Peru\nATTACK Peru -> Argentina\n"
    found = every_problem(mail, bobs_position())
    assert [(p.line, p.message) for p in found] == [
        (2, "ATACK: no such order; did you mean ATTACK?"),
    ]
    assert not found[0].with_fix


def test_a_place_is_told_only_the_players_own_territories_of_the_near_names() -> None:
    """Setup: bob's PLACE 21 Brazl is Brazil (his), never Ural (alice's)."""
    state = setup_state(Options())
    seat = state.order[0]
    state.owner[T("Brazil")], state.owner[T("Ural")] = seat, (seat + 1) % 3
    due = state.players[seat].to_place
    found = every_problem(f"PLACE {due} Brazl\n", state, seat)
    assert [(p.line, p.message, p.suggestion) for p in found] == [
        (1, "Brazl: no such territory; did you mean Brazil?", "Brazil")
    ]
    # neither is the player's: both are told, as against the map alone
    theirs = every_problem("PLACE 3 Alaska\nPLACE 1 Brazl\n", four_due())
    assert [p.message for p in theirs] == ["Brazl: no such territory; did you mean Brazil or Ural?"]


def test_an_attacks_source_is_told_only_the_players_own_of_the_near_names() -> None:
    found = every_problem("PLACE 3 Brazil\nATTACK Brazl -> Peru\n", bobs_position())
    assert [(p.line, p.message) for p in found] == [
        (2, "Brazl: no such territory; did you mean Brazil?")
    ]
    # the target may be anyone's: not filtered
    target = every_problem("PLACE 3 Kamchatka\nATTACK Kamchatka -> Brazl\n", bobs_position())
    assert [p.message for p in target] == ["Brazl: no such territory; did you mean Brazil or Ural?"]
