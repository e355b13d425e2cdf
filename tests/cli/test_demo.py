"""`pbem demo`, the README's main job on the embedded defaults: a whole game of
four bots by mail (SQLite, local Maildir), from the first mail to the winner,
run as a user runs it (a subprocess, a fresh folder, no configuration)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_plays_a_whole_game_by_mail_to_a_winner(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(ROOT)
    env["HOME"] = str(tmp_path)  # no user configuration: the embedded defaults
    done = subprocess.run(
        [sys.executable, "-m", "pbem", "demo", "--dir", str(tmp_path / "demo")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"game over after \d+ turns: (ada|brook|cyrus|dana) wins", done.stdout)
    assert "rejected" not in done.stdout  # every bot's mail was applied
    spool = tmp_path / "demo" / "mail"
    boxes = {p.name.split("@")[0] for p in spool.iterdir()}
    assert {"ada", "brook", "cyrus", "dana", "pbem"} <= boxes
    # the game's inbox is empty: every mail was handled and moved out of it
    assert not any((spool / "pbem@demo.localhost" / "new").iterdir())
