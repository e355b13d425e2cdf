"""CI-sized runs of the engine benchmarks: they run, agree with themselves and print
their figures. Benchmarks, not timed tests: no speed is asserted here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_bench_simulate_smoke() -> None:
    out = run("bench_simulate.py", "--games", "3", "--workers", "1", "2", "--seed", "1")
    assert "3 games, 4 players, random bots, preset classic" in out
    assert out.count("player-turns/s") == 2 and "capped 0" in out
    assert "pbem-dice-v2" in out and "FAIL" not in out


def test_bench_replay_smoke() -> None:
    out = run("bench_replay.py", "--seed", "2", "--repeat", "1")
    # seed 2 of the greedy bots: the service game matches the engine-only simulation
    assert "game: seed 2: 61 player-turns" in out
    assert re.search(r"median +[\d.]+ ms +[\d,]+ turns/s", out)
    assert "verification takes" in out and "where the time goes" in out
