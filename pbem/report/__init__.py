"""Everything pbem mails: turn reports, notices, receipts, errors, the map picture.

The service builds the inputs (``pbem.report.context``) and calls one
``render_*`` function per mail and recipient; ``to_mime`` turns the result
into the message the outbox sends. Nothing here touches the database or
changes a game.

The names are loaded on first use (PEP 562): whoever needs only the inputs
(``pbem.report.context``) or the prose of ``letters`` does not import jinja2,
the templates or the map picture (Pillow).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbem.report.context import (
        ErrorReply,
        GameInfo,
        GameOver,
        GameStart,
        GmAlert,
        Help,
        PlayerInfo,
        Press,
        Problem,
        Receipt,
        Reminder,
        SetupPrompt,
        SetupReport,
        Status,
        TurnReport,
        YourTurn,
    )
    from pbem.report.mime import RenderedMail, thread_root_id, to_mime
    from pbem.report.picture import map_picture
    from pbem.report.render import (
        render_error_reply,
        render_game_over,
        render_game_start,
        render_gm_alert,
        render_help,
        render_press,
        render_receipt,
        render_reminder,
        render_setup_prompt,
        render_setup_report,
        render_status,
        render_turn_report,
        render_your_turn,
    )
    from pbem.report.subjects import TOKEN_RE

_WHERE = {
    "ErrorReply": "pbem.report.context",
    "GameInfo": "pbem.report.context",
    "GameOver": "pbem.report.context",
    "GameStart": "pbem.report.context",
    "GmAlert": "pbem.report.context",
    "Help": "pbem.report.context",
    "PlayerInfo": "pbem.report.context",
    "Press": "pbem.report.context",
    "Problem": "pbem.report.context",
    "Receipt": "pbem.report.context",
    "Reminder": "pbem.report.context",
    "SetupPrompt": "pbem.report.context",
    "SetupReport": "pbem.report.context",
    "Status": "pbem.report.context",
    "TurnReport": "pbem.report.context",
    "YourTurn": "pbem.report.context",
    "RenderedMail": "pbem.report.mime",
    "thread_root_id": "pbem.report.mime",
    "to_mime": "pbem.report.mime",
    "map_picture": "pbem.report.picture",
    "render_error_reply": "pbem.report.render",
    "render_game_over": "pbem.report.render",
    "render_game_start": "pbem.report.render",
    "render_gm_alert": "pbem.report.render",
    "render_help": "pbem.report.render",
    "render_press": "pbem.report.render",
    "render_receipt": "pbem.report.render",
    "render_reminder": "pbem.report.render",
    "render_setup_prompt": "pbem.report.render",
    "render_setup_report": "pbem.report.render",
    "render_status": "pbem.report.render",
    "render_turn_report": "pbem.report.render",
    "render_your_turn": "pbem.report.render",
    "TOKEN_RE": "pbem.report.subjects",
}

__all__ = [
    "TOKEN_RE",
    "ErrorReply",
    "GameInfo",
    "GameOver",
    "GameStart",
    "GmAlert",
    "Help",
    "PlayerInfo",
    "Press",
    "Problem",
    "Receipt",
    "Reminder",
    "RenderedMail",
    "SetupPrompt",
    "SetupReport",
    "Status",
    "TurnReport",
    "YourTurn",
    "map_picture",
    "render_error_reply",
    "render_game_over",
    "render_game_start",
    "render_gm_alert",
    "render_help",
    "render_press",
    "render_receipt",
    "render_reminder",
    "render_setup_prompt",
    "render_setup_report",
    "render_status",
    "render_turn_report",
    "render_your_turn",
    "thread_root_id",
    "to_mime",
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
