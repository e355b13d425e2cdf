"""The order language: mail text <-> typed orders, validated against a game's state.

Parse (``parse_orders``), validate (``validate_mail``, ``validate_turn``,
``validate_setup``), run (``execute_turn``, ``execute_setup``), write back
canonically (``render_action``, ``render_orders``), explain (``help_text``,
``format_problems``, ``check_text``). See ORDERS.md for the language.
"""

from pbem.orders.check import CheckResult, check_text
from pbem.orders.errors import OrderProblem, OrdersError, format_problems
from pbem.orders.execute import execute_setup, execute_turn
from pbem.orders.help import help_text
from pbem.orders.model import (
    WILD_CARD,
    Absent,
    Check,
    Command,
    Confirm,
    Header,
    Help,
    History,
    Join,
    Order,
    ParsedMail,
    Press,
    Resign,
    SetMail,
    SetTimezone,
    ShowMap,
    Status,
)
from pbem.orders.parser import MAX_CHARS, parse_orders
from pbem.orders.render import as_order, render_action, render_orders
from pbem.orders.textbot import TextBot
from pbem.orders.validate import turn_actions, validate_mail, validate_setup, validate_turn

__all__ = [
    "MAX_CHARS",
    "WILD_CARD",
    "Absent",
    "Check",
    "CheckResult",
    "Command",
    "Confirm",
    "Header",
    "Help",
    "History",
    "Join",
    "Order",
    "OrderProblem",
    "OrdersError",
    "ParsedMail",
    "Press",
    "Resign",
    "SetMail",
    "SetTimezone",
    "ShowMap",
    "Status",
    "TextBot",
    "as_order",
    "check_text",
    "execute_setup",
    "execute_turn",
    "format_problems",
    "help_text",
    "parse_orders",
    "render_action",
    "render_orders",
    "turn_actions",
    "validate_mail",
    "validate_setup",
    "validate_turn",
]
