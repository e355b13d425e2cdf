"""The cards of a TRADE order against the hand: held, wilds resolved, a set
(validate.py; issue 33 reads a TRADE after an ATTACK with the same words)."""

from __future__ import annotations

from pbem.orders.errors import OrderProblem, problem_at
from pbem.orders.model import WILD_CARD, Order
from pbem.rules.actions import Trade
from pbem.rules.board import WILD
from pbem.rules.cards import designs_of, is_set, mixed_sets
from pbem.rules.state import GameState


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def held_set(
    state: GameState,
    seat: int,
    hand: list[int],
    traded_on: dict[int, int],
    order: Order,
    action: Trade,
) -> tuple[list[int] | None, list[int], list[OrderProblem]]:
    """The cards of a TRADE, wilds resolved, the hand left, and the problems:
    no cards (and the hand unchanged) when they are not all in ``hand``
    (``traded_on``: card -> line of the TRADE that used it) or not a set."""
    board = state.board
    problems: list[OrderProblem] = []
    options = state.options
    left = list(hand)
    resolved: list[int] = []
    wilds_held = sum(1 for c in state.players[seat].cards if board.card_design(c) == WILD)
    for i, card in enumerate(action.cards):
        if card == WILD_CARD:
            wilds = sorted(c for c in left if board.card_design(c) == WILD)
            if not wilds:
                if wilds_held:
                    message = f"you hold only {_plural(wilds_held, 'Wild card')}"
                else:
                    message = "you do not hold a Wild card"
                problems.append(problem_at(order, message, i, "Wild"))
                continue
            card = wilds[0]
        elif card in left:
            pass
        elif card in traded_on:
            name = board.card_name(card)
            message = f"the {name} card is already traded on line {traded_on[card]}"
            problems.append(problem_at(order, message, i, name))
            continue
        else:
            name = board.card_name(card)
            problems.append(problem_at(order, f"you do not hold the {name} card", i, name))
            continue
        left.remove(card)
        resolved.append(card)
    if len(resolved) != 3:
        return None, hand, problems
    if not is_set(board, resolved, mixed_sets(options)):
        names = ", ".join(board.card_name(c) for c in resolved)
        designs = ", ".join(designs_of(board, resolved))
        kinds = (
            "three of a design, one of each, or any two and a Wild"
            if mixed_sets(options)
            else "three of a design, or two of a design and a Wild"
        )
        message = f"{names} is not a set ({designs}): a set is {kinds}"
        problems.append(problem_at(order, message))
        return None, hand, problems
    return resolved, left, problems
