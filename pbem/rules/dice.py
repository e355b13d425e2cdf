"""The game's random streams, `pbem-dice-v1` and `pbem-dice-v2` (the public contract is
docs/DICE.md, with the v1 vectors in docs/DICE-VECTORS.md).

Every draw of a game comes from one 32-byte secret, the game's name and a stream label
(``setup``, ``turn:1``, ``turn:2``, ...), so a game replays bit for bit on any machine, and
once the secret is revealed every player can check every roll.  Block ``i`` of a stream is
``HMAC-SHA256(secret, utf8(game) || 0x00 || utf8(label) || 0x00 || uint64_be(i))``.

Version 2 keys each stream with ``BLAKE2b(key=secret)`` over the label and the hashes of
the players' contributions (their SALT lines or their orders), and expands the key with
SHAKE-256, so a turn's dice are fixed only once its orders are in, and cost one keyed hash.

This module is on the hot path of simulations: blocks are produced several at a time and
dice are read straight from the buffer.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from typing import Any, Final

DICE_V1: Final = "pbem-dice-v1"
DICE_V2: Final = "pbem-dice-v2"
DICE_VERSIONS: Final = (DICE_V1, DICE_V2)
DICE_VERSION: Final = DICE_V1  # the version of DiceStream itself (records without a version)
DEFAULT_DICE_VERSION: Final = DICE_V2  # what new games use
SECRET_BYTES: Final = 32
CONTRIBUTION_BYTES: Final = 32
SALT_PREFIX: Final = "SALT "  # the canonical SALT line of an entry: "SALT " + the player's text

_TWO_32: Final = 1 << 32
_BLOCKS_PER_REFILL: Final = 4  # 128 bytes = 32 draws: a turn wastes 1.5 blocks, not 3.5 (replay)
_DIE_LIMIT: Final = _TWO_32 - _TWO_32 % 6  # u >= this is rejected when rolling a die
# a 32-byte secret padded to SHA-256's 64-byte block: the tails of HMAC's two pads
_INNER_PAD_TAIL: Final = b"\x36" * 32
_OUTER_PAD_TAIL: Final = b"\x5c" * 32


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
        raise ValueError(f"a pbem-dice secret is exactly {SECRET_BYTES} bytes, got {got}")
    return bytes(secret)


def secret_size_problem(secret: bytes, version: str) -> str:
    """Why ``secret`` cannot be a secret of dice ``version`` ("" when it can); it names
    sizes only, never the secret (error messages end up in logs)."""
    if len(secret) == SECRET_BYTES:
        return ""
    return (
        f"the secret is {len(secret)} bytes ({2 * len(secret)} hex digits); a {version} "
        f"secret is exactly {SECRET_BYTES} bytes ({2 * SECRET_BYTES} hex digits)"
    )


def _checked_name(kind: str, value: Any) -> bytes:
    # NUL separates game and label in the HMAC message, so it may not appear in either.
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError(f"the {kind} of a dice stream must be a string without NUL: {value!r}")
    return value.encode("utf-8")


_KEYED: dict[bytes, tuple[Any, Any]] = {}  # the last secret's two keyed SHA-256 states


def _keyed(secret: bytes) -> tuple[Any, Any]:
    """SHA-256 after HMAC's inner pad and after its outer pad, for ``secret``.

    Every turn of a game is a stream of the same secret: a replay keys it once
    (the last secret only is kept; the states are copied, never updated)."""
    states = _KEYED.get(secret)
    if states is None:
        inner = hashlib.sha256(bytes([b ^ 0x36 for b in secret]) + _INNER_PAD_TAIL)
        outer = hashlib.sha256(bytes([b ^ 0x5C for b in secret]) + _OUTER_PAD_TAIL)
        states = (inner, outer)
        _KEYED.clear()
        _KEYED[secret] = states
    return states


class DiceStream:
    """One named stream of a game: bytes, uniform integers, dice and shuffles, in order."""

    __slots__ = (
        "label",
        "log",
        "_secret",
        "_prefix",
        "_next_block",
        "_buf",
        "_pos",
        "_base",
        "_faces",
        "_inner",
        "_outer",
    )

    def __init__(self, secret: bytes | object, game: str, label: str) -> None:
        # (secret: checked by _checked_secret, which names the problem; compiled, a
        # declared bytes would refuse other types with a bare TypeError first)
        self._secret = _checked_secret(secret)
        self._prefix = _checked_name("game", game) + b"\x00" + _checked_name("label", label)
        self._prefix += b"\x00"
        self.label = label
        # (n, result) of every uniform(n) drawn, when a record's draws are being written
        self.log: list[tuple[int, int]] | None = None
        self._next_block = 0
        self._buf = b""  # bytes of the stream not yet consumed start at _buf[_pos]
        self._pos = 0
        self._base = 0  # stream offset of _buf[0]
        self._faces: tuple[int, ...] = ()  # the die each 4-byte word of _buf gives, 0: none
        # HMAC-SHA256 of the stream's blocks, keyed once: SHA-256 after the inner pad and
        # the prefix, and after the outer pad (made by the first refill)
        self._inner: Any = None
        self._outer: Any = None

    def __repr__(self) -> str:
        return f"DiceStream(label={self.label!r}, position={self.position})"

    @property
    def position(self) -> int:
        """Bytes consumed so far; a game record can store it to show where a turn stopped."""
        return self._base + self._pos

    def _refill(self) -> None:
        first = self._next_block
        inner, outer = self._inner, self._outer
        if inner is None:
            # HMAC (RFC 2104) by hand: hmac.digest keys OpenSSL again for every block,
            # which cost 2.5 times these two copies of already keyed SHA-256 states
            keyed_inner, outer = _keyed(self._secret)
            inner = keyed_inner.copy()
            inner.update(self._prefix)
            self._inner, self._outer = inner, outer
        blocks: list[bytes] = []
        for i in range(first, first + _BLOCKS_PER_REFILL):
            h = inner.copy()
            h.update(i.to_bytes(8, "big"))
            o = outer.copy()
            o.update(h.digest())
            blocks.append(o.digest())
        fresh = b"".join(blocks)
        self._next_block = first + _BLOCKS_PER_REFILL
        self._base += self._pos
        self._buf = self._buf[self._pos :] + fresh
        self._pos = 0
        self._faces = _faces(self._buf)

    def read(self, n: int | object) -> bytes:
        """The next ``n`` bytes of the stream (``n`` checked here, as in uniform)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"read() needs a byte count >= 0, got {n!r}")
        count: int = n
        while len(self._buf) - self._pos < count:
            self._refill()
        start = self._pos
        self._pos = start + count
        return self._buf[start : start + count]

    def _u32(self) -> int:
        pos = self._pos
        if pos + 4 > len(self._buf):
            self._refill()
            pos = 0
        self._pos = pos + 4
        return int.from_bytes(self._buf[pos : pos + 4], "big")

    def uniform(self, n: int | object) -> int:
        """An integer in ``0 .. n-1``, every value equally likely (rejection sampling).

        ``n`` is an int checked here, not by its annotation: compiled (mypyc), a
        declared int would refuse a float with a TypeError before this ValueError."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= _TWO_32:
            raise ValueError(f"uniform() needs 1 <= n <= 2**32, got {n!r}")
        bound: int = n
        limit = _TWO_32 - _TWO_32 % bound
        while True:
            u = self._u32()
            if u < limit:
                if self.log is not None:
                    self.log.append((bound, u % bound))
                return u % bound

    def die(self) -> int:
        """One die, 1..6: ``uniform(6) + 1`` (inlined: simulations roll millions)."""
        if self.log is not None:
            return self.uniform(6) + 1
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
        return list(self.roll_tuple(count))

    def roll_tuple(self, count: int) -> tuple[int, ...]:
        """``count`` dice in the order drawn, as a tuple (the hot path of a battle).

        Each refill decodes its words into faces once (``_faces``), so a roll is one
        slice; a rejected word (4 in 2**32) or an unaligned position (after ``read``)
        takes the word-by-word path, which gives the same dice."""
        if type(count) is not int or count < 0:
            raise ValueError(f"roll() needs a number of dice >= 0, got {count!r}")
        pos = self._pos
        if not pos & 3:
            start = pos >> 2
            faces = self._faces[start : start + count]
            if len(faces) < count:  # the buffer runs out: refill, then slice again
                self._refill()
                pos = 0
                faces = self._faces[:count]
            if len(faces) == count and 0 not in faces:
                self._pos = pos + 4 * count
                if self.log is not None:  # what uniform(6) logs for each die
                    self.log.extend([_LOGGED[d] for d in faces])
                return faces
        return self._slow_dice(count)

    def face_cursor(self) -> tuple[tuple[int, ...], int] | None:
        """The decoded faces and the index of the next draw in them, for a caller
        that takes many rolls in a row (attacking.attack): it slices its dice there,
        then calls ``skip_faces`` with how many it took. Where a slice runs short
        or holds a rejected word (0), the caller rolls with ``roll_tuple`` instead,
        so the dice are the same. None when the position is not on a word (after
        ``read``)."""
        pos = self._pos
        if pos & 3:
            return None
        return self._faces, pos >> 2

    def skip_faces(self, count: int) -> None:
        """Consume ``count`` faces taken through ``face_cursor``; logged draws get
        them as uniform(6) would have logged them (the caller took no rejected word)."""
        if self.log is not None:
            first = self._pos >> 2
            self.log.extend([_LOGGED[face] for face in self._faces[first : first + count]])
        self._pos += count << 2

    def _slow_dice(self, count: int) -> tuple[int, ...]:
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
        if self.log is not None:  # what uniform(6) would have logged: rejections are not
            self.log.extend([(6, d - 1) for d in dice])
        return tuple(dice)

    def shuffle(self, items: list[Any]) -> None:
        """Fisher-Yates in place: for i from len-1 down to 1, swap i with uniform(i + 1)."""
        uniform = self.uniform
        for i in range(len(items) - 1, 0, -1):
            j = uniform(i + 1)
            items[i], items[j] = items[j], items[i]


# face -> what uniform(6) logs for it (index 0 is never a face)
_LOGGED: Final[tuple[tuple[int, int], ...]] = (
    (6, -1), (6, 0), (6, 1), (6, 2), (6, 3), (6, 4), (6, 5)
)


def faces_unpacked(buf: bytes) -> tuple[int, ...]:
    """The die (1..6) that each whole 4-byte word of ``buf`` gives, 0 where it is rejected.

    The pure-Python way: one ``struct.unpack`` and a list comprehension."""
    count = len(buf) >> 2
    words: tuple[int, ...] = struct.unpack(f">{count}I", buf[: count << 2])  # typed: int ops
    if b"\xff\xff\xff" in buf:  # a rejected word starts so (4 in 2**32); search in C
        return tuple([u % 6 + 1 if u < _DIE_LIMIT else 0 for u in words])
    return tuple([u % 6 + 1 for u in words])


def faces_by_bytes(buf: bytes) -> tuple[int, ...]:
    """The same faces as ``faces_unpacked``, byte by byte: the compiled way.

    2**8, 2**16 and 2**24 are all 4 modulo 6, so a word b0 b1 b2 b3 (big-endian)
    is ``4 * (b0 + b1 + b2) + b3`` modulo 6, and it is rejected (>= 2**32 - 4)
    when b0 = b1 = b2 = 255 and b3 >= 252. Compiled (mypyc), this makes no
    Python int at all; interpreted, it is slower than ``faces_unpacked``."""
    out: list[int] = []
    end = len(buf) & ~3
    k = 0
    while k < end:
        b0 = buf[k]
        b1 = buf[k + 1]
        b2 = buf[k + 2]
        b3 = buf[k + 3]
        if b0 == 255 and b1 == 255 and b2 == 255 and b3 >= 252:
            out.append(0)
        else:
            out.append((4 * (b0 + b1 + b2) + b3) % 6 + 1)
        k += 4
    return tuple(out)


# Compiled, this module has no .py __file__: the byte loop is then the fast one.
_faces: Final = faces_unpacked if __file__.endswith(".py") else faces_by_bytes


class DiceStreamV2(DiceStream):
    """A ``pbem-dice-v2`` stream: SHAKE-256 of a key that mixes the secret, the label and
    the contributions of the step. The same draws as v1 (uniform, die, roll, shuffle)."""

    __slots__ = ("key", "contributions", "_xof", "_made")

    def __init__(
        self, secret: bytes, game: str, label: str, contributions: tuple[bytes, ...] = ()
    ) -> None:
        # No super().__init__: v1's HMAC prefix is not needed; stream_key checks the rest.
        self.label = label
        self.log = None
        self._secret = b""  # the key below is all this stream needs of the secret
        self._prefix = b""
        self._next_block = 0
        self._buf, self._pos, self._base = b"", 0, 0
        self._faces = ()
        self._inner = self._outer = None  # v1's HMAC states: not used
        self.contributions = tuple(contributions)
        self.key = stream_key(secret, game, label, self.contributions)
        self._xof = hashlib.shake_256(self.key)
        self._made = 0  # bytes of the XOF output produced so far

    def __repr__(self) -> str:
        return f"DiceStreamV2(label={self.label!r}, position={self.position})"

    def _refill(self) -> None:
        # SHAKE-256 output is a prefix-stable stream: ask for twice as much, keep the tail.
        want = max(_V2_FIRST_BYTES, 2 * self._made)
        fresh = self._xof.digest(want)[self._made :]
        self._made = want
        self._base += self._pos
        self._buf = self._buf[self._pos :] + fresh
        self._pos = 0
        self._faces = _faces(self._buf)


_V2_FIRST_BYTES: Final = 256  # 64 draws: most turns never need a second call
_V2_TAG: Final = DICE_V2.encode("ascii")


def _checked_contribution(value: Any) -> bytes:
    if not isinstance(value, bytes | bytearray) or len(value) != CONTRIBUTION_BYTES:
        raise ValueError(f"a {DICE_V2} contribution is a {CONTRIBUTION_BYTES}-byte hash")
    return bytes(value)


def stream_key(secret: bytes, game: str, label: str, contributions: tuple[bytes, ...]) -> bytes:
    """The 32-byte key of a v2 stream: BLAKE2b-256, keyed with the secret, of
    ``"pbem-dice-v2" 0x00 game 0x00 label 0x00 uint32_be(count) h_1 .. h_count``."""
    if len(contributions) >= 1 << 32:
        raise ValueError("too many contributions for one stream")
    message = b"".join(
        (
            _V2_TAG,
            b"\x00",
            _checked_name("game", game),
            b"\x00",
            _checked_name("label", label),
            b"\x00",
            len(contributions).to_bytes(4, "big"),
            *(_checked_contribution(c) for c in contributions),
        )
    )
    return hashlib.blake2b(message, key=_checked_secret(secret), digest_size=32).digest()


def salt_of(text: str) -> str | None:
    """The SALT of an entry's canonical text (its line ``SALT ...``), or None."""
    for line in text.split("\n"):
        if line.startswith(SALT_PREFIX):
            return line[len(SALT_PREFIX) :]
    return None


