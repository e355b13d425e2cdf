"""The short cut for canonical order lines (pbem/orders/canonical.py) gives what the
full reading (lines.py) gives, or nothing: never another action, column or item."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem import native
from pbem.maps import builtin_map
from pbem.orderlog.records import read_record
from pbem.orders import OrdersError, parse_orders, parser
from pbem.orders.canonical import CanonicalReader
from pbem.orders.lexer import source_lines, strip_comment, tokenize
from pbem.orders.linereader import Abort, LineParser
from pbem.orders.lines import HANDLERS
from pbem.orders.model import Order
from pbem.paths import maps_dir
from pbem.rules.board import Board
from pbem.rules.mapformat import parse_map
from tests.native_helpers import run_on_pure_engine
from tests.orders import test_orders_fuzz as fuzz

RECORDS = sorted((Path(__file__).parents[1] / "data" / "records").glob("*.pgn"))


def full_reading(line: str, board: Board) -> tuple[object, int, tuple[int, ...]] | None:
    """lines.py alone on one line: (action, column, items) of an order read without a
    problem, else None."""
    content = strip_comment(line)
    tokens = tokenize(content)
    if not tokens or tokens[0].upper not in HANDLERS:
        return None
    names, longest, _, _ = parser._names_of(board)
    reader = LineParser(tokens, 1, line, content, board, names, longest)
    try:
        result = HANDLERS[tokens[0].upper](reader)
    except Abort:
        return None
    if reader.problems or not isinstance(result, Order):
        return None
    return result.action, result.column, result.items


def record_lines() -> list[str]:
    lines: list[str] = []
    for path in RECORDS:
        record = read_record(path.read_text(encoding="utf-8"), str(path))
        for entry in record.entries:
            lines += [line for line in entry.text.split("\n") if line.strip()]
    return lines


def variations(line: str) -> list[str]:
    """The line written otherwise: some still correct, some with a problem."""
    words = line.split(" ")
    out = [
        line.lower(),
        line.title(),
        " " + line,
        line + " ",
        line.replace(" ", "  ", 1),
        line.replace(" -> ", "->"),
        line.replace(" -> ", " \u2192 "),
        line.replace(", ", ","),
        line.replace(", ", " , "),
        line + ",",
        line + " REROLL",
        line + " REROLL REROLL",
        line + " COMMANDER",
        line + " REROLL COMMANDER",
        line + " COMMANDER REROLL",
        line + " COMMANDER COMMANDER",
        line + " WITH 2 DICE",
        line + " WITH 2 DIE",
        line + " WITH 4 DICE",
        line + " WITH 0 DICE",
        line + " UNTIL 3 ROLLS",
        line + " UNTIL 0 LEFT",
        line + " UNTIL CONQUERED",
        line + " MOVE MIN",
        line + " MOVE 0",
        line + " MOVE 7",
        line + " MOVE 1234567",
        line + " MOVE ALL BUT 0",
        line + " MOVE ALL",
        line + " END",
        line + " # a comment",
        line.replace("ALL BUT 1", "ALL BUT 0"),
        line.replace("ALL BUT 1", "ALL"),
        line.replace("UNTIL 2 LEFT", "UNTIL 2 ROLLS"),
        line.replace("UNTIL 2 LEFT", "UNTIL 02 LEFT"),
        line.replace("UNTIL 2 LEFT", "UNTIL 9999999 LEFT"),
        line.replace("UNTIL 2 LEFT MOVE ALL BUT 1", "MOVE ALL BUT 1 UNTIL 2 LEFT"),
        " ".join(words[:-1]),
        " ".join(words[:2]),
        words[0],
    ]
    for number in ("0", "00", "3", "07", "999999", "1000000", "\u0663"):
        out.append(" ".join(w if not w.isdigit() else number for w in words))
    return out


def check_line(line: str, board: Board, reader: CanonicalReader) -> bool:
    """Assert the short cut agrees with the full reading; True when it answered."""
    fast = reader.read(strip_comment(line))
    if fast is None:
        return False
    assert fast == full_reading(line, board), line
    return True


def test_every_canonical_line_of_the_records_takes_the_short_cut() -> None:
    board = builtin_map("classic")
    reader = CanonicalReader(board)
    lines = record_lines()
    assert len(lines) > 600
    shortcut = [line for line in lines if line.split(" ")[0] in ("ATTACK", "PLACE", "FORTIFY")]
    shortcut += [line for line in lines if line.startswith("TRADE ")]
    assert len(shortcut) == len(lines)  # every line of these games has one of these orders
    for line in lines:
        assert check_line(line, board, reader), line


def test_variations_are_read_the_same_or_left_to_the_full_reading() -> None:
    board = builtin_map("classic")
    reader = CanonicalReader(board)
    answered = refused = 0
    for line in sorted(set(record_lines())):
        for variant in variations(line):
            if check_line(variant, board, reader):
                answered += 1
            else:
                refused += 1
                # refused by the short cut: the full reading decides (problem or not)
    assert answered > 1000 and refused > 5000


def test_every_pair_of_territories_and_every_card_set() -> None:
    board = builtin_map("classic")
    reader = CanonicalReader(board)
    names = [t.name for t in board.territories]
    answered = 0
    for a, b in itertools.product(names, repeat=2):  # adjacent or not, the same or not
        for line in (
            f"ATTACK {a} -> {b}",
            f"ATTACK {a} -> {b} WITH 1 DICE UNTIL 4 ROLLS MOVE 5 REROLL",
            f"ATTACK {a} -> {b} WITH 1 DICE UNTIL 4 ROLLS MOVE 5 REROLL COMMANDER",
            f"FORTIFY 3 {a} -> {b}",
            f"FORTIFY ALL BUT 2 {a} -> {b}",
            f"PLACE 2 {a}, 1 {b}",
        ):
            answered += check_line(line, board, reader)
    cards = [*names[:5], "Wild"]
    for a, b, c in itertools.product(cards, repeat=3):
        answered += check_line(f"TRADE {a}, {b}, {c}", board, reader)
    assert answered > 3 * 42 * 42  # the fortifies, places and adjacent attacks at least


def tricky_board() -> Board:
    """The classic map with names holding grammar words, digits and a dash."""
    text = (maps_dir() / "classic.toml").read_text(encoding="utf-8")
    for old, new in (
        ("Alaska", "All But Alaska"),
        ("Kamchatka", "Kamchatka 2"),
        ("Alberta", "Move Alberta"),
        ("Ontario", "North-Ontario"),
        ("Peru", "Peru With Dice"),
        ("Siam", "Old Siam Rolls"),
    ):
        text = text.replace(f'"{old}"', f'"{new}"')
    return parse_map(text, "tricky")


def test_names_holding_grammar_words_are_left_to_the_full_reading() -> None:
    board = tricky_board()
    reader = CanonicalReader(board)
    assert "North-Ontario" in reader.index
    for name in ("All But Alaska", "Kamchatka 2", "Move Alberta", "Peru With Dice"):
        assert name not in reader.index
    names = [t.name for t in board.territories]
    for a, b in itertools.product(names, repeat=2):
        for line in (
            f"ATTACK {a} -> {b} UNTIL 2 LEFT MOVE ALL BUT 1",
            f"FORTIFY ALL {a} -> {b}",
            f"PLACE 1 {a}, 2 {b}",
        ):
            check_line(line, board, reader)


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_whole_mails_read_the_same_without_the_short_cut(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if native.state().compiled:
        # compiled callers do not see the patches below: the test runs on the source
        run_on_pure_engine(
            f"{__file__}::{test_whole_mails_read_the_same_without_the_short_cut.__name__}[{path.name}]"
        )
        return
    board = builtin_map("classic")
    record = read_record(path.read_text(encoding="utf-8"), str(path))
    texts = [e.text for e in record.entries]
    texts += [f"Hello,\nORDERS\n{t}\n  # done\nEND\n-- \nme" for t in texts[:20]]
    texts += ["\n".join(variations(line)) for line in record_lines()[:30]]
    monkeypatch.setattr(parser, "_NAMES", {})
    fast = [_read(t, board) for t in texts]
    monkeypatch.setattr(parser, "_NAMES", {})
    calls: list[int] = []

    def no_short_cut(self: object, content: object) -> None:
        calls.append(1)

    monkeypatch.setattr(CanonicalReader, "read", no_short_cut)
    monkeypatch.setattr(parser._MailReader, "only_orders", lambda self, lines: None)
    slow = [_read(t, board) for t in texts]
    assert len(calls) > 100  # the patch took effect: every line went the long way
    assert fast == slow
    # and the mails of known lines with one unknown line last or a comment
    monkeypatch.undo()
    parser._NAMES.clear()
    for text in texts[:40]:
        lines = text.split("\n")
        for extra in ("ATTACK Alaska -> Peru", "HELLO", "PLACE 1 Alaska # here", "ORDERS"):
            mixed = "\n".join([*lines, extra])
            got = _read(mixed, board)
            with monkeypatch.context() as patched:
                patched.setattr(parser._MailReader, "only_orders", lambda self, lines: None)
                assert got == _read(mixed, board), mixed


def _read(text: str, board: Board) -> object:
    try:
        return parse_orders(text, board)
    except OrdersError as exc:
        return exc.problems, exc.partial


# ----------------------------------------- the corpus of tests/orders/test_orders_fuzz.py
CANONICAL = [
    "ATTACK Alaska -> Kamchatka UNTIL 2 LEFT MOVE ALL BUT 1",
    "ATTACK Ontario -> Quebec WITH 2 DICE UNTIL 3 ROLLS MOVE 4 REROLL",
    "ATTACK Ontario -> Quebec WITH 2 DICE UNTIL 3 ROLLS MOVE 4 REROLL COMMANDER",
    "FORTIFY ALL BUT 2 Ontario -> Quebec",
    "PLACE 2 Ontario, 1 Quebec",
    "TRADE Alaska, Ontario, Wild",
]


def _check_every_line(text: str) -> None:
    board = fuzz.BOARD
    reader = CanonicalReader(board)
    for line in source_lines(text):
        check_line(line, board, reader)


@fuzz.fast
@given(st.text(max_size=400))
def test_fuzz_random_text_agrees(text: str) -> None:
    _check_every_line(text)


@fuzz.fast
@given(
    st.lists(
        st.tuples(st.sampled_from(fuzz.VOCABULARY), st.sampled_from(fuzz.SEPARATORS)),
        max_size=60,
    )
)
def test_fuzz_token_soup_agrees(parts: list[tuple[str, str]]) -> None:
    _check_every_line("".join(word + sep for word, sep in parts))


@fuzz.fast
@given(st.data())
def test_fuzz_mutations_agree(data: st.DataObject) -> None:
    """The fuzz test's mutations of its valid mail, and of canonical lines (which the
    short cut answers unmutated), line by line: the short cut answers as lines.py or
    not at all."""
    text = data.draw(st.sampled_from([fuzz.VALID, "\n".join(CANONICAL)]))
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(text)))
        kind = data.draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if kind == "delete":
            end = data.draw(st.integers(at, min(len(text), at + 12)))
            text = text[:at] + text[end:]
        elif kind == "insert":
            words = fuzz.VOCABULARY + fuzz.SEPARATORS
            text = text[:at] + data.draw(st.sampled_from(words)) + text[at:]
        elif kind == "replace":
            text = text[:at] + data.draw(st.text(max_size=3)) + text[at + 1 :]
        else:
            end = data.draw(st.integers(at, min(len(text), at + 40)))
            text = text[:end] + text[at:end] + text[end:]
    _check_every_line(text)


def test_canonical_lines_of_the_fuzz_corpus_take_the_short_cut() -> None:
    board = fuzz.BOARD
    reader = CanonicalReader(board)
    for line in CANONICAL:
        assert check_line(line, board, reader), line
