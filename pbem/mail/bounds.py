"""Every limit the mail layer puts on what one incoming mail may cost, in one place.

A game's address is public: anyone can send it anything. So every step that
reads a mail works within limits decided before the work: the size (the
``[mail] max_mail_bytes`` setting), the header section (checked on the raw
bytes before any parser sees them), how much of one header value a parser
may see, how many MIME parts are walked, and how much text comes out. Real
mail programs stay far below each limit; a mail past one is hostile or
broken. Every string the mail layer hands on is scrubbed here, so that it
is valid for SQLite *and* PostgreSQL (whose text type refuses NUL) and has
a bounded length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the one size limit of incoming mail ([mail] max_mail_bytes changes it); here
# rather than in decode.py so that the settings (every command reads them)
# need not import the decoder
MAX_MAIL_BYTES = 1_048_576

# --- the header section, checked on the raw bytes before parsing -------------

# Real mails carry 10-80 header fields (a long Received chain included).
MAX_HEADER_FIELDS = 1000
# One logical header, folded lines joined (Postfix keeps at most 100 KiB of one).
MAX_HEADER_BYTES = 64 * 1024
# Every header field together, up to the blank line before the body.
MAX_HEADER_SECTION_BYTES = 256 * 1024

# --- what a header parser may see of one value --------------------------------

# The standard library's structured header parser grows faster than the
# value (the figures: docs/PERFORMANCE.md); each value is cut to these many
# characters (after unfolding) before it is parsed, so every header costs a
# small, fixed amount. Real values are far shorter: a From is ~50
# characters, an address list of 20 players ~800.
PARSE_CHARS_DEFAULT = 2000
_ADDRESS_HEADERS = ("from", "sender", "reply-to", "to", "cc", "bcc")
PARSE_CHARS = {
    **dict.fromkeys(_ADDRESS_HEADERS, 1000),
    **dict.fromkeys((f"resent-{name}" for name in _ADDRESS_HEADERS), 1000),
    "subject": 4000,  # encoded words take ~4 characters per character kept
    "content-type": 1000,
    "content-disposition": 1000,
    "content-transfer-encoding": 100,
    "date": 200,
}

# --- structure and text -------------------------------------------------------

# A forward of a reply with a few attachments is ~10 parts.
MAX_MIME_PARTS = 200
MAX_ATTACHMENTS = 100  # described in an answer; the others are counted in no list
MAX_REFERENCES = 100  # the first (the thread's root) and the 99 latest
MAX_RECIPIENTS = 100
MAX_QUOTE_DEPTH = 20  # "> " prefixes written for nested quotes in HTML
MAX_TEXT_LINES = 20_000
MAX_TEXT_CHARS = 256 * 1024  # orders and press are a few KiB

# --- single values as stored and shown ------------------------------------------

MESSAGE_ID_CHARS = 900
ADDRESS_CHARS = 320  # RFC 5321: 64 + 1 + 255
NAME_CHARS = 200
SUBJECT_CHARS = 500
FILENAME_CHARS = 255
CONTENT_TYPE_CHARS = 127


@dataclass(frozen=True)
class HeaderLimits:
    """The header-section limits; tests and callers may pass smaller ones."""

    fields: int = MAX_HEADER_FIELDS
    header_bytes: int = MAX_HEADER_BYTES
    section_bytes: int = MAX_HEADER_SECTION_BYTES


# C0 controls and DEL; a line keeps none, a text keeps TAB and LF.
_LINE_CONTROLS = re.compile("[\x00-\x1f\x7f]+")
_TEXT_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]+")
_SURROGATES = re.compile("[\ud800-\udfff]")


def scrub_line(value: str, limit: int) -> str:
    """One line of text, valid for both databases: controls become one space
    (so folded or tab-separated words stay apart), lone surrogates (from
    undecodable bytes) become U+FFFD, at most ``limit`` characters."""
    value = _SURROGATES.sub("\ufffd", _LINE_CONTROLS.sub(" ", value))
    return value[:limit]


def scrub_text(value: str, limit: int = MAX_TEXT_CHARS) -> str:
    """A multi-line text, valid for both databases: NUL and the other C0
    controls except TAB and LF removed, surrogates replaced, at most
    ``limit`` characters."""
    value = _SURROGATES.sub("\ufffd", _TEXT_CONTROLS.sub("", value))
    return value[:limit]


def parse_chars(name: str) -> int:
    """How many characters of the header ``name`` a parser may see."""
    return PARSE_CHARS.get(name.lower(), PARSE_CHARS_DEFAULT)


def header_section_problem(raw: bytes, limits: HeaderLimits = HeaderLimits()) -> str | None:
    """What is too big in the header section of ``raw``, in words for its
    sender, or None. One linear pass over at most ``section_bytes`` + 1 bytes,
    before any parser sees the mail."""
    end = _header_end(raw, limits.section_bytes + 1)
    if end > limits.section_bytes:
        return (
            f"its header lines (From, To, Subject, ...) take more than "
            f"{limits.section_bytes:,} bytes"
        )
    fields = 0
    start = 0  # where the current logical header began
    position = 0
    while position < end:
        line_end = raw.find(b"\n", position, end)
        if line_end < 0:
            line_end = end
        if raw[position : position + 1] not in (b" ", b"\t") or fields == 0:
            if position - start > limits.header_bytes:
                return _too_long(raw[start:position], limits.header_bytes)
            fields += 1
            start = position
            if fields > limits.fields:
                return f"it has more than {limits.fields:,} header lines"
        position = line_end + 1
    if end - start > limits.header_bytes:
        return _too_long(raw[start:end], limits.header_bytes)
    return None


_CONTENT_TYPE_LINE = re.compile(rb"^content-type[ \t]*:", re.IGNORECASE | re.MULTILINE)
_MULTIPART_LINE = re.compile(rb"^content-type[ \t]*:[ \t]*multipart/", re.I | re.M)
_CLOSE_DELIMITER = re.compile(rb"^--[^\r\n]*--[ \t]*\r?$", re.MULTILINE)


def content_type_lines(raw: bytes) -> int:
    """How many lines of ``raw`` start with "Content-Type:" (at most one per
    MIME part, so at least the parts a parser would build); one linear scan,
    stopping past MAX_MIME_PARTS + 1."""
    return _count(_CONTENT_TYPE_LINE, raw, len(raw), MAX_MIME_PARTS + 1)


def opened_multiparts(raw: bytes, limit: int) -> int:
    """How many multiparts ``raw`` opens before it closes one (a lower bound
    of its nesting for parts one inside the other), counted up to ``limit``."""
    closing = _CLOSE_DELIMITER.search(raw)
    return _count(_MULTIPART_LINE, raw, len(raw) if closing is None else closing.start(), limit)


def _count(pattern: re.Pattern[bytes], raw: bytes, end: int, limit: int) -> int:
    found = 0
    for _ in pattern.finditer(raw, 0, end):
        found += 1
        if found >= limit:
            break
    return found


def _header_end(raw: bytes, cap: int) -> int:
    """Where the header section of ``raw`` ends (its blank line), at most ``cap``."""
    window = raw[:cap]
    ends = [i for i in (window.find(b"\n\n"), window.find(b"\n\r\n")) if i >= 0]
    return min(ends) + 1 if ends else len(window)


def _too_long(header: bytes, limit: int) -> str:
    name = header.split(b":", 1)[0][:40].decode("ascii", "replace")
    name = scrub_line(name, 40).strip() or "one"
    return f"its {name} header is longer than {limit:,} bytes"
