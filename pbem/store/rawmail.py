"""How stored mail bytes are kept: compressed, and pruned to headers when old.

A sent outbox mail is kept compressed until the retention period ends, then
only its header block stays (with the hash of the whole in
``Outbox.raw_sha256``), so storage does not grow with every rendered report.

Inbound mail is kept small from the start (anyone may write to a game's
address): its claim stores only the header block, at most
``HEADER_CAP`` bytes, plus the SHA-256 of the whole in ``checksum``. Only a
mail processed for a game (a player's or the GM's) is kept whole, as
evidence, capped at ``[mail] max_mail_bytes`` and with its PASSWORD lines
blanked (``kept_copy``), compressed with zlib.
"""

from __future__ import annotations

import re
import zlib
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from functools import lru_cache

from pbem.vocab import RawFormat

# zlib level 1: a rendered report (mostly a base64 PNG) comes out a little
# larger than at the default 6, in less time (docs/PERFORMANCE.md); every mail
# the service sends is packed once.
_LEVEL = 1

HEADER_CAP = 8 * 1024  # bytes of a mail's header block kept in its claim row
PASSWORD_MASK = "********"

# "PASSWORD word" at the start of a line, also quoted ("> PASSWORD word") or
# after an HTML tag ("<p>PASSWORD word"); "Password: word" too.
_LEAD = r"^((?:[ \t>]|&gt;|<[^<>\r\n]{0,200}>)*password\b[ \t]*:?[ \t]*)"
_PASSWORD_TEXT = re.compile(_LEAD + r"([^\s<]+)", re.IGNORECASE | re.MULTILINE)
_PASSWORD_BYTES = re.compile(_LEAD.encode() + rb"([^\s<]+)", re.IGNORECASE | re.MULTILINE)
_ENCODED_TEXT = re.compile(
    rb"^content-transfer-encoding:[ \t]*\"?(base64|quoted-printable)", re.IGNORECASE | re.MULTILINE
)


def pack(raw: bytes) -> tuple[bytes, RawFormat]:
    """Bytes to store and their format."""
    return zlib.compress(raw, _LEVEL), RawFormat.ZLIB


def unpack(data: bytes, fmt: str) -> bytes:
    """The mail as it was stored (for a pruned mail: its headers only)."""
    if fmt == RawFormat.ZLIB:
        return zlib.decompress(data)
    return bytes(data)


def header_block(raw: bytes) -> bytes:
    """The header section of a mail, up to and including the blank line."""
    for separator in (b"\r\n\r\n", b"\n\n"):
        end = raw.find(separator)
        if end >= 0:
            return raw[: end + len(separator)]
    return raw


def kept_headers(raw: bytes) -> tuple[bytes, RawFormat]:
    """What a claim row stores of any mail: its header block, at most
    ``HEADER_CAP`` bytes, never the body (stored as ``PRUNED``)."""
    head = header_block(raw[: HEADER_CAP + 4])
    return head[:HEADER_CAP], RawFormat.PRUNED


def kept_copy(raw: bytes, max_bytes: int) -> tuple[bytes, RawFormat]:
    """What is stored of a mail processed for a game: the whole mail, PASSWORD
    lines blanked, at most ``max_bytes``, compressed."""
    return pack(blank_passwords(raw)[:max_bytes])


@lru_cache(maxsize=1)  # one mail is blanked for its stored copy, then for its folder
def blank_passwords(raw: bytes) -> bytes:
    """The mail with the value of every PASSWORD line replaced by a mask.

    Plain text is blanked in the bytes as they are; text parts in base64 or
    quoted-printable are decoded (email, policy.default), blanked and encoded
    again, so the mail is re-serialized only when such a part held one.
    Whatever cannot be parsed keeps the plain-text blanking."""
    blanked = _PASSWORD_BYTES.sub(rb"\1" + PASSWORD_MASK.encode(), raw)
    if not _ENCODED_TEXT.search(blanked):
        return blanked
    try:
        message = BytesParser(policy=policy.default).parsebytes(blanked)
        assert isinstance(message, EmailMessage)
        if not _blank_encoded_parts(message):
            return blanked
        return message.as_bytes(policy=policy.default)
    except Exception:  # noqa: BLE001 - any input: the plain-text blanking stands
        return blanked


def _blank_encoded_parts(message: EmailMessage) -> bool:
    """Blank PASSWORD lines inside encoded text parts; True if any changed."""
    changed = False
    for part in message.walk():  # the top level first
        if part.is_multipart() or part.get_content_maintype() != "text":
            continue
        cte = str(part.get("Content-Transfer-Encoding", "")).strip().strip('"').lower()
        if cte not in ("base64", "quoted-printable"):
            continue
        try:
            text = part.get_content()
        except (LookupError, ValueError):  # an unknown charset: read as UTF-8
            payload = part.get_payload(decode=True)
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
        new = _PASSWORD_TEXT.sub(r"\1" + PASSWORD_MASK, text)
        if new != text:
            assert isinstance(part, EmailMessage)
            part.set_content(new, subtype=part.get_content_subtype(), cte=cte)
            if part is not message:
                del part["MIME-Version"]  # set_content adds it; a sub-part has none
            changed = True
    return changed
