"""Two settings of the online Risk sites that change a turn: trench warfare
(option ``trench``) and the parachute fortify (``fortify = parachute``).

Kept in one place so the engine, the order validation and the bots read the
same rule: the engine raises on what validation refuses, in the same words.
Capped escalation is a card value (pbem.rules.cards.capped).
"""

from __future__ import annotations

from pbem.rules.actions import Attack, TurnAction
from pbem.rules.options import Options
from pbem.rules.state import GameState, neighbours_of

TRENCH_RULE = "trench"


def trench_message(name: str, earlier: bool = False) -> str:
    """Why an ATTACK from ``name`` is refused under trench warfare; ``earlier``:
    the orders' own earlier ATTACK would take it (validation, before the dice)."""
    how = "an earlier ATTACK of these orders takes it" if earlier else "it was taken this turn"
    return (
        f"{name} may not attack: {how}, and under trench warfare (option trench) a "
        "territory taken this turn may not attack again until your next turn"
    )


def trenched(state: GameState, source: int) -> bool:
    """Under trench warfare: was ``source`` taken this turn?"""
    return bool(state.taken_this_turn) and source in state.taken_this_turn


def note_conquest(state: GameState, target: int) -> None:
    """A conquest under trench warfare: ``target`` may not attack this turn."""
    if state.options.trench:
        state.taken_this_turn.append(target)


def path_needed(options: Options) -> bool:
    """Does a fortifying move need a chain of own territories? Not adjacent
    (a border is checked instead), not parachute (no path at all)."""
    return options.fortify in ("chained", "unlimited")


def moves_allowed(options: Options) -> int:
    """Fortifying moves allowed in one turn."""
    if options.fortify == "none":
        return 0
    return 1_000_000 if options.fortify == "unlimited" else 1


# -- bots -------------------------------------------------------------------------
def lawful_attacks(state: GameState, plan: list[TurnAction]) -> list[TurnAction]:
    """A bot's plan under trench warfare: only the attacks from territories held
    at the start of the turn (and not taken earlier in it): any other source
    would be taken this turn, or not be the bot's. The rest stays in order."""
    if not state.options.trench:
        return plan
    me, owner = state.current, state.owner
    return [
        action
        for action in plan
        if not isinstance(action, Attack)
        or (owner[action.source] == me and not trenched(state, action.source))
    ]


def parachute_target(
    state: GameState, source: int, mine: set[int], armies: list[int]
) -> int | None:
    """Where a bot drops its armies by parachute: the own border territory
    most outnumbered by the enemy armies next to it (ties: map order)."""
    graph = neighbours_of(state.board)
    best: tuple[int, int] | None = None
    for t in sorted(mine):
        if t == source or mine.issuperset(graph[t]):
            continue
        threat = sum(armies[n] for n in graph[t] if n not in mine) - armies[t]
        if best is None or threat > best[0]:
            best = (threat, t)
    return None if best is None else best[1]
