"""Player passwords (stored only as a salted scrypt hash) and turn tokens.

A password is 12 characters of Crockford's base 32 (no i, l, o or u), shown
in groups of four, ``kq7m-x3hw-9tpf``: 60 bits, and easy to copy from a mail.
It is checked as its canonical form: case, blanks and hyphens (also the
dashes and invisible breaks a mail program may put in) do not count, and the
look-alikes o/i/l read as 0/1/1. Such hashes are marked ``scrypt-c``.

Passwords issued before (three words and a number, ~24 bits) keep working:
their hashes (``scrypt``) are of the password as it was issued, and are
tried with what the player typed, then with that written the way it was
issued (lower case, words joined by hyphens).

A turn token is what the "your turn" notice puts in its subject: a short MAC
of (game, seat, turn) under the game's secret, so a reply to the notice
proves the player read it without any password, and goes stale once the
turn has been played.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import re
import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pbem.store import Game

_N, _R, _P = 2**14, 8, 1
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base 32
GROUPS, GROUP_LENGTH = 3, 4
LENGTH = GROUPS * GROUP_LENGTH
ENTROPY_BITS = LENGTH * math.log2(len(ALPHABET))  # 60
CANONICAL = "scrypt-c"  # a hash of the canonical form (this module's passwords)
LEGACY = "scrypt"  # a hash of the password as issued (the word passwords before)
# Blanks, hyphens and what mail programs turn them into: dashes, the
# non-breaking and soft hyphen, zero-width spaces, the minus sign.
_IGNORED = re.compile("[\\s\\-\u00ad\u2010-\u2015\u2212\u200b-\u200d\u2060\ufeff]+")
_LOOK_ALIKES = str.maketrans({"o": "0", "i": "1", "l": "1"})
MAX_TYPED = 200  # characters of a typed password read at all (scrypt costs ~50 ms)

# The words of the passwords issued before (verification of those only).
LEGACY_WORDS = (
    "amber",
    "anchor",
    "arrow",
    "badger",
    "banner",
    "beacon",
    "birch",
    "bison",
    "canyon",
    "cedar",
    "cobalt",
    "comet",
    "copper",
    "coral",
    "crane",
    "delta",
    "ember",
    "falcon",
    "fjord",
    "flint",
    "garnet",
    "glacier",
    "harbor",
    "hazel",
    "heron",
    "indigo",
    "island",
    "jasper",
    "juniper",
    "kestrel",
    "lagoon",
    "lantern",
    "maple",
    "meadow",
    "mesa",
    "nebula",
    "nectar",
    "oasis",
    "onyx",
    "orchid",
    "otter",
    "pepper",
    "pine",
    "prairie",
    "quartz",
    "raven",
    "reef",
    "saffron",
    "sierra",
    "spruce",
    "summit",
    "tundra",
    "umber",
    "valley",
    "walnut",
    "willow",
    "zephyr",
)
_LEGACY_SET = frozenset(LEGACY_WORDS)


def new_password() -> str:
    """Twelve random characters of ``ALPHABET`` in groups of four (60 bits)."""
    chars = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
    return "-".join(chars[i : i + GROUP_LENGTH] for i in range(0, LENGTH, GROUP_LENGTH))


def canonical(password: str) -> str:
    """What is compared: without blanks and hyphens, lower case, o/i/l as 0/1/1."""
    return _IGNORED.sub("", password).lower().translate(_LOOK_ALIKES)


def _scrypt(text: str, salt: bytes, n: int, r: int, p: int) -> str:
    return hashlib.scrypt(text.encode(), salt=salt, n=n, r=r, p=p, dklen=32).hex()


def hash_password(password: str) -> str:
    """The stored form of a newly issued password: scrypt of its canonical form."""
    salt = secrets.token_bytes(16)
    digest = _scrypt(canonical(password), salt, _N, _R, _P)
    return f"{CANONICAL}${_N}${_R}${_P}${salt.hex()}${digest}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` (as a person typed it) opens ``stored``; False for
    any stored text that is not a hash of this module."""
    try:
        kind, n, r, p, salt_hex, digest = stored.split("$")
        cost = (int(n), int(r), int(p))
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    if len(password) > MAX_TYPED:
        return False
    if kind == CANONICAL:
        trials = [canonical(password)]
    elif kind == LEGACY:
        trials = list(dict.fromkeys([password, *_as_issued(password)]))
    else:
        return False
    for trial in trials:
        try:
            if hmac.compare_digest(_scrypt(trial, salt, *cost), digest):
                return True
        except (ValueError, MemoryError):  # a cost scrypt refuses: no hash of ours
            return False
    return False


def _as_issued(password: str) -> list[str]:
    """An old word password the way it was issued (``amber-pine-onyx-07``), from
    what a person typed: other case, blanks for hyphens, or the words run
    together; at most one reading (so at most two scrypt runs)."""
    parts = [w for w in _IGNORED.split(password.lower()) if w]
    if len(parts) == 4:
        return ["-".join(parts)]
    if len(parts) != 1 or not re.fullmatch(r"[a-z]+\d\d", parts[0]):
        return []
    letters, number = parts[0][:-2], parts[0][-2:]
    for a, b in itertools.product(LEGACY_WORDS, repeat=2):
        rest = letters.removeprefix(a)
        if rest != letters and rest.startswith(b) and rest[len(b) :] in _LEGACY_SET:
            return [f"{a}-{b}-{rest[len(b) :]}-{number}"]
    return []


def turn_token(secret: bytes, game: str, seat: int, turn: int) -> str:
    mac = hmac.new(secret, f"token:{game}:{seat}:{turn}".encode(), hashlib.sha256)
    return mac.hexdigest()[:10]


def reply_token(game: Game, seat: int) -> str:
    """The token every mail to ``seat`` carries in its subject: a reply with it
    proves the sender reads that seat's mail (pbem/service/intake/proof.py),
    until the game's turn moves on."""
    return turn_token(bytes.fromhex(game.secret), game.name, seat, game.turn)
