"""How stored mail bytes are kept: compressed, and pruned to headers when old.

Inbound raw mail is evidence and stays whole, compressed with zlib (mail
text compresses 3-5x). A sent outbox mail is kept compressed until the
retention period ends, then only its header block stays (with the hash of
the whole in ``Outbox.raw_sha256``), so storage does not grow with every
rendered report.
"""

from __future__ import annotations

import zlib

from pbem.vocab import RawFormat

# zlib level 1: a rendered report (mostly a base64 PNG) comes out 3% larger
# than at the default 6, in two thirds of the time (1.0 against 1.4 ms for
# 63 KB); every mail the service sends is packed once.
_LEVEL = 1


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
