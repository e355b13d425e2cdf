"""Bots that plan a whole turn before any die is rolled, as a player by mail must.

A bot writes the same actions the order language produces, so a bot's turn
can be run directly or rendered to text, mailed, parsed and run, with the
same result. Bots never touch the game's dice: each turn a bot draws from its
own small generator, seeded from the bot's seed, the seat and the turn, so its
choices depend only on its seed and the state it sees.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from pbem.rules import fog, gametypes, online, opening, teams
from pbem.rules.actions import (
    Amount,
    AmountKind,
    Attack,
    Claim,
    Fortify,
    Headquarters,
    Place,
    PlaceInitial,
    PlaceNeutral,
    SetupAction,
    Trade,
    TurnAction,
    Until,
    UntilKind,
)
from pbem.rules.cards import all_sets, designs_of, mixed_sets, set_value
from pbem.rules.defaults import fit_to_cap, trade_bonus
from pbem.rules.odds import battle
from pbem.rules.state import CLAIM, HQ, PLACE, GameState, neighbours_of

ALL: Final = Amount(AmountKind.ALL)
ALL_BUT_ONE: Final = Amount(AmountKind.ALL_BUT, 1)

# Knuth's MMIX constants in 22-bit limbs (low first): x' = x * A + C (mod 2**64).
# Final: compiled, they are machine integers, not globals looked up by name.
_M22: Final = 0x3FFFFF
_M20: Final = 0xFFFFF
_A0: Final = 1408813
_A1: Final = 1094962
_A2: Final = 361759  # A = 6364136223846793005
_C0: Final = 2589007
_C1: Final = 3013597
_C2: Final = 82007  # C = 1442695040888963407


def lcg_step(x0: int, x1: int, x2: int) -> tuple[int, int, int]:
    """One step of the 64-bit generator, x = x0 + x1 * 2**22 + x2 * 2**44.

    The same numbers as ``(x * A + C) % 2**64``, with every factor below
    2**22 and every sum below 2**47: compiled with mypyc, integer operations
    stay on machine words only while factors are below 2**30, and a 64-bit
    product became a Python long (the bots' generator was 14% of a game).
    """
    s0 = x0 * _A0 + _C0
    s1 = x0 * _A1 + x1 * _A0 + _C1 + (s0 >> 22)
    s2 = x0 * _A2 + x1 * _A1 + x2 * _A0 + _C2 + (s1 >> 22)
    return s0 & _M22, s1 & _M22, s2 & _M20


class BotRandom:
    """The bots' generator: a 64-bit linear congruential generator (Knuth's MMIX
    constants), read from its high bits.

    Bots need speed and repeatability, not secrecy; the game's dice never come
    from here. Plain integer arithmetic: the same on every machine. The state
    is kept in three limbs (see lcg_step); uniform(n) is ``((x >> 32) * n) >> 32``.
    """

    __slots__ = ("_x0", "_x1", "_x2")

    def __init__(self, key: bytes) -> None:
        x = int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
        self._x0, self._x1, self._x2 = x & _M22, (x >> 22) & _M22, x >> 44

    def uniform(self, n: int) -> int:
        """An integer in 0 .. n-1 (n up to 2**32)."""
        x0, x1, x2 = lcg_step(self._x0, self._x1, self._x2)
        self._x0, self._x1, self._x2 = x0, x1, x2
        # x >> 32 is x2 * 2**12 + (x1 >> 10); times n, without a factor over 2**30
        return ((x2 * n << 12) + (x1 >> 10) * n) >> 32

    def counts(self, n: int, k: int) -> list[int]:
        """Drop ``k`` items into ``n`` boxes at random; how many fell in each."""
        boxes = [0] * n
        x0, x1, x2 = self._x0, self._x1, self._x2
        for _ in range(k):  # lcg_step and uniform, inlined (the bots' hottest loop)
            s0 = x0 * _A0 + _C0
            s1 = x0 * _A1 + x1 * _A0 + _C1 + (s0 >> 22)
            s2 = x0 * _A2 + x1 * _A1 + x2 * _A0 + _C2 + (s1 >> 22)
            x0, x1, x2 = s0 & _M22, s1 & _M22, s2 & _M20
            boxes[((x2 * n << 12) + (x1 >> 10) * n) >> 32] += 1
        self._x0, self._x1, self._x2 = x0, x1, x2
        return boxes

    def shuffle(self, items: list[Any]) -> None:
        uniform = self.uniform
        for i in range(len(items) - 1, 0, -1):
            j = uniform(i + 1)
            items[i], items[j] = items[j], items[i]


class Bot(ABC):
    """Common planning: trades, then the armies due; subclasses choose where."""

    name = "bot"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def stream(self, seat: int, turn: int, what: str = "turn") -> BotRandom:
        return BotRandom(f"pbem-bot:{self.name}:{self.seed}:{what}:{seat}:{turn}".encode())

    # ------------------------------------------------------------------ setup
    def plan_setup(self, state: GameState, seat: int) -> list[SetupAction]:
        rng = self.stream(seat, 0, "setup")
        if state.phase == CLAIM:
            prefs = list(range(len(state.board.territories)))
            rng.shuffle(prefs)
            return [Claim(tuple(self.claim_order(state, seat, prefs)))]
        if state.phase == PLACE:
            own = state.territories_of(seat)
            targets = self.setup_targets(state, seat, own)
            due = state.players[seat].to_place
            plan: list[SetupAction] = [
                PlaceInitial(spread(targets, due, rng, room_of(state, targets)))
            ]
            share = opening.neutral_share(state, seat)
            if share:
                neutral = state.territories_of(state.neutral_seat)  # type: ignore[arg-type]
                if fog.fogged(state):  # those in its player's sight (NEUTRAL under fog)
                    seen = fog.sight(state, seat)
                    neutral = [t for t in neutral if t in seen] or neutral
                plan.append(PlaceNeutral(spread(neutral, share, rng, room_of(state, neutral))))
            return plan
        if state.phase == HQ:
            own = state.territories_of(seat)
            return [Headquarters(max(own, key=lambda t: (state.armies[t], -t)))]
        return []

    def claim_order(self, state: GameState, seat: int, shuffled: list[int]) -> list[int]:
        return shuffled

    def setup_targets(self, state: GameState, seat: int, own: list[int]) -> list[int]:
        return own

    # ------------------------------------------------------------------- turn
    def plan_turn(self, state: GameState) -> list[TurnAction]:
        seat = state.current
        state = fog.seen(state, seat)  # under fog a bot decides from its player's view only
        rng = self.stream(seat, state.turn)
        actions: list[TurnAction] = []
        due = state.reinforcements
        options = state.options
        if options.card_values != "none" and len(state.players[seat].cards) >= 3:
            hand = list(state.players[seat].cards)
            number = state.sets_traded
            must = state.must_trade
            for _ in range(options.max_trades):
                sets = all_sets(state.board, hand, mixed_sets(options))
                if not sets or not (must or self.wants_trade(state, len(hand))):
                    break
                chosen = sets[rng.uniform(len(sets))]
                actions.append(Trade(chosen))
                number += 1
                due += set_value(options, number, designs_of(state.board, chosen))
                for card in chosen:
                    hand.remove(card)
                must = False
        view = View.of(state, seat)
        placements = self.place(state, view, due, rng)
        if options.max_armies and options.rules_version >= 3:
            # rules version 3 refuses a PLACE over max_armies: what falls over
            # goes where there is room (defaults.fit_to_cap)
            traded = [a.cards for a in actions if isinstance(a, Trade)]
            bonus = trade_bonus(state, seat, traded)
            placements = list(fit_to_cap(state, seat, tuple(placements), view.borders, bonus))
        if placements:
            actions.append(Place(tuple(placements)))
            for n, territory in placements:
                view.armies[territory] += n
        attacks = online.lawful_attacks(state, self.attacks(state, view, rng))
        if not attacks and options.max_armies and options.rules_version >= 3:
            attacks = full_board_attack(state, view)
        actions += attacks
        fortify = self.fortify(state, view, rng)
        if fortify is not None:
            actions.append(fortify)
        return actions

    def wants_trade(self, state: GameState, hand: int) -> bool:
        return True

    @abstractmethod
    def place(
        self, state: GameState, view: View, due: int, rng: BotRandom
    ) -> list[tuple[int, int]]:
        """Where the armies due go: (armies, territory) pairs."""

    @abstractmethod
    def attacks(self, state: GameState, view: View, rng: BotRandom) -> list[TurnAction]:
        """The attacks, planned on ``view.armies`` (the board after placement)."""

    def fortify(self, state: GameState, view: View, rng: BotRandom) -> Fortify | None:
        """Move the largest interior stack to an adjacent border territory."""
        if state.options.fortify == "none":
            return None
        graph = neighbours_of(state.board)
        armies, mine = view.armies, view.mine
        best = -1
        for t in view.own:
            if armies[t] >= 2 and (best < 0 or armies[t] > armies[best]):
                if mine.issuperset(graph[t]):
                    best = t
        if best < 0:
            return None
        if state.options.fortify == "parachute":  # any own territory: the most threatened
            target = online.parachute_target(state, best, mine, armies)
            return None if target is None else Fortify(best, target, ALL)
        targets = [n for n in graph[best] if not mine.issuperset(graph[n])]
        if not targets:
            return None
        return Fortify(best, targets[rng.uniform(len(targets))], ALL)


@dataclass(init=False)
class View:
    """What a bot plans on: its territories at the start of the turn (computed
    once), and the armies as they will be after its placements."""

    seat: int
    own: list[int]  # in map order
    mine: set[int]
    borders: list[int]  # own territories next to somebody else's, in map order
    armies: list[int]

    def __init__(
        self, seat: int, own: list[int], mine: set[int], borders: list[int], armies: list[int]
    ) -> None:  # written out: compiled (mypyc), a generated __init__ runs as Python
        self.seat = seat
        self.own = own
        self.mine = mine
        self.borders = borders
        self.armies = armies

    @classmethod
    def of(cls, state: GameState, seat: int) -> View:
        graph = neighbours_of(state.board)
        own = [t for t, here in enumerate(state.owner) if here == seat]
        mine = set(own)
        held = mine | teams.teammates_territories(state, seat)  # (team games: no border there)
        edge = [t for t in own if not held.issuperset(graph[t])]
        return cls(seat, own, mine, edge, list(state.armies))


def borders(state: GameState, seat: int) -> list[int]:
    """Own territories next to somebody else's, in map order."""
    return View.of(state, seat).borders


