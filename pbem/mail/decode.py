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
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import getaddresses
from html.parser import HTMLParser

from pbem.mail.errors import MailTooDeep, MailTooLarge, UndecodableMail
from pbem.mail.guard import header_reason
from pbem.mail.identity import stand_in_message_id

# the one size limit of incoming mail ([mail] max_mail_bytes changes it)
MAX_MAIL_BYTES = 1_048_576


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

    @property
    def reply_key(self) -> str:
        return self.key or self.message_id


def decode_mail(raw: bytes, *, max_bytes: int = MAX_MAIL_BYTES) -> DecodedMail:
    """Decode one raw mail; MailTooLarge above ``max_bytes``, UndecodableMail if it is no mail."""
    if len(raw) > max_bytes:
        raise MailTooLarge(len(raw), max_bytes)
    if not raw.strip():
        raise UndecodableMail("The mail is empty.")
    try:
        msg = BytesParser(policy=policy.default).parsebytes(raw)
    except RecursionError:  # the parser recurses once per level of nesting
        raise MailTooDeep(MAX_DEPTH) from None
    except Exception as exc:  # the parser is lenient; anything it raises means "not a mail"
        raise UndecodableMail(f"The mail cannot be read: {exc}") from exc
    if not msg.keys():
        raise UndecodableMail("The mail has no header lines (From, Subject, ...).")
    if nesting_depth(msg) > MAX_DEPTH:
        raise MailTooDeep(MAX_DEPTH)
    try:
        return _decode_message(msg, raw)
    except UndecodableMail:
        raise
    except RecursionError:
        raise MailTooDeep(MAX_DEPTH) from None
    except Exception as exc:  # a hostile mail must never stop the daemon
        raise UndecodableMail(f"The mail cannot be read: {type(exc).__name__}: {exc}") from exc


# Real mail programs nest a handful of levels (a forward of a reply with an
# attachment is about 5); anything far deeper is hostile or broken.
MAX_DEPTH = 30


def nesting_depth(msg: Message) -> int:
    """How many parts sit inside one another (1 for a plain mail); iterative,
    so a hostile mail cannot exhaust the stack here."""
    deepest = 0
    stack: list[tuple[Message, int]] = [(msg, 1)]
    while stack:
        part, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload if isinstance(child, Message))
    return deepest


def synthetic_message_id(raw: bytes) -> str:
    """A stable id for a mail without Message-ID: the same at every delivery
    (trace headers that servers add on the way do not count)."""
    return stand_in_message_id(raw)


def _decode_message(msg: EmailMessage, raw: bytes) -> DecodedMail:
    message_id = " ".join(header(msg, "Message-ID").split()) or synthetic_message_id(raw)
    sender_name, sender = _sender(msg)
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is None:
        text, source = "", "none"
    else:
        source = "html" if body.get_content_subtype() == "html" else "plain"
        text = _body_text(body, source)
    return DecodedMail(
        message_id=message_id,
        sender=sender,
        sender_name=sender_name,
        subject=" ".join(header(msg, "Subject").split()),
        in_reply_to=header(msg, "In-Reply-To").strip(),
        references=re.findall(r"<[^<>\s]+>", header(msg, "References")),
        recipients=_recipients(msg),
        date=_date(msg),
        auto_submitted=header_reason(msg),
        text=strip_reply(text),
        source=source,
        attachments=[_describe(part) for part in _leaves(msg) if _is_attachment(part, body)],
        checksum=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
    )


# --- headers ---------------------------------------------------------------


def header(msg: Message, name: str) -> str:
    """The decoded header value, or "" when missing; never raises on a malformed header."""
    try:
        value = msg.get(name)
        return "" if value is None else str(value)
    except Exception:  # policy.default parses lazily and can trip over broken headers
        for key, value in msg.raw_items():
            if key.lower() == name.lower():
                return " ".join(str(value).split())
        return ""


def _addresses(msg: EmailMessage, name: str) -> list[tuple[str, str]]:
    """(display name, lowercased addr-spec) pairs of an address header."""
    try:
        value = msg.get(name)
        if value is None:
            return []
        pairs = [(a.display_name, a.addr_spec) for a in getattr(value, "addresses", ())]
    except Exception:
        pairs = getaddresses([header(msg, name)])
    return [(n.strip(), a.strip().lower()) for n, a in pairs if a.strip() and a != "<>"]


def _sender(msg: EmailMessage) -> tuple[str, str]:
    """(display name, addr-spec) of the first From address; ("", "") when there is none."""
    found = _addresses(msg, "From")
    return found[0] if found else ("", "")


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
    """Every non-multipart part; a forwarded message counts as one part."""
    if part.get_content_maintype() == "multipart" and part.is_multipart():
        for sub in part.get_payload():
            if isinstance(sub, Message):
                yield from _leaves(sub)
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
    return Attachment(filename=filename, content_type=part.get_content_type())


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
    para: str | None = None
    para_depth = 0
    for raw_line in text.split("\n"):
        depth = len(raw_line) - len(raw_line.lstrip(">"))
        line = raw_line[depth:]
        if line.startswith(" "):
            line = line[1:]  # space-stuffing
        flowed = line.endswith(" ") and line != "-- "
        if flowed and delsp:
            line = line[:-1]
        if para is not None and depth != para_depth:
            out.append(_quoted(para_depth, para))
            para = None
        para = line if para is None else para + line
        para_depth = depth
        if not flowed:
            out.append(_quoted(depth, para))
            para = None
    if para is not None:
        out.append(_quoted(para_depth, para))
    return "\n".join(out)


def _quoted(depth: int, text: str) -> str:
    return f"{'>' * depth} {text}" if depth else text


# --- HTML ------------------------------------------------------------------

_BLOCK_TAGS = frozenset(
    "address article aside blockquote center dd div dl dt fieldset figure footer form "
    "h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table tbody td tfoot th "
    "thead tr ul".split()
)
_SKIP_TAGS = frozenset({"head", "script", "style", "template", "title"})


class _HtmlText(HTMLParser):
    """HTML to plain lines: block elements break lines, blockquote becomes "> " quoting."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._buffer: list[str] = []
        self._quote = 0
        self._skip = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self._skip += 1
        elif tag == "br":
            self._break(force=True)
        elif tag in _BLOCK_TAGS:
            self._break()
            if tag == "blockquote":
                self._quote += 1
            elif tag == "pre":
                self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self._break()
            if tag == "blockquote":
                self._quote = max(0, self._quote - 1)
            elif tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            first, *rest = data.split("\n")
            self._buffer.append(first)
            for line in rest:
                self._break(force=True)
                self._buffer.append(line)
        else:
            self._buffer.append(re.sub(r"\s+", " ", data))

    def close(self) -> None:
        super().close()
        self._break()

    def _break(self, force: bool = False) -> None:
        text = "".join(self._buffer)
        if not self._pre:
            text = text.strip()
        if text or force:
            self.lines.append(_quoted(self._quote, text))
        self._buffer = []


def html_to_text(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return "\n".join(parser.lines)


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
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        stripped = line.strip()
        if stripped == "--" or _starts_earlier_mail(lines, i):
            break
        attribution_end = _attribution_end(lines, i)
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


def _attribution_end(lines: list[str], i: int) -> int | None:
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
    following = next((line.strip() for line in lines[end + 1 :] if line.strip()), None)
    return end if following is None or following.startswith(">") else None


def _squeeze_blank_lines(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)
