"""Actions -> their canonical text: one line per order, names as on the map.

The order log, receipts and replays use only this form, and parsing it gives
the same actions back. Defaults are left out (no ``WITH 3 DICE``, ``UNTIL
CONQUERED`` or ``MOVE MIN``).
"""

from __future__ import annotations

from collections.abc import Iterable

from pbem.orders import grammar as g
from pbem.orders.model import WILD_CARD, Order
from pbem.rules.actions import (
    Amount,
    AmountKind,
    Attack,
    Claim,
    Defend,
    Fortify,
    Headquarters,
    Place,
    PlaceInitial,
    PlaceNeutral,
    SetupAction,
    Trade,
    TurnAction,
    Until,
    UntilKind,
)
from pbem.rules.board import Board


def _card(card: int, board: Board) -> str:
    return "Wild" if card == WILD_CARD else board.card_name(card)


def _placements(placements: tuple[tuple[int, int], ...], board: Board) -> str:
    return ", ".join(f"{n} {board.territories[t].name}" for n, t in placements)


def _amount(amount: Amount) -> str:
    if amount.kind == AmountKind.N:
        return str(amount.n)
    if amount.kind == AmountKind.ALL:
        return g.ALL
    if amount.kind == AmountKind.ALL_BUT:
        return f"{g.ALL} {g.BUT} {amount.n}"
    return g.MIN


def _until(until: Until) -> str:
    if until.kind == UntilKind.LEFT:
        return f" {g.UNTIL} {until.n} {g.LEFT}"
    if until.kind == UntilKind.ROLLS:
        return f" {g.UNTIL} {until.n} {g.ROLLS[0]}"
    return ""


def render_action(action: TurnAction | SetupAction, board: Board) -> str:
    """The canonical line of one action."""
    name = board.territories
    if isinstance(action, Trade):
        return "TRADE " + ", ".join(_card(c, board) for c in action.cards)
    if isinstance(action, Place | PlaceInitial):
        return "PLACE " + _placements(action.placements, board)
    if isinstance(action, PlaceNeutral):
        return "NEUTRAL " + _placements(action.placements, board)
    if isinstance(action, Attack):
        text = f"ATTACK {name[action.source].name} -> {name[action.target].name}"
        if action.dice != 3:
            text += f" {g.WITH} {action.dice} {g.DICE[0]}"
        text += _until(action.until)
        if action.move.kind != AmountKind.MIN:
            text += f" {g.MOVE} {_amount(action.move)}"
        if action.reroll:
            text += f" {g.REROLL}"
        if action.commander:
            text += f" {g.COMMANDER}"
        return text
    if isinstance(action, Defend):
        return f"DEFEND {g.WITH} {action.dice} {g.IN} {name[action.territory].name}"
    if isinstance(action, Fortify):
        if action.amount.kind == AmountKind.MIN:
            raise ValueError("FORTIFY moves a number of armies, ALL or ALL BUT n, never MIN")
        amount = _amount(action.amount)
        return f"FORTIFY {amount} {name[action.source].name} -> {name[action.target].name}"
    if isinstance(action, Claim):
        return ("CLAIM " + ", ".join(name[t].name for t in action.territories)).rstrip()
    if isinstance(action, Headquarters):
        return f"HQ {name[action.territory].name}"
    raise TypeError(f"not an order: {action!r}")


def render_orders(orders: Iterable[TurnAction | SetupAction | Order], board: Board) -> str:
    """The canonical text of several orders (or actions), one per line."""
    lines = [render_action(o.action if isinstance(o, Order) else o, board) for o in orders]
    return "".join(line + "\n" for line in lines)


def as_order(action: TurnAction | SetupAction, board: Board) -> Order:
    """An order that came from no mail (a default or a GM's action), with its canonical text."""
    return Order(action, 0, 0, render_action(action, board))
