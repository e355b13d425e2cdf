"""Setup orders (CLAIM, PLACE, NEUTRAL, HQ) against the setup phase the game is
in: every problem, or none (validate.py checks turn orders and whole mails);
and whether a seat may send turn orders at all in the phase the game is in."""

from __future__ import annotations

from collections.abc import Sequence

from pbem.orders.errors import OrderProblem, not_yours, problem_at, whole_problem
from pbem.orders.model import TURN_KEYWORDS, Order
from pbem.rules import fog, opening
from pbem.rules.actions import (
    Claim,
    Headquarters,
    PlaceInitial,
    PlaceNeutral,
    SetupAction,
)
from pbem.rules.state import CLAIM, ENDED, HQ, PLACE, REINFORCE, ROUND, SETUP_PHASES, GameState

PHASE_WORDS = {
    CLAIM: "claiming territories",
    PLACE: "placing initial armies",
    HQ: "choosing headquarters",
}
_SETUP_KINDS: dict[str, tuple[type, ...]] = {
    CLAIM: (Claim,),
    PLACE: (PlaceInitial, PlaceNeutral),
    HQ: (Headquarters,),
}
_SETUP_WORDS = {CLAIM: "CLAIM", PLACE: "PLACE", HQ: "HQ"}


def validate_setup(
    state: GameState, seat: int, orders: Sequence[Order], unread: frozenset[str] = frozenset()
) -> list[OrderProblem]:
    """Every problem with ``seat``'s orders for the current setup phase.
    ``unread``: the orders the mail's unreadable lines may have been; a missing
    order or a total they could change is not told (validate.validate_turn)."""
    orders = [o.as_setup() for o in orders]
    phase = state.phase
    if phase == ENDED:
        return [whole_problem("the game is over", orders)]
    if phase not in SETUP_PHASES:
        return [whole_problem("the game is under way; setup orders are over", orders)]
    if not 0 <= seat < len(state.players) or seat not in state.order:
        return [whole_problem("you are not a player of this game", orders)]
    problems: list[OrderProblem] = []
    kinds = _SETUP_KINDS[phase]
    wanted = [o for o in orders if isinstance(o.action, kinds)]
    for order in orders:
        if isinstance(order.action, kinds):
            continue
        if order.keyword in TURN_KEYWORDS and order.keyword != "PLACE":
            message = (
                f"{order.keyword} is a turn order; the game is still being set up "
                f"({PHASE_WORDS[phase]})"
            )
        else:
            message = (
                f"{order.keyword} is not an order of this phase: the game is "
                f"{PHASE_WORDS[phase]} (send {_SETUP_WORDS[phase]})"
            )
        problems.append(problem_at(order, message))
    if phase == CLAIM:
        problems += _one(wanted, "CLAIM", "your preference list", unread)
    elif phase == HQ:
        problems += _one(wanted, "HQ", "your headquarters", unread)
        for order in wanted:
            assert isinstance(order.action, Headquarters)
            territory = order.action.territory
            if state.owner[territory] != seat:
                name = state.board.territories[territory].name
                problems.append(problem_at(order, not_yours(state, territory), 0, name))
    else:
        places = [o for o in wanted if isinstance(o.action, PlaceInitial)]
        problems += _placement(
            state, places, seat, state.players[seat].to_place, "PLACE", "PLACE" in unread
        )
        neutral = [o for o in wanted if isinstance(o.action, PlaceNeutral)]
        share = opening.neutral_share(state, seat)
        if neutral and not share:
            problems.append(problem_at(neutral[0], "there are no neutral armies for you to place"))
        elif state.neutral_seat is not None:
            problems += _placement(
                state, neutral, state.neutral_seat, share, "NEUTRAL", "NEUTRAL" in unread
            )
    return problems


def _one(
    orders: list[Order], keyword: str, what: str, unread: frozenset[str]
) -> list[OrderProblem]:
    if not orders:
        if keyword in unread:  # the line that could not be read is one
            return []
        return [OrderProblem(0, 0, "", f"no {keyword} order: send one, with {what}")]
    return [problem_at(o, f"only one {keyword} order may be sent") for o in orders[1:]]


