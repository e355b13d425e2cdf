"""Every scripts/bench/*.py at a tiny size: it runs, checks what it checks, and
prints its figure and its ratio to the baseline of the same run (issue 16).

Benchmarks, not timed tests: no figure is compared with anything, so a slow
machine cannot fail them. The mail benchmarks start their own servers on
127.0.0.1 (and stop them), so they need Dovecot (and PostgreSQL for
bench_workers), like the integration tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.testing.mailservers import dovecot_binary

ROOT = Path(__file__).resolve().parents[2]


def bench(script: str, *args: str, cwd: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench" / script), *args],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_bench_simulate() -> None:
    out = bench("simulate.py", "--games", "4", "--players", "3", "--workers", "1", "2")
    assert "workers 1: " in out and "workers 2: " in out
    assert "baseline: " in out and "ratio to the baseline: " in out
    assert "FAIL" not in out


def test_bench_render() -> None:
    out = bench("render.py", "--turns", "2", "--runs", "1")
    assert "12 mails" in out and "ratio now / baseline" in out
    assert "the same bytes both ways" in out


def test_bench_smtp() -> None:
    out = bench("smtp.py", "--mails", "6", "--runs", "1")
    assert "prepared " in out and "plain " in out and "ms CPU" in out


def test_bench_mime() -> None:
    out = bench("mime.py", "--turns", "1", "--runs", "1")
    assert "writer mail_bytes(...)" in out


def test_bench_replay() -> None:
    out = bench("replay.py", "--seeds", "1", "--repeat", "1")
    assert "turns/s" in out and "ratio replay / minimal parse" in out
    assert "parse the orders" in out


def test_bench_odds() -> None:
    out = bench("odds.py", "--runs", "1")
    assert "dice per second, die()" in out and "ratio to the baseline" in out


def test_bench_storage(tmp_path: Path) -> None:
    out = bench("storage.py", "--games", "1", "--dir", str(tmp_path / "storage"))
    assert "per player-turn" in out and "ratio to the baseline (mail kept whole)" in out


def _mail_benchmarks_can_run() -> None:
    if dovecot_binary() is None:
        pytest.skip("Dovecot is not installed")
    if not Path("/usr/bin/time").is_file():
        pytest.skip("GNU time is not installed (apt-get install time)")


@pytest.mark.integration
def test_bench_mail() -> None:
    _mail_benchmarks_can_run()
    out = bench("mail.py", "--games", "2", "--rounds", "1")
    assert "processed by pbem poll       2 (2 turns played)" in out
    assert "ratio poll / bare" in out and "without process start-up" in out


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["poll", "daemon"])
def test_bench_workers(mode: str) -> None:
    _mail_benchmarks_can_run()
    out = bench("workers.py", "--games", "2", "--rounds", "1", "--workers", "2", "--mode", mode)
    assert "2 mails played once each" in out and "ratio: " in out


def test_bench_memory(tmp_path: Path) -> None:
    out = bench("memory.py", "--games", "3", "--orders", "2", "--dir", str(tmp_path / "m"))
    assert "baseline: `pbem daemon --cycles 1`, no game, empty inbox: peak RSS" in out
    assert "with 3 games: peak RSS" in out and "2 turns played" in out
    assert "ratio to the baseline: " in out


def test_bench_hostile() -> None:
    out = bench("hostile.py", "--only", "plain_stranger")
    assert "attack" in out and "peak MB" in out
    assert "plain_stranger" in out and out.rstrip().endswith("rejected            processed")


def test_bench_startup() -> None:
    out = bench("startup.py", "--runs", "1")
    assert 'python -c "import sqlmodel"' in out and "pbem poll (idle)" in out
    assert "pbem show g1" in out and "ratio to the baseline: wall" in out
    assert "the idle poll's own work (after its imports): " in out
    assert "FAIL" not in out
