"""The turn machine: reinforcements, trades, fortify, end of turn (the attacks are
pbem.rules.attacking, the setup before the first turn pbem.rules.opening).

Every function takes the state (changed in place), the inputs of one step and,
where chance is involved, the random stream of DICE.md; it returns the events
of that step. An illegal step raises RulesError naming the rule, and leaves
the state as it was (checks come before changes).
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from pbem.rules import freestyle, online, teams, victory
from pbem.rules.cards import all_sets, designs_of, is_set, mixed_sets, set_value
from pbem.rules.combat import Stream
from pbem.rules.errors import RulesError
from pbem.rules.events import (
    ArmiesPlaced,
    CardDrawn,
    CardsTraded,
    DeckShuffled,
    Event,
    Fortified,
    GameWon,
    MovedIn,
    PlayerEliminated,
    TurnBegan,
    TurnEnded,
)
from pbem.rules.state import (
    ATTACK,
    CLAIM,
    ENDED,
    FORTIFY,
    HQ,
    PLACE,
    REINFORCE,
    ROUND,
    GameState,
    Player,
)

NEUTRAL_NAME: Final = "neutral"


class ShuffleStream(Stream, Protocol):
    def shuffle(self, items: list[Any]) -> None: ...

    def uniform(self, n: int) -> int: ...


# ----------------------------------------------------------------- shared checks
def check_territory(state: GameState, territory: int, rule: str) -> None:
    """Refuse a territory number the map does not have (negative ones included:
    Python would quietly count them from the end)."""
    if not 0 <= territory < len(state.owner):
        raise RulesError(rule, f"the map has no territory number {territory}")


def territory_name(state: GameState, territory: int) -> str:
    if 0 <= territory < len(state.board.territories):
        return state.board.territories[territory].name
    return f"territory number {territory}"


def expect_phase(state: GameState, phase: str, rule: str) -> None:
    if state.phase != phase:
        raise RulesError(rule, f"the game is in its {state.phase} phase, not {phase}")


# ---------------------------------------------------------------- reinforcements
def reinforcement_base(territories: int) -> int:
    return max(3, territories // 3)


def begin_turn(state: GameState) -> list[Event]:
    seat = state.current
    state.turn += 1
    state.phase = REINFORCE
    territories = state.territory_count(seat)
    base = reinforcement_base(territories)
    held = state.continents_held(seat)
    bonus = sum(state.board.continents[c].bonus for c in held)
    state.reinforcements = base + bonus
    hand = state.players[seat].cards
    # A hand of 5 always holds a set when one of each counts; a lower
    # forced_trade_at, or fixed values without mixed sets, may leave one without.
    mixed = mixed_sets(state.options)
    state.must_trade = (
        state.options.card_values != "none"
        and len(hand) >= state.options.forced_trade_at
        and ((len(hand) >= 5 and mixed) or bool(all_sets(state.board, hand, mixed)))
    )
    state.trades_this_turn = 0
    state.bonus_taken = False
    state.conquered_this_turn = False
    state.fortifies_this_turn = 0
    if state.taken_this_turn:  # trench warfare: a new turn, every territory may attack
        state.taken_this_turn = []
    state.commander_used = False
    state.pending_move = None
    state.last_conquest = None
    began: list[Event] = [
        TurnBegan(state.turn, seat, territories, base, tuple(held), bonus, state.must_trade)
    ]
    if state.options.goal == "mission" and state.options.mission_win == "own_turn":
        began += check_victory(state)  # a mission completed since this player's last turn
    return began


def take_turn(state: GameState, seat: int) -> list[Event]:
    """Freestyle: ``seat``'s orders arrived first of those still to move in this
    round, so ``seat`` takes the next turn."""
    if state.phase != ROUND:
        raise RulesError("freestyle", f"no round is open: the game is in its {state.phase} phase")
    if seat not in freestyle.waiting_for(state):
        name = state.players[seat].name if 0 <= seat < len(state.players) else f"seat {seat}"
        raise RulesError("freestyle", f"{name} has moved in round {state.round} already")
    state.current = seat
    return begin_turn(state)


def turn_of(state: GameState, seat: int) -> GameState:
    """Freestyle: a copy of the state as ``seat``'s turn would begin now, to check
    orders, forecast them or plan a bot's turn against (the state itself waits)."""
    view = state.copy()
    take_turn(view, seat)
    return view


