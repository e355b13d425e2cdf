"""Player passwords (stored only as a salted scrypt hash) and turn tokens.

A turn token is what the "your turn" notice puts in its subject: a short MAC
of (game, seat, turn) under the game's secret, so a reply to the notice
proves the player read it without any password, and goes stale once the
turn has been played.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

_N, _R, _P = 2**14, 8, 1
WORDS = (
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


def new_password() -> str:
    """Three words and a number: easy to type in a mail, ~30 bits of entropy."""
    words = [secrets.choice(WORDS) for _ in range(3)]
    return "-".join(words) + f"-{secrets.randbelow(100):02d}"


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if kind != "scrypt":
        return False
    trial = hashlib.scrypt(
        password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=32
    )
    return hmac.compare_digest(trial.hex(), digest)


def turn_token(secret: bytes, game: str, seat: int, turn: int) -> str:
    mac = hmac.new(secret, f"token:{game}:{seat}:{turn}".encode(), hashlib.sha256)
    return mac.hexdigest()[:10]
