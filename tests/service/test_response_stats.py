"""Response times per player: your-turn mail to the order mail, on the service's clock."""

from __future__ import annotations

import json
from datetime import timedelta

from typer.testing import CliRunner

from pbem.cli import app
from pbem.service.ops.stats import duration, response_stats
from pbem.service.play.games import find_game
from tests.longgame_helpers import World, new_table

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24]}


def test_median_worst_and_missed_per_player(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "pace", PLAYERS, settings=TIMING)
    table.silence()
    table.step()
    delays: dict[str, list[float]] = {}
    for hours in (3, 5, 1, 7, 2.5, 0.25):  # two rounds
        table.read_all()
        mover = table.mover()
        world.advance(hours=hours)
        table[mover].auto = True
        assert table[mover].answer() == 1
        table[mover].auto = False
        world.poll()
        delays.setdefault(mover, []).append(hours)
    with world.session(write=False) as session:
        stats = {s.name: s for s in response_stats(session, find_game(session, "pace"))}
    for name, hours in delays.items():
        s = stats[name]
        assert s.answered == 2 and s.missed == 0
        assert s.median == timedelta(hours=sum(hours) / 2)
        assert s.worst == timedelta(hours=max(hours))

    runner = CliRunner()
    shown = runner.invoke(app, ["show", "pace", "--config", str(world.config_path)])
    assert shown.exit_code == 0, shown.output
    assert "Response times (your-turn mail to orders):" in shown.output
    first = next(iter(delays))
    expected = duration(timedelta(hours=sum(delays[first]) / 2))
    assert any(
        line.split()[:3] == [first, "2", *expected.split()[:1]]
        for line in shown.output.splitlines()
    )
    data = json.loads(
        runner.invoke(app, ["show", "pace", "--json", "--config", str(world.config_path)]).output
    )
    row = next(r for r in data["response_times"] if r["player"] == first)
    assert row["worst_seconds"] == max(delays[first]) * 3600 and row["answered"] == 2


def test_duration_words() -> None:
    assert duration(None) == "-"
    assert duration(timedelta(minutes=42)) == "42 min"
    assert duration(timedelta(hours=3, minutes=5)) == "3 h 05 min"
    assert duration(timedelta(days=2, hours=4, minutes=59)) == "2 d 4 h"