def expect_turn(state: GameState, seat: int | None) -> None:
    if state.phase == ENDED:
        raise RulesError("game over", "the game is over")
    if state.phase == ROUND:
        raise RulesError("freestyle", "no turn is under way: a turn begins with take_turn")
    if state.phase not in (REINFORCE, ATTACK, FORTIFY):
        raise RulesError("setup", f"the game is still in its {state.phase} phase")
    if seat is not None and seat != state.current:
        raise RulesError("turn order", f"it is {state.players[state.current].name}'s turn")
    if state.pending_move is not None:
        raise RulesError("move in", "armies must move into the conquered territory first")


def trade(state: GameState, cards: tuple[int, ...], seat: int | None = None) -> list[Event]:
    """Trade a set for armies in the reinforcement phase."""
    expect_turn(state, seat)
    options = state.options
    player = state.players[state.current]
    if options.card_values == "none":
        raise RulesError("cards", "these rules use no cards")
    if state.phase != REINFORCE:
        raise RulesError("trade", "sets are traded before attacking")
    if state.trades_this_turn >= options.max_trades:
        raise RulesError("trade", f"at most {options.max_trades} sets may be traded in a turn")
    missing = [c for c in cards if c not in player.cards]
    if missing:
        raise RulesError(
            "trade", f"{player.name} does not hold {state.board.card_name(missing[0])}"
        )
    if not is_set(state.board, cards, mixed_sets(options)):
        kinds = (
            "three of a design, one of each, or two and a wild"
            if mixed_sets(options)
            else "three of a design, or two of a design and a wild"
        )
        raise RulesError("card set", kinds)
    state.trades_this_turn += 1
    state.must_trade = False
    value, events = trade_set(state, state.current, tuple(cards), forced=False)
    state.reinforcements += value
    return events + check_goal(state)  # the +2 bonus may complete a mission


def trade_set(
    state: GameState, seat: int, cards: tuple[int, ...], forced: bool
) -> tuple[int, list[Event]]:
    """Take the set out of the hand, count it, place the territory bonus."""
    options = state.options
    player = state.players[seat]
    for card in cards:
        player.cards.remove(card)
    state.sets_traded += 1
    value = set_value(options, state.sets_traded, designs_of(state.board, cards))
    bonus: list[tuple[int, int]] = []
    events: list[Event] = []
    for card in cards:
        territory = state.board.card_territory(card)
        if territory is None or state.owner[territory] != seat:
            continue
        if options.territory_bonus == "per_set" and bonus:
            break  # 2016: +2 once per set, on the first card of an owned territory
        if options.territory_bonus == "once":
            if state.bonus_taken:
                break
            state.bonus_taken = True
        bonus.append((territory, 2))
    if options.traded_cards == "bottom":
        state.deck.extend(cards)
    elif options.traded_cards == "removed":
        state.removed_cards.extend(cards)  # 2016: traded cards leave the game
    else:
        state.discard.extend(cards)
    events.append(CardsTraded(seat, cards, value, state.sets_traded, tuple(bonus), forced))
    for territory, armies in bonus:
        lost = add_armies(state, territory, armies)
        events.append(ArmiesPlaced(seat, territory, armies - lost, lost))
    return value, events


def add_armies(state: GameState, territory: int, armies: int) -> int:
    """Add armies under the max_armies cap; return how many were lost to it."""
    cap = state.options.max_armies
    total = state.armies[territory] + armies
    if cap and total > cap:
        state.armies[territory] = cap
        return total - cap
    state.armies[territory] = total
    return 0


