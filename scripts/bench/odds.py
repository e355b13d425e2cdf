"""Speed of the battle odds and of the dice stream; prints figures, asserts nothing.

    python scripts/bench/odds.py [--runs N]

Figures: battle(1000, 1000) in-process; the whole process of
`python -c "from pbem.rules.odds import battle; battle(1000,1000)"` (and of a bare
interpreter, for comparison); dice per second for DiceStream.die() and roll(3).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pbem.rules.dice import stream_for_turn  # noqa: E402
from pbem.rules.odds import battle  # noqa: E402

ODDS_SNIPPET = "from pbem.rules.odds import battle; battle(1000,1000)"


def best_and_median(samples: list[float]) -> str:
    return f"best {min(samples):.4f} s, median {statistics.median(samples):.4f} s"


def in_process(runs: int) -> None:
    for attackers, defenders in ((1000, 1000), (3000, 3000), (20, 20), (100, 100)):
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            odds = battle(attackers, defenders)
            samples.append(time.perf_counter() - start)
        kind = "exact" if odds.exact else "float"
        print(f"battle({attackers}, {defenders}) [{kind}] in-process: {best_and_median(samples)}")
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        battle(100, 100, exact=True)
        samples.append(time.perf_counter() - start)
    print(f"battle(100, 100, exact=True) in-process: {best_and_median(samples)}")


def whole_process(runs: int) -> None:
    medians = []
    for title, code in (("bare interpreter", "pass"), ("battle(1000,1000)", ODDS_SNIPPET)):
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
            samples.append(time.perf_counter() - start)
        print(f"whole process, {title}: {best_and_median(samples)}")
        medians.append(statistics.median(samples))
    print(f"ratio to the baseline (a bare interpreter, same run): {medians[1] / medians[0]:.1f}x")


def dice_rate(runs: int) -> None:
    count = 300_000
    for title, draw in (
        ("die()", lambda stream: [stream.die() for _ in range(count)]),
        ("roll(3)", lambda stream: [stream.roll(3) for _ in range(count // 3)]),
    ):
        rates = []
        for run in range(runs):
            stream = stream_for_turn(bytes(range(32)), "bench", run + 1)
            start = time.perf_counter()
            draw(stream)
            rates.append(count / (time.perf_counter() - start))
        best, median = max(rates), statistics.median(rates)
        print(f"dice per second, {title}: best {best:,.0f}, median {median:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    print(f"python {sys.version.split()[0]} at {sys.executable}, {runs} runs each")
    in_process(runs)
    whole_process(runs)
    dice_rate(runs)


if __name__ == "__main__":
    main()