def spread(
    targets: list[int], armies: int, rng: BotRandom, room: list[int] | None = None
) -> tuple[tuple[int, int], ...]:
    """``armies`` armies on random territories of ``targets``, merged per territory.

    ``room``: how many more each target may take (max_armies); what falls over
    goes to the first targets with room left, and what fits nowhere is dropped.
    """
    if armies <= 0 or not targets:
        return ()
    counts = rng.counts(len(targets), armies)
    if room is not None:
        spare = 0
        for i, r in enumerate(room):
            if counts[i] > r:
                spare += counts[i] - r
                counts[i] = r
        for i, r in enumerate(room):
            if spare == 0:
                break
            more = min(spare, r - counts[i])
            counts[i] += more
            spare -= more
    return tuple((c, t) for t, c in sorted(zip(targets, counts, strict=True)) if c)


def full_board_attack(state: GameState, view: View) -> list[TurnAction]:
    """Rules version 3 keeps every army under max_armies, so a board can fill up:
    every territory of the bot at the cap, where waiting gains nothing and no
    attack looks good (a stalemate of bots). Then attack once, from the
    strongest border territory (the first in map order) at its weakest
    neighbour (the first in map order)."""
    cap = state.options.max_armies
    armies = view.armies
    if not view.borders or any(armies[t] < cap for t in view.own):
        return []
    source = max(view.borders, key=lambda t: (armies[t], -t))
    friends = teams.teammates_territories(state, view.seat)
    targets = [n for n in neighbours_of(state.board)[source] if n not in view.mine | friends]
    if not targets:
        return []
    target = min(targets, key=lambda t: (armies[t], t))
    return [Attack(source, target, move=ALL)]


