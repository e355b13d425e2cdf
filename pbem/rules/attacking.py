"""The attack phase: battles (dice by the rulebook's rules, UNTIL and the
expert options), conquest and the armies that move in, the elimination of a
player and the cards taken from them.

Part of the turn machine (pbem.rules.engine): every function takes the state
(changed in place), returns its events, and raises RulesError naming the rule
before it changes anything.
"""

from __future__ import annotations

from pbem.rules import online, teams, victory
from pbem.rules.actions import CommanderUse
from pbem.rules.cards import all_sets, designs_of, is_set, mixed_sets, set_value
from pbem.rules.combat import Stream, battle, roll
from pbem.rules.defence import neutral_one_die
from pbem.rules.engine import (
    add_armies,
    check_reinforcements_done,
    check_territory,
    check_victory,
    expect_turn,
    move_armies,
    place_leftover,
    trade_set,
)
from pbem.rules.errors import RulesError
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    CardsTaken,
    Event,
    PlayerEliminated,
    Roll,
)
from pbem.rules.state import (
    ATTACK,
    ENDED,
    FORTIFY,
    GameState,
    neighbours_of,
)


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
    commander: CommanderUse = CommanderUse.DEFAULT,
    trades: tuple[tuple[int, int, int], ...] = (),
) -> list[Event]:
    """Roll until TO falls or FROM has one army (or the stop conditions).

    ``reroll``: the expert card re-roll asked for (version 2: on every roll
    where it applies; 3: only where it helps, combat.reroll_helps).
    ``commander``: where the expert commander may be used (commander_on_roll).
    ``trades``: the sets of the TRADE orders written after this ATTACK, for a
    forced trade if it eliminates a player (rules version 3)."""
    _check_attack(state, source, target, dice, seat, reroll)
    if commander == CommanderUse.HERE and not (
        state.options.commander and state.options.rules_version >= 3
    ):
        raise RulesError("commander", "these rules have no COMMANDER order")
    state.phase = ATTACK  # first: v3's armies that fit nowhere under max_armies are lost here
    leftover = place_leftover(state) if state.reinforcements else []
    me = state.current
    defender = state.owner[target]
    hand = state.players[me].cards
    if state.options.rules_version == 1:
        # rules version 1: the card re-roll is automatic, asked for or not
        reroll = state.options.card_reroll
    reroll = reroll and (source in hand or target in hand)
    one_die = target in state.defend_one  # the defender's standing order
    if state.defend_neutral and not one_die:  # two players: the neutral's roller's order
        one_die = neutral_one_die(state, target)
    rolls: list[Roll] = []
    # roll and compare, each side losing an army per comparison lost
    possible = _commander_possible(state, commander, dice)
    if until_left is None and max_rolls is None and not reroll and not possible:
        have, left = battle(rng, dice, one_die, state.armies[source], state.armies[target], rolls)
        state.armies[source], state.armies[target] = have, left
        stop = "conquered" if left == 0 else "exhausted"
    else:
        stop = _battle_with_limits(
            state,
            source,
            target,
            rng,
            dice,
            until_left,
            max_rolls,
            reroll,
            one_die,
            rolls,
            commander,
        )
    conquered = stop == "conquered"
    if conquered:
        _conquer(state, source, target, rolls[-1], one_die)
    events: list[Event] = leftover + [
        AttackResolved(
            me,
            defender,
            source,
            target,
            tuple(rolls),
            conquered,
            state.armies[source],
            state.armies[target],
            stop,
        )
    ]
    if conquered:
        events += _after_conquest(state, defender, me, target, trades)
    return events


def _commander_possible(state: GameState, commander: CommanderUse, dice: int) -> bool:
    """Whether commander_on_roll may use the commander on any roll of this
    battle (if not, the plain battle's fast path runs)."""
    return _has_commander(state) and (
        state.options.rules_version < 3
        or commander == CommanderUse.HERE
        or (commander == CommanderUse.DEFAULT and dice == 3)
    )


def _after_conquest(
    state: GameState, defender: int, me: int, target: int, trades: tuple[tuple[int, int, int], ...]
) -> list[Event]:
    """An elimination (its cards and forced trades), the victory it may bring,
    and the move-in a won game no longer waits for."""
    events: list[Event] = []
    eliminated = defender not in state.owner
    if eliminated:
        events += _eliminate(state, defender, me, target, trades)
    if eliminated or state.options.goal != "domination":
        events += check_victory(state)
    if state.phase == ENDED and state.pending_move is not None:
        events += move_armies(state, state.pending_move[2], None)
    return events


