"""`pbem simulate`: many bot games, timed, over several worker processes.

The games themselves are pure (pbem.rules.simulate); this driver reads the
clock and starts the processes. Each game depends only on its seed and the
outcomes are put back in seed order, so a run gives the same figures (and
digest) whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import time

from pbem.rules.board import Board
from pbem.rules.dice import DICE_V2
from pbem.rules.options import Options
from pbem.rules.simulate import (
    DEFAULT_CAP,
    Job,
    Outcome,
    SimulationSummary,
    check_request,
    play_seeds,
    summarise,
)

CHUNK = 25  # seeds per job at most: small jobs keep every worker busy to the end


def simulate_many(
    board: Board,
    options: Options,
    players: int,
    games: int,
    seed: int,
    bot: str = "random",
    workers: int = 2,
    cap: int = DEFAULT_CAP,
    dice: str = DICE_V2,
) -> SimulationSummary:
    """Play ``games`` games (seeds ``seed .. seed + games - 1``) over ``workers`` processes.

    ``dice``: v2 by default, like new games, and faster than v1 (one SHAKE-256 stream
    per turn instead of an HMAC per 32 bytes); each game still depends only on its seed."""
    check_request(options, players, games, workers, bot)
    seeds = list(range(seed, seed + games))
    workers = min(workers, games)
    started = time.perf_counter()
    results = play_all(board, options, players, bot, cap, seeds, workers, dice)
    seconds = time.perf_counter() - started
    return summarise(results, seconds, players, bot, seed, workers, dice)


def play_all(
    board: Board,
    options: Options,
    players: int,
    bot: str,
    cap: int,
    seeds: list[int],
    workers: int,
    dice: str = DICE_V2,
) -> list[Outcome]:
    """Every seed's outcome, in seed order; in this process when ``workers`` is 1."""
    if workers <= 1:
        return play_seeds((board, options, players, bot, cap, seeds, dice))
    size = max(1, min(CHUNK, len(seeds) // (workers * 4)))
    jobs: list[Job] = [
        (board, options, players, bot, cap, seeds[i : i + size], dice)
        for i in range(0, len(seeds), size)
    ]
    context = multiprocessing.get_context("fork" if _can_fork() else "spawn")
    with context.Pool(workers) as pool:
        return [outcome for chunk in pool.map(play_seeds, jobs) for outcome in chunk]


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()
