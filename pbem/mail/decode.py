"""Turn the raw bytes of a player's mail into its headers and its *new* text.

The order parser must see only what the player wrote this time: the text
part (or the HTML one turned into text), decoded from whatever charset and
transfer encoding the mail program chose, with format=flowed lines joined
again, and without the quoted report, the signature and the "Sent from my
phone" footer. Order lines themselves are never touched: "- a dash" and
"Alaska -> Kamchatka" come out as written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.policy import EmailPolicy
from itertools import islice
from typing import Any

from pbem.mail import bounds, sandbox
from pbem.mail.bounds import MAX_MAIL_BYTES, scrub_line, scrub_text
from pbem.mail.errors import (
    MailHeadersTooLarge,
    MailTooComplex,
    MailTooCostly,
    MailTooDeep,
    MailTooLarge,
    UndecodableMail,
)
from pbem.mail.guard import header_reason
from pbem.mail.htmltext import html_to_text, quoted
from pbem.mail.identity import clean_message_id, plain_addresses, stand_in_message_id
from pbem.mail.sandbox import DecodeBudget


@dataclass(frozen=True)
class Attachment:
    """A part of the mail that was not read (a file, a picture, a forwarded mail)."""

    filename: str
    content_type: str


@dataclass(frozen=True)
class DecodedMail:
    """What the rest of pbem needs from one incoming mail.

    ``auto_submitted`` is the guard's reason not to answer this mail (an
    auto-reply, a bounce, a list), or None. ``text`` is the new text only;
    ``source`` says where it came from: "plain", "html" or "none".
    """

    message_id: str
    sender: str
    sender_name: str
    subject: str
    in_reply_to: str
    references: list[str]
    recipients: list[str]
    date: datetime | None
    auto_submitted: str | None
    text: str
    source: str
    attachments: list[Attachment] = field(default_factory=list)
    checksum: str = ""
    size: int = 0
    # What pbem derives its answers' Message-IDs from: the Message-ID, or,
    # for a mail that reuses the Message-ID of another, that plus its hash.
    key: str = ""
    # ``text`` was cut to the limits of pbem.mail.bounds: the mail's text is
    # longer than ``text``, so no answer may call len(text) its length.
    text_cut: bool = False

    @property
    def reply_key(self) -> str:
        return self.key or self.message_id


def decode_mail(
    raw: bytes, *, max_bytes: int = MAX_MAIL_BYTES, budget: DecodeBudget | None = None
) -> DecodedMail:
    """Decode one raw mail; a MailError (never anything else) for a mail that
    cannot be read within the limits.

    MailTooLarge above ``max_bytes``, MailHeadersTooLarge past the header
    limits of pbem.mail.bounds (both checked on the raw bytes, before any
    parser), UndecodableMail (MailTooDeep, MailTooComplex) if it is no mail
    or too intricate, MailTooCostly past the ``budget`` of a mail decoded in
    a child process (see pbem.mail.sandbox)."""
    if len(raw) > max_bytes:
        raise MailTooLarge(len(raw), max_bytes)
    if not raw.strip():
        raise UndecodableMail("The mail is empty.")
    problem = bounds.header_section_problem(raw)
    if problem is not None:
        raise MailHeadersTooLarge(problem)
    if bounds.content_type_lines(raw) > bounds.MAX_MIME_PARTS:  # refused before parsing
        if bounds.opened_multiparts(raw, MAX_DEPTH + 1) > MAX_DEPTH:
            raise MailTooDeep(MAX_DEPTH)
        raise MailTooComplex(bounds.MAX_MIME_PARTS)
    budget = budget or DecodeBudget()
    if budget.wants_child(len(raw)) and sandbox.can_fork():
        return sandbox.run(decode_in_process, raw, budget)
    try:
        return decode_in_process(raw)
    except MemoryError:
        raise MailTooCostly("the memory this machine can give") from None


def decode_in_process(raw: bytes) -> DecodedMail:
    """Every step of decode_mail after the raw checks, in this process;
    linear in the size of ``raw``. A MemoryError is left to the caller."""
    try:
        msg = BytesParser(policy=BOUNDED_POLICY).parsebytes(raw)
    except RecursionError:  # the parser recurses once per level of nesting
        raise MailTooDeep(MAX_DEPTH) from None
    except MemoryError:
        raise
    except Exception as exc:  # the parser is lenient; anything it raises means "not a mail"
        raise UndecodableMail(f"The mail cannot be read: {_short(exc)}") from exc
    if not msg.keys():
        raise UndecodableMail("The mail has no header lines (From, Subject, ...).")
    depth, parts = _shape(msg)
    if depth > MAX_DEPTH:
        raise MailTooDeep(MAX_DEPTH)
    if parts > bounds.MAX_MIME_PARTS:
        raise MailTooComplex(bounds.MAX_MIME_PARTS)
    try:
        assert isinstance(msg, EmailMessage)
        return _decode_message(msg, raw)
    except UndecodableMail:
        raise
    except RecursionError:
        raise MailTooDeep(MAX_DEPTH) from None
    except MemoryError:
        raise
    except Exception as exc:  # a hostile mail must never stop the daemon
        raise UndecodableMail(f"The mail cannot be read: {_short(exc)}") from exc


def _short(exc: Exception) -> str:
    return scrub_line(f"{type(exc).__name__}: {exc}", 300)


class _BoundedPolicy(EmailPolicy):
    """policy.default, except that a header parser sees at most
    bounds.parse_chars(name) characters of a value: the standard library's
    structured parsers grow faster than the value (see pbem.mail.bounds)."""

    def header_fetch_parse(self, name: str, value: Any) -> Any:
        if hasattr(value, "name"):
            return value
        value = "".join(_LINE_BREAKS.split(value))[: bounds.parse_chars(name)]
        # The email package parses a header again at every access (a part's
        # Content-Type about ten times); header objects are immutable, so
        # the last few are kept.
        key = (name.lower(), value)
        parsed = _PARSED.get(key)
        if parsed is None:
            if len(_PARSED) >= _PARSED_KEPT:
                _PARSED.clear()
            parsed = _PARSED[key] = super().header_fetch_parse(name, value)
        return parsed


_LINE_BREAKS = re.compile(r"\n|\r")
_PARSED: dict[tuple[str, str], Any] = {}
_PARSED_KEPT = 256
BOUNDED_POLICY = _BoundedPolicy()


# Real mail programs nest a handful of levels (a forward of a reply with an
# attachment is about 5); anything far deeper is hostile or broken.
MAX_DEPTH = 30


def nesting_depth(msg: Message) -> int:
    """How many parts sit inside one another (1 for a plain mail); iterative,
    so a hostile mail cannot exhaust the stack here."""
    return _shape(msg)[0]


def _shape(msg: Message) -> tuple[int, int]:
    """(nesting depth, number of parts), walking at most MAX_MIME_PARTS + 1
    parts no deeper than MAX_DEPTH + 1: enough to tell a mail past either."""
    deepest = 0
    parts = 0
    stack: list[tuple[Message, int]] = [(msg, 1)]
    while stack:
        part, depth = stack.pop()
        parts += 1
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH or parts > bounds.MAX_MIME_PARTS:
            break
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload if isinstance(child, Message))
    return deepest, parts


def synthetic_message_id(raw: bytes) -> str:
    """A stable id for a mail without Message-ID: the same at every delivery
    (trace headers that servers add on the way do not count)."""
    return stand_in_message_id(raw)


def _decode_message(msg: EmailMessage, raw: bytes) -> DecodedMail:
    """Every string scrubbed and bounded (pbem.mail.bounds): valid for both
    databases, whatever the mail held."""
    message_id = clean_message_id(header(msg, "Message-ID")) or synthetic_message_id(raw)
    sender_name, sender = _sender(msg)
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is None:
        text, source = "", "none"
    else:
        source = "html" if body.get_content_subtype() == "html" else "plain"
        text = _body_text(body, source)
    kept, cut = bounded_text(strip_reply(text[: 4 * bounds.MAX_TEXT_CHARS]))
    attachments = (_describe(part) for part in _leaves(msg) if _is_attachment(part, body))
    return DecodedMail(
        message_id=message_id,
        sender=sender,
        sender_name=sender_name,
        subject=_one_line(header(msg, "Subject"), bounds.SUBJECT_CHARS),
        in_reply_to=clean_message_id(header(msg, "In-Reply-To").strip()),
        references=_references(msg),
        recipients=_recipients(msg),
        date=_date(msg),
        auto_submitted=header_reason(msg),
        text=kept,
        source=source,
        attachments=list(islice(attachments, bounds.MAX_ATTACHMENTS)),
        checksum=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        text_cut=cut or _cut_before(text, source),
    )


def _cut_before(text: str, source: str) -> bool:
    """Whether a limit cut the text before the quotes were taken out: at four
    times MAX_TEXT_CHARS, or while HTML was read (which stops once it has
    written either limit's worth)."""
    if len(text) > 4 * bounds.MAX_TEXT_CHARS:
        return True
    full = len(text) >= bounds.MAX_TEXT_CHARS or text.count("\n") + 1 >= bounds.MAX_TEXT_LINES
    return source == "html" and full


def _one_line(value: str, limit: int) -> str:
    return " ".join(scrub_line(value, 2 * limit + 100).split())[:limit]


def bounded_text(text: str) -> tuple[str, bool]:
    """At most MAX_TEXT_LINES lines and MAX_TEXT_CHARS characters, without
    NUL and the other control characters but TAB and LF; and whether either
    limit cut something off."""
    lines = text.split("\n", bounds.MAX_TEXT_LINES)
    cut = len(lines) > bounds.MAX_TEXT_LINES
    joined = "\n".join(lines[: bounds.MAX_TEXT_LINES])
    scrubbed = scrub_text(joined, len(joined))
    if len(scrubbed) > bounds.MAX_TEXT_CHARS:
        return scrubbed[: bounds.MAX_TEXT_CHARS], True
    return scrubbed, cut


# --- headers ---------------------------------------------------------------


def header(msg: Message, name: str) -> str:
    """The decoded header value, or "" when missing; never raises on a malformed header."""
    try:
        value = msg.get(name)
        return "" if value is None else str(value)
    except Exception:  # policy.default parses lazily and can trip over broken headers
        raw = _raw(msg, name)
        return " ".join(raw[: bounds.parse_chars(name)].split())


def _raw(msg: Message, name: str) -> str:
    """The first raw value of a header, unfolded, or ""."""
    wanted = name.lower()
    for key, value in msg.raw_items():
        if key.lower() == wanted:
            return "".join(_LINE_BREAKS.split(str(value)))
    return ""


def _references(msg: Message) -> list[str]:
    """The Message-IDs of References, read from the raw value (Message-IDs
    are never encoded), the first and the latest MAX_REFERENCES - 1."""
    found = re.findall(r"<[^<>\s]+>", _raw(msg, "References"))
    if len(found) > bounds.MAX_REFERENCES:
        found = found[:1] + found[len(found) - bounds.MAX_REFERENCES + 1 :]
    return [clean_message_id(ref) for ref in found]


def _addresses(msg: EmailMessage, name: str) -> list[tuple[str, str]]:
    """(display name, lowercased addr-spec) pairs of an address header, at
    most MAX_RECIPIENTS; a value the parser cannot take (nested comments
    deeper than its recursion) is read by the plain scan of pbem.mail.identity."""
    try:
        value = msg.get(name)
        if value is None:
            return []
        pairs = [(a.display_name, a.addr_spec) for a in getattr(value, "addresses", ())]
    except Exception:
        pairs = [("", a) for a in plain_addresses(_raw(msg, name)[: bounds.parse_chars(name)])]
    return [
        (
            scrub_line(n, bounds.NAME_CHARS).strip(),
            scrub_line(a, bounds.ADDRESS_CHARS).strip().lower(),
        )
        for n, a in pairs[: bounds.MAX_RECIPIENTS]
        if a.strip() and a != "<>"
    ]


def _sender(msg: EmailMessage) -> tuple[str, str]:
    """(display name, addr-spec) of the From address; ("", "") when there is
    none or more than one: a mail "from" two people speaks for neither, and
    answering the first would let anyone put a player's address first."""
    found = _addresses(msg, "From")
    return found[0] if len(found) == 1 else ("", "")


def _recipients(msg: EmailMessage) -> list[str]:
    return [a for name in ("To", "Cc") for _, a in _addresses(msg, name) if "@" in a]


def _date(msg: EmailMessage) -> datetime | None:
    try:
        value = msg.get("Date")
        return None if value is None else value.datetime
    except Exception:
        return None


# --- MIME parts ------------------------------------------------------------


def _leaves(part: Message) -> Iterator[Message]:
    """Every non-multipart part, in order; a forwarded message counts as one
    part. Iterative: the depth is checked before, this never recurses."""
    stack = [part]
    while stack:
        part = stack.pop()
        if part.get_content_maintype() == "multipart" and part.is_multipart():
            subs = [sub for sub in part.get_payload() if isinstance(sub, Message)]
            stack.extend(reversed(subs))
        else:
            yield part


def _is_attachment(part: Message, body: Message | None) -> bool:
    if part is body:
        return False
    if part.get_content_maintype() != "text":
        return True
    # An unnamed inline text part is the other alternative of the body, not a file.
    return bool(part.get_filename()) or part.get_content_disposition() == "attachment"


def _describe(part: Message) -> Attachment:
    try:
        filename = part.get_filename() or ""
    except Exception:
        filename = ""
    return Attachment(
        filename=scrub_line(filename, bounds.FILENAME_CHARS),
        content_type=scrub_line(part.get_content_type(), bounds.CONTENT_TYPE_CHARS),
    )


def _body_text(part: Message, source: str) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    text = decode_bytes(payload, part.get_content_charset())
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if source == "html":
        return html_to_text(text)
    if str(part.get_param("format") or "").lower() == "flowed":
        delsp = str(part.get_param("delsp") or "").lower() == "yes"
        text = unflow(text, delsp=delsp)
    return text


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode with the declared charset when it is known and fits, else UTF-8,
    else Windows-1252 with replacement (what most mislabelled mail really is)."""
    for candidate in (charset, "utf-8"):
        if not candidate:
            continue
        try:
            return data.decode(candidate)  # LookupError also for rot13, base64 and friends
        except (LookupError, UnicodeError, ValueError, TypeError):
            continue
    return data.decode("cp1252", errors="replace")


# --- format=flowed (RFC 3676) ----------------------------------------------


def unflow(text: str, *, delsp: bool) -> str:
    """Join soft-broken lines again; quote depth is kept as a ">" prefix."""
    out: list[str] = []
    para: list[str] = []  # joined once at its end: linear however long
    para_depth = 0
    for raw_line in text.split("\n"):
        depth = len(raw_line) - len(raw_line.lstrip(">"))
        line = raw_line[depth:]
        if line.startswith(" "):
            line = line[1:]  # space-stuffing
        flowed = line.endswith(" ") and line != "-- "
        if flowed and delsp:
            line = line[:-1]
        if para and depth != para_depth:
            out.append(quoted(para_depth, "".join(para)))
            para = []
        para.append(line)
        para_depth = depth
        if not flowed:
            out.append(quoted(depth, "".join(para)))
            para = []
    if para:
        out.append(quoted(para_depth, "".join(para)))
    return "\n".join(out)


# --- quoted replies, signatures, footers -------------------------------------

_WROTE = r"(wrote|writes|schrieb|a écrit|escribió|ha scritto|schreef)\s*:\s*$"
_ATTRIBUTION_END = re.compile(_WROTE, re.IGNORECASE)
_ATTRIBUTION_START = re.compile(r"^(On|Am|Le|El|Il|Op)\s", re.IGNORECASE)
# Everything after one of these is an earlier mail (Outlook, forwards).
_CUT_MARKERS = [
    re.compile(r"^-{2,}\s*(Original Message|Forwarded message)\s*-{2,}$", re.IGNORECASE),
    re.compile(r"^Begin forwarded message:$", re.IGNORECASE),
    re.compile(r"^_{10,}$"),
]
_HEADER_FROM = re.compile(r"^\*?From:\*?\s+\S", re.IGNORECASE)
_HEADER_SENT = re.compile(r"^\*?(Sent|Date):\*?\s+\S", re.IGNORECASE)
_FOOTERS = [
    re.compile(r"^Sent from my [\w .,'-]{1,40}$", re.IGNORECASE),
    re.compile(r"^Sent from (Mail|Outlook|Yahoo Mail|Proton ?Mail|Samsung)\b.{0,60}$", re.I),
    re.compile(r"^Get Outlook for \w.{0,40}$", re.IGNORECASE),
]
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def strip_reply(text: str) -> str:
    """The new text: without quoted lines, attributions, earlier mails, the
    signature and phone footers; lines right-trimmed, runs of blank lines
    squeezed to one, no blank lines at either end."""
    lines = text.replace("\xa0", " ").translate(_INVISIBLE).split("\n")
    following = _next_non_blank(lines)
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        stripped = line.strip()
        if stripped == "--" or _starts_earlier_mail(lines, i):
            break
        attribution_end = _attribution_end(lines, i, following)
        if attribution_end is not None:
            i = attribution_end + 1
            continue
        if not stripped.startswith(">") and not any(f.match(stripped) for f in _FOOTERS):
            kept.append(line)
        i += 1
    return _squeeze_blank_lines(kept)


def _starts_earlier_mail(lines: list[str], i: int) -> bool:
    stripped = lines[i].strip()
    if any(marker.match(stripped) for marker in _CUT_MARKERS):
        return True
    if _HEADER_FROM.match(stripped):
        following = [line.strip() for line in lines[i + 1 : i + 5]]
        return any(_HEADER_SENT.match(line) for line in following)
    return False


def _next_non_blank(lines: list[str]) -> list[int]:
    """For each line, the index of the first non-blank line at or after it
    (len(lines) when none): one pass, so strip_reply stays linear."""
    found = [len(lines)] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        found[i] = i if lines[i].strip() else found[i + 1]
    return found


def _attribution_end(lines: list[str], i: int, following: list[int]) -> int | None:
    """Index of the last line of an "On <date>, X wrote:" attribution starting at
    line i, when a quoted block (or the end of the text) follows it."""
    first = lines[i].strip()
    if not first or first.startswith(">"):
        return None
    end = None
    if _ATTRIBUTION_END.search(first):
        end = i
    elif _ATTRIBUTION_START.match(first):
        # Gmail wraps long attributions over two or three lines.
        for j in range(i + 1, min(i + 3, len(lines))):
            line = lines[j].strip()
            if not line or line.startswith(">"):
                break
            if _ATTRIBUTION_END.search(line):
                end = j
                break
    if end is None:
        return None
    after = following[end + 1]
    return end if after == len(lines) or lines[after].strip().startswith(">") else None


def _squeeze_blank_lines(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)