def place(state: GameState, territory: int, armies: int, seat: int | None = None) -> list[Event]:
    expect_turn(state, seat)
    check_territory(state, territory, "placement")
    if state.phase != REINFORCE and not (state.phase == ATTACK and state.reinforcements):
        raise RulesError(
            "placement",
            "armies are placed before attacking (or, after an elimination, "
            "the armies of the sets it made you trade)",
        )
    if state.owner[territory] != state.current and not teams.friendly(
        state, state.current, territory
    ):  # (team games: a teammate's territory takes armies too)
        name = state.board.territories[territory].name
        raise RulesError("placement", f"{name} is not {state.players[state.current].name}'s")
    if armies < 1:
        raise RulesError("placement", "armies to place must be positive")
    if armies > state.reinforcements:
        raise RulesError(
            "placement", f"only {state.reinforcements} armies are left to place, not {armies}"
        )
    cap = state.options.max_armies
    if cap and state.options.rules_version >= 3 and armies > cap - state.armies[territory]:
        # rules version 3: refused, as in the setup; armies are lost only when no
        # territory of the player has room (place_leftover); under 1 and 2 the
        # armies over the cap were lost here
        name = state.board.territories[territory].name
        raise RulesError(
            "max armies",
            f"{name} holds {state.armies[territory]} armies and max_armies is {cap}: "
            f"room for {max(0, cap - state.armies[territory])} more there, not {armies}",
        )
    state.reinforcements -= armies
    lost = add_armies(state, territory, armies)
    events: list[Event] = [ArmiesPlaced(state.current, territory, armies - lost, lost)]
    return events + check_goal(state)


def check_reinforcements_done(state: GameState) -> None:
    """Refuse to go past the reinforcement phase with a forced trade or armies left."""
    if state.phase != REINFORCE:
        return
    if state.must_trade:
        raise RulesError(
            "forced trade",
            f"with {state.options.forced_trade_at} or more cards a set must be traded",
        )
    if state.reinforcements and not (
        state.options.rules_version >= 3 and room_left(state, state.current) == 0
    ):  # (rules version 3: armies that fit nowhere under max_armies are lost, place_leftover)
        raise RulesError("placement", f"{state.reinforcements} armies are still to be placed")


def room_left(state: GameState, seat: int) -> int:
    """How many armies the territories of ``seat`` may still take under
    max_armies (a large number without a cap)."""
    cap = state.options.max_armies
    if not cap:
        return 1_000_000_000
    return sum(cap - a for t, a in enumerate(state.armies) if state.owner[t] == seat and a < cap)


def _leave_reinforcements(state: GameState) -> None:
    check_reinforcements_done(state)
    if state.phase == REINFORCE:
        state.phase = ATTACK


# ------------------------------------------- after a battle (attacking.py has the attacks)
def place_leftover(state: GameState) -> list[Event]:
    """Place the armies of elimination trades that no PLACE order placed, before
    the game goes on: on the territory taken last as far as max_armies lets,
    the rest on the player's territories with room, in map order; what fits
    nowhere is lost (reported on the first of those territories). Under rules
    version 3 this also takes, when the player leaves the reinforcement phase,
    the armies due that no territory had room for (lost)."""
    if state.phase != ATTACK or not state.reinforcements:
        return []
    seat = state.current
    left = state.reinforcements
    state.reinforcements = 0
    first = state.last_conquest
    places = [t for t in state.territories_of(seat) if t != first]
    if first is not None and state.owner[first] == seat:
        places.insert(0, first)
    events: list[Event] = []
    for territory in places:
        fits = min(left, room_for(state, territory))
        if fits > 0:
            state.armies[territory] += fits
            events.append(ArmiesPlaced(seat, territory, fits))
            left -= fits
        if not left:
            break
    if left and places:
        events.append(ArmiesPlaced(seat, places[0], 0, left))  # no room anywhere: lost
    return events


def move_armies(state: GameState, armies: int, asked: int | None) -> list[Event]:
    source, target, _ = state.pending_move  # type: ignore[misc]
    state.pending_move = None
    cap = state.options.max_armies  # room_for, inlined: every conquest moves in
    moved = min(armies, cap - state.armies[target]) if cap else armies
    if moved != armies and asked is None:
        asked = armies
    state.armies[source] -= moved
    state.armies[target] += moved
    return [MovedIn(state.current, source, target, moved, asked)]


