"""How any mail of the service goes into the outbox: one helper for all of them.

``post`` takes a rendered mail, its recipient and what it is about (the
parts of its stable Message-ID) and queues it in the outbox of the current
transaction, threaded under the recipient's game; ``queue`` is the same with
a Message-ID given. What a mail says is the report layer's (report/render.py,
report/letters.py); when and to whom, service/play/notify.py's. Nothing is sent
here: the outbox sender does that after the commit.
"""

from __future__ import annotations

from sqlmodel import Session

from pbem.report.mime import RenderedMail, thread_root_id
from pbem.report.wire import mail_bytes
from pbem.service.context import Context
from pbem.service.play.mailinfo import host_of, message_id
from pbem.service.tell import outbox
from pbem.store import Game


def post(
    session: Session,
    ctx: Context,
    rendered: RenderedMail,
    to: str,
    about: tuple[object, ...],
    *,
    game: Game | None,
    seat: int | None = None,
    in_reply_to: str | None = None,
    attachment: tuple[str, str] | None = None,
    attachment_type: str = "plain",
) -> None:
    """Queue ``rendered`` for ``to``; its Message-ID made from ``about`` (once: the
    same parts queued again are skipped). The one render-then-queue step."""
    queue(
        session,
        ctx,
        rendered,
        recipient=to,
        message_id=message_id(ctx, *about),
        game=game,
        seat=seat,
        in_reply_to=in_reply_to,
        attachment=attachment,
        attachment_type=attachment_type,
    )


def queue(
    session: Session,
    ctx: Context,
    rendered: RenderedMail,
    *,
    recipient: str,
    message_id: str,
    game: Game | None,
    seat: int | None = None,
    in_reply_to: str | None = None,
    attachment: tuple[str, str] | None = None,
    attachment_type: str = "plain",
) -> None:
    """Add one mail to the outbox (once: a stable Message-ID already queued is
    skipped). ``attachment`` is (file name, text), e.g. the game record, of type
    text/``attachment_type``."""
    references = []
    if game is not None:
        references.append(thread_root_id(game.name, seat, host_of(ctx)))
    sender = ctx.config.mail.game_address
    name = ctx.config.mail.from_name
    raw = mail_bytes(  # bytes(to_mime(...)), written without the EmailMessage
        rendered,
        sender=f"{name} <{sender}>" if name else sender,
        recipient=recipient,
        message_id=message_id,
        in_reply_to=in_reply_to,
        references=references,
        date=ctx.clock.now(),
        attachment=attachment,
        attachment_type=attachment_type,
    )
    outbox.enqueue(
        session,
        message_id=message_id,
        game_id=game.id if game else None,
        kind=rendered.kind or "mail",
        recipient=recipient,
        subject=rendered.subject,
        raw=raw,
        in_reply_to=in_reply_to,
        now=ctx.clock.now(),
    )
