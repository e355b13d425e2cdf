"""A rendered mail and its MIME form.

Structure: ``multipart/alternative`` of ``text/plain`` and the HTML; when the
mail has pictures the HTML part is ``multipart/related`` with each picture
inline by Content-ID. Every mail is marked ``Auto-Submitted: auto-generated``
(RFC 3834) so well-behaved auto-responders stay quiet; the caller gives the
Message-ID (stable, so a resend is recognised) and the threading headers.

Speed (issue 16): a turn's picture goes to every player, so its MIME part is
built once (base64 and all) and shared by every mail that carries it, and
the bytes it serialises to are kept too. The mails stay byte for byte what
the standard library writes (tests/test_report_mime_golden.py).
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.generator import BytesGenerator
from email.headerregistry import HeaderRegistry
from email.message import EmailMessage
from email.policy import Policy
from email.utils import format_datetime
from io import BytesIO
from threading import Lock
from typing import Any

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NLCRE = re.compile(r"\r\n|\r|\n")  # as email.generator.NLCRE
_STANDARD: Any = BytesGenerator  # its private helpers, which typeshed does not list


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


def _angle(message_id: str) -> str:
    message_id = message_id.strip()
    return message_id if message_id.startswith("<") else f"<{message_id}>"


class _KeptHeaders(HeaderRegistry):
    """policy.default's header registry, which keeps the last headers it parsed.

    Parsing a header (``msg["From"] = ...``, and the MIME headers that
    ``set_content`` sets and re-sets) is a third of building a mail; most of
    a poll's headers are the same in every mail (From, MIME-Version, the
    parts' Content-Type, the kind, the game, a player's address). A header
    object depends only on its name and value and is never changed once
    made, so the same object serves every mail: same bytes."""

    def __init__(self) -> None:
        super().__init__()
        self._kept: OrderedDict[tuple[str, str], Any] = OrderedDict()

    def __call__(self, name: str, value: Any) -> Any:
        if type(value) is not str:
            return super().__call__(name, value)
        key = (name, value)
        with _lock:
            header = self._kept.get(key)
            if header is not None:
                self._kept.move_to_end(key)
                return header
        header = super().__call__(name, value)
        with _lock:
            self._kept[key] = header
            while len(self._kept) > KEPT_HEADERS:
                self._kept.popitem(last=False)
        return header


KEPT_HEADERS = 512
_lock = Lock()
POLICY = policy.default.clone(header_factory=_KeptHeaders())


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
    """The mail as an EmailMessage (policy.default, its headers kept: ``POLICY``);
    ``date`` defaults to now."""
    msg = Mail(policy=POLICY)
    msg["From"] = sender
    msg["To"] = recipient
    msg["Subject"] = rendered.subject
    msg["Date"] = format_datetime(date or datetime.now(UTC))
    msg["Message-ID"] = _angle(message_id)
    if in_reply_to:
        msg["In-Reply-To"] = _angle(in_reply_to)
    refs = list(dict.fromkeys(_angle(r) for r in references))
    if in_reply_to and _angle(in_reply_to) not in refs:
        refs.append(_angle(in_reply_to))
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
            # what html.add_related(data, ...) does, with the part built once per picture
            if html.get_content_type() != "multipart/related":
                html.make_related()
            html.attach(_shared_image(type(html), html.policy, cid, data))
    return msg


# ------------------------------------------------------------ shared parts
SHARED_PARTS = 32  # pictures kept: a poll answers one turn of many games in a row

# (class, policy, cid, PNG) -> the part; id(part) -> (part, [(generator settings, bytes)])
_parts: OrderedDict[tuple[Any, ...], EmailMessage] = OrderedDict()
_written: dict[int, tuple[EmailMessage, list[tuple[Any, bytes]]]] = {}


def _shared_image(cls: type[EmailMessage], pol: Policy, cid: str, data: bytes) -> EmailMessage:
    """The inline picture part, as ``add_related`` builds it; one object per picture.

    Shared parts are never changed after they are built: a mail that gets
    another part (an attachment) gets it beside them, not in them."""
    key = (cls, pol, cid, data)
    with _lock:
        part = _parts.get(key)
        if part is not None:
            _parts.move_to_end(key)
            return part
    part = cls(policy=pol)
    part.set_content(
        data,
        maintype="image",
        subtype="png",
        cid=_angle(cid),
        disposition="inline",
        filename=f"{cid.split('@')[0]}.png",
    )
    if "content-disposition" not in part:
        part["Content-Disposition"] = "inline"
    with _lock:
        _parts[key] = part
        _written[id(part)] = (part, [])
        while len(_parts) > SHARED_PARTS:
            _, old = _parts.popitem(last=False)
            _written.pop(id(old), None)
    return part


class _SharedPartsGenerator(BytesGenerator):
    """A BytesGenerator that writes a shared part from the bytes it gave the first time.

    A part's bytes depend only on the part, the policy and the line ending
    (a non-multipart part has no boundary to choose), so they are the same
    in every mail that carries it."""

    def flatten(self, msg: Any, unixfrom: bool = False, linesep: str | None = None) -> None:
        me: Any = self  # the generator's private state, which typeshed does not list
        entry = _written.get(id(msg))
        if entry is None or entry[0] is not msg or unixfrom:
            super().flatten(msg, unixfrom, linesep)
            return
        # the policy the standard flatten would write with (it clones per part)
        pol = msg.policy if self.policy is None else self.policy
        if linesep is not None:
            pol = pol.clone(linesep=linesep)
        if self.maxheaderlen is not None:
            pol = pol.clone(max_line_length=self.maxheaderlen)
        settings = (me._mangle_from_, vars(pol))
        for seen, done in entry[1]:
            if seen == settings:
                me._fp.write(done)
                return
        buffer = BytesIO()
        BytesGenerator(buffer, me._mangle_from_, None, policy=pol).flatten(msg, False)
        with _lock:
            if len(entry[1]) < 4:  # a few line endings or header widths, not more
                entry[1].append((settings, buffer.getvalue()))
        me._fp.write(buffer.getvalue())

    def _write_lines(self, lines: str) -> None:
        """As the standard one, in one write instead of two per line (same bytes)."""
        if lines:
            me: Any = self
            self.write(me._NL.join(_NLCRE.split(lines)))

    @classmethod
    def _make_boundary(cls, text: Any = None) -> str:
        """A random boundary, as the standard one; its regex search over the whole
        mail only when the boundary occurs in it at all (practically never).
        Inside ``boundaries_of`` drawn from the mail's Message-ID instead."""
        drawn = _boundaries.get()
        if drawn is not None:
            return _drawn_boundary(drawn, text)
        boundary: str = _STANDARD._make_boundary()
        if text is None or b"--" + boundary.encode("ascii") not in text:
            return boundary
        return str(_STANDARD._make_boundary.__func__(cls, text))


