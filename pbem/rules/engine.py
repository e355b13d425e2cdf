"""The turn machine: setup, reinforcements, trades, attacks, fortify, end of turn.

Every function takes the state (changed in place), the inputs of one step and,
where chance is involved, the random stream of DICE.md; it returns the events
of that step. An illegal step raises RulesError naming the rule, and leaves
the state as it was (checks come before changes).
"""

from __future__ import annotations

from typing import Any, Protocol

from pbem.rules import victory
from pbem.rules.armies import check_setup, starting_armies
from pbem.rules.board import Board
from pbem.rules.cards import all_sets, designs_of, is_set, mixed_sets, set_value
from pbem.rules.combat import PLAIN, Stream, plain_roll, roll
from pbem.rules.errors import RulesError
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    Event,
    Fortified,
    GameWon,
    HeadquartersChosen,
    MissionDealt,
    MovedIn,
    PlayerEliminated,
    Roll,
    TerritoriesDealt,
    TerritoryClaimed,
    TurnBegan,
    TurnEnded,
    TurnOrderDrawn,
)
from pbem.rules.options import Options
from pbem.rules.state import (
    ATTACK,
    CLAIM,
    ENDED,
    FORTIFY,
    HQ,
    PLACE,
    REINFORCE,
    GameState,
    Player,
    neighbours_of,
)

NEUTRAL_NAME = "neutral"


class ShuffleStream(Stream, Protocol):
    def shuffle(self, items: list[Any]) -> None: ...

    def uniform(self, n: int) -> int: ...


# --------------------------------------------------------------------------- setup
def new_game(
    board: Board,
    options: Options,
    game: str,
    players: list[tuple[str, str]],
    rng: ShuffleStream,
) -> tuple[GameState, list[Event]]:
    """Seat the players (name, colour), draw the turn order, deal or open the draft.

    Uses the ``setup`` stream, in this order: turn order, missions, the deal,
    the draw pile, and auto placement when no player input is needed first.
    """
    options.check_players(len(players))
    check_setup(options, board, len(players))
    names = [name for name, _ in players]
    if len(set(names)) != len(names):
        raise RulesError("setup", "two players have the same name")
    colours = [colour for _, colour in players if colour]
    if len(set(colours)) != len(colours):
        raise RulesError("setup", "two players have the same colour")
    seats = [Player(name=name, colour=colour) for name, colour in players]
    use_neutral = options.neutral and len(players) == 2
    if use_neutral:
        seats.append(Player(name=NEUTRAL_NAME, neutral=True))
    n_terr = len(board.territories)
    state = GameState(
        board=board,
        options=options,
        game=game,
        players=seats,
        owner=[-1] * n_terr,
        armies=[0] * n_terr,
        phase=CLAIM,
    )
    events: list[Event] = []

    order = list(range(len(players)))
    rng.shuffle(order)
    state.order = order
    events.append(TurnOrderDrawn(tuple(order)))

    if options.goal == "mission":
        events += _deal_missions(state, rng)

    start = starting_armies(len(players), n_terr)
    for seat in order:
        seats[seat].to_place = start
    if use_neutral:
        seats[-1].to_place = start

    if options.card_values != "none":
        state.deck = board.deck_cards()
        rng.shuffle(state.deck)

    if options.claim == "deal":
        events += _deal(state, rng)
        events += _after_claims(state, rng)
    elif use_neutral:
        events += _deal_neutral(state, rng)
    return state, events


