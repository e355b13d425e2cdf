"""The press of a player's mail, relayed after its orders: each message within
the sender's hourly budget, and what was not relayed said in the reply, with
why. Kept apart from mailflow.py, which routes the whole mail."""

from __future__ import annotations

from sqlmodel import Session

from pbem.mail.decode import DecodedMail
from pbem.orders.model import ParsedMail
from pbem.report import letters
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play import notify
from pbem.service.play.gamesettings import settings
from pbem.service.play.ratelimit import allow
from pbem.store import Game, Player


def relay_all(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    parsed: ParsedMail,
    reply: notify.Reply,
    mail: DecodedMail,
    applied: bool,
) -> list[str]:
    """Relay the mail's press, each within the sender's hourly budget; what was
    not relayed is said in the reply's notes, with why."""
    summary: list[str] = []
    press_budget = int(settings(game)["press_per_hour"])
    for press in parsed.press:
        to = letters.quote(press.recipient, 40)
        if not applied:
            reply.notes.append(
                f"Your press to {to} was not relayed: nothing in this mail "
                "was applied. Send it again with your corrected orders."
            )
        elif not press.body.strip():
            reply.notes.append(
                f"Your press to {to} was not relayed: it has no text (quoted lines, "
                "those starting with '>', are left out of every mail)."
            )
        elif allow(session, f"press:{player.address}", press_budget, ctx.clock.now()):
            try:
                relayed = notify.relay_press(session, ctx, game, player, press, mail.reply_key)
                summary.append(relayed)
            except ServiceError as exc:
                why = letters.cap(str(exc), 200)
                reply.notes.append(f"Your press to {to} was not relayed: {why}.")
                continue
            reply.notes.append(f"Your press to {to} was relayed.")
        else:
            reply.notes.append(
                f"Your press to {to} was not relayed: too many press messages this hour."
            )
    return summary
