"""What a player who sent nothing does (RULES.md, "By mail").

Conservative and predictable: forced trades only, armies spread evenly over
border territories by a fixed rule, no attacks, no fortify. Setup defaults
likewise: claims in map order, armies spread evenly, the strongest HQ.
"""

from __future__ import annotations

from pbem.rules import attacking, opening
from pbem.rules.actions import (
    Claim,
    Headquarters,
    Place,
    PlaceInitial,
    PlaceNeutral,
    SetupAction,
    Trade,
    TurnAction,
)
from pbem.rules.cards import designs_of, set_value
from pbem.rules.state import CLAIM, HQ, PLACE, GameState


def even_spread(targets: list[int], armies: int) -> tuple[tuple[int, int], ...]:
    """One army at a time to each target in map order, round and round."""
    if armies <= 0 or not targets:
        return ()
    ordered = sorted(targets)
    counts = [armies // len(ordered)] * len(ordered)
    for i in range(armies % len(ordered)):
        counts[i] += 1
    return tuple((n, t) for n, t in zip(counts, ordered, strict=True) if n > 0)


def default_turn(state: GameState) -> list[TurnAction]:
    seat = state.current
    actions: list[TurnAction] = []
    due = state.reinforcements
    if state.must_trade:
        best = attacking.best_set(state, seat)
        if best is not None:
            actions.append(Trade(best))
            due += set_value(state.options, state.sets_traded + 1, designs_of(state.board, best))
    owner = state.owner
    border = [
        t
        for t in range(len(owner))
        if owner[t] == seat and any(owner[n] != seat for n in state.board.territories[t].neighbours)
    ]
    placements = even_spread(border or state.territories_of(seat), due)
    if placements:
        actions.append(Place(placements))
    return actions


def default_setup(state: GameState, seat: int) -> list[SetupAction]:
    if state.phase == CLAIM:
        return [Claim(())]
    if state.phase == PLACE:
        plan: list[SetupAction] = [
            PlaceInitial(even_spread(state.territories_of(seat), state.players[seat].to_place))
        ]
        share = opening.neutral_share(state, seat)
        if share:
            neutral = state.territories_of(state.neutral_seat)  # type: ignore[arg-type]
            plan.append(PlaceNeutral(even_spread(neutral, share)))
        return plan
    if state.phase == HQ:
        own = state.territories_of(seat)
        return [Headquarters(max(own, key=lambda t: (state.armies[t], -t)))]
    return []