def _deal_neutral(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Two-player draft: the neutral's third (14 of 42) is dealt from the
    shuffled territory cards, as the rulebook deals its pile, before the two
    players draft the rest."""
    seat = state.neutral_seat
    assert seat is not None
    cards = list(range(len(state.board.territories)))
    rng.shuffle(cards)
    share = sorted(cards[: len(cards) // 3])
    for territory in share:
        _occupy(state, seat, territory)
    return [TerritoriesDealt(seat, tuple(share))]


def _deal_missions(state: GameState, rng: ShuffleStream) -> list[Event]:
    board = state.board
    colours = {p.colour for p in state.players if not p.neutral}
    deck = victory.mission_deck(board, state.options, colours)
    if len(deck) < len(state.order):
        raise RulesError("secret missions", f"map {board.name} has too few missions")
    rng.shuffle(deck)
    events: list[Event] = []
    for seat in state.order:
        mission = deck.pop(0)
        player = state.players[seat]
        player.mission = mission
        player.mission_fallback = board.missions[mission].colour == player.colour != ""
        events.append(MissionDealt(seat, mission, player.mission_fallback))
    return events


def _deal(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Deal the territory cards (wilds out) round robin, first in turn order first."""
    cards = list(range(len(state.board.territories)))
    rng.shuffle(cards)
    takers = list(state.order)
    if state.neutral_seat is not None:
        takers.append(state.neutral_seat)
    dealt: dict[int, list[int]] = {seat: [] for seat in takers}
    for i, territory in enumerate(cards):
        seat = takers[i % len(takers)]
        dealt[seat].append(territory)
        _occupy(state, seat, territory)
    return [TerritoriesDealt(seat, tuple(sorted(dealt[seat]))) for seat in takers]


def _occupy(state: GameState, seat: int, territory: int) -> None:
    state.owner[territory] = seat
    state.armies[territory] = 1
    state.players[seat].to_place -= 1


def claim_draft(state: GameState, claims: dict[int, list[int]]) -> list[Event]:
    """Draft: picks in turn order, one per round, each the first free on its list."""
    _expect_phase(state, CLAIM, "draft")
    missing = [s for s in state.order if s not in claims]
    if missing:
        raise RulesError("draft", f"no preference list from {state.players[missing[0]].name}")
    for prefs in claims.values():
        for t in prefs:
            _check_territory(state, t, "draft")
    free = [t for t in range(len(state.board.territories)) if state.owner[t] < 0]
    events: list[Event] = []
    takers = list(state.order)  # a two-player game's neutral was dealt its share
    i = 0
    while free:
        seat = takers[i % len(takers)]
        prefs = claims.get(seat, [])
        pick = next((t for t in prefs if state.owner[t] < 0), free[0])
        free.remove(pick)
        _occupy(state, seat, pick)
        events.append(TerritoryClaimed(seat, pick))
        i += 1
    return events


def claim_round(state: GameState, claims: dict[int, list[int]]) -> list[Event]:
    """claim = turns: one round of claiming in turn (the rulebook's "take turns
    placing one army on an unoccupied territory", one mail per round). In turn
    order each player takes the first free territory on their list (none free
    on it: the first free in map order); the CLAIM phase lasts until every
    territory is taken (then after_draft)."""
    _expect_phase(state, CLAIM, "claim")
    missing = [s for s in state.order if s not in claims]
    if missing:
        raise RulesError("claim", f"no CLAIM from {state.players[missing[0]].name}")
    for prefs in claims.values():
        for t in prefs:
            _check_territory(state, t, "claim")
    events: list[Event] = []
    for seat in state.order:
        free = [t for t in range(len(state.owner)) if state.owner[t] < 0]
        if not free:
            break
        pick = next((t for t in claims[seat] if state.owner[t] < 0), free[0])
        _occupy(state, seat, pick)
        events.append(TerritoryClaimed(seat, pick))
    return events


def claims_done(state: GameState) -> bool:
    return all(o >= 0 for o in state.owner)


def after_draft(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Continue the setup once the draft is done (auto placement uses ``rng``)."""
    return _after_claims(state, rng)


def _after_claims(state: GameState, rng: ShuffleStream) -> list[Event]:
    if state.options.placement == "auto":
        events = _auto_place(state, rng)
        return events + _after_placement(state)
    state.phase = PLACE
    return []


def _auto_place(state: GameState, rng: ShuffleStream) -> list[Event]:
    """One army at a time, in turn order, each on a territory drawn at random
    (among those below max_armies; an army with no room left is lost)."""
    counts = [0] * len(state.owner)
    placers = list(state.order)
    if state.neutral_seat is not None:
        placers.append(state.neutral_seat)
    cap = state.options.max_armies
    while any(state.players[s].to_place > 0 for s in placers):
        for seat in placers:
            player = state.players[seat]
            if player.to_place <= 0:
                continue
            player.to_place -= 1
            own = [t for t in state.territories_of(seat) if not cap or state.armies[t] < cap]
            if not own:
                continue
            territory = own[rng.uniform(len(own))]
            counts[territory] += 1
            state.armies[territory] += 1
    return [ArmiesPlaced(state.owner[t], t, n) for t, n in enumerate(counts) if n > 0]


def place_initial(
    state: GameState,
    placements: dict[int, list[tuple[int, int]]],
    neutral: dict[int, list[tuple[int, int]]] | None = None,
) -> list[Event]:
    """Blind placement: every player's (territory, armies) at once.

    In the two-player game each player also places half of the neutral's
    remaining armies on neutral territories (``neutral``).
    """
    _expect_phase(state, PLACE, "placement")
    neutral = neutral or {}
    neutral_seat = state.neutral_seat
    for seat in state.order:
        player = state.players[seat]
        if seat not in placements:
            raise RulesError("placement", f"no initial placement from {player.name}")
        _check_setup_placement(state, seat, placements[seat], player.to_place, seat, "PLACE")
        if neutral_seat is not None:
            share = _neutral_share(state, seat)
            _check_setup_placement(
                state, seat, neutral.get(seat, []), share, neutral_seat, "NEUTRAL"
            )
    events: list[Event] = []
    for seat in state.order:
        for territory, armies in placements[seat]:
            state.armies[territory] += armies
            events.append(ArmiesPlaced(seat, territory, armies))
        state.players[seat].to_place = 0
        if neutral_seat is not None:
            # both players may place on one neutral territory: over max_armies is lost
            for territory, armies in neutral.get(seat, []):
                lost = _add_armies(state, territory, armies)
                events.append(ArmiesPlaced(neutral_seat, territory, armies - lost, lost))
    if neutral_seat is not None:
        state.players[neutral_seat].to_place = 0
    return events + _after_placement(state)


def _neutral_share(state: GameState, seat: int) -> int:
    """The neutral's remaining armies split between the two players, the first
    in turn order taking the odd one."""
    remaining = state.players[state.neutral_seat].to_place  # type: ignore[index]
    first = state.order[0] == seat
    return remaining - remaining // 2 if first else remaining // 2


def neutral_share(state: GameState, seat: int) -> int:
    return _neutral_share(state, seat) if state.neutral_seat is not None else 0


def _check_setup_placement(
    state: GameState, seat: int, items: list[tuple[int, int]], due: int, owner: int, order: str
) -> None:
    name = state.players[seat].name
    total = 0
    added: dict[int, int] = {}
    cap = state.options.max_armies
    for territory, armies in items:
        if not 0 <= territory < len(state.owner) or state.owner[territory] != owner:
            whose = "neutral" if owner == state.neutral_seat else name
            raise RulesError("placement", f"{order}: {_name(state, territory)} is not {whose}'s")
        if armies < 1:
            raise RulesError("placement", f"{order}: armies must be positive")
        added[territory] = added.get(territory, 0) + armies
        if cap and state.armies[territory] + added[territory] > cap:
            where = _name(state, territory)
            raise RulesError("max armies", f"{order}: {where} would hold more than {cap} armies")
        total += armies
    if total != due:
        raise RulesError("placement", f"{order}: {name} must place {due} armies, not {total}")


def _check_territory(state: GameState, territory: int, rule: str) -> None:
    """Refuse a territory number the map does not have (negative ones included:
    Python would quietly count them from the end)."""
    if not 0 <= territory < len(state.owner):
        raise RulesError(rule, f"the map has no territory number {territory}")


def _name(state: GameState, territory: int) -> str:
    if 0 <= territory < len(state.board.territories):
        return state.board.territories[territory].name
    return f"territory number {territory}"


def _after_placement(state: GameState) -> list[Event]:
    if state.options.goal == "capital":
        state.phase = HQ
        return []
    return start_play(state)


def choose_headquarters(state: GameState, hqs: dict[int, int]) -> list[Event]:
    """Capital Risk: every player's HQ at once (hidden until all chose); their
    cards leave the deck for the game."""
    _expect_phase(state, HQ, "headquarters")
    for seat in state.order:
        if seat not in hqs:
            raise RulesError("headquarters", f"no HQ from {state.players[seat].name}")
        _check_territory(state, hqs[seat], "headquarters")
        if state.owner[hqs[seat]] != seat:
            name = state.board.territories[hqs[seat]].name
            raise RulesError("headquarters", f"{name} is not {state.players[seat].name}'s")
    events: list[Event] = []
    for seat in state.order:
        territory = hqs[seat]
        state.players[seat].hq = territory
        if territory in state.deck:
            state.deck.remove(territory)
            state.removed_cards.append(territory)
        events.append(HeadquartersChosen(seat, territory))
    return events + start_play(state)


def start_play(state: GameState) -> list[Event]:
    state.turn = 0
    state.round = 1
    state.current = state.order[0]
    events = _begin_turn(state)
    return events + _check_goal(state)  # a dealt mission may be complete already


def _expect_phase(state: GameState, phase: str, rule: str) -> None:
    if state.phase != phase:
        raise RulesError(rule, f"the game is in its {state.phase} phase, not {phase}")


# ---------------------------------------------------------------- reinforcements
def reinforcement_base(territories: int) -> int:
    return max(3, territories // 3)


def _begin_turn(state: GameState) -> list[Event]:
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
    state.commander_used = False
    state.pending_move = None
    state.last_conquest = None
    began: list[Event] = [
        TurnBegan(state.turn, seat, territories, base, tuple(held), bonus, state.must_trade)
    ]
    if state.options.goal == "mission" and state.options.mission_win == "own_turn":
        began += _check_victory(state)  # a mission completed since this player's last turn
    return began


def _expect_turn(state: GameState, seat: int | None) -> None:
    if state.phase == ENDED:
        raise RulesError("game over", "the game is over")
    if state.phase not in (REINFORCE, ATTACK, FORTIFY):
        raise RulesError("setup", f"the game is still in its {state.phase} phase")
    if seat is not None and seat != state.current:
        raise RulesError("turn order", f"it is {state.players[state.current].name}'s turn")
    if state.pending_move is not None:
        raise RulesError("move in", "armies must move into the conquered territory first")


def trade(state: GameState, cards: tuple[int, ...], seat: int | None = None) -> list[Event]:
    """Trade a set for armies in the reinforcement phase."""
    _expect_turn(state, seat)
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
    value, events = _trade_set(state, state.current, tuple(cards), forced=False)
    state.reinforcements += value
    return events + _check_goal(state)  # the +2 bonus may complete a mission


def _trade_set(
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
        lost = _add_armies(state, territory, armies)
        events.append(ArmiesPlaced(seat, territory, armies - lost, lost))
    return value, events


def _add_armies(state: GameState, territory: int, armies: int) -> int:
    """Add armies under the max_armies cap; return how many were lost to it."""
    cap = state.options.max_armies
    total = state.armies[territory] + armies
    if cap and total > cap:
        state.armies[territory] = cap
        return total - cap
    state.armies[territory] = total
    return 0


def place(state: GameState, territory: int, armies: int, seat: int | None = None) -> list[Event]:
    _expect_turn(state, seat)
    _check_territory(state, territory, "placement")
    if state.phase != REINFORCE and not (state.phase == ATTACK and state.reinforcements):
        raise RulesError(
            "placement",
            "armies are placed before attacking (or, after an elimination, "
            "the armies of the sets it made you trade)",
        )
    if state.owner[territory] != state.current:
        name = state.board.territories[territory].name
        raise RulesError("placement", f"{name} is not {state.players[state.current].name}'s")
    if armies < 1:
        raise RulesError("placement", "armies to place must be positive")
    if armies > state.reinforcements:
        raise RulesError(
            "placement", f"only {state.reinforcements} armies are left to place, not {armies}"
        )
    state.reinforcements -= armies
    lost = _add_armies(state, territory, armies)
    events: list[Event] = [ArmiesPlaced(state.current, territory, armies - lost, lost)]
    return events + _check_goal(state)


def _check_reinforcements_done(state: GameState) -> None:
    """Refuse to go past the reinforcement phase with a forced trade or armies left."""
    if state.phase != REINFORCE:
        return
    if state.must_trade:
        raise RulesError(
            "forced trade",
            f"with {state.options.forced_trade_at} or more cards a set must be traded",
        )
    if state.reinforcements:
        raise RulesError("placement", f"{state.reinforcements} armies are still to be placed")


def _leave_reinforcements(state: GameState) -> None:
    _check_reinforcements_done(state)
    if state.phase == REINFORCE:
        state.phase = ATTACK


# ------------------------------------------------------------------------ attacks
def attack(
    state: GameState,
    source: int,
    target: int,
    rng: Stream,
    dice: int = 3,
    until_left: int | None = None,
    max_rolls: int | None = None,
    seat: int | None = None,
    reroll: bool = False,
) -> list[Event]:
    """Roll until TO falls or FROM has one army (or the stop conditions).

    ``reroll``: the attacker asks for the expert card re-roll (the rules let
    the player choose; it is used on every roll where it applies).
    """
    if (
        state.phase is not ATTACK
        or state.pending_move is not None
        or (seat is not None and seat != state.current)
    ):  # the usual case (a second attack) passes both checks; only the rest calls them
        _expect_turn(state, seat)
        _check_reinforcements_done(state)
    if reroll and not state.options.card_reroll:
        raise RulesError("card re-roll", "these rules have no card re-roll")
    if state.phase == FORTIFY:
        raise RulesError("attack", "no attacks after fortifying")
    if not (0 <= source < len(state.owner) and 0 <= target < len(state.owner)):
        _check_territory(state, source, "attack")
        _check_territory(state, target, "attack")
    me = state.current
    board = state.board
    if state.owner[source] != me:
        raise RulesError("attack", f"{board.territories[source].name} is not yours")
    if state.owner[target] == me:
        raise RulesError("attack", f"{board.territories[target].name} is already yours")
    if target not in neighbours_of(board)[source]:
        raise RulesError(
            "adjacency",
            f"{board.territories[source].name} and {board.territories[target].name} "
            "are not adjacent",
        )
    if state.armies[source] < 2:
        raise RulesError("attack", f"{board.territories[source].name} has only one army")
    if not 1 <= dice <= 3:
        raise RulesError("attack", "an attacker rolls 1 to 3 dice")
    leftover = place_leftover(state) if state.reinforcements else []
    state.phase = ATTACK
    options = state.options
    owner = state.owner
    armies = state.armies
    defender = owner[target]
    hand = state.players[me].cards
    reroll = reroll and (source in hand or target in hand)
    one_die = target in state.defend_one  # the defender's standing order
    commander = options.commander and not state.commander_used
    no_limit = until_left is None and max_rolls is None
    rolls: list[Roll] = []
    stop = "exhausted"
    # The plain case (no re-roll, no commander) is decided by the dice alone: take
    # them in one block and look the outcome up (combat.plain_roll), without a call
    # to combat.roll per roll. Streams without roll_tuple go through combat.roll.
    roll_tuple = getattr(rng, "roll_tuple", None)
    plain = roll_tuple is not None and not (reroll or commander)
    if plain and no_limit:  # the bots' and most players' attack: a tight loop
        have = armies[source]
        left = armies[target]
        # the dice are sliced from the stream's decoded faces (no call per roll)
        cursor = getattr(rng, "face_cursor", None)
        faces, i = (cursor() if cursor is not None else None) or ((), 0)
        start = i
        while have >= 2:
            a = dice if dice < have else have - 1
            d = 1 if one_die or left < 2 else 2
            n = a + d
            drawn = faces[i : i + n]
            if len(drawn) == n and 0 not in drawn:
                i += n
            else:  # the faces run out or hold a rejected word: the stream's own path
                if i != start:
                    rng.skip_faces(i - start)  # type: ignore[attr-defined]
                drawn = roll_tuple(n)  # type: ignore[misc]  # plain implies not None
                faces, i = (cursor() if cursor is not None else None) or ((), 0)
                start = i
            result = PLAIN[a, d].get(drawn) or plain_roll(a, d, drawn)
            rolls.append(result)
            have -= result.attacker_losses
            left -= result.defender_losses
            if left == 0:
                stop = "conquered"
                break
        if i != start:
            rng.skip_faces(i - start)  # type: ignore[attr-defined]
        armies[source] = have
        armies[target] = left
    while not (plain and no_limit):
        have = armies[source]
        if have < 2:
            stop = "exhausted"
            break
        if not no_limit:
            if until_left is not None and have <= until_left:
                stop = "until_left"
                break
            if max_rolls is not None and len(rolls) >= max_rolls:
                stop = "max_rolls"
                break
        a = dice if dice < have else have - 1
        d = 1 if one_die or armies[target] < 2 else 2
        if plain:
            drawn = roll_tuple(a + d)  # type: ignore[misc]  # plain implies not None
            result = PLAIN[a, d].get(drawn) or plain_roll(a, d, drawn)
        else:
            result = roll(rng, a, d, reroll, commander)
            if commander and result.commander is not None:
                state.commander_used = True
                commander = False
        rolls.append(result)
        armies[source] = have - result.attacker_losses
        armies[target] -= result.defender_losses
        if armies[target] == 0:
            stop = "conquered"
            break
    conquered = stop == "conquered"
    if conquered:
        # the conquering roll lost the attacker nothing (every pair was won), so
        # "dice of the last roll" and "its survivors" are the same number
        last = rolls[-1]
        dice_rolled = len(last.attacker)
        if options.move_in == "survivors":
            minimum = dice_rolled - last.attacker_losses
        else:
            minimum = dice_rolled
        minimum = max(1, min(minimum, armies[source] - 1))
        owner[target] = me
        if one_die:
            state.defend_one.remove(target)  # a standing order ends with its territory
        state.conquered_this_turn = True
        state.last_conquest = target
        state.pending_move = (source, target, minimum)
    events: list[Event] = leftover + [
        AttackResolved(
            me,
            defender,
            source,
            target,
            tuple(rolls),
            conquered,
            armies[source],
            armies[target],
            stop,
        )
    ]
    if conquered:
        eliminated = defender not in owner
        if eliminated:
            events += _eliminate(state, defender, me)
        if eliminated or options.goal != "domination":
            events += _check_victory(state)
        if state.phase == ENDED and state.pending_move is not None:
            events += _move(state, state.pending_move[2], None)
    return events


def _eliminate(state: GameState, loser: int, winner: int) -> list[Event]:
    victim = state.players[loser]
    victim.alive = False
    taken = list(victim.cards)
    victim.cards = []
    state.players[winner].cards.extend(taken)
    events: list[Event] = [PlayerEliminated(loser, winner, len(taken))]
    if taken:
        events.append(CardsTaken(winner, tuple(taken), loser))
    events += victory.on_elimination(state, loser, winner)
    hand = state.players[winner].cards
    if len(hand) >= 6 and state.options.card_values != "none":
        while len(hand) > 4:
            best = best_set(state, winner)
            if best is None:
                break
            value, traded = _trade_set(state, winner, best, forced=True)
            events += traded
            # placed by the player's PLACE orders after this ATTACK (place);
            # what they leave is placed by place_leftover
            state.reinforcements += value
    return events


def place_leftover(state: GameState) -> list[Event]:
    """Place the armies of elimination trades that no PLACE order placed, before
    the game goes on: on the territory taken last as far as max_armies lets,
    the rest on the player's territories with room, in map order."""
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


def best_set(state: GameState, seat: int) -> tuple[int, int, int] | None:
    """The set worth the most; among equals, one giving the +2 territory bonus."""
    board = state.board
    number = state.sets_traded + 1
    best = None
    best_key: tuple[int, int] | None = None
    for combo in all_sets(board, state.players[seat].cards, mixed_sets(state.options)):
        value = set_value(state.options, number, designs_of(board, combo))
        gives_bonus = any(
            board.card_territory(c) is not None and state.owner[c] == seat for c in combo
        )
        key = (value, int(gives_bonus))
        if best_key is None or key > best_key:
            best, best_key = combo, key
    return best


def move_in(state: GameState, armies: int, asked: int | None = None) -> list[Event]:
    """Move armies into the territory just conquered (at least the minimum)."""
    if state.pending_move is None:
        raise RulesError("move in", "there is no conquest to move into")
    source, _, minimum = state.pending_move
    if armies < minimum:
        raise RulesError("move in", f"at least {minimum} armies must move in")
    if armies > state.armies[source] - 1:
        raise RulesError("move in", "one army must stay behind")
    events = _move(state, armies, asked)
    if state.options.goal != "domination":  # _check_goal, without a call per conquest
        events += _check_victory(state)
    return events


def _move(state: GameState, armies: int, asked: int | None) -> list[Event]:
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
    _expect_turn(state, seat)
    _check_reinforcements_done(state)
    options = state.options
    board = state.board
    me = state.current
    if options.fortify == "none":
        raise RulesError("fortify", "these rules have no fortifying moves")
    _check_territory(state, source, "fortify")
    _check_territory(state, target, "fortify")
    allowed = 1_000_000 if options.fortify == "unlimited" else 1
    if state.fortifies_this_turn >= allowed:
        raise RulesError("fortify", "only one fortifying move is allowed in a turn")
    if state.owner[source] != me or state.owner[target] != me:
        raise RulesError("fortify", "both territories must be yours")
    if source == target:
        raise RulesError("fortify", "from and to are the same territory")
    if options.fortify == "adjacent":
        if target not in board.territories[source].neighbours:
            raise RulesError(
                "adjacency",
                f"{board.territories[source].name} and {board.territories[target].name} "
                "are not adjacent",
            )
    elif not connected(state, source, target):
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
    leftover = place_leftover(state)
    state.phase = FORTIFY
    state.fortifies_this_turn += 1
    state.armies[source] -= moved
    state.armies[target] += moved
    return leftover + [Fortified(me, source, target, moved, asked)] + _check_goal(state)


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
    _expect_turn(state, seat)
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
    return events + _begin_turn(state)


def _check_goal(state: GameState) -> list[Event]:
    """The win check after a step that eliminates nobody: only missions and
    headquarters can be won that way."""
    if state.options.goal == "domination":
        return []
    return _check_victory(state)


def _check_victory(state: GameState) -> list[Event]:
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
        _move(state, state.pending_move[2], None)
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
    if len(alive) == 1:
        return events + finish(state, alive[0], "domination", f"{player.name} {reason}")
    events += _check_victory(state)
    if state.phase != ENDED and state.current == seat:
        position = state.order.index(seat)
        following = next(
            s for s in state.order[position + 1 :] + state.order[:position] if s in alive
        )
        if state.order.index(following) <= position:
            state.round += 1
        events.append(TurnEnded(state.turn, seat, following))
        state.current = following
        events += _begin_turn(state)
    return events


def finish(state: GameState, seat: int, reason: str, detail: str = "") -> list[Event]:
    """End the game with a winner decided outside the board (e.g. all others resigned)."""
    state.winner = seat
    state.win_reason = reason
    state.phase = ENDED
    return [GameWon(seat, reason, detail)]
