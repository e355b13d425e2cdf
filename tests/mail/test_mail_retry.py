"""The retry helper: a fixed backoff schedule and which SMTP codes are final."""

from __future__ import annotations

import pytest

from pbem.mail.retry import backoff_delay, is_permanent


def test_backoff_doubles_from_base_up_to_the_cap() -> None:
    schedule = [backoff_delay(n) for n in range(1, 10)]
    assert schedule == [60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3600.0, 3600.0, 3600.0]


def test_backoff_with_other_base_and_cap() -> None:
    assert [backoff_delay(n, base=5, cap=30) for n in range(1, 6)] == [5.0, 10.0, 20.0, 30.0, 30.0]


def test_backoff_is_deterministic_and_handles_huge_attempts() -> None:
    assert backoff_delay(3) == backoff_delay(3) == 240.0
    assert backoff_delay(10_000) == 3600.0


@pytest.mark.parametrize(("attempt", "base", "cap"), [(0, 60, 3600), (1, 0, 10), (1, 60, 30)])
def test_backoff_rejects_nonsense(attempt: int, base: float, cap: float) -> None:
    with pytest.raises(ValueError):
        backoff_delay(attempt, base=base, cap=cap)


@pytest.mark.parametrize(
    ("code", "permanent"),
    [(550, True), (554, True), (500, True), (599, True), (421, False), (451, False),
     (452, False), (250, False), (600, False), (None, False)],
)  # fmt: skip
def test_only_5xx_is_permanent(code: int | None, permanent: bool) -> None:
    assert is_permanent(code) is permanent
