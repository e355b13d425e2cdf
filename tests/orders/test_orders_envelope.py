"""The lines the service reads before a mail's orders, read by the orders layer:
the games a mail names, its PASSWORD, its JOIN or CONFIRM line, and the GM's
commands, with their exact messages and line numbers."""

from __future__ import annotations

from pbem.maps import builtin_map
from pbem.orders import Confirm, Join
from pbem.orders.envelope import join_commands, named_games, only_help, password_of
from pbem.orders.gmcommands import (
    MAX_EXTEND_HOURS,
    GmCommand,
    GmProblem,
    parse_gm_mail,
)

BOARD = builtin_map("classic")


# ------------------------------------------------------------------ PASSWORD
def test_the_first_password_line_is_read_leniently() -> None:
    text = "Hi!\nATACK Alaska -> Kamchatka\npassword amber-pine-onyx  # mine\nPASSWORD other\n"
    assert password_of(text) == "amber-pine-onyx"  # other errors do not stop it


def test_a_password_line_of_one_or_three_words_is_no_password() -> None:
    assert password_of("PASSWORD\nPASSWORD a b\n# PASSWORD c\n") is None
    assert password_of("PASSWORD#c\nPASSWORD x#y\n") == "x"  # a comment cuts the word


# --------------------------------------------------------------- GAME, JOIN
def test_named_games_in_the_mails_order_at_most_so_many() -> None:
    text = "GAME alpha\nJOIN beta AS ann\ngame gamma extra\nGAME\njoin delta\nGAME eps\n"
    assert named_games(text, 5) == ["alpha", "beta", "delta", "eps"]
    assert named_games(text, 2) == ["alpha", "beta"]


def test_a_game_line_with_a_comment_names_no_game() -> None:
    """A name is matched whole: the line as written, its comment included."""
    assert named_games("GAME alpha # mine\n", 5) == []
    assert named_games("JOIN alpha # mine\n", 5) == ["alpha"]


def test_the_first_join_or_confirm_line_is_read_alone() -> None:
    text = "Hello GM,\nI would like a seat.\nJOIN world AS ann  # me\nJOIN world AS bob\n-- \nAnn"
    (join,) = join_commands(text, BOARD)  # read alone: the line is line 1 of itself
    assert isinstance(join, Join) and (join.game, join.player) == ("world", "ann")


def test_a_confirm_line_and_a_join_line_that_does_not_read() -> None:
    (confirm,) = join_commands("thanks!\nconfirm abc123\n", BOARD)
    assert isinstance(confirm, Confirm) and confirm.token == "abc123"
    assert join_commands("JOIN world\nCONFIRM x\n", BOARD) == []  # the first one decides
    assert join_commands("no commands here\n", BOARD) == []


# ------------------------------------------------------------- GM commands
def test_gm_commands_one_a_line_up_to_the_signature() -> None:
    parsed = parse_gm_mail("GAME g\nPASSWORD x\nstatus\nextend 1.5  # a bit more\n--\nPAUSE\n")
    assert parsed.commands == [GmCommand(3, "STATUS"), GmCommand(4, "EXTEND", "1.5")]
    assert parsed.problems == [] and parsed.ignored == []


def test_gm_problems_with_their_lines_and_messages() -> None:
    text = (
        "Hi all,\n"
        "EXTEND soon\n"
        "PAUES\n"
        "KICK\n"
        "PAUSE now\n"
        f"EXTEND {MAX_EXTEND_HOURS + 1}\n"
        "EXTEND nan\n"
        "KICK ann bob\n"
        "Thanks and regards from the GM\n"
    )
    parsed = parse_gm_mail(text)
    assert parsed.commands == []
    assert parsed.problems == [
        GmProblem(2, "EXTEND soon", "EXTEND takes a positive number of hours, e.g. EXTEND 24"),
        GmProblem(3, "PAUES", "no such command; did you mean PAUSE?"),
        GmProblem(4, "KICK", "KICK takes the name of one player, e.g. KICK bob"),
        GmProblem(5, "PAUSE now", "PAUSE takes nothing after it"),
        GmProblem(
            6,
            f"EXTEND {MAX_EXTEND_HOURS + 1}",
            f"EXTEND takes at most {MAX_EXTEND_HOURS} hours (a year), e.g. EXTEND 24",
        ),
        GmProblem(7, "EXTEND nan", "EXTEND takes a positive number of hours, e.g. EXTEND 24"),
        GmProblem(8, "KICK ann bob", "KICK takes the name of one player, e.g. KICK bob"),
    ]
    assert parsed.ignored == [(1, "Hi all,"), (9, "Thanks and regards from the GM")]


def test_a_long_line_near_a_command_is_prose_not_a_typo() -> None:
    parsed = parse_gm_mail("Paused? Not me, thanks\nKICK bob\n")
    assert parsed.ignored == [(1, "Paused? Not me, thanks")]
    assert parsed.commands == [GmCommand(2, "KICK", "bob")] and parsed.problems == []


# ---------------------------------------------------------------------- HELP
def test_a_mail_of_help_alone_is_read_before_its_game_is_known() -> None:
    """Issue 29: HELP and nothing else is answered from any address."""
    assert only_help("HELP\n")
    assert only_help("  help  # what can I write?\n\n> Your turn 3 (quoted)\n-- \nAnn\n")
    assert only_help("Help\nEND\nanything after END is not read\n")
    assert not only_help("")
    assert not only_help("Hello,\nHELP\n")  # a greeting: read with the game's board, if any
    assert not only_help("HELP\nPLACE 3 Alaska\n")
    assert not only_help("HELP STATUS\n")
