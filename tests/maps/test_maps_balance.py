"""`pbem maps balance`: wins per seat with Wilson intervals, game length, the chart."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.balance import Balance, GameOutcome, balance, chart_png, wilson
from pbem.maps.formats import import_file
from pbem.rules.options import Options

DATA = Path(__file__).resolve().parents[1] / "data" / "maps"


@pytest.mark.parametrize(
    ("wins", "games", "low", "high"),
    [
        # by hand: p = 0.5, n = 10, z = 1.959964: centre 0.5, half 0.2365 -> 0.2366 .. 0.7634
        (5, 10, 0.236593, 0.763407),
        # p = 0: the upper end is (z²/n) / (1 + z²/n) = 0.384146 / 1.384146
        (0, 10, 0.0, 0.277533),  # never won: the interval still reaches 27.8%
        (10, 10, 0.722467, 1.0),
        # p = 0.3, n = 100: centre 0.3192075 / 1.0384146 = 0.307399, half 0.088450
        (30, 100, 0.218949, 0.395849),
    ],
)
def test_wilson_interval(wins: int, games: int, low: float, high: float) -> None:
    got = wilson(wins, games)
    assert got == pytest.approx((low, high), abs=1e-6)


def test_wilson_with_no_games_knows_nothing() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_table_counts_wins_by_seat_and_leaves_capped_games_out() -> None:
    outcomes = [GameOutcome(1, 0, 40), GameOutcome(2, 0, 60), GameOutcome(3, 1, 50)]
    outcomes.append(GameOutcome(4, None, 3001))
    result = Balance("Test Map", 2, "greedy", 1, outcomes)
    assert (result.games, result.finished, result.wins()) == (4, 3, [2, 1])
    assert result.average_turns() == 50.0
    low, high = wilson(2, 3)
    assert result.rows()[0] == (1, 2, 2 / 3, low, high)
    assert result.describe().splitlines()[:3] == [
        "Test Map: 4 games of 2 greedy bots (seeds 1..4)",
        "finished: 3, stopped by the turn cap: 1",
        "average game length: 50.0 player-turns (25.0 rounds)",
    ]
    assert result.fair()  # 3 games: every interval holds 50%


def test_balance_plays_the_games_and_draws_the_chart() -> None:
    board = import_file(DATA / "conquest/islands.map").board
    result = balance(board, Options(), players=3, games=12, seed=1, bot="greedy")
    assert result.games == 12 and result.finished == 12
    assert sum(result.wins()) == 12
    again = balance(board, Options(), players=3, games=12, seed=1, bot="greedy", workers=2)
    assert again.outcomes == result.outcomes  # the same games, however many workers
    png = chart_png(result)
    image = Image.open(io.BytesIO(png))
    assert image.size == (560, 320)


def test_maps_balance_command(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    result = CliRunner().invoke(
        app,
        ["maps", "balance", str(DATA / "lux/valleys.luxb"), "--players", "2", "--games", "6",
         "--png", str(chart), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["games"] == 6 and data["players"] == 2
    assert [s["seat"] for s in data["seats"]] == [1, 2]
    assert sum(s["wins"] for s in data["seats"]) == data["finished"] == 6
    assert Image.open(chart).size == (560, 320)


def test_maps_balance_refuses_an_unknown_map() -> None:
    result = CliRunner().invoke(app, ["maps", "balance", "atlantis", "--games", "1"])
    assert result.exit_code == 1
    assert "no built-in map 'atlantis'" in result.stderr