def contribution(text: str) -> bytes:
    """What one log entry adds to a v2 key: SHA-256 of its SALT when it has one, else
    SHA-256 of its canonical text (leading and trailing line feeds removed)."""
    salt = salt_of(text)
    chosen = salt if salt is not None else text.strip("\n")
    return hashlib.sha256(chosen.encode("utf-8")).digest()


def make_stream(
    version: str, secret: bytes, game: str, label: str, contributions: tuple[bytes, ...] = ()
) -> DiceStream:
    """The stream ``label`` of a game under its dice version (v1 has no contributions)."""
    if version == DICE_V1:
        return DiceStream(secret, game, label)
    if version == DICE_V2:
        return DiceStreamV2(secret, game, label, contributions)
    known = ", ".join(DICE_VERSIONS)
    raise ValueError(f"unknown dice version {version!r} (known: {known})")


def check_version(version: str) -> str:
    """A dice version as stored with a game: the full tag, from ``v1``/``v2`` or the tag."""
    full = {"v1": DICE_V1, "v2": DICE_V2}.get(version, version)
    if full not in DICE_VERSIONS:
        raise ValueError(f"unknown dice version {version!r}: use v1 or v2")
    return full


def stream_for_turn(secret: bytes, game: str, turn: int | object) -> DiceStream:
    """The stream of all randomness of turn ``turn`` (1, 2, ...).

    (``turn`` is checked here: compiled, a declared int would take True as 1.)"""
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise ValueError(f"turns are numbered from 1, got {turn!r}")
    return DiceStream(secret, game, f"turn:{turn}")


def setup_stream(secret: bytes, game: str) -> DiceStream:
    """The stream of the game's set-up (territories, missions, the first draw pile)."""
    return DiceStream(secret, game, "setup")
