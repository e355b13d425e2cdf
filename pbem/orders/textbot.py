"""A rules bot that writes mail: its planned actions as canonical order text.

Whole games can then be played through the parser (text -> parse ->
validate -> execute) and compared with the same games played through the
engine API.
"""

from __future__ import annotations

from pbem.orders.render import render_orders
from pbem.rules.bots import Bot
from pbem.rules.state import GameState


class TextBot:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def write_turn(self, state: GameState) -> str:
        """The mail body of the current player's turn: header lines, then the orders
        (freestyle: ``state`` as the turn would begin, pbem.rules.engine.turn_of)."""
        number = state.round if state.options.play_order == "freestyle" else state.turn
        header = f"GAME {state.game}\nTURN {number}\n"  # (freestyle: TURN names the round)
        return header + render_orders(self.bot.plan_turn(state), state.board)

    def write_setup(self, state: GameState, seat: int) -> str:
        """The mail body of ``seat``'s orders for the current setup phase."""
        header = f"GAME {state.game}\n"
        return header + render_orders(self.bot.plan_setup(state, seat), state.board)