def _placement(
    state: GameState, orders: list[Order], owner: int, due: int, keyword: str, unread: bool
) -> list[OrderProblem]:
    """Where the orders place, then their total; ``unread``: a line that could not
    be read may be one more of them, so only too many armies are certain."""
    problems: list[OrderProblem] = []
    total = 0
    for order in orders:
        action = order.action
        assert isinstance(action, PlaceInitial | PlaceNeutral)
        for i, (armies, territory) in enumerate(action.placements):
            name = state.board.territories[territory].name
            if state.owner[territory] != owner:
                if owner == state.neutral_seat:
                    message = f"{name} is not neutral"
                else:
                    message = not_yours(state, territory)
                problems.append(problem_at(order, message, i, name))
            elif armies < 1:
                problems.append(problem_at(order, "armies to place must be at least 1", i))
            else:
                total += armies
    if problems:
        return problems
    what = "neutral armies" if keyword == "NEUTRAL" else "armies"
    if unread:
        if total <= due:
            return []
        message = f"the {keyword} orders that could be read place {total} {what}; {due} are due"
        return [problem_at(orders[0], message)]
    if not orders and due > 0:
        return [OrderProblem(0, 0, "", f"no {keyword} order: {due} {what} must be placed")]
    if orders and total != due:
        message = f"{keyword} orders place {total} {what}; {due} are due"
        return [problem_at(orders[0], message)]
    return []


def setup_actions(orders: Sequence[Order]) -> list[SetupAction]:
    return [o.as_setup().action for o in orders]  # type: ignore[misc]


def turn_gate(state: GameState, seat: int) -> str | None:
    """Why this seat cannot send turn orders now, or None."""
    if state.phase == ENDED:
        return "the game is over"
    if state.phase in SETUP_PHASES:
        return (
            f"the game is still being set up ({PHASE_WORDS[state.phase]}); turn orders come later"
        )
    if not 0 <= seat < len(state.players) or seat not in state.order:
        return "you are not a player of this game"
    if not state.players[seat].alive:
        return "you are no longer in the game"
    if state.phase == ROUND:  # freestyle: anyone yet to move in this round
        if seat in state.moved:
            return (
                f"you have moved in round {state.round} already (freestyle: one turn each "
                f"round); your next turn is in round {state.round + 1}"
            )
        return None
    if seat != state.current:
        return f"it is not your turn: {state.players[state.current].name} is to move"
    if state.phase != REINFORCE or state.pending_move is not None:
        return "this turn is already under way"
    return None


def setup_cap_problems(state: GameState, seat: int, orders: Sequence[Order]) -> list[OrderProblem]:
    """A setup PLACE past max_armies, refused at the door (a mail, a CHECK, `pbem
    adjudicate`): the engine refuses it only when every player's orders are in,
    which left the setup waiting on the player who was told "accepted" and
    charged the failure to the last player's mail. Not part of validate_setup,
    which a replay runs: a log written before this check may hold such an entry
    that the player's later orders replaced."""
    cap = state.options.max_armies
    if not cap or state.phase != PLACE:
        return []
    problems: list[OrderProblem] = []
    added: dict[int, int] = {}
    for order in orders:
        action = order.as_setup().action
        if not isinstance(action, PlaceInitial):
            continue
        for i, (armies, territory) in enumerate(action.placements):
            if not 0 <= territory < len(state.owner) or state.owner[territory] != seat:
                continue  # validate_setup says whose it is
            added[territory] = added.get(territory, 0) + armies
            holding = state.armies[territory] + added[territory]
            if armies > 0 and holding > cap:
                name = state.board.territories[territory].name
                room = max(0, cap - state.armies[territory] - added[territory] + armies)
                message = (
                    f"{name} would hold {holding} armies, over the cap of {cap} "
                    f"(max_armies): room for {room} more there"
                )
                problems.append(problem_at(order, message, i, name))
    return problems


def fog_neutral_problems(
    state: GameState, seat: int, orders: Sequence[Order]
) -> tuple[list[OrderProblem], set[tuple[int, int]]]:
    """Under fog, a NEUTRAL placement (two players' blind placement) goes on a
    neutral territory in the placer's sight: one out of it is refused in words
    that do not say whose it is (accepting it, or "X is not neutral", would tell).
    Returns those problems and their (line, territory), whose other problems the
    caller drops. Checked at the door, like ``setup_cap_problems``: not part of
    validate_setup, which a replay runs. With no neutral territory in sight at
    all, any neutral territory may be named (nothing else could be)."""
    if not fog.fogged(state) or state.phase != PLACE or state.neutral_seat is None:
        return [], set()
    seen = fog.sight(state, seat)
    if not any(state.owner[t] == state.neutral_seat for t in seen):
        return [], set()
    problems: list[OrderProblem] = []
    hidden: set[tuple[int, int]] = set()
    for order in orders:
        if not isinstance(order.action, PlaceNeutral):
            continue
        for i, (_, territory) in enumerate(order.action.placements):
            if territory not in seen:
                name = state.board.territories[territory].name
                message = (
                    f"{name} is out of your sight (fog of war): NEUTRAL places on the "
                    "neutral territories you can see"
                )
                problems.append(problem_at(order, message, i, name))
                hidden.add((order.line, territory))
    return problems, hidden
