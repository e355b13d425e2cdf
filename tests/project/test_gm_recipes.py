"""docs/GAME-MASTERS.md's recipes run as written (issue 30), as README's first
game does (tests/project/test_readme.py).

Every ```sh block of the page is run by bash, in the page's order, in one
empty folder with no configuration (each recipe goes on from the state the
ones before it left); a block marked ```sh not-run is shown to the reader
only (cron, a server that runs until stopped). Each block must exit 0, and
the lines below must be in its output: a few stable lines, not whole outputs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem.rules.ruleversions import RULES_VERSION
from tests.pbem_forkserver import pbem_on_path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "GAME-MASTERS.md"
FENCE = re.compile(r"^```(sh[^\n]*)\n(.*?)^```$", flags=re.MULTILINE | re.DOTALL)

NEW = RULES_VERSION  # the newest rules version, where `pbem upgrade-rules` moves a game

# recipe (its heading) -> patterns, each matching a whole line of its output
EXPECTED: dict[str, list[str]] = {
    "Set up a game": [
        r"game g1 created: 3 players, preset classic, map classic",
        r"  password of alice: [0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}",
        r"0 mails; 3 sent, 0 deferred, 0 failed",
        r"g1\s+running\s+setup\s+turn 0\s+classic/classic",
        r"Game g1 on The classic world map: running, phase place",
        r"game g1 \(preset classic\)",
    ],
    "Run it from cron": [r"the outbox is empty"],
    "Play a turn by hand": [
        r"g1: default setup orders for .*",
        r"g1: turn 1 played by the GM, default orders",
        r"orders in .* valid, checked against the map only .*",
    ],
    "Stop the clock, change the timing": [
        r"g1 paused",
        r"g1 resumed; deadline .*",
        r"deadline of g1 now .*",
        r"g1: grace_hours: 24.0 -> 0; turn_hours: 48.0 -> 24",
    ],
    "Passwords and players": [
        r"a new password for alice \(seat 0\) is mailed to alice@example.org; .*",
        r"bob2 \(bob2@example.org\) holds seat 1 \(bob\) from turn \d+; .*",
    ],
    "Undo a turn": [
        r"g1 rolled back to turn 1 .*",
        r"g1: turn 1 played by the GM, default orders",
    ],
    "Commands by mail": [
        r"GM password of g1: [0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}",
        r"1 mails?; \d+ sent, 0 deferred, 0 failed",
        r"var/mail/gm@localhost/new/.+",
    ],
    "Try a deadline without waiting": [r".*\d+ mails?; \d+ sent, 0 deferred, 0 failed"],
    "Publish the site": [
        r"wrote \d+ pages \(\d+ files\) to site",
        r"deadline.ics",
        r"map-now.png",
        r"turn-1.html",
    ],
    "Records and dice": [
        r"wrote g1.pgn",
        r"\d+ steps replayed, every hash matches",
        r"secret of g1: [0-9a-f]{64}",
        r".*every roll matches the secret",
    ],
    "Move a game to newer rules": [
        rf"Rules version 1, kept from its start; this pbem's newest is {NEW}: .*",
        rf"Game g2 plays rules version 1\. Moving it to version {NEW} \(the newest\) from .* "
        "changes:",
        rf"Nothing changed yet: run `pbem upgrade-rules g2 --to {NEW} --yes` to do it\.",
        rf"g2: rules version 1 -> {NEW} from .*; 2 players( and the GM)? told",
        rf"Rules version {NEW}, moved from version 1 by the GM \(the newest this pbem knows\)\.",
    ],
}
NOT_RUN = {
    "Mail providers": 1,  # `pbem mail test`: needs the GM's real mail servers
    "Microsoft 365 and Outlook.com": 1,  # `pbem mail login`: a browser and Microsoft
    "Run it from cron": 1,
    "Try real mail on this machine": 1,
}


@dataclass(frozen=True)
class Block:
    recipe: str  # the heading it stands under
    runs: bool
    text: str


def page_blocks() -> list[Block]:
    text = PAGE.read_text(encoding="utf-8")
    blocks = []
    for found in FENCE.finditer(text):
        headings = re.findall(r"^#{2,3} (.+)$", text[: found.start()], flags=re.MULTILINE)
        info = found.group(1).split()
        assert info[0] == "sh" and info[1:] in ([], ["not-run"]), found.group(1)
        blocks.append(Block(headings[-1], info[1:] == [], found.group(2)))
    return blocks


def test_the_page_has_the_recipes_this_test_knows() -> None:
    blocks = page_blocks()
    recipes = {b.recipe for b in blocks if b.runs}
    assert set(EXPECTED) <= recipes
    skipped: dict[str, int] = {}
    for b in blocks:
        if not b.runs:
            skipped[b.recipe] = skipped.get(b.recipe, 0) + 1
    assert skipped == NOT_RUN


@pytest.mark.slow
def test_every_recipe_runs_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        PYTHONPATH=str(ROOT),  # this checkout's pbem, whatever the venv points at
        HOME=str(tmp_path),  # no ~/.config/pbem/pbem.toml
    )
    # The engine a GM runs: compiled when built and fresh (pbem/native.py falls
    # back to the source when stale), unless this run chose one.
    if "PBEM_NATIVE" in os.environ:
        env["PBEM_NATIVE"] = os.environ["PBEM_NATIVE"]
    outputs: dict[str, list[str]] = {}
    # Each `pbem` a fork of one process that imported pbem once (about a second
    # of CPU saved per command; tests/pbem_forkserver.py): the same entry
    # function, argv, environment, folder and file descriptors.
    with pbem_on_path(env, tmp_path) as bin_dir:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
        for block in page_blocks():
            if not block.runs:
                continue
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.text],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, (block.recipe, block.text, done.stdout, done.stderr)
            outputs.setdefault(block.recipe, []).extend(done.stdout.splitlines())
    for recipe, patterns in EXPECTED.items():
        for pattern in patterns:
            assert any(re.fullmatch(pattern, line) for line in outputs[recipe]), (
                recipe,
                pattern,
                outputs[recipe],
            )
