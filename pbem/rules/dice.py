"""The game's random stream, `pbem-dice-v1` (the public contract is docs/DICE-VECTORS.md and
the design note DICE.md).

Every draw of a game comes from one 32-byte secret, the game's name and a stream label
(``setup``, ``turn:1``, ``turn:2``, ...), so a game replays bit for bit on any machine, and
once the secret is revealed every player can check every roll.  Block ``i`` of a stream is
``HMAC-SHA256(secret, utf8(game) || 0x00 || utf8(label) || 0x00 || uint64_be(i))``.

This module is on the hot path of simulations: blocks are produced several at a time and
dice are read straight from the buffer.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

DICE_VERSION = "pbem-dice-v1"
SECRET_BYTES = 32

_TWO_32 = 1 << 32
_BLOCKS_PER_REFILL = 8  # 256 bytes = 64 draws per refill; costs nothing in replay terms
_DIE_LIMIT = _TWO_32 - _TWO_32 % 6  # u >= this is rejected when rolling a die


def new_secret() -> bytes:
    """A fresh game secret from the operating system's CSPRNG (the only OS access here)."""
    return secrets.token_bytes(SECRET_BYTES)


def commitment(secret: bytes) -> str:
    """The hex SHA-256 of the secret, mailed to players before any dice are rolled."""
    return hashlib.sha256(_checked_secret(secret)).hexdigest()


def _checked_secret(secret: Any) -> bytes:
    if not isinstance(secret, bytes | bytearray) or len(secret) != SECRET_BYTES:
        # Never echo the secret itself: error messages end up in logs.
        got = f"{len(secret)} bytes" if isinstance(secret, bytes | bytearray) else type(secret)
        raise ValueError(f"a {DICE_VERSION} secret is exactly {SECRET_BYTES} bytes, got {got}")
    return bytes(secret)


def _checked_name(kind: str, value: Any) -> bytes:
    # NUL separates game and label in the HMAC message, so it may not appear in either.
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError(f"the {kind} of a dice stream must be a string without NUL: {value!r}")
    return value.encode("utf-8")


class DiceStream:
    """One named stream of a game: bytes, uniform integers, dice and shuffles, in order."""

    __slots__ = ("label", "_secret", "_prefix", "_next_block", "_buf", "_pos", "_base")

    def __init__(self, secret: bytes, game: str, label: str) -> None:
        self._secret = _checked_secret(secret)
        self._prefix = _checked_name("game", game) + b"\x00" + _checked_name("label", label)
        self._prefix += b"\x00"
        self.label = label
        self._next_block = 0
        self._buf = b""  # bytes of the stream not yet consumed start at _buf[_pos]
        self._pos = 0
        self._base = 0  # stream offset of _buf[0]

    def __repr__(self) -> str:
        return f"DiceStream(label={self.label!r}, position={self.position})"

    @property
    def position(self) -> int:
        """Bytes consumed so far; a game record can store it to show where a turn stopped."""
        return self._base + self._pos

    def _refill(self) -> None:
        first = self._next_block
        key, prefix = self._secret, self._prefix
        fresh = b"".join(
            hmac.digest(key, prefix + i.to_bytes(8, "big"), "sha256")
            for i in range(first, first + _BLOCKS_PER_REFILL)
        )
        self._next_block = first + _BLOCKS_PER_REFILL
        self._base += self._pos
        self._buf = self._buf[self._pos :] + fresh
        self._pos = 0

    def read(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"read() needs a byte count >= 0, got {n!r}")
        while len(self._buf) - self._pos < n:
            self._refill()
        start = self._pos
        self._pos = start + n
        return self._buf[start : start + n]

    def _u32(self) -> int:
        pos = self._pos
        if pos + 4 > len(self._buf):
            self._refill()
            pos = 0
        self._pos = pos + 4
        return int.from_bytes(self._buf[pos : pos + 4], "big")

    def uniform(self, n: int) -> int:
        """An integer in ``0 .. n-1``, every value equally likely (rejection sampling)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= _TWO_32:
            raise ValueError(f"uniform() needs 1 <= n <= 2**32, got {n!r}")
        limit = _TWO_32 - _TWO_32 % n
        while True:
            u = self._u32()
            if u < limit:
                return u % n

    def die(self) -> int:
        """One die, 1..6: ``uniform(6) + 1`` (inlined: simulations roll millions)."""
        while True:
            pos = self._pos
            if pos + 4 > len(self._buf):
                self._refill()
                pos = 0
            self._pos = pos + 4
            u = int.from_bytes(self._buf[pos : pos + 4], "big")
            if u < _DIE_LIMIT:
                return u % 6 + 1

    def roll(self, count: int) -> list[int]:
        """``count`` dice in the order drawn (the caller sorts them for the comparison)."""
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError(f"roll() needs a number of dice >= 0, got {count!r}")
        dice: list[int] = []
        buf, pos = self._buf, self._pos
        while len(dice) < count:
            if pos + 4 > len(buf):
                self._pos = pos
                self._refill()
                buf, pos = self._buf, 0
            u = int.from_bytes(buf[pos : pos + 4], "big")
            pos += 4
            if u < _DIE_LIMIT:
                dice.append(u % 6 + 1)
        self._pos = pos
        return dice

    def shuffle(self, items: list[Any]) -> None:
        """Fisher-Yates in place: for i from len-1 down to 1, swap i with uniform(i + 1)."""
        uniform = self.uniform
        for i in range(len(items) - 1, 0, -1):
            j = uniform(i + 1)
            items[i], items[j] = items[j], items[i]


def stream_for_turn(secret: bytes, game: str, turn: int) -> DiceStream:
    """The stream of all randomness of turn ``turn`` (1, 2, ...)."""
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise ValueError(f"turns are numbered from 1, got {turn!r}")
    return DiceStream(secret, game, f"turn:{turn}")


def setup_stream(secret: bytes, game: str) -> DiceStream:
    """The stream of the game's set-up (territories, missions, the first draw pile)."""
    return DiceStream(secret, game, "setup")