def _check_attack(
    state: GameState, source: int, target: int, dice: int, seat: int | None, reroll: bool
) -> None:
    """Raise RulesError for an attack the rules do not allow now."""
    if (
        state.phase is not ATTACK
        or state.pending_move is not None
        or (seat is not None and seat != state.current)
    ):  # the usual case (a second attack) passes both checks; only the rest calls them
        expect_turn(state, seat)
        check_reinforcements_done(state)
    if reroll and not state.options.card_reroll:
        raise RulesError("card re-roll", "these rules have no card re-roll")
    if state.phase == FORTIFY:
        raise RulesError("attack", "no attacks after fortifying")
    if not (0 <= source < len(state.owner) and 0 <= target < len(state.owner)):
        check_territory(state, source, "attack")
        check_territory(state, target, "attack")
    me = state.current
    board = state.board
    if state.owner[source] != me:
        raise RulesError("attack", f"{board.territories[source].name} is not yours")
    if state.owner[target] == me:
        raise RulesError("attack", f"{board.territories[target].name} is already yours")
    if teams.is_teammate(state, me, state.owner[target]):
        raise RulesError("attack", teams.teammate_attack(state, target))
    if target not in neighbours_of(board)[source]:
        raise RulesError(
            "adjacency",
            f"{board.territories[source].name} and {board.territories[target].name} "
            "are not adjacent",
        )
    if state.armies[source] < 2:
        raise RulesError("attack", f"{board.territories[source].name} has only one army")
    if online.trenched(state, source):
        raise RulesError(online.TRENCH_RULE, online.trench_message(board.territories[source].name))
    if not 1 <= dice <= 3:
        raise RulesError("attack", "an attacker rolls 1 to 3 dice")


def _has_commander(state: GameState) -> bool:
    """The expert commander is still to be used this turn."""
    return state.options.commander and not state.commander_used


def commander_on_roll(state: GameState, use: CommanderUse, att_dice: int) -> bool:
    """May the expert commander change a die of the next roll, of ``att_dice``
    attacking dice? (combat.roll then uses it only where it wins a comparison.)
    Versions 1 and 2: on any roll while unused this turn. Version 3 (000: "Once
    per turn while attacking you may change one of the dice"): on a roll of the
    attack whose order says COMMANDER; without one in the turn's orders, on a
    roll of 3 attacking dice (never a probe of 1 or 2 dice)."""
    if not _has_commander(state):
        return False
    if state.options.rules_version < 3:
        return True
    if use == CommanderUse.HERE:
        return True
    return use == CommanderUse.DEFAULT and att_dice == 3


def _battle_with_limits(
    state: GameState,
    source: int,
    target: int,
    rng: Stream,
    dice: int,
    until_left: int | None,
    max_rolls: int | None,
    reroll: bool,
    one_die: bool,
    rolls: list[Roll],
    use: CommanderUse,
) -> str:
    """A battle with UNTIL, the card re-roll or the commander, one roll at a time;
    why it stopped."""
    armies = state.armies
    only_if_helps = state.options.rules_version >= 3  # the re-roll policy of version 3
    while True:
        have = armies[source]
        if have < 2:
            return "exhausted"
        if until_left is not None and have <= until_left:
            return "until_left"
        if max_rolls is not None and len(rolls) >= max_rolls:
            return "max_rolls"
        a = dice if dice < have else have - 1
        d = 1 if one_die or armies[target] < 2 else 2
        commander = commander_on_roll(state, use, a)
        result = roll(rng, a, d, reroll, commander, only_if_helps)
        if commander and result.commander is not None:
            state.commander_used = True
        rolls.append(result)
        armies[source] = have - result.attacker_losses
        armies[target] -= result.defender_losses
        if armies[target] == 0:
            return "conquered"


