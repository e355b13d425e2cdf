"""The online settings together: what fog of war must still hide when teams or
a game type are on (each setting's own tests are in test_online_*.py and
test_fog.py)."""

from __future__ import annotations

from dataclasses import replace

from pbem.maps.presets import load_preset
from pbem.orders.forecast import forecast_lines
from pbem.orders.parser import parse_orders
from pbem.report.views import PlayerRow, Who, team_standing
from pbem.rules import fog
from pbem.rules.events import TeamHandover
from tests.rules.support import arrange, classic, new_state, start_turn

KAMCHATKA, ALASKA, NW_TERRITORY, ALBERTA = 33, 0, 1, 3


def test_teammates_share_their_sight_under_fog() -> None:
    """p0 and p1 are team A (doubles: seats in blocks): p0 sees p1's Alberta
    and Alberta's neighbours, as p1 does; without teams only its own."""
    state = new_state(4, replace(load_preset("doubles"), fog=True), game="fogteams")
    arrange(state, {0: [KAMCHATKA], 1: [ALBERTA]})
    seen = fog.visible(state, 0)
    assert ALBERTA in seen and NW_TERRITORY in seen  # the teammate's and its neighbour
    assert seen == fog.visible(state, 1)
    alone = state.copy()
    alone.options = replace(state.options, team_size=0)
    assert ALBERTA not in fog.visible(alone, 0)
    names = sorted(state.board.territories[t].name for t in fog.visible(alone, 0))
    assert names == ["Alaska", "Irkutsk", "Japan", "Kamchatka", "Mongolia", "Yakutsk"]


def _row(seat: int, team: str, territories: int | str, armies: int | str) -> PlayerRow:
    who = Who(seat, f"p{seat}", "red", "#f00", "white")
    return PlayerRow(who, territories, armies, 0, "", 3, False, "", team=team)


def test_no_team_totals_when_the_fog_hides_other_players_counts() -> None:
    open_rows = [_row(0, "A", 10, 30), _row(1, "A", 5, 9), _row(2, "B", 27, 40)]
    assert team_standing(open_rows) == [
        "",
        "Teams: team A 15 territories, 39 armies; team B 27 territories, 40 armies.",
    ]
    fogged = [_row(0, "A", 10, 30), _row(1, "A", 5, 9), _row(2, "B", "?", "?")]
    assert team_standing(fogged) == []  # a total would give away team B's counts


def test_a_fogged_forecast_does_not_tell_that_a_player_holds_one_territory() -> None:
    """Terminator's note "Taking Alaska eliminates p1" says p1 holds only Alaska:
    under fog the odds are given (Alaska is in sight), the note is not."""
    options = replace(load_preset("terminator"), fog=True)
    state = new_state(4, options, game="term")
    arrange(state, {1: [ALASKA], 2: [KAMCHATKA]}, armies={KAMCHATKA: 10})
    start_turn(state, 2)
    text = f"PLACE {state.reinforcements} Kamchatka\nATTACK Kamchatka -> Alaska\n"
    orders = parse_orders(text, classic()).orders
    lines = forecast_lines(state, orders, 2)
    assert lines and not any("eliminates" in line for line in lines)
    state.options = replace(options, fog=False)
    assert forecast_lines(state, orders, 2)[-1] == (
        "  Taking Alaska eliminates p1: a point for you."
    )


def test_a_handover_tells_the_other_team_no_territory_count_under_fog() -> None:
    """bob (team A) leaves, alice inherits: carol (team B) reads that it happened
    and the cards (public), not how many territories bob held."""
    handover = TeamHandover(1, 0, 7, 2)
    view = frozenset({0, 1, 2})
    assert fog.event_seen(handover, 0, view) is handover  # the heir
    assert fog.event_seen(handover, 1, view) is handover  # the leaver
    told = fog.event_seen(handover, 2, view)
    assert isinstance(told, TeamHandover)
    assert (told.seat, told.to, told.territories, told.cards) == (1, 0, fog.HIDDEN, 2)
    assert fog.event_seen(handover, None, view) is handover  # the GM
