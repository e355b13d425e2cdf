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
from dataclasses import dataclass
from email.utils import parseaddr

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
    text = raw.replace(b"\r\n", b"\n")
    head, sep, body = text.partition(b"\n\n")
    if not sep:
        head, body = text, b""
    headers: list[bytes] = []
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t") and headers:
            headers[-1] += b" " + line.strip()
        else:
            headers.append(line)
    return headers, body


def content_hash(raw: bytes) -> str:
    """SHA-256 of the mail without its trace headers (and with LF line ends)."""
    headers, body = _split(raw)
    digest = hashlib.sha256()
    for line in headers:
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


def _header(headers: list[bytes], name: str) -> str:
    wanted = name.lower()
    for line in headers:
        found = _HEADER_NAME.match(line)
        if found and found.group(1).decode("ascii").lower() == wanted:
            value = line[found.end() :].strip()
            return value.decode("utf-8", "replace")
    return ""


def identify(raw: bytes) -> MailIdentity:
    """The identity of one raw mail; never raises, whatever the bytes."""
    headers, _ = _split(raw)
    digest = content_hash(raw)
    message_id = " ".join(_header(headers, "Message-ID").split())[:900]
    sender = parseaddr(_header(headers, "From"))[1].lower()[:320]
    subject = _decoded_subject(_header(headers, "Subject"))
    return MailIdentity(message_id or f"<{digest[:40]}@pbem.invalid>", digest, sender, subject)


def _decoded_subject(value: str) -> str:
    from email.header import decode_header, make_header

    try:
        return str(make_header(decode_header(value)))[:500]
    except Exception:  # noqa: BLE001 - a broken encoded word: keep the text as it is
        return value[:500]
