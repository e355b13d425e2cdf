"""When to try an outgoing mail again, and when to stop trying.

The schedule is fixed (no random jitter) so that a test, a log and the
operator all see the same next-attempt times.
"""

from __future__ import annotations


def backoff_delay(attempt: int, base: float = 60, cap: float = 3600) -> float:
    """Seconds to wait after the ``attempt``-th failure (1, 2, 3, ...).

    Doubles from ``base``: 60, 120, 240, ... and never exceeds ``cap``.
    """
    if attempt < 1:
        raise ValueError(f"attempt counts failures from 1 (got {attempt})")
    if base <= 0 or cap < base:
        raise ValueError(f"need 0 < base <= cap (got base={base}, cap={cap})")
    if attempt > 64:  # 2**64 * base is far above any sensible cap
        return float(cap)
    return float(min(cap, base * 2 ** (attempt - 1)))


def is_permanent(smtp_code: int | None) -> bool:
    """True for a 5xx reply: the server will never accept this mail as it is.

    4xx replies, timeouts and lost connections (code None) are temporary.
    """
    return smtp_code is not None and 500 <= smtp_code <= 599
