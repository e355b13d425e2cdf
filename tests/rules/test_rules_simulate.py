"""The bots and the pure parts of simulated games (the worker pool: test_service_simulation)."""

from __future__ import annotations

from pbem.rules.bots import BotRandom, spread


def test_bot_generator_is_repeatable_and_in_range() -> None:
    a, b = BotRandom(b"key"), BotRandom(b"key")
    draws = [a.uniform(6) for _ in range(600)]
    assert draws == [b.uniform(6) for _ in range(600)]
    assert set(draws) == {0, 1, 2, 3, 4, 5}
    assert [BotRandom(b"other").uniform(6) for _ in range(20)] != draws[:20]
    boxes = BotRandom(b"key").counts(4, 1000)
    assert sum(boxes) == 1000 and min(boxes) > 200  # about 250 each
    items = list(range(10))
    BotRandom(b"key").shuffle(items)
    assert sorted(items) == list(range(10)) and items != list(range(10))


def test_spread_respects_room_under_max_armies() -> None:
    placed = spread([3, 7, 9], 10, BotRandom(b"s"), room=[1, 2, 30])
    assert dict((t, n) for n, t in placed).get(3, 0) <= 1
    assert dict((t, n) for n, t in placed).get(7, 0) <= 2
    assert sum(n for n, _ in placed) == 10
    assert spread([3, 7], 10, BotRandom(b"s"), room=[1, 2]) == ((1, 3), (2, 7))
