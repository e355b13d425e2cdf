"""A terminator game of four through the real mail path (Maildir, polls), to the
round limit or the last player: every report shows the points to everyone (the
GM's copies too), the turn report says "round R of N", the game-over mail names
the winner, the deciding rule and the points; the record verifies."""

from __future__ import annotations

from pathlib import Path

from pbem.orderlog.records import read_record, verify_record
from tests.longgame_helpers import SECRET, World, new_table

PLAYERS = ["ann", "bob", "cat", "dan"]


def test_a_terminator_game_by_mail_to_its_end(tmp_path: Path) -> None:
    world = World(tmp_path / "world")
    overrides = {"placement": "auto", "goal": "terminator", "max_turns": "6"}
    table = new_table(world, "term", PLAYERS, overrides=overrides, seed=5)
    table.run(lambda: world.state("term").phase == "over", limit=200)
    table.read_all()
    state = world.state("term")
    # nobody was eliminated: the game ends after the 24th turn, the last of round 6
    assert state.win_reason == "points" and state.turn == 24 and state.round == 7
    for name in PLAYERS:
        reports = table.mails(name, "turn_report")
        assert reports and all("Points" in m.text for m in reports)
        assert reports[0].text.startswith("Turn 1 (round 1 of 6): ")
    gm_reports = [m for m in table.gm if m.kind == "turn_report"]
    assert gm_reports and all("Points" in m.text for m in gm_reports)
    over = table.mails("ann", "game_over")[-1].flat
    assert over.startswith("Game over: cat wins")
    assert (
        "cat (yellow) wins term on the round limit: most territories (points tied), after "
        "24 turns. Points: cat 0 points, dan 0 points, ann 0 points, bob 0 points." in over
    )
    assert "1 cat yellow winner, 0 points 25 57 2 dan green still in, 0 points 12 22" in over
    text = world.replayed_record("term")
    report = verify_record(read_record(text), SECRET.hex())
    assert report.ok, report.message
