"""The round in a turn report's title (issue 29, point 6): counted from the
turn's start, so the last seat's turn is still in its round; the neutral of
a two-player game and the players out of the game take no turn and count
for none."""

from __future__ import annotations

from pbem.report import render_turn_report
from pbem.testing.sample import play_sample


def title_round(text: str) -> int:
    head = text.split("\n", 1)[0]  # "Turn 7 (round 3): p2 (blue)"
    return int(head.split("(round ", 1)[1].split(")", 1)[0])


def test_two_players_and_the_neutral_play_two_turns_a_round() -> None:
    sample = play_sample(seed=3, players=2, turns=12)
    assert sample.start.neutral_seat is not None  # the neutral holds a third of the board
    rounds = [title_round(render_turn_report(r, None).text) for r in sample.reports]
    assert rounds == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    first = render_turn_report(sample.reports[1], None).text.split("\n", 1)[0]
    mover = sample.reports[1].after.players[sample.reports[1].seat]
    assert first == f"Turn 2 (round 1): {mover.name} ({mover.colour})"


def test_a_round_is_one_turn_of_every_player_still_in_the_game() -> None:
    sample = play_sample(seed=7, players=4, turns=None)
    assert sample.out_turns, "the game should see a player go out"
    expected, last = 1, -1
    per_round: dict[int, int] = {}
    for report in sample.reports:
        place = report.before.order.index(report.seat)
        if place <= last:  # the turn order came round again
            expected += 1
        last = place
        assert title_round(render_turn_report(report, report.seat).text) == expected, report.turn
        per_round[expected] = per_round.get(expected, 0) + 1
    full = list(per_round.values())[:-1]  # the last round may end with the game
    assert full[0] == 4 and min(full) < 4, per_round  # players out: rounds of fewer turns
