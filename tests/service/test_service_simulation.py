"""simulate_many: the same games whatever the number of worker processes (issue 16)."""

from __future__ import annotations

import pytest

from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.rules.dice import DICE_V2
from pbem.rules.simulate import play_game, play_seeds
from pbem.service.ops.simulation import play_all, simulate_many


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
    # (pbem simulate rolls dice v2: the summary says so)
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


def test_every_game_is_the_same_in_one_process_and_in_three() -> None:
    """Outcome by outcome (winner, turns, final state hash), in seed order, with
    seven seeds cut in uneven jobs."""
    board, options = builtin_map("classic"), load_preset("classic")
    seeds = list(range(20, 27))
    one = play_all(board, options, 3, "random,greedy", 3000, seeds, 1)
    three = play_all(board, options, 3, "random,greedy", 3000, seeds, 3)
    assert one == three
    assert [o[0] for o in one] == seeds
    assert one == play_seeds((board, options, 3, "random,greedy", 3000, seeds, DICE_V2))
    game = play_game(board, options, 3, 23, "random,greedy", dice=DICE_V2)
    assert one[3] == (23, game.winner, game.turns, game.capped, game.final_hash, game.reason)
