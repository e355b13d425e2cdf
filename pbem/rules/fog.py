"""Fog of war: what one player may see of a board and of the events on it.

A player sees the owners and armies of their own territories and of those
next to one of them; everything else is hidden. This module is the one
reading of that rule: every player-facing output (reports, pictures,
subjects, forecasts, answers, bots) takes its view from here, so they can
never disagree about what is hidden. Pure, like the rest of rules/.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from pbem.rules import teams
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    AttackSkipped,
    CardsTraded,
    DefenceOrdered,
    Event,
    Fortified,
    FortifySkipped,
    HeadquartersChosen,
    MissionDealt,
    MovedIn,
    PlaceSkipped,
    TeamHandover,
    TerritoriesDealt,
    TradeSkipped,
    TurnBegan,
)
from pbem.rules.state import CLAIM, ENDED, GameState, neighbours_of

HIDDEN = -1  # the owner a fogged state gives a hidden territory (armies: 0)


def fogged(state: GameState) -> bool:
    """Whether the fog hides anything on this board: the option is on, the
    territories are no longer being claimed (a draft is public) and the game
    is not over (the final board is shown to all)."""
    return bool(state.options.fog) and state.phase not in (CLAIM, ENDED)


def visible(state: GameState, seat: int | None) -> frozenset[int]:
    """The territories ``seat`` sees: every one without fog (and for the GM,
    ``seat`` None); under fog their own and those next to one of them."""
    if seat is None or not fogged(state):
        return frozenset(range(len(state.owner)))
    return sight(state, seat)


def turn_visible(before: GameState, after: GameState, seat: int | None) -> frozenset[int]:
    """The view of one turn: what ``seat`` saw at its start or sees at its end."""
    if seat is None or not (fogged(before) or fogged(after)):
        return frozenset(range(len(after.owner)))
    return sight(before, seat) | sight(after, seat)


def sight(state: GameState, seat: int) -> frozenset[int]:
    """``seat``'s territories and their neighbours, whatever the option and
    phase: what ``visible`` gives under fog. In a team game a teammate's
    territories count as one's own (teammates place on each other's: they
    share their sight)."""
    graph = neighbours_of(state.board)
    seen: set[int] = set()
    for t, owner in enumerate(state.owner):
        if owner == seat or teams.is_teammate(state, seat, owner):
            seen.add(t)
            seen.update(graph[t])
    return frozenset(seen)


def seen(state: GameState, seat: int | None, view: Iterable[int] | None = None) -> GameState:
    """``state`` as ``seat`` sees it: a copy whose hidden territories have no
    owner (HIDDEN) and no armies, and whose other players' headquarters on a
    hidden territory are unknown. ``view`` overrides ``visible`` (a turn's
    view); without fog (or for the GM) the state itself."""
    if seat is None or not (fogged(state) or view is not None):
        return state
    shown = frozenset(view) if view is not None else visible(state, seat)
    if len(shown) == len(state.owner):
        return state
    out = state.copy()
    for t in range(len(out.owner)):
        if t not in shown:
            out.owner[t] = HIDDEN
            out.armies[t] = 0
    for s, player in enumerate(out.players):
        if s != seat and player.hq is not None and player.hq not in shown:
            player.hq = None
    out.defend_one = [t for t in out.defend_one if t in shown]
    out.defend_neutral = [(s, t) for s, t in out.defend_neutral if t in shown]
    return out


def event_seen(event: Event, seat: int | None, view: frozenset[int]) -> Event | None:
    """``event`` as ``seat`` may read it with ``view`` as their view: itself,
    a version without what is hidden (another's trade: the value and set
    number only), or None (it names a hidden territory, or another seat's
    private counts)."""
    if seat is None:
        return event
    if isinstance(event, TerritoriesDealt | TurnBegan | MissionDealt | TradeSkipped):
        return event if event.seat == seat else None
    if isinstance(event, CardsTraded):
        if event.seat == seat:
            return event
        return replace(event, cards=(), bonus=())
    if isinstance(event, TeamHandover) and seat not in (event.seat, event.to):
        # how many territories the leaver held is theirs and their heir's to know
        return TeamHandover(event.seat, event.to, HIDDEN, event.cards)
    names = named(event)
    return event if all(t in view for t in names) else None


def named(event: Event) -> tuple[int, ...]:
    """The territories an event names (none for most events without a place)."""
    if isinstance(event, AttackResolved | AttackSkipped | MovedIn | Fortified | FortifySkipped):
        return (event.source, event.target)
    if isinstance(event, ArmiesPlaced | PlaceSkipped | DefenceOrdered | HeadquartersChosen):
        return (event.territory,)
    return ()
