"""Team games in the mails: a fogged player sees their teammates' totals (teammates
share their sight) and never the other team's; a relayed press names PRESS TO TEAM
in a team game and only there."""

from __future__ import annotations

from dataclasses import replace

from pbem.maps.presets import load_preset
from pbem.report import Press, Status, render_press, render_status
from pbem.report.fogview import sides
from pbem.report.picture.colours import Side
from pbem.rules.state import GameState
from pbem.testing.sample import game_info
from tests.rules.support import arrange, new_state

KAMCHATKA, ALASKA, ALBERTA, ARGENTINA, PERU = 33, 0, 3, 12, 11


def fogged_doubles() -> GameState:
    """p0, p1 team A; p2, p3 team B. Fog on; p0 holds Kamchatka (5 armies), p1
    Alberta (4), p2 Argentina and Peru (2 each); p3 everything else (1 each)."""
    state = new_state(4, replace(load_preset("doubles"), fog=True), game="fogteams")
    arrange(
        state,
        {0: [KAMCHATKA], 1: [ALBERTA], 2: [ARGENTINA, PERU]},
        armies={KAMCHATKA: 5, ALBERTA: 4, ARGENTINA: 2, PERU: 2},
    )
    return state


def players_table(text: str) -> dict[str, list[str]]:
    """The players table's cells after the name, by player name."""
    part = text.split("Players\n-------\n")[1].split("(Next:")[0]
    rows = {}
    for line in part.splitlines()[2:]:
        cells = line.lstrip("> ").split()
        rows[cells[0]] = cells[1:]
    return rows


def test_a_fogged_player_sees_the_teammates_totals_and_not_the_other_teams() -> None:
    state = fogged_doubles()
    assert [(state.territory_count(s), state.army_count(s)) for s in range(4)] == [
        (1, 5),
        (1, 4),
        (2, 4),
        (38, 38),
    ]
    info = game_info(state, 7)
    rows = players_table(render_status(Status(info, state, None), 0).text)
    # colour, team, territories, armies, cards, continents, next
    assert rows["p0"] == ["red", "A", "1", "5", "0", "-", "3"]
    assert rows["p1"] == ["blue", "A", "1", "4", "0", "-", "3"]  # the teammate: known
    assert rows["p2"] == ["yellow", "B", "?", "?", "0", "?", "-"]
    assert rows["p3"] == ["green", "B", "?", "?", "0", "?", "-"]
    rows = players_table(render_status(Status(info, state, None), 2).text)
    assert rows["p2"][2:4] == ["2", "4"] and rows["p3"][2:4] == ["38", "38"]
    assert rows["p0"][2:4] == ["?", "?"] and rows["p1"][2:4] == ["?", "?"]


def test_without_teams_the_fog_hides_every_other_players_totals() -> None:
    state = fogged_doubles()
    state.options = replace(state.options, team_size=0)
    rows = players_table(render_status(Status(game_info(state, 7), state, None), 0).text)
    assert rows["p0"][1:3] == ["1", "5"]  # no Team column
    assert rows["p1"][1:3] == ["?", "?"]


def test_the_legend_shows_the_teammates_counts_under_fog() -> None:
    state = fogged_doubles()
    legend = [Side(f"p{s}", (255, 0, 0), 1 + s, 10 + s) for s in range(4)]
    shown = sides(legend, state, 1)
    assert [(s.territories, s.armies) for s in shown] == [(1, 10), (2, 11), (1, -1), (1, -1)]
    assert sides(legend, state, None) == legend  # the GM's


def test_the_press_hint_names_press_to_team_in_a_team_game_only() -> None:
    state = fogged_doubles()
    press = render_press(Press(game_info(state, 7), 1, (0,), "Hold Kamchatka."), 0)
    text = " ".join(press.text.split())
    assert "or TO ALL, or TO TEAM (your teammates alone), and your text" in text
    assert "<code>TO TEAM</code> (your teammates alone)" in press.html
    state.options = replace(state.options, team_size=0, fog=False)
    press = render_press(Press(game_info(state, 7), 1, (0,), "Hold Kamchatka."), 0)
    assert "TEAM" not in press.text and "TEAM" not in press.html
    assert "or TO ALL, and your text up to a line ENDPRESS" in " ".join(press.text.split())


def test_a_teammates_turn_tells_their_armies_due_and_the_other_teams_does_not() -> None:
    """The crafted turn 1 (p2, seat 1, moves) played as doubles under fog: p1
    (seat 0) is p2's teammate and reads the count of p2's armies; p3 (seat 2)
    reads only that p2 received them."""
    from pbem.report import render_turn_report
    from pbem.report.fogview import hides_turn
    from tests.report.test_fog_report import fogged_report

    report = fogged_report()
    for state in (report.before, report.after):
        state.options = replace(state.options, team_size=2)
    assert [hides_turn(report, seat) for seat in (0, 1, 2, 3)] == [False, False, True, True]
    mate = render_turn_report(report, 0).text
    assert "p2 receives 3 armies: 3 for 11 territories." in mate
    assert "received their armies" not in mate
    other = render_turn_report(report, 2).text
    assert "p2 received their armies." in other and "p2 receives" not in other