def _conquer(state: GameState, source: int, target: int, last: Roll, one_die: bool) -> None:
    """TO changes hands; the armies that must move in wait as the pending move."""
    # the conquering roll lost the attacker nothing (every pair was won), so
    # "dice of the last roll" and "its survivors" are the same number
    dice_rolled = len(last.attacker)
    if state.options.move_in == "survivors":
        minimum = dice_rolled - last.attacker_losses
    else:
        minimum = dice_rolled
    minimum = max(1, min(minimum, state.armies[source] - 1))
    state.owner[target] = state.current
    if one_die and target in state.defend_one:
        state.defend_one.remove(target)  # a standing order ends with its territory
    if state.defend_neutral:  # so do the orders for a neutral territory
        state.defend_neutral = [p for p in state.defend_neutral if p[1] != target]
    state.conquered_this_turn = True
    online.note_conquest(state, target)
    state.last_conquest = target
    state.pending_move = (source, target, minimum)


def _eliminate(
    state: GameState,
    loser: int,
    winner: int,
    taken_last: int,
    trades: tuple[tuple[int, int, int], ...] = (),
) -> list[Event]:
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
        if state.options.rules_version >= 3:
            return events + forced_trades(state, winner, trades)
        while len(hand) > 4:
            best = best_set(state, winner)
            if best is None:
                break
            value, traded = trade_set(state, winner, best, forced=True)
            events += traded
            if state.options.rules_version == 1:
                # rules version 1: the set's armies go at once on the territory
                # taken last, before the armies move in (PLACE after ATTACK is refused)
                lost = add_armies(state, taken_last, value)
                events.append(ArmiesPlaced(winner, taken_last, value - lost, lost))
                continue
            # version 2: placed by the player's PLACE orders after this ATTACK
            # (place); what they leave is placed by place_leftover
            state.reinforcements += value
    return events


def forced_trades(
    state: GameState, seat: int, chosen: tuple[tuple[int, int, int], ...]
) -> list[Event]:
    """Rules version 3: an elimination left ``seat`` with 6 or more cards; trade
    down to 4 or fewer ("you must immediately trade in enough sets", 000).

    The player chooses: ``chosen`` are the sets of the TRADE orders written
    after the ATTACK, tried in the order written (one whose cards are no longer
    all held, or that is not a set, is passed over; turnplan reports it). Then,
    while more than 4 cards are held, the set worth most to the player
    (``set_worth_most``). The armies go to the reinforcements, placed by the
    PLACE orders after the ATTACK (the rest by place_leftover).
    """
    board = state.board
    hand = state.players[seat].cards
    mixed = mixed_sets(state.options)
    events: list[Event] = []
    for cards in chosen:
        if len(hand) <= 4:
            break
        if all(c in hand for c in cards) and is_set(board, cards, mixed):
            value, traded = trade_set(state, seat, cards, forced=True)
            events += traded
            state.reinforcements += value
    while len(hand) > 4:
        best = set_worth_most(state, seat)
        if best is None:
            break
        value, traded = trade_set(state, seat, best, forced=True)
        events += traded
        state.reinforcements += value
    return events


def set_worth_most(state: GameState, seat: int) -> tuple[int, int, int] | None:
    """Rules version 3: the set worth most to the player, its +2 territory
    bonuses counted (003: +2 "for every card that belongs to a territory you
    have"; under territory_bonus = once, +2 for the first such set of the turn).

    Ties, in this order: the set with fewer wild cards (a wild is worth keeping),
    then the first in card order (its cards' numbers, lowest first: the map's
    territory order, wilds last).
    """
    board = state.board
    options = state.options
    number = state.sets_traded + 1
    per_card = options.territory_bonus == "per_card"
    first_wild = len(board.territories)
    best = None
    best_key: tuple[int, int] | None = None
    for combo in all_sets(board, state.players[seat].cards, mixed_sets(options)):
        places = [board.card_territory(c) for c in combo]
        own = sum(1 for t in places if t is not None and state.owner[t] == seat)
        bonus = 2 * own if per_card else (2 if own and not state.bonus_taken else 0)
        worth = set_value(options, number, designs_of(board, combo)) + bonus
        key = (worth, -sum(1 for c in combo if c >= first_wild))
        if best_key is None or key > best_key:
            best, best_key = combo, key
    return best


def best_set(state: GameState, seat: int) -> tuple[int, int, int] | None:
    """The set worth the most; among equals, one giving the +2 territory bonus
    (rules versions 1 and 2: face value; version 3 uses ``set_worth_most``)."""
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
    events = move_armies(state, armies, asked)
    if state.options.goal != "domination":  # check_goal, without a call per conquest
        events += check_victory(state)
    return events
