"""A rendered mail and its MIME form.

Structure: ``multipart/alternative`` of ``text/plain`` and the HTML; when the
mail has pictures the HTML part is ``multipart/related`` with each picture
inline by Content-ID. Every mail is marked ``Auto-Submitted: auto-generated``
(RFC 3834) so well-behaved auto-responders stay quiet; the caller gives the
Message-ID (stable, so a resend is recognised) and the threading headers.

Only the standard library's public API is used here: this is the plain path
and the reference for the bytes that report/wire.py writes directly
(tests/report/test_report_mime_writer.py, tests/report/test_report_mime_golden.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str
    html: str
    images: dict[str, bytes] = field(default_factory=dict)  # Content-ID (no <>) -> PNG
    recipient: str = ""
    kind: str = ""  # "turn_report", "your_turn", ... (also the X-Pbem-Kind header)
    game: str = ""  # the game's name, "" when the mail belongs to none


def stable_message_id(host: str, *parts: object) -> str:
    """``<20 hex digits@HOST>`` from what a mail is about (its kind, game, turn,
    seat, ...): the same parts give the same id, so a mail queued twice is
    recognised and skipped. Every Message-ID pbem gives its own mail is made
    here or by ``thread_root_id``."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:20]
    return f"<{digest}@{host}>"


def thread_root_id(game: str, seat: int | None, host: str) -> str:
    """``<game-NAME-seat-N@HOST>``: the Message-ID every mail of one player's game refers to.

    The game-start mail to a seat may use it as its own Message-ID; later mails
    put it in References (and In-Reply-To when they answer nothing else), so
    each player sees one thread per game. ``seat`` None is the GM's thread.
    """
    who = "gm" if seat is None else f"seat-{seat}"
    return f"<game-{_UNSAFE.sub('-', game)}-{who}@{_UNSAFE.sub('-', host)}>"


def angled(message_id: str) -> str:
    """The Message-ID in angle brackets, as a header holds it."""
    message_id = message_id.strip()
    return message_id if message_id.startswith("<") else f"<{message_id}>"


_WORDS_ONLY = re.compile(r"[\x21-\x7e]+(?: [\x21-\x7e]+)*")  # printable ASCII, single blanks


def fold_subject(name: str, value: str, width: int, linesep: str) -> str | None:
    """A Subject folded at its blanks, as many words on each line as fit
    ``width`` (a "(token X)" counts as one word), the first line starting
    with the first word: the standard library moves a value that fits a
    line of its own to the next line, "Subject:" left alone on the first,
    and mail programs show that fold as a leading blank. None for anything
    but printable ASCII words with single blanks, no encoded word among them
    (the policy's own folding then)."""
    if name.lower() != "subject" or not _WORDS_ONLY.fullmatch(value) or "=?" in value:
        return None
    lines, line = [], f"{name}:"
    words = value.replace("(token ", "(token\0").split(" ")  # a token kept whole
    for word in (w.replace("\0", " ") for w in words):
        if len(line) + 1 + len(word) > width and line != f"{name}:":
            lines.append(line)
            line = ""
        line += " " + word
    lines.append(line)
    return linesep.join(lines) + linesep


class Policy(policy.EmailPolicy):
    """``policy.default`` but for the Subject, folded by ``fold_subject``."""

    def fold(self, name: str, value: str) -> str:
        done = fold_subject(name, str(value), self.max_line_length or 78, self.linesep)
        return done if done is not None else super().fold(name, value)

    def fold_binary(self, name: str, value: str) -> bytes:
        done = fold_subject(name, str(value), self.max_line_length or 78, self.linesep)
        return done.encode("ascii") if done is not None else super().fold_binary(name, value)


POLICY = Policy()  # every mail pbem writes; report/wire.py writes its bytes for it


def to_mime(
    rendered: RenderedMail,
    *,
    sender: str,
    recipient: str,
    message_id: str,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    extra_headers: Mapping[str, str] | None = None,
    date: datetime | None = None,
) -> EmailMessage:
    """The mail as an EmailMessage under ``POLICY``; ``date`` defaults to now.

    The plain way to a mail's bytes (``bytes(to_mime(...))``): report/wire.py
    writes the same bytes faster and falls back to this for what it does not know."""
    msg = EmailMessage(policy=POLICY)
    msg["From"] = sender
    msg["To"] = recipient
    msg["Subject"] = rendered.subject
    msg["Date"] = format_datetime(date or datetime.now(UTC))
    msg["Message-ID"] = angled(message_id)
    if in_reply_to:
        msg["In-Reply-To"] = angled(in_reply_to)
    refs = list(dict.fromkeys(angled(r) for r in references))
    if in_reply_to and angled(in_reply_to) not in refs:
        refs.append(angled(in_reply_to))
    if refs:
        msg["References"] = " ".join(refs)
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Auto-Response-Suppress"] = "All"
    if rendered.kind:
        msg["X-Pbem-Kind"] = rendered.kind
    if rendered.game:
        msg["X-Pbem-Game"] = rendered.game
    for name, value in (extra_headers or {}).items():
        if name in msg:
            del msg[name]
        msg[name] = value

    msg.set_content(rendered.text, subtype="plain", charset="utf-8")
    msg.add_alternative(rendered.html, subtype="html", charset="utf-8")
    if rendered.images:
        html: EmailMessage = msg.get_payload()[1]  # type: ignore[index, assignment]  # a list here
        for cid, data in sorted(rendered.images.items()):
            html.add_related(
                data,
                maintype="image",
                subtype="png",
                cid=angled(cid),
                disposition="inline",
                filename=picture_filename(cid),
            )
    return msg


def picture_filename(cid: str) -> str:
    """The file name of an inline picture: its Content-ID's local part."""
    return f"{cid.split('@')[0]}.png"
