"""What the mails say of the game types and the round limit: the assassin target
in its player's copy only, terminator's public points, and the rule that
decided the round limit in the game-over mail."""

from __future__ import annotations

from dataclasses import replace

from pbem.maps.presets import load_preset
from pbem.report import endnotes
from pbem.report.context import GameOver
from pbem.report.render import render_game_over, render_turn_report
from pbem.rules.events import PointScored
from pbem.testing.sample import play_sample
from tests.rules.support import arrange, new_state


def test_an_assassin_report_names_the_target_only_in_its_players_copy() -> None:
    sample = play_sample(seed=7, players=4, turns=2, options=load_preset("assassin"))
    report = sample.reports[-1]
    targets = report.after.targets
    names = [p.name for p in report.after.players]
    for seat in range(4):
        mail = render_turn_report(report, seat)
        own = f"Your secret target: {names[targets[seat]]}"
        assert own in mail.text and own in mail.html.replace("<b>", "").replace("</b>", "")
        assert mail.text.count("secret target") == 1 and "target" not in mail.subject
    observer = render_turn_report(report, None)
    assert "secret target" not in observer.text + observer.html


def test_terminator_points_are_public_and_the_game_over_ranks_by_them() -> None:
    sample = play_sample(seed=8, players=4, turns=None, options=load_preset("terminator"))
    scored = [r for r in sample.reports if any(isinstance(e, PointScored) for e in r.events)]
    assert [r.turn for r in scored] == [29, 67]  # two players score a point each
    first = render_turn_report(sample.reports[0], 0)
    assert (
        first.text.startswith("Turn 1 (round 1 of 20): ") and "Round 1 of 20 &middot;" in first.html
    )
    report = scored[0]
    point = next(e for e in report.events if isinstance(e, PointScored))
    scorer = report.after.players[point.seat].name
    for viewer in (None, 0, 1):
        mail = render_turn_report(report, viewer)
        assert f"{scorer} scores a point (1 point)." in " ".join(mail.text.split())
        assert "Points" in mail.text.split("Players\n")[1].splitlines()[1]  # the table header
        assert "<th" in mail.html and ">Points</th>" in mail.html
    final = sample.final
    over = render_game_over(GameOver(sample.game, final, sample.out_turns), None)
    text = " ".join(over.text.split())
    assert final.win_reason == "points" and final.turn == 67  # 20 rounds, two out
    assert "p4 (green) wins sim-8 on the round limit: most territories (points tied)" in text
    assert "Points: p4 1 point, p2 1 point, p3 0 points, p1 0 points." in text
    assert "1 p4 green winner, 1 point 30 119 2 p2 blue still in, 1 point 12 144" in text
    assert "3 p3 yellow out, by p2, turn 67, 0 points 0 0 4 p1 red out, by p4, turn 29" in text


def test_points_come_before_territories_at_the_round_limit() -> None:
    """Seed 5: p2 (1 point, 10 territories) wins over p4 (0 points, 17)."""
    sample = play_sample(seed=5, players=4, turns=None, options=load_preset("terminator"))
    final = sample.final
    assert [final.territory_count(s) for s in range(4)] == [0, 10, 15, 17]
    over = render_game_over(GameOver(sample.game, final, sample.out_turns), 2)
    text = " ".join(over.text.split())
    assert "p2 (blue) wins sim-5 on the round limit: most points, after 67 turns." in text


def test_the_round_limit_names_the_rule_that_decided() -> None:
    classic = replace(load_preset("classic"), max_turns=1)
    state = new_state(3, classic, game="lim")
    o = state.order
    arrange(state, {o[0]: list(range(14)), o[1]: list(range(14, 28))})  # o2: 14 as well
    state.winner = o[0]
    assert endnotes.limit_reason(state) == (
        "on the turn limit: the earlier in turn order (territories and armies tied)"
    )
    state.armies[20] += 2  # o1 has the most armies now
    state.winner = o[1]
    assert endnotes.limit_reason(state) == "on the turn limit: most armies (territories tied)"
    state.owner[0] = o[1]
    assert endnotes.limit_reason(state) == "on the turn limit: most territories"
