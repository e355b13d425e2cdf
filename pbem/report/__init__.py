"""Everything pbem mails: turn reports, notices, receipts, errors, the map picture.

The service builds the inputs (``pbem.report.context``) and calls one
``render_*`` function per mail and recipient; ``wire.mail_bytes`` turns the
result into the bytes the outbox sends (``to_mime`` is the plain way to the
same message). Nothing here touches the database or
changes a game.
"""

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
    render_status,
    render_turn_report,
    render_your_turn,
)
from pbem.report.subjects import TOKEN_RE

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
    "render_status",
    "render_turn_report",
    "render_your_turn",
    "thread_root_id",
    "to_mime",
]
