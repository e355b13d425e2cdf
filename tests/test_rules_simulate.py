"""simulate_many: the same games whatever the number of worker processes."""

from __future__ import annotations

import pytest

from pbem.rules.maps import builtin_map
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
    games = [play_game(board, options, 3, seed, "random") for seed in range(5, 11)]
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
