"""Benchmark what a password costs the service (issue 27): the CPU a mail
with a PASSWORD line can make pbem spend.

    python scripts/bench/passwords.py [--repeat 20]

Prints, median and worst of ``--repeat`` runs, in milliseconds:
- a right and a wrong password against a hash of today (``scrypt-c``: one
  scrypt run);
- a wrong password against an old word password's hash (``scrypt``: at most
  two runs, as typed and as issued);
- the leak check of one stranger's mail with a PASSWORD line against a game
  of 6 seats (one run per seat), and its hourly ceiling per game
  (``LEAK_CHECKS_PER_HOUR`` mails);
and the entropy of a new password. Nothing is asserted: figures only.
"""

from __future__ import annotations

import argparse
import hashlib
import secrets
import statistics
import time
from collections.abc import Callable

from pbem.service.intake.seatguard import LEAK_CHECKS_PER_HOUR
from pbem.service.play.passwords import (
    ALPHABET,
    ENTROPY_BITS,
    LENGTH,
    MAX_TYPED,
    hash_password,
    new_password,
    verify_password,
)


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat

    print(
        f"new password: {new_password()} ({LENGTH} of {len(ALPHABET)} characters, "
        f"{ENTROPY_BITS:.0f} bits; {len(ALPHABET)}**{LENGTH} >= 2**48: "
        f"{len(ALPHABET) ** LENGTH >= 2**48})"
    )
    password = new_password()
    stored = hash_password(password)
    salt = secrets.token_bytes(16)
    old = hashlib.scrypt(b"amber-pine-onyx-07", salt=salt, n=2**14, r=8, p=1, dklen=32)
    legacy = f"scrypt$16384$8$1${salt.hex()}${old.hex()}"
    seats = [hash_password(new_password()) for _ in range(6)]
    rows = [
        ("right password (scrypt-c)", lambda: verify_password(password.upper(), stored)),
        ("wrong password (scrypt-c)", lambda: verify_password("zzzz-zzzz-zzzz", stored)),
        ("wrong old password (scrypt)", lambda: verify_password("amber pine onyx 08", legacy)),
        ("over-long password (refused)", lambda: verify_password("x" * (MAX_TYPED + 1), stored)),
        ("leak check, 6 seats", lambda: [verify_password("zzzz", s) for s in seats]),
    ]
    for label, run in rows:
        median, worst = timed(run, repeat)
        print(f"{label:<32} median {median:8.1f} ms   worst {worst:8.1f} ms")
    median, _ = timed(rows[-1][1], max(3, repeat // 4))
    print(
        f"leak checks: at most {LEAK_CHECKS_PER_HOUR} mails per game an hour = "
        f"{LEAK_CHECKS_PER_HOUR * median / 1000:.1f} s of CPU an hour per game"
    )


if __name__ == "__main__":
    main()
