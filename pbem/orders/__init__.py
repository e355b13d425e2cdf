"""The order language: mail text <-> typed orders, validated against a game's state.

Parse (``parse_orders``), validate (``validate_mail``, ``validate_turn``,
``validate_setup``), run (``execute_turn``, ``execute_setup``), write back
canonically (``render_action``, ``render_orders``), explain (``help_text``,
``format_problems``, ``check_text``). See ORDERS.md for the language.

The names are loaded on first use (PEP 562): a `pbem verify` needs the parser and
the validator, not the forecast of CHECK or the help text.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbem.orders.check import CheckResult, check_text
    from pbem.orders.errors import OrderProblem, OrdersError, format_problems
    from pbem.orders.execute import execute_setup, execute_turn
    from pbem.orders.help import help_text
    from pbem.orders.mailorders import validate_mail
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
    from pbem.orders.setupcheck import validate_setup
    from pbem.orders.textbot import TextBot
    from pbem.orders.validate import turn_actions, validate_turn

_WHERE = {
    "CheckResult": "pbem.orders.check",
    "check_text": "pbem.orders.check",
    "OrderProblem": "pbem.orders.errors",
    "OrdersError": "pbem.orders.errors",
    "format_problems": "pbem.orders.errors",
    "execute_setup": "pbem.orders.execute",
    "execute_turn": "pbem.orders.execute",
    "help_text": "pbem.orders.help",
    "Absent": "pbem.orders.model",
    "Check": "pbem.orders.model",
    "Command": "pbem.orders.model",
    "Confirm": "pbem.orders.model",
    "Header": "pbem.orders.model",
    "Help": "pbem.orders.model",
    "History": "pbem.orders.model",
    "Join": "pbem.orders.model",
    "Order": "pbem.orders.model",
    "ParsedMail": "pbem.orders.model",
    "Press": "pbem.orders.model",
    "Resign": "pbem.orders.model",
    "SetMail": "pbem.orders.model",
    "SetTimezone": "pbem.orders.model",
    "ShowMap": "pbem.orders.model",
    "Status": "pbem.orders.model",
    "WILD_CARD": "pbem.orders.model",
    "MAX_CHARS": "pbem.orders.parser",
    "parse_orders": "pbem.orders.parser",
    "as_order": "pbem.orders.render",
    "render_action": "pbem.orders.render",
    "render_orders": "pbem.orders.render",
    "TextBot": "pbem.orders.textbot",
    "turn_actions": "pbem.orders.validate",
    "validate_mail": "pbem.orders.mailorders",
    "validate_setup": "pbem.orders.setupcheck",
    "validate_turn": "pbem.orders.validate",
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