def room_for(state: GameState, territory: int) -> int:
    """How many armies may still move in under max_armies (moves are clamped to
    it; the armies that do not fit stay where they are)."""
    cap = state.options.max_armies
    return cap - state.armies[territory] if cap else 1_000_000_000


# ------------------------------------------------------------------------ fortify
def fortify(
    state: GameState,
    source: int,
    target: int,
    armies: int,
    seat: int | None = None,
    asked: int | None = None,
) -> list[Event]:
    expect_turn(state, seat)
    check_reinforcements_done(state)
    options = state.options
    board = state.board
    me = state.current
    if options.fortify == "none":
        raise RulesError("fortify", "these rules have no fortifying moves")
    check_territory(state, source, "fortify")
    check_territory(state, target, "fortify")
    if state.fortifies_this_turn >= online.moves_allowed(options):
        raise RulesError("fortify", "only one fortifying move is allowed in a turn")
    into_teammate = teams.is_teammate(state, me, state.owner[target])
    if state.owner[source] != me or (state.owner[target] != me and not into_teammate):
        raise RulesError("fortify", teams.fortify_refusal(state, me, source, target))
    if source == target:
        raise RulesError("fortify", "from and to are the same territory")
    if options.fortify == "adjacent" or into_teammate:  # (into a teammate's: adjacent only)
        if target not in board.territories[source].neighbours:
            raise RulesError(
                "adjacency",
                f"{board.territories[source].name} and {board.territories[target].name} "
                "are not adjacent",
            )
    elif online.path_needed(options) and not connected(state, source, target):
        raise RulesError(
            "fortify",
            f"no chain of your territories joins {board.territories[source].name} "
            f"and {board.territories[target].name}",
        )
    if armies < 1:
        raise RulesError("fortify", "armies to move must be positive")
    if armies > state.armies[source] - 1:
        raise RulesError("fortify", "one army must stay behind")
    moved = min(armies, room_for(state, target))
    if moved < 1:
        name = board.territories[target].name
        raise RulesError("max armies", f"{name} already holds {options.max_armies} armies")
    if moved != armies and asked is None:
        asked = armies
    if state.phase == REINFORCE:  # (no armies left here but under rules version 3's cap)
        state.phase = ATTACK
    leftover = place_leftover(state)
    state.phase = FORTIFY
    state.fortifies_this_turn += 1
    state.armies[source] -= moved
    state.armies[target] += moved
    return leftover + [Fortified(me, source, target, moved, asked)] + check_goal(state)


def connected(state: GameState, source: int, target: int) -> bool:
    """A path from source to target through territories of source's owner."""
    owner = state.owner[source]
    seen = {source}
    frontier = [source]
    territories = state.board.territories
    while frontier:
        here = frontier.pop()
        if here == target:
            return True
        for n in territories[here].neighbours:
            if n not in seen and state.owner[n] == owner:
                seen.add(n)
                frontier.append(n)
    return False


# -------------------------------------------------------------------- end of turn
def end_turn(state: GameState, rng: ShuffleStream, seat: int | None = None) -> list[Event]:
    """Draw the card earned by a conquest, then hand the turn on."""
    expect_turn(state, seat)
    _leave_reinforcements(state)
    me = state.current
    events: list[Event] = place_leftover(state)
    if state.conquered_this_turn and state.options.card_values != "none":
        if not state.deck and state.discard:
            state.deck = state.discard
            state.discard = []
            rng.shuffle(state.deck)
            events.append(DeckShuffled(len(state.deck), reshuffle=True))
        if state.deck:
            card = state.deck.pop(0)
            state.players[me].cards.append(card)
            events.append(CardDrawn(me, card))
    if freestyle.is_freestyle(state.options):
        events.append(TurnEnded(state.turn, me, None))
        return events + freestyle.close_turn(state, me)
    alive = state.alive_seats()
    position = alive.index(me)
    following = alive[(position + 1) % len(alive)]
    if alive.index(following) <= position:
        state.round += 1
    limit = state.options.max_turns
    if limit and state.round > limit:
        events.append(TurnEnded(state.turn, me, None))
        return events + victory.end_by_turn_limit(state)
    events.append(TurnEnded(state.turn, me, following))
    state.current = following
    return events + begin_turn(state)


