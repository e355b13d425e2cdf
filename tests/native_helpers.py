"""Tests that patch the internals of compiled modules run on the pure engine.

A monkeypatch of a method or module global does not reach the compiled callers
(mypyc calls them directly), so such a test, when pbem runs compiled, runs
itself again in a new process with PBEM_NATIVE=0 (every module from source).
"""

from __future__ import annotations

import os
import subprocess
import sys


def run_on_pure_engine(test_id: str) -> None:
    """Run one test in a new process with PBEM_NATIVE=0 (the modules from source)."""
    env = {**os.environ, "PBEM_NATIVE": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", test_id],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
