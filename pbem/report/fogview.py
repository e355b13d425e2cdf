"""Fog of war in the mails: one player's fogged copy of what a mail shows.

``pbem.rules.fog`` says which territories a player sees; this module applies
it to what the report layer renders, before anything is formatted: the
states of a report (hidden territories without owner or armies), the events
of a turn (those naming a hidden territory left out, another's trade without
its cards), the players table and the picture's legend (another player's
counts of territories, armies and continents hidden: they would tell how
much of the board they hold out of sight), and the state hash and the
digests of others' orders (left out: a player could test guesses of the hidden
board, or of orders naming it, against them). The
GM's copy (viewer None) and a game without fog go through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pbem.report.context import SetupReport, TurnReport
from pbem.report.picture.colours import Side
from pbem.report.views import ContinentBlock, PlayerRow
from pbem.rules import fog, teams
from pbem.rules.state import ENDED, GameState

UNKNOWN = "?"  # a count the fog hides, in the players table


def active(state: GameState, viewer: int | None) -> bool:
    """Whether ``viewer``'s copy of a mail about ``state`` is fogged."""
    return viewer is not None and fog.fogged(state)


def state_for(state: GameState, viewer: int | None) -> GameState:
    """The board as ``viewer`` sees it now (``fog.seen``)."""
    return fog.seen(state, viewer) if active(state, viewer) else state


def turn_report(report: TurnReport, viewer: int | None) -> TurnReport:
    """A turn as ``viewer`` sees it: the board before and after through the
    turn's view (what they saw at its start or see at its end), the events
    that name only territories of that view, and no state hash. The turn that
    ends the game is shown whole, like the final board."""
    before, after = report.before, report.after
    if viewer is None or not before.options.fog or after.phase == ENDED:
        return report
    view = fog.turn_visible(before, after, viewer)
    events = tuple(
        e for e in (fog.event_seen(e, viewer, view) for e in report.events) if e is not None
    )
    own = after.players[viewer].name
    return replace(
        report,
        before=fog.seen(before, viewer, view),
        after=fog.seen(after, viewer, view),
        events=events,
        state_hash="",
        # a digest of another's orders text (dice v2 without a SALT) could be tested
        # against guesses of orders naming territories out of sight: only SALTs stay
        dice_inputs=tuple(d for d in report.dice_inputs if d[1] != "orders" or d[0] == own),
    )


def setup_report(report: SetupReport, viewer: int | None) -> SetupReport:
    """The setup as ``viewer`` sees it: the board after it, the deal and the
    placements of their view, no state hash."""
    state = report.state
    if not active(state, viewer):
        return report
    view = fog.visible(state, viewer)
    events = tuple(
        e for e in (fog.event_seen(e, viewer, view) for e in report.events) if e is not None
    )
    return replace(report, state=fog.seen(state, viewer), events=events, state_hash="")


def hides_turn(report: TurnReport, viewer: int | None) -> bool:
    """Whether another seat's counts (their armies due) are hidden from ``viewer``
    in this turn's report. Not a teammate's: teammates share their sight, and
    every step of a teammate's turn is on or next to the team's land."""
    return (
        viewer is not None
        and viewer != report.seat
        and report.before.options.fog
        and report.after.phase != ENDED
        and not teams.is_teammate(report.before, viewer, report.seat)
    )


def player_rows(rows: Sequence[PlayerRow], viewer: int | None, fogged: bool) -> list[PlayerRow]:
    """The players table for ``viewer``: another player's territories, armies,
    continents and armies due are hidden under fog; their own stay, and so do
    their teammates' (teammates share their sight: a teammate's land is in view)."""
    if not fogged:
        return list(rows)
    team = next((r.team for r in rows if r.who.seat == viewer and r.team), None)
    return [
        r
        if r.who.seat == viewer or (team is not None and r.team == team)
        else replace(r, territories=UNKNOWN, armies=UNKNOWN, continents=UNKNOWN, next_armies=None)
        for r in rows
    ]


def board_blocks(blocks: Sequence[ContinentBlock], fogged: bool) -> list[ContinentBlock]:
    """The board table without its hidden territories (a fogged state gives them
    no owner); a continent none of whose territories is seen keeps its title."""
    if not fogged:
        return list(blocks)
    return [replace(b, rows=tuple(r for r in b.rows if r.who.seat >= 0)) for b in blocks]


def sides(all_sides: Sequence[Side], state: GameState, viewer: int | None) -> list[Side]:
    """The picture's legend for ``viewer``: another player's counts hidden
    (armies -1: the legend gives the name only; territories 1 while in the game),
    but for the viewer's own and their teammates'."""
    if not active(state, viewer):
        return list(all_sides)
    return [
        s
        if seat == viewer or (viewer is not None and teams.is_teammate(state, viewer, seat))
        else replace(s, territories=1 if state.players[seat].alive else 0, armies=-1)
        for seat, s in enumerate(all_sides)
    ]


# ------------------------------------------------------------- the public view
PUBLIC = -2  # the site's reader: no seat, so no territory in sight and no private line


def public_state(state: GameState) -> GameState:
    """The board as the public site shows it under fog: every territory hidden
    (what every player sees of it) until the game ends."""
    return fog.seen(state, PUBLIC, ()) if fog.fogged(state) else state


def public_turn(report: TurnReport, over: bool) -> TurnReport:
    """A turn as the public site tells it under fog while the game is on (``over``
    False): its events naming no territory (eliminations, cards drawn, the value of
    a trade), on a board all hidden."""
    if over or not report.before.options.fog:
        return report
    events = tuple(
        e for e in (fog.event_seen(e, PUBLIC, frozenset()) for e in report.events) if e is not None
    )
    return replace(
        report,
        before=fog.seen(report.before, PUBLIC, ()),
        after=fog.seen(report.after, PUBLIC, ()),
        events=events,
        state_hash="",
    )