def room_of(state: GameState, targets: list[int]) -> list[int] | None:
    """How many armies each target may still take under max_armies (None: no cap)."""
    cap = state.options.max_armies
    return [cap - state.armies[t] for t in targets] if cap else None


class RandomBot(Bot):
    """Legal random choices; attacks wherever its army outnumbers the target,
    and follows up from every territory it takes (so games end)."""

    name = "random"

    def place(
        self, state: GameState, view: View, due: int, rng: BotRandom
    ) -> list[tuple[int, int]]:
        return list(spread(view.borders or view.own, due, rng))

    def attacks(self, state: GameState, view: View, rng: BotRandom) -> list[TurnAction]:
        seat, armies = view.seat, view.armies
        owner = list(state.owner)
        graph = neighbours_of(state.board)
        plan: list[TurnAction] = []
        sources = [t for t in view.borders if armies[t] > 2]
        rng.shuffle(sources)
        for t in teams.teammates_territories(state, seat):  # never attacked: as if the bot's
            owner[t] = seat
        assassin = state.options.goal == gametypes.ASSASSIN
        while sources:
            source = sources.pop()
            strength = armies[source] - 1
            targets = [n for n in graph[source] if owner[n] != seat and strength > armies[n]]
            if assassin:  # never another's last territory: that player's hunter would win
                targets = [
                    n for n in targets if gametypes.bot_bonus(state, seat, owner, n) is not None
                ]
            if not targets:
                continue
            target = targets[rng.uniform(len(targets))]
            plan.append(Attack(source, target, move=ALL))
            # plan onwards as if it fell, with the losses of an even fight
            left = max(1, strength - armies[target])
            owner[target] = seat
            armies[target] = left
            armies[source] = 1
            if left > 2 and not state.options.trench:  # trench: taken, it may not attack
                sources.append(target)
        return plan


