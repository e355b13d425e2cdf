"""What makes two fetched mails the same mail.

A mail may reach the inbox twice (a resend by a relay, a second delivery
after a timeout) with other trace headers each time, or arrive without a
Message-ID at all; and a careless client may reuse a Message-ID for a new
mail. So a mail is known by its Message-ID *and* a hash of its content
without the headers that servers add on the way (``content_hash``). A mail
without Message-ID gets a stand-in derived from that hash, the same at
every delivery.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parseaddr

from pbem.mail.bounds import (
    ADDRESS_CHARS,
    MAX_HEADER_SECTION_BYTES,
    MESSAGE_ID_CHARS,
    SUBJECT_CHARS,
    parse_chars,
    scrub_line,
)

# Headers added or rewritten in transit, or by the mailbox that stores the
# mail; none of them is part of what the sender wrote.
TRACE_HEADERS = frozenset(
    {
        "received",
        "return-path",
        "delivered-to",
        "x-delivered-to",
        "x-original-to",
        "envelope-to",
        "x-envelope-to",
        "x-envelope-from",
        "authentication-results",
        "arc-seal",
        "arc-message-signature",
        "arc-authentication-results",
        "received-spf",
        "x-spam-status",
        "x-spam-score",
        "x-spam-level",
        "x-spam-flag",
        "x-virus-scanned",
        "status",
        "x-status",
        "x-uid",
        "x-keywords",
        "x-uidl",
        "content-length",
        "lines",
    }
)
_HEADER_NAME = re.compile(rb"^([!-9;-~]+)[ \t]*:")


@dataclass(frozen=True)
class MailIdentity:
    """Message-ID (or its stand-in), content hash, and the headers a log line needs."""

    message_id: str
    content_hash: str
    sender: str
    subject: str


def _split(raw: bytes) -> tuple[list[bytes], bytes]:
    """Logical header lines (continuations joined) and the body, line ends as LF."""
    head, body = _head_and_body(raw)
    return list(_logical_headers(head)), body


def _head_and_body(raw: bytes) -> tuple[bytes, bytes]:
    text = raw.replace(b"\r\n", b"\n")
    head, sep, body = text.partition(b"\n\n")
    if not sep:
        head, body = text, b""
    return head, body


def _logical_headers(head: bytes) -> Iterator[bytes]:
    """Each header with its continuation lines joined by one space, in one
    linear pass (joining by ``+=`` was quadratic in the number of lines)."""
    parts: list[bytes] = []
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t") and parts:
            parts.append(line.strip())
        else:
            if parts:
                yield b" ".join(parts)
            parts = [line]
    if parts:
        yield b" ".join(parts)


def content_hash(raw: bytes) -> str:
    """SHA-256 of the mail without its trace headers (and with LF line ends).

    A header section past MAX_HEADER_SECTION_BYTES (never a real mail's) is
    hashed whole, trace headers and all: one pass over the bytes instead of
    one Python step per header line (a 3 MB header of 1,000,000 lines)."""
    head, body = _head_and_body(raw)
    digest = hashlib.sha256()
    if len(head) > MAX_HEADER_SECTION_BYTES:
        digest.update(b"pbem: oversized header section\n")
        digest.update(head)
        digest.update(b"\n\n")
        digest.update(body)
        return digest.hexdigest()
    for line in _logical_headers(head):
        found = _HEADER_NAME.match(line)
        if found and found.group(1).decode("ascii").lower() in TRACE_HEADERS:
            continue
        digest.update(line.rstrip() + b"\n")
    digest.update(b"\n")
    digest.update(body)
    return digest.hexdigest()


def stand_in_message_id(raw: bytes) -> str:
    """The Message-ID pbem uses for a mail that has none: the same at every delivery."""
    return f"<{content_hash(raw)[:40]}@pbem.invalid>"


def _fields(raw: bytes, names: tuple[str, ...]) -> dict[str, str]:
    """The first value of each header in ``names``, from at most the first
    MAX_HEADER_SECTION_BYTES of the mail, each cut to what its parser may see."""
    head, _ = _head_and_body(raw[: MAX_HEADER_SECTION_BYTES + 2])
    wanted = set(names)
    found: dict[str, str] = {}
    for line in _logical_headers(head):
        match = _HEADER_NAME.match(line)
        if not match:
            continue
        name = match.group(1).decode("ascii").lower()
        if name in wanted and name not in found:
            value = line[match.end() : match.end() + 4 * parse_chars(name)].strip()
            found[name] = value.decode("utf-8", "replace")[: parse_chars(name)]
    return found


def identify(raw: bytes) -> MailIdentity:
    """The identity of one raw mail; never raises, whatever the bytes.

    Linear in the size of ``raw``; every string is valid for both databases
    and bounded (pbem.mail.bounds)."""
    try:
        digest = content_hash(raw)
    except Exception:  # noqa: BLE001 - cannot happen for bytes; never stop the caller
        digest = hashlib.sha256(bytes(raw)).hexdigest()
    try:
        fields = _fields(raw, ("message-id", "from", "subject"))
        message_id = clean_message_id(fields.get("message-id", ""))
        sender = address_of(fields.get("from", ""))
        subject = _decoded_subject(fields.get("subject", ""))
    except Exception:  # noqa: BLE001 - a mail is always identified, even if by its hash
        message_id, sender, subject = "", "", ""
    return MailIdentity(message_id or f"<{digest[:40]}@pbem.invalid>", digest, sender, subject)


def from_line(raw: bytes) -> str | None:
    """The value of a mail's first From header as its identity read it (cut
    to what a parser may see; not scrubbed), or None when it has none."""
    try:
        return _fields(raw, ("from",)).get("from")
    except Exception:  # noqa: BLE001 - as identify: whatever the bytes
        return None


def clean_message_id(value: str) -> str:
    """A Message-ID as stored: one line, single spaces, at most MESSAGE_ID_CHARS."""
    return " ".join(scrub_line(value[: 2 * MESSAGE_ID_CHARS], 2 * MESSAGE_ID_CHARS).split())[
        :MESSAGE_ID_CHARS
    ]


def address_of(value: str) -> str:
    """The addr-spec of an address header value, lower case, or "" (also
    when it names more than one address: see pbem.mail.decode._sender).

    Never raises and never recurses deeply: the standard library's parser
    recurses once per nested comment "(((...)))", so it sees a cut value and
    a hostile one falls back to a plain scan."""
    value = value[: parse_chars("from")]
    if len(plain_addresses(value)) > 1:
        return ""
    try:
        address = parseaddr(value)[1]
    except Exception:  # noqa: BLE001 - RecursionError on nested comments, anything else
        found = plain_addresses(value)
        address = found[0] if found else ""
    return scrub_line(address.lower(), ADDRESS_CHARS).strip()


_ANGLE = re.compile(r"<([^<>]*)>")
_BARE = re.compile(r"[^\s<>()\[\],;:\\\"@]+@[^\s<>()\[\],;:\\\"@]+")


def plain_addresses(value: str) -> list[str]:
    """Every address in a header value by a plain linear scan: comments
    removed (nested ones too), then <angle> addresses, else bare a@b words."""
    text = _without_comments(value)
    angled = [a.strip() for a in _ANGLE.findall(text) if "@" in a]
    return angled or _BARE.findall(text)


def _without_comments(value: str) -> str:
    out: list[str] = []
    depth = 0
    quoted = False
    escaped = False
    for char in value:
        if escaped:
            escaped = False
            if not depth:
                out.append(char)
            continue
        if char == "\\":
            escaped = True
            if not depth:
                out.append(char)
        elif char == '"' and not depth:
            quoted = not quoted
            out.append(char)
        elif char == "(" and not quoted:
            depth += 1
        elif char == ")" and not quoted and depth:
            depth -= 1
        elif not depth:
            out.append(char)
    return "".join(out)


def _decoded_subject(value: str) -> str:
    """The Subject as text, decoded from a value already cut to its parse limit."""
    from email.header import decode_header, make_header

    try:
        text = str(make_header(decode_header(value)))
    except Exception:  # noqa: BLE001 - a broken encoded word: keep the text as it is
        text = value
    return scrub_line(text, SUBJECT_CHARS)
