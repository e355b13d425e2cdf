"""Golden files: the text turn reports of a fixed seeded bot game, compared exactly.

The game: the classic map and rules, 4 greedy bots, seed 7 (pbem.testing.sample),
turns 1-8, each report as the player who moved sees it. When a change to the
wording, the engine, the bots or the map is meant to change these reports,
regenerate the files and review the diff:

    PBEM_REGENERATE_GOLDEN=1 python -m pytest tests/report/test_report_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pbem.report import render_turn_report
from pbem.report.textfmt import WIDTH
from pbem.testing.sample import play_sample

GOLDEN = Path(__file__).parents[1] / "golden"
TURNS = 8
REGENERATE = os.environ.get("PBEM_REGENERATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def reports() -> dict[int, str]:
    sample = play_sample(seed=7, players=4, turns=TURNS, bot="greedy")
    return {r.turn: render_turn_report(r, r.seat).text for r in sample.reports}


@pytest.mark.parametrize("turn", range(1, TURNS + 1))
def test_turn_report_matches_golden_file(reports: dict[int, str], turn: int) -> None:
    path = GOLDEN / f"turn-{turn:02d}.txt"
    if REGENERATE:
        path.write_text(reports[turn], encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with PBEM_REGENERATE_GOLDEN=1"
    assert reports[turn] == path.read_text(encoding="utf-8")


def test_golden_reports_fit_78_columns(reports: dict[int, str]) -> None:
    for turn, text in reports.items():
        long = [line for line in text.splitlines() if len(line) > WIDTH]
        assert long == [], f"turn {turn}"