@lru_cache(maxsize=65536)
def win_chance(attackers: int, defenders: int) -> float:
    return float(battle(attackers, defenders, exact=False).attacker_wins)


class GreedyBot(Bot):
    """Goes for the continent it is closest to holding; attacks when the exact
    odds of taking the territory are good."""

    name = "greedy"
    threshold = 0.6

    def claim_order(self, state: GameState, seat: int, shuffled: list[int]) -> list[int]:
        board = state.board
        smallest = sorted(board.continents, key=lambda c: (len(c.territories), c.index))
        return [t for c in smallest for t in c.territories]

    def target_continent(self, state: GameState, seat: int) -> int:
        owner = state.owner
        best = None
        for c in state.board.continents:
            mine = sum(1 for t in c.territories if owner[t] == seat)
            if mine == len(c.territories):
                continue
            key = (mine / len(c.territories), c.bonus / len(c.territories), -c.index)
            if best is None or key > best[0]:
                best = (key, c.index)
        return best[1] if best else 0

    def place(
        self, state: GameState, view: View, due: int, rng: BotRandom
    ) -> list[tuple[int, int]]:
        if due <= 0:
            return []
        seat, owner = view.seat, state.owner
        graph = neighbours_of(state.board)
        goal = set(state.board.continents[self.target_continent(state, seat)].territories)
        goal -= teams.teammates_territories(state, seat)  # never attacked

        def score(t: int) -> tuple[int, int, int]:
            enemies_in_goal = sum(1 for n in graph[t] if owner[n] != seat and n in goal)
            return (enemies_in_goal, state.armies[t], -t)

        return [(due, max(view.borders or view.own, key=score))]

    def attacks(self, state: GameState, view: View, rng: BotRandom) -> list[TurnAction]:
        seat, armies = view.seat, view.armies
        owner = list(state.owner)
        graph = neighbours_of(state.board)
        goal = set(state.board.continents[self.target_continent(state, seat)].territories)
        game_type = state.options.goal in (gametypes.ASSASSIN, gametypes.TERMINATOR)
        plan: list[TurnAction] = []
        friends = teams.teammates_territories(state, seat)  # never attacked
        trench = state.options.trench  # only from territories held at the start of the turn
        for _ in range(len(owner)):
            best = None
            for source, here in enumerate(owner):
                if here != seat or armies[source] < 3 or (trench and state.owner[source] != seat):
                    continue
                for target in graph[source]:
                    if owner[target] in (seat, fog.HIDDEN) or target in friends:  # not into the fog
                        continue
                    chance = win_chance(armies[source] - 1, armies[target])
                    extra = 0.1 if target in goal else 0.0
                    if game_type:  # assassin, terminator: whose territory it is matters
                        bonus = gametypes.bot_bonus(state, seat, owner, target)
                        if bonus is None:
                            continue
                        extra += bonus
                    key = (chance + extra, -source, -target)
                    if chance >= self.threshold and (best is None or key > best[0]):
                        best = (key, source, target)
            if best is None:
                break
            _, source, target = best
            plan.append(Attack(source, target, until=Until(UntilKind.LEFT, 2), move=ALL_BUT_ONE))
            left = max(2, armies[source] - armies[target])
            owner[target] = seat
            armies[target] = max(1, left - 1)
            armies[source] = 1 if left > 2 else 2
        return plan


BOTS: dict[str, type[Bot]] = {"random": RandomBot, "greedy": GreedyBot}


def make_bot(kind: str, seed: int) -> Bot:
    try:
        return BOTS[kind](seed)
    except KeyError:
        raise ValueError(f"no bot {kind!r} (known: {', '.join(sorted(BOTS))})") from None
