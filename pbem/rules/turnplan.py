"""Run a turn's actions with the runtime semantics of ORDERS.md.

Attacks that became impossible (an earlier attack went differently) are
skipped and reported; MOVE and FORTIFY amounts are clamped and reported.
Anything the rules forbid outright raises RulesError: the orders layer
validates before this runs, so that means a bug or a stale validation.
"""

from __future__ import annotations

from pbem.rules import attacking, defence, engine, online, teams
from pbem.rules.actions import (
    Attack,
    CommanderUse,
    Defend,
    Fortify,
    Place,
    Trade,
    TurnAction,
    UntilKind,
    commander_named,
    commander_use,
)
from pbem.rules.engine import ShuffleStream, territory_name
from pbem.rules.events import (
    AttackSkipped,
    CardsTraded,
    Event,
    FortifySkipped,
    PlaceSkipped,
    TradeSkipped,
)
from pbem.rules.state import ENDED, GameState


def play_turn(state: GameState, actions: list[TurnAction], rng: ShuffleStream) -> list[Event]:
    """Apply one player's turn in the order written, then end it."""
    events: list[Event] = []
    attacked = False  # a PLACE after an ATTACK places the armies of an elimination
    named = commander_named(actions)  # an ATTACK says COMMANDER (rules version 3)
    # rules version 3: a TRADE after an ATTACK chooses the sets of a forced trade
    late = _late_trades(state, actions)
    used: set[int] = set()  # indices of those TRADEs a forced trade used
    for index, action in enumerate(actions):
        if state.phase == ENDED:
            break
        if isinstance(action, Attack):  # the most frequent first
            attacked = True
            commander = commander_use(action, named)
            if late and late[-1][0] > index:
                events += _attack_choosing(state, action, rng, index, late, used, commander)
            else:
                events += _attack(state, action, rng, commander)
        elif isinstance(action, Place):
            if attacked:
                events += place_after_attack(state, action)
                continue
            for armies, territory in action.placements:
                if state.phase == ENDED:  # a placement completed a mission
                    break
                events += engine.place(state, territory, armies)
        elif isinstance(action, Trade):
            if attacked and late:
                if index not in used:
                    reason = "no forced trade after an elimination used it"
                    events.append(TradeSkipped(state.current, action.cards, reason))
                continue
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


def _late_trades(state: GameState, actions: list[TurnAction]) -> list[tuple[int, Trade]]:
    """Rules version 3: the TRADEs written after the first ATTACK, with their
    index (under 1 and 2 the order reader refuses them)."""
    if state.options.rules_version < 3:
        return []
    first = next((i for i, a in enumerate(actions) if isinstance(a, Attack)), len(actions))
    return [(i, a) for i, a in enumerate(actions) if i > first and isinstance(a, Trade)]


def _attack_choosing(
    state: GameState,
    action: Attack,
    rng: ShuffleStream,
    index: int,
    late: list[tuple[int, Trade]],
    used: set[int],
    commander: CommanderUse,
) -> list[Event]:
    """An ATTACK with TRADE orders written after it: if it eliminates a player
    and leaves 6 or more cards, those not yet used choose the sets traded, in
    the order written (attacking.forced_trades)."""
    mine = [i for i, _ in late if i > index and i not in used]
    chosen = tuple(trade.cards for i, trade in late if i > index and i not in used)
    events = _attack(state, action, rng, commander, chosen)
    traded = [e.cards for e in events if isinstance(e, CardsTraded) and e.forced]
    for i, cards in zip(mine, chosen, strict=True):
        if cards in traded:
            traded.remove(cards)
            used.add(i)
    return events


def attack_problem(state: GameState, source: int, target: int) -> str | None:
    """Why an attack cannot run now, or None."""
    me = state.current
    if state.owner[source] != me:
        return "source no longer yours"
    if state.owner[target] == me:
        return "target already yours"
    if teams.is_teammate(state, me, state.owner[target]):
        return "target now a teammate's"
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
        if not teams.friendly(state, me, territory):
            events.append(PlaceSkipped(me, territory, armies, "territory not yours"))
            continue
        if not state.reinforcements:
            events.append(PlaceSkipped(me, territory, armies, "no armies from an elimination"))
            continue
        placed = min(armies, state.reinforcements)
        cap = state.options.max_armies
        if cap and state.options.rules_version >= 3 and placed > cap - state.armies[territory]:
            # rules version 3: no more than max_armies lets; the rest of the
            # elimination's armies go where there is room (place_leftover)
            fits = max(0, cap - state.armies[territory])
            if fits:
                events += engine.place(state, territory, fits)
            reason = f"{territory_name(state, territory)} would hold more than {cap} armies"
            events.append(PlaceSkipped(me, territory, armies - fits, reason))
            continue
        events += engine.place(state, territory, placed)
        if placed < armies:
            events.append(
                PlaceSkipped(me, territory, armies - placed, "more than the elimination gave")
            )
    return events


def _attack(
    state: GameState,
    action: Attack,
    rng: ShuffleStream,
    commander: CommanderUse = CommanderUse.DEFAULT,
    trades: tuple[tuple[int, int, int], ...] = (),
) -> list[Event]:
    source, target = action.source, action.target
    armies = state.armies
    # attack_problem, inlined: this runs for every attack of every simulated turn
    me = state.current
    owner = state.owner
    if (
        owner[source] != me
        or owner[target] == me
        or armies[source] < 2
        or (state.options.team_size and teams.is_teammate(state, me, owner[target]))
    ):
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
        state,
        source,
        target,
        rng,
        action.dice,
        until_left,
        max_rolls,
        None,
        action.reroll,
        commander,
        trades,
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
    if state.owner[source] != me or not teams.friendly(state, me, target):
        return [FortifySkipped(me, source, target, "territory no longer yours")]
    into_teammate = state.owner[target] != me
    if into_teammate and not state.board.adjacent(source, target):
        return [FortifySkipped(me, source, target, "a teammate's territory is not adjacent")]
    available = state.armies[source] - 1
    asked = action.amount.resolve(available)
    armies = min(asked, available)
    if armies < 1:
        return [FortifySkipped(me, source, target, "no army free to move")]
    if engine.room_for(state, target) < 1:
        return [FortifySkipped(me, source, target, "already holds the most armies allowed")]
    if (
        online.path_needed(state.options)
        and not into_teammate
        and not engine.connected(state, source, target)
    ):
        return [FortifySkipped(me, source, target, "no chain of own territories any more")]
    return engine.fortify(state, source, target, armies, asked=asked if armies != asked else None)
