"""The attack phase: battles (dice by the rulebook's rules, UNTIL and the
expert options), conquest and the armies that move in, the elimination of a
player and the cards taken from them.

Part of the turn machine (pbem.rules.engine): every function takes the state
(changed in place), returns its events, and raises RulesError naming the rule
before it changes anything.
"""

from __future__ import annotations

from pbem.rules import victory
from pbem.rules.cards import all_sets, designs_of, mixed_sets, set_value
from pbem.rules.combat import (
    CODED_LOSSES,
    CODED_ROLLS,
    PLAIN,
    Stream,
    coded_losses,
    plain_roll,
    roll,
)
from pbem.rules.dice import DiceStream
from pbem.rules.engine import (
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
    # to combat.roll per roll. Other streams (tests, forecasts) go through
    # combat.roll. (isinstance, not getattr: compiled, the calls below are direct
    # and their results typed.)
    stream = rng if isinstance(rng, DiceStream) else None
    plain = stream is not None and not (reroll or commander)
    if stream is not None and plain and no_limit:  # the bots' and most players' attack
        have = armies[source]
        left = armies[target]
        # the dice are sliced from the stream's decoded faces (no call per roll)
        faces, i = stream.face_cursor() or ((), 0)
        start = i
        count = len(faces)
        while have >= 2:
            a = dice if dice < have else have - 1
            d = 1 if one_die or left < 2 else 2
            n = a + d
            pair = (a - 1) * 2 + d - 1  # combat.pair_index
            # the dice as a code (combat.CODED_ROLLS), 0 on a rejected word or too few
            code = 0
            end: int = i + n
            if end <= count:
                j: int = i
                while j < end:
                    face: int = faces[j]
                    if face == 0:
                        code = 0
                        break
                    code = code * 7 + face
                    j += 1
            if code:
                packed = CODED_LOSSES[pair][code]
                if packed < 0:
                    packed = coded_losses(a, d, code, faces[i : i + n])
                result = CODED_ROLLS[pair][code]
                i += n
            else:  # the faces run out or hold a rejected word: the stream's own path
                if i != start:
                    stream.skip_faces(i - start)
                drawn = stream.roll_tuple(n)
                faces, i = stream.face_cursor() or ((), 0)
                count = len(faces)
                start = i
                result = PLAIN[a, d].get(drawn) or plain_roll(a, d, drawn)
                packed = result.attacker_losses * 4 + result.defender_losses
            rolls.append(result)  # type: ignore[arg-type]  # filled with its losses
            have -= packed >> 2
            left -= packed & 3
            if left == 0:
                stop = "conquered"
                break
        if i != start:
            stream.skip_faces(i - start)
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
        if stream is not None and plain:
            drawn = stream.roll_tuple(a + d)
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
            events += check_victory(state)
        if state.phase == ENDED and state.pending_move is not None:
            events += move_armies(state, state.pending_move[2], None)
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
            value, traded = trade_set(state, winner, best, forced=True)
            events += traded
            # placed by the player's PLACE orders after this ATTACK (place);
            # what they leave is placed by place_leftover
            state.reinforcements += value
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
    events = move_armies(state, armies, asked)
    if state.options.goal != "domination":  # check_goal, without a call per conquest
        events += check_victory(state)
    return events
