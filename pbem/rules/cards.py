"""Card sets and what they are worth, under every card_values option."""

from __future__ import annotations

from itertools import combinations
from typing import Final

from pbem.rules.board import DESIGNS, WILD, Board
from pbem.rules.options import Options

ESCALATING: Final = (4, 6, 8, 10, 12, 15)
FIXED: Final = {"infantry": 4, "cavalry": 6, "artillery": 8}
FIXED_MIXED: Final = 10


def designs_of(board: Board, cards: tuple[int, ...] | list[int]) -> list[str]:
    return [board.card_design(c) for c in cards]


_CODES: Final[dict[int, tuple[Board, tuple[int, ...]]]] = {}
_WILD_CODE: Final = len(DESIGNS)


def design_codes(board: Board) -> tuple[int, ...]:
    """Every card's design as a small number (index in DESIGNS; wild = 3), cached
    per board: sets are looked for every turn of every bot."""
    cached = _CODES.get(id(board))
    if cached is None or cached[0] is not board:
        codes = tuple(
            _WILD_CODE
            if board.card_design(c) == WILD
            else DESIGNS.index(board.card_design(c))
            if board.card_design(c) in DESIGNS
            else -1  # a territory without a card: never in the deck
            for c in range(board.n_cards)
        )
        cached = _CODES[id(board)] = (board, codes)
    return cached[1]


def mixed_sets(options: Options) -> bool:
    """Is one card of each design a set? Always, but with the European fixed
    values, where it is only with the option fixed_mixed_set."""
    return options.card_values != "fixed" or options.fixed_mixed_set


def _codes_form_set(a: int, b: int, c: int, mixed: bool = True) -> bool:
    if mixed:
        if _WILD_CODE in (a, b, c):
            return True
        return a == b == c or (a != b and b != c and a != c)
    # Three of one design; a wild stands for any one design.
    return len({code for code in (a, b, c) if code != _WILD_CODE}) <= 1


def is_set(board: Board, cards: tuple[int, ...] | list[int], mixed: bool = True) -> bool:
    """Three different cards: three of a design, one of each (``mixed``), or
    any two plus a wild (which, without ``mixed``, must stand for their design)."""
    if len(cards) != 3 or len(set(cards)) != 3:
        return False
    codes = design_codes(board)
    if not all(0 <= c < len(codes) for c in cards):
        return False
    return _codes_form_set(codes[cards[0]], codes[cards[1]], codes[cards[2]], mixed)


def set_value(options: Options, set_number: int, designs: list[str]) -> int:
    """Armies for the ``set_number``-th set traded in the game (1-based)."""
    mode = options.card_values
    if mode == "escalating":
        if set_number <= len(ESCALATING):
            value = ESCALATING[set_number - 1]
        else:
            value = ESCALATING[-1] + 5 * (set_number - len(ESCALATING))
        return capped(options, value)
    if mode == "linear":
        return capped(options, 3 + set_number)
    if mode == "fixed":
        return fixed_value(designs, options.fixed_mixed_set)
    raise ValueError("card_values = none has no sets")


def capped(options: Options, value: int) -> int:
    """Capped escalation: a rising value stops at card_value_cap (0: no cap)."""
    cap = options.card_value_cap
    return min(value, cap) if cap else value


def fixed_value(designs: list[str], mixed: bool = False) -> int:
    """European values; a wild stands for whatever design makes the set worth
    most. One of each is worth FIXED_MIXED only where the rules allow it."""
    plain = [d for d in designs if d != WILD]
    wilds = 3 - len(plain)
    best = 0
    for fill in _fills(wilds):
        full = plain + list(fill)
        if len(set(full)) == 3 and mixed:
            best = max(best, FIXED_MIXED)
        elif len(set(full)) == 1:
            best = max(best, FIXED[full[0]])
    return best


def _fills(count: int) -> list[tuple[str, ...]]:
    if count == 0:
        return [()]
    return [(d,) + rest for d in DESIGNS for rest in _fills(count - 1)]


def all_sets(board: Board, hand: list[int], mixed: bool = True) -> list[tuple[int, int, int]]:
    """Every set in a hand, each sorted, in a fixed order.

    Wild cards are all alike, and an order can only say "Wild": a set uses the
    lowest wilds held, so sets differing only in which wild are listed once.
    """
    if len(hand) < 3:
        return []
    codes = design_codes(board)
    first_wild = len(board.territories)
    wilds = sorted(c for c in hand if c >= first_wild)
    plain = sorted(c for c in hand if c < first_wild)
    cards = plain + wilds[:3]
    return [
        combo
        for combo in combinations(cards, 3)
        if _codes_form_set(codes[combo[0]], codes[combo[1]], codes[combo[2]], mixed)
        and _lowest_wilds(combo, wilds, first_wild)
    ]


def _lowest_wilds(combo: tuple[int, ...], wilds: list[int], first_wild: int) -> bool:
    used = [c for c in combo if c >= first_wild]
    return used == wilds[: len(used)]