def check_goal(state: GameState) -> list[Event]:
    """The win check after a step that eliminates nobody: only missions and
    headquarters can be won that way."""
    if state.options.goal == "domination":
        return []
    return check_victory(state)


def check_victory(state: GameState) -> list[Event]:
    winner = victory.winner(state)
    if winner is None:
        return []
    seat, reason, detail = winner
    state.winner = seat
    state.win_reason = reason
    state.phase = ENDED
    return [GameWon(seat, reason, detail)]


def remove_player(state: GameState, seat: int, reason: str = "removed") -> list[Event]:
    """Take a player out (resigned, or removed for missed turns): their
    territories become neutral, their cards go under the pile. The neutral
    seat is added at the end when the game had none, so no seat number moves."""
    player = state.players[seat]
    if not player.alive or player.neutral:
        raise RulesError("removal", f"{player.name} is not in the game")
    if state.phase in (CLAIM, PLACE, HQ):
        raise RulesError("removal", "players can be removed once the game is under way")
    if state.pending_move is not None and state.current == seat:
        move_armies(state, state.pending_move[2], None)
    heir = teams.heir(state, seat)
    if heir is not None:  # team games: all to the first surviving teammate, none neutral
        handed = teams.hand_over(state, seat, heir)
        return handed + _next_after_removal(state, seat)
    neutral = state.neutral_seat
    if neutral is None:
        state.players.append(Player(name=NEUTRAL_NAME, neutral=True))
        neutral = len(state.players) - 1
    state.players[neutral].alive = True
    for territory, owner in enumerate(state.owner):
        if owner == seat:
            state.owner[territory] = neutral
            if territory in state.defend_one:
                state.defend_one.remove(territory)  # the neutral defends with the most dice
    if state.options.traded_cards in ("bottom", "removed"):  # not traded: back under the pile
        state.deck.extend(player.cards)
    else:
        state.discard.extend(player.cards)
    player.cards = []
    player.alive = False
    events: list[Event] = [PlayerEliminated(seat, neutral, 0)]
    events += victory.on_elimination(state, seat, neutral)
    alive = state.alive_seats()
    if len(alive) == 1 and not state.options.team_size:  # (a team's win: check_victory)
        return events + finish(state, alive[0], "domination", f"{player.name} {reason}")
    events += check_victory(state)
    return events + _next_after_removal(state, seat)


def _next_after_removal(state: GameState, seat: int) -> list[Event]:
    """The turn handed on when the removed player was to move."""
    events: list[Event] = []
    if freestyle.is_freestyle(state.options):
        if state.phase == ENDED:
            return events
        if state.current == seat:  # (between steps a freestyle game has no seat to move)
            events.append(TurnEnded(state.turn, seat, None))
            return events + freestyle.close_turn(state, seat)
        return events + freestyle.next_round_if_done(state)
    alive = state.alive_seats()
    if state.phase != ENDED and state.current == seat:
        position = state.order.index(seat)
        following = next(
            s for s in state.order[position + 1 :] + state.order[:position] if s in alive
        )
        if state.order.index(following) <= position:
            state.round += 1
        if victory.limit_ends_on_removal(state):  # terminator: round N's last turn was this
            events.append(TurnEnded(state.turn, seat, None))
            return events + victory.end_by_turn_limit(state)
        events.append(TurnEnded(state.turn, seat, following))
        state.current = following
        events += begin_turn(state)
    return events


def finish(state: GameState, seat: int, reason: str, detail: str = "") -> list[Event]:
    """End the game with a winner decided outside the board (e.g. all others resigned)."""
    state.winner = seat
    state.win_reason = reason
    state.phase = ENDED
    return [GameWon(seat, reason, detail)]
