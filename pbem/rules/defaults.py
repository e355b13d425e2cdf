"""What a player who sent nothing does (RULES.md, "By mail").

Conservative and predictable: forced trades only, armies spread evenly over
border territories by a fixed rule, no attacks, no fortify. Setup defaults
likewise: claims in map order, armies spread evenly, the strongest HQ.
"""

from __future__ import annotations

from pbem.rules import attacking, fog, opening
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
    version3 = state.options.rules_version >= 3
    bonus: dict[int, int] = {}
    if state.must_trade:
        # rules version 3: the set worth most to the player, its +2s counted
        # (under 1 and 2 the most on its face)
        best = (
            attacking.set_worth_most(state, seat) if version3 else attacking.best_set(state, seat)
        )
        if best is not None:
            actions.append(Trade(best))
            due += set_value(state.options, state.sets_traded + 1, designs_of(state.board, best))
            bonus = trade_bonus(state, seat, [best])
    owner = state.owner
    border = [
        t
        for t in range(len(owner))
        if owner[t] == seat and any(owner[n] != seat for n in state.board.territories[t].neighbours)
    ]
    placements = even_spread(border or state.territories_of(seat), due)
    if version3 and state.options.max_armies:
        placements = fit_to_cap(state, seat, placements, border, bonus)
    if placements:
        actions.append(Place(placements))
    return actions


def trade_bonus(state: GameState, seat: int, trades: list[tuple[int, int, int]]) -> dict[int, int]:
    """territory -> the +2 armies trading the sets ``trades`` in a row puts there
    (as engine.trade_set)."""
    bonus: dict[int, int] = {}
    taken = state.bonus_taken
    for card in [c for cards in trades for c in cards]:
        territory = state.board.card_territory(card)
        if territory is None or state.owner[territory] != seat:
            continue
        if state.options.territory_bonus == "once":
            if taken:
                continue
            taken = True
        bonus[territory] = bonus.get(territory, 0) + 2
    return bonus


def fit_to_cap(
    state: GameState,
    seat: int,
    placements: tuple[tuple[int, int], ...],
    first: list[int],
    added: dict[int, int],
) -> tuple[tuple[int, int], ...]:
    """Rules version 3: placements made without the player's choice (a missed
    turn's, a bot's) kept under max_armies. Each keeps what its territory has
    room for (``added``: armies a trade's +2 put there first); the rest goes to
    the player's territories with room, those of ``first`` (the border ones)
    in map order, then the others in map order; what fits nowhere is not
    placed, and the engine counts it lost at the end of the reinforcements.
    The result is in map order, one pair per territory."""
    cap = state.options.max_armies
    own = state.territories_of(seat)
    room = {t: max(0, cap - state.armies[t] - added.get(t, 0)) for t in own}
    plan: dict[int, int] = {}
    spare = 0
    for armies, territory in placements:
        fits = min(armies, room[territory] - plan.get(territory, 0))
        if fits > 0:
            plan[territory] = plan.get(territory, 0) + fits
        spare += armies - max(fits, 0)
    for territory in sorted(first) + [t for t in own if t not in set(first)]:
        if spare == 0:
            break
        more = min(spare, room[territory] - plan.get(territory, 0))
        if more > 0:
            plan[territory] = plan.get(territory, 0) + more
            spare -= more
    return tuple((plan[t], t) for t in sorted(plan))


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
            if fog.fogged(state):  # NEUTRAL under fog: where the player sees (the door's rule)
                seen = fog.sight(state, seat)
                neutral = [t for t in neutral if t in seen] or neutral
            plan.append(PlaceNeutral(even_spread(neutral, share)))
        return plan
    if state.phase == HQ:
        own = state.territories_of(seat)
        return [Headquarters(max(own, key=lambda t: (state.armies[t], -t)))]
    return []