_boundaries: ContextVar[random.Random | None] = ContextVar("pbem_boundaries", default=None)
_BOUNDARY_WIDTH = len(repr(sys.maxsize - 1))  # as the standard generator's


@contextmanager
def boundaries_of(message_id: str) -> Iterator[None]:
    """A scope in which a mail's MIME boundaries are drawn from its Message-ID, not
    at random: the mail made again (a notice told twice) is the same bytes."""
    seed = hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).digest()
    token = _boundaries.set(random.Random(seed))
    try:
        yield
    finally:
        _boundaries.reset(token)


def _drawn_boundary(drawn: random.Random, text: Any) -> str:
    """A boundary of the standard shape, drawn again while the text holds it."""
    while True:
        boundary = "=" * 15 + f"{drawn.randrange(sys.maxsize):0{_BOUNDARY_WIDTH}d}" + "=="
        mark = "--" + boundary
        if text is None or (mark.encode("ascii") if isinstance(text, bytes) else mark) not in text:
            return boundary


class Mail(EmailMessage):
    """An EmailMessage whose bytes reuse the serialised shared parts (same bytes)."""

    def as_bytes(self, unixfrom: bool = False, policy: Policy | None = None) -> bytes:
        buffer = BytesIO()
        generator = _SharedPartsGenerator(
            buffer, mangle_from_=False, policy=self.policy if policy is None else policy
        )
        generator.flatten(self, unixfrom=unixfrom)
        return buffer.getvalue()
