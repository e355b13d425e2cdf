"""The README's "Your first game by mail" runs exactly as written (issue 21).

Its ```sh blocks are taken from README.md and run by bash, one after the
other, in an empty folder with no configuration: if the program and the
README drift apart, this fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Your first game by mail"


def section_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return re.findall(r"```sh\n(.*?)```", text[start:end], flags=re.DOTALL)


def test_the_first_game_section_runs_as_written(tmp_path: Path) -> None:
    blocks = section_commands()
    assert len(blocks) == 2
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),  # no ~/.config/pbem/pbem.toml
    }
    env.pop("PBEM_CONFIG", None)
    env.pop("PBEM_DATABASE_URL", None)
    outputs = []
    for block in blocks:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (block, done.stdout, done.stderr)
        outputs.append(done.stdout)
    # Each player got a start mail; the grep found alice's receipt.
    for name in ("alice", "bob", "carol"):
        assert len(list((tmp_path / f"var/mail/{name}@example.org/new").iterdir())) >= 1
    assert "var/mail/alice@example.org/new/" in outputs[1].splitlines()[-1]
    inbox = tmp_path / "var/mail/pbem@localhost"
    handled = [*(inbox / ".processed/new").iterdir(), *(inbox / ".processed/cur").iterdir()]
    assert len(handled) == 1
    assert not any((inbox / "new").iterdir())
