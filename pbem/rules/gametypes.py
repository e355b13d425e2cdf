"""The online sites' game types beside the standard game: assassin and terminator.

Assassin (``goal = assassin``): each player is dealt a secret target, the
targets forming one circle through every player; a player wins the moment
their target is eliminated by a player's attack, whoever attacked. A player
who leaves the game otherwise (resigns, removed by the GM or for missed
turns: their armies stay, neutral) passes their target to their hunter.

Terminator (``goal = terminator``): 1 point for each player a player
eliminates by attack (none for a player removed from the game, none lost
for being eliminated); the game ends at the round limit (``max_turns``,
required) or when one player is left. The standings: points, then
territories, then armies, then turn order.

The targets are part of the state (``GameState.targets``, by seat); the
points follow from ``Player.eliminated_by``, which the state has always held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from pbem.rules.events import Event, PointScored, TargetDealt
from pbem.rules.state import GameState

if TYPE_CHECKING:  # the engine imports this module (through victory)
    from pbem.rules.engine import ShuffleStream

ASSASSIN: Final = "assassin"
TERMINATOR: Final = "terminator"


# ------------------------------------------------------------------ assassin
def deal_targets(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Shuffle the players (from the setup stream, after the turn order) and
    give each the next one of the shuffled list as target, the last the first:
    one circle, so nobody hunts themselves and everyone is hunted once."""
    circle = list(state.order)
    rng.shuffle(circle)
    state.targets = [-1] * len(state.players)
    for i, seat in enumerate(circle):
        state.targets[seat] = circle[(i + 1) % len(circle)]
    return [TargetDealt(seat, state.targets[seat]) for seat in state.order]


def target_of(state: GameState, seat: int | None) -> int | None:
    """The seat ``seat`` hunts now (None: not an assassin game, or no target)."""
    if seat is None or not state.targets or seat >= len(state.targets):
        return None
    target = state.targets[seat]
    return target if target >= 0 else None


def hunter_of(state: GameState, seat: int) -> int | None:
    """The player still in the game who hunts ``seat``. A player out of the game
    keeps their last target in ``targets`` (the record of the game), so the
    hunter is the one still alive."""
    for hunter in state.order:
        if state.players[hunter].alive and target_of(state, hunter) == seat:
            return hunter
    return None


def assassin_winner(state: GameState) -> tuple[int, str, str] | None:
    """The hunter whose target was eliminated by a player's attack."""
    for hunter in state.alive_seats():
        target = target_of(state, hunter)
        if target is None or target == hunter or state.players[target].alive:
            continue
        by = state.players[target].eliminated_by
        if by is not None and not state.players[by].neutral:
            names = state.players
            detail = f"target {names[target].name} eliminated by {names[by].name}"
            return hunter, ASSASSIN, detail
    return None


def _inherit(state: GameState, loser: int) -> list[Event]:
    """A player removed from the game: their hunter takes over their target."""
    hunter = hunter_of(state, loser)
    inherited = target_of(state, loser)
    if hunter is None or inherited is None or inherited == hunter:
        return []  # the last two: the hunter is alone in the game and wins it
    state.targets[hunter] = inherited
    return [TargetDealt(hunter, inherited, inherited_from=loser)]


# ---------------------------------------------------------------- terminator
def points_shown(state: GameState, seat: int) -> int | None:
    """Terminator: the seat's points, public in every players table and in
    `pbem show`; None in other games and for the neutral."""
    if state.options.goal != TERMINATOR or state.players[seat].neutral:
        return None
    return points(state, seat)


def points(state: GameState, seat: int) -> int:
    """1 for each player ``seat`` eliminated by attack (a neutral seat scores nothing)."""
    if state.players[seat].neutral:
        return 0
    return sum(1 for p in state.players if not p.neutral and p.eliminated_by == seat)


def standings(state: GameState) -> list[int]:
    """Every player (out of the game too), best first: most points, then most
    territories, then most armies, then the earlier in turn order."""
    return sorted(state.order, key=lambda s: _rank_key(state, s))


def standings_by_board(state: GameState) -> list[int]:
    """The round limit's ranking of a standard game: most territories, then most
    armies, then the earlier in turn order."""
    return sorted(state.order, key=lambda s: _rank_key(state, s)[1:])


def _rank_key(state: GameState, seat: int) -> tuple[int, int, int, int]:
    return (
        -points(state, seat),
        -state.territory_count(seat),
        -state.army_count(seat),
        state.order.index(seat),
    )


DECIDERS: Final = ("most points", "most territories", "most armies", "turn order")


def decided_by(state: GameState, first: int, second: int | None, use_points: bool) -> str:
    """The rule that put ``first`` before ``second`` in the round limit's ranking:
    "most territories", "most armies" or "turn order" ("most points" first in
    terminator). Without a second player, the first rule."""
    rules = DECIDERS if use_points else DECIDERS[1:]
    if second is None:
        return rules[0]
    a, b = _rank_key(state, first), _rank_key(state, second)
    keys = list(zip(a, b, strict=True))
    if not use_points:
        keys = keys[1:]
    for rule, (x, y) in zip(rules, keys, strict=True):
        if x != y:
            return rule
    return rules[-1]


# ---------------------------------------------------------------------- bots
def bot_bonus(state: GameState, seat: int, owner: list[int], target: int) -> float | None:
    """What the game type adds to a bot's wish to attack ``target`` on its planned
    board ``owner``; None: do not attack it. Assassin: go for your target (+0.2),
    and never take the last territory of another player (their hunter would win).
    Terminator: a kill is a point (+0.2 for a player's last territory)."""
    defender = owner[target]
    if defender < 0 or state.players[defender].neutral:
        return 0.0
    last = owner.count(defender) == 1
    goal = state.options.goal
    if goal == ASSASSIN:
        if target_of(state, seat) == defender:
            return 0.2
        return None if last else 0.0
    if goal == TERMINATOR and last:
        return 0.2
    return 0.0


# ------------------------------------------------------------------ the hooks
def on_elimination(state: GameState, loser: int, by: int) -> list[Event]:
    """After ``loser`` left the board (``eliminated_by`` set): a point in
    terminator for an elimination by attack; the target passed on in assassin
    when the loser was removed from the game (``by``: the neutral seat)."""
    goal = state.options.goal
    if state.players[loser].neutral:
        return []
    if goal == TERMINATOR and not state.players[by].neutral:
        return [PointScored(by, loser, points(state, by))]
    if goal == ASSASSIN and state.players[by].neutral:
        return _inherit(state, loser)
    return []
