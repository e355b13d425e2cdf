"""Benchmark whole bot games: player-turns per second with 1 and 2 workers.

    python scripts/bench/simulate.py --players 4 --games 200 --seed 1

Full classic rules (cards, events, dice v2 like `pbem simulate`; --dice v1 for the
HMAC dice), random bots by default. Prints
player-turns per second (wall clock, and per CPU-second, which other load on
the machine does not change), turns per game, games per second and peak
resident memory (this process, and the largest worker process). The baseline,
measured in the same run, is the first worker count (1 by default): each
other count prints its speed-up over it (near-linear is the goal, on as many
free cores). Exits 1 if a game was
stopped by the safety cap instead of ending with a winner, or if the two runs
disagree (they must: each game depends only on its seed).

It says whether the rules engine is compiled (scripts/build_native.py);
--compare-pure runs the same games again in a new process with PBEM_NATIVE=0
(the engine from its Python source) and prints the ratio of CPU-second figures,
and fails if the digests differ.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem import native  # noqa: E402
from pbem.maps import builtin_map  # noqa: E402
from pbem.maps.presets import load_preset  # noqa: E402
from pbem.rules.dice import check_version  # noqa: E402
from pbem.service.ops.simulation import simulate_many  # noqa: E402


def peak_rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def cpu_seconds() -> float:
    """CPU time of this process and its finished workers (other load does not count)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bot", default="random")
    parser.add_argument("--preset", default="classic")
    parser.add_argument("--map", default="classic")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--dice", default="v2", help="dice version, v1 or v2 (default v2)")
    parser.add_argument(
        "--compare-pure",
        action="store_true",
        help="run the first worker count again with PBEM_NATIVE=0 and print the ratio",
    )
    args = parser.parse_args()

    board = builtin_map(args.map)
    options = load_preset(args.preset)
    dice = check_version(args.dice)
    print(
        f"{args.games} games, {args.players} players, {args.bot} bots, "
        f"preset {args.preset}, map {args.map}, seeds from {args.seed}, {dice}"
    )
    print(native.state().describe())
    summaries = []
    baseline = 0.0
    per_cpu = 0.0
    for workers in args.workers:
        cpu = cpu_seconds()
        s = simulate_many(
            board, options, args.players, args.games, args.seed, args.bot, workers, dice=dice
        )
        cpu = cpu_seconds() - cpu
        summaries.append(s)
        print(
            f"workers {workers}: {s.turns_per_second:,.0f} player-turns/s, "
            f"{s.turns / s.games:.1f} turns/game, {s.games_per_second:,.1f} games/s, "
            f"{s.seconds:.2f} s wall, {cpu:.2f} s CPU "
            f"({s.turns / cpu:,.0f} turns per CPU-second), capped {s.capped}"
        )
        if not baseline:
            baseline = s.turns_per_second
            per_cpu = s.turns / cpu
            print(f"  baseline: {baseline:,.0f} player-turns/s (target 30,000 in one process)")
        else:
            print(
                f"  ratio to the baseline: {s.turns_per_second / baseline:.2f}x "
                f"with {workers} workers ({os.cpu_count()} cores on this machine)"
            )
    print(
        f"peak RSS: this process {peak_rss_mb(resource.RUSAGE_SELF):.1f} MB, "
        f"largest worker {peak_rss_mb(resource.RUSAGE_CHILDREN):.1f} MB"
    )
    failed = False
    if any(s.capped for s in summaries):
        print("FAIL: some games were capped without a winner")
        failed = True
    if len({(s.digest, s.turns) for s in summaries}) > 1:
        print("FAIL: the runs disagree (results must not depend on the worker count)")
        failed = True
    wins = ", ".join(f"{k} {v}" for k, v in sorted(summaries[0].winners.items()))
    print(f"winners: {wins}; digest {summaries[0].digest[:16]}")
    if args.compare_pure and not compare_pure(args, per_cpu, summaries[0].digest[:16]):
        failed = True
    return 1 if failed else 0


def compare_pure(args: argparse.Namespace, per_cpu: float, digest: str) -> bool:
    """The same games with PBEM_NATIVE=0 in a new process: ratio of turns per CPU-second."""
    argv = [sys.executable, __file__, "--players", str(args.players), "--games", str(args.games)]
    argv += ["--seed", str(args.seed), "--bot", args.bot, "--preset", args.preset]
    argv += ["--map", args.map, "--dice", args.dice, "--workers", str(args.workers[0])]
    done = subprocess.run(
        argv, env={**os.environ, "PBEM_NATIVE": "0"}, capture_output=True, text=True, check=False
    )
    figure = re.search(r"\(([\d,]+) turns per CPU-second\)", done.stdout)
    theirs = re.search(r"digest (\w+)", done.stdout)
    if done.returncode != 0 or figure is None or theirs is None:
        print(f"FAIL: the pure-Python run failed:\n{done.stdout}{done.stderr}")
        return False
    pure = float(figure.group(1).replace(",", ""))
    print(
        f"pure Python (PBEM_NATIVE=0, same games): {pure:,.0f} turns per CPU-second; "
        f"this run / pure = {per_cpu / pure:.2f}x"
    )
    if theirs.group(1) != digest:
        print(f"FAIL: the pure-Python run's digest is {theirs.group(1)}, not {digest}")
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
