"""simulate_many: the same games whatever the number of worker processes."""

from __future__ import annotations

import pytest

from pbem.maps import builtin_map
from pbem.rules.bots import BotRandom, spread
from pbem.rules.options import load_preset
from pbem.rules.simulate import play_game, simulate_many


def test_results_do_not_depend_on_the_worker_count() -> None:
    board, options = builtin_map("classic"), load_preset("classic")
    one = simulate_many(board, options, 3, 6, seed=5, bot="random", workers=1)
    two = simulate_many(board, options, 3, 6, seed=5, bot="random", workers=2)
    assert (one.digest, one.turns, one.winners, one.capped) == (
        two.digest,
        two.turns,
        two.winners,
        two.capped,
    )
    assert (one.workers, two.workers) == (1, 2)
    # game i of the run is the game of seed + i
    games = [play_game(board, options, 3, seed, "random", dice=one.dice) for seed in range(5, 11)]
    assert one.turns == sum(g.turns for g in games)
    assert sum(one.winners.values()) == 6 and one.capped == 0
    assert one.winners == {name: sum(1 for g in games if g.winner == name) for name in one.winners}
    data = one.to_json()
    assert (
        data["games"] == 6 and data["turns"] == one.turns and data["reasons"] == {"domination": 6}
    )
    assert "6 games of 3 random bots" in one.describe()


def test_bad_requests_are_refused_before_any_game() -> None:
    board, options = builtin_map("classic"), load_preset("classic")
    with pytest.raises(ValueError, match="no bot 'clever'"):
        simulate_many(board, options, 3, 2, seed=1, bot="clever")
    with pytest.raises(ValueError):
        simulate_many(board, options, 7, 2, seed=1)
    with pytest.raises(ValueError):
        simulate_many(board, options, 3, 0, seed=1)


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
