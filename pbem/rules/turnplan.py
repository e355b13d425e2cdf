"""Run a turn's actions with the runtime semantics of ORDERS.md.

Attacks that became impossible (an earlier attack went differently) are
skipped and reported; MOVE and FORTIFY amounts are clamped and reported.
Anything the rules forbid outright raises RulesError: the orders layer
validates before this runs, so that means a bug or a stale validation.
"""

from __future__ import annotations

from pbem.rules import attacking, defence, engine
from pbem.rules.actions import Attack, Defend, Fortify, Place, Trade, TurnAction, UntilKind
from pbem.rules.engine import ShuffleStream
from pbem.rules.events import AttackSkipped, Event, FortifySkipped, PlaceSkipped
from pbem.rules.state import ENDED, GameState


def play_turn(state: GameState, actions: list[TurnAction], rng: ShuffleStream) -> list[Event]:
    """Apply one player's turn in the order written, then end it."""
    events: list[Event] = []
    attacked = False  # a PLACE after an ATTACK places the armies of an elimination
    for action in actions:
        if state.phase == ENDED:
            break
        if isinstance(action, Attack):  # the most frequent first
            attacked = True
            events += _attack(state, action, rng)
        elif isinstance(action, Place):
            if attacked:
                events += place_after_attack(state, action)
                continue
            for armies, territory in action.placements:
                if state.phase == ENDED:  # a placement completed a mission
                    break
                events += engine.place(state, territory, armies)
        elif isinstance(action, Trade):
            events += engine.trade(state, action.cards)
        elif isinstance(action, Fortify):
            events += _fortify(state, action)
        elif isinstance(action, Defend):
            territory = action.territory
            # version 3: also a neutral territory, by the player who rolls for it
            if state.owner[territory] == state.current or defence.defends_neutral(state, territory):
                events += defence.set_defence(state, territory, action.dice)
        else:  # pragma: no cover - the type says it cannot happen
            raise TypeError(f"not a turn action: {action!r}")
    if state.phase != ENDED:
        events += engine.end_turn(state, rng)
    return events


def attack_problem(state: GameState, source: int, target: int) -> str | None:
    """Why an attack cannot run now, or None."""
    me = state.current
    if state.owner[source] != me:
        return "source no longer yours"
    if state.owner[target] == me:
        return "target already yours"
    if state.armies[source] < 2:
        return "source has only one army"
    return None


def place_after_attack(state: GameState, action: Place) -> list[Event]:
    """PLACE written after an ATTACK: the armies of the sets an elimination made
    the player trade. Without such armies, or past them, it is skipped."""
    events: list[Event] = []
    me = state.current
    for armies, territory in action.placements:
        if state.phase == ENDED:
            break
        if state.owner[territory] != me:
            events.append(PlaceSkipped(me, territory, armies, "territory not yours"))
            continue
        if not state.reinforcements:
            events.append(PlaceSkipped(me, territory, armies, "no armies from an elimination"))
            continue
        placed = min(armies, state.reinforcements)
        events += engine.place(state, territory, placed)
        if placed < armies:
            events.append(
                PlaceSkipped(me, territory, armies - placed, "more than the elimination gave")
            )
    return events


def _attack(state: GameState, action: Attack, rng: ShuffleStream) -> list[Event]:
    source, target = action.source, action.target
    armies = state.armies
    # attack_problem, inlined: this runs for every attack of every simulated turn
    me = state.current
    owner = state.owner
    if owner[source] != me or owner[target] == me or armies[source] < 2:
        problem = attack_problem(state, source, target)
        return [AttackSkipped(me, source, target, problem)]  # type: ignore[arg-type]
    until = action.until
    kind = until.kind
    if kind == UntilKind.CONQUERED:
        until_left = max_rolls = None
    elif kind == UntilKind.LEFT:
        if armies[source] <= until.n:
            return [AttackSkipped(me, source, target, f"source has {until.n} or fewer")]
        until_left, max_rolls = until.n, None
    else:
        until_left, max_rolls = None, until.n
    events = attacking.attack(
        state, source, target, rng, action.dice, until_left, max_rolls, None, action.reroll
    )
    if state.pending_move is not None:
        source, _, minimum = state.pending_move
        available = armies[source] - 1
        asked = action.move.resolve(available, minimum)
        moved = max(minimum, min(asked, available))
        events += attacking.move_in(state, moved, asked if moved != asked else None)
    return events


def _fortify(state: GameState, action: Fortify) -> list[Event]:
    me = state.current
    source, target = action.source, action.target
    if state.owner[source] != me or state.owner[target] != me:
        return [FortifySkipped(me, source, target, "territory no longer yours")]
    available = state.armies[source] - 1
    asked = action.amount.resolve(available)
    armies = min(asked, available)
    if armies < 1:
        return [FortifySkipped(me, source, target, "no army free to move")]
    if engine.room_for(state, target) < 1:
        return [FortifySkipped(me, source, target, "already holds the most armies allowed")]
    if state.options.fortify != "adjacent" and not engine.connected(state, source, target):
        return [FortifySkipped(me, source, target, "no chain of own territories any more")]
    return engine.fortify(state, source, target, armies, asked=asked if armies != asked else None)
