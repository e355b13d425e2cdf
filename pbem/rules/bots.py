"""Bots that plan a whole turn before any die is rolled, as a player by mail must.

A bot writes the same actions the order language produces, so a bot's turn
can be run directly or rendered to text, mailed, parsed and run, with the
same result. Bots draw from their own seeded stream (never the game's dice):
block ``label = "<seat>:<turn>"`` of a stream keyed by the bot's seed, so a
bot's choices depend only on its seed and the state it sees.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from functools import lru_cache

from pbem.rules import engine
from pbem.rules.actions import (
    Amount,
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
)
from pbem.rules.cards import all_sets, designs_of, set_value
from pbem.rules.dice import DiceStream
from pbem.rules.odds import battle
from pbem.rules.state import CLAIM, HQ, PLACE, GameState

ALL = Amount("all")
ALL_BUT_ONE = Amount("all_but", 1)


class Bot(ABC):
    """Common planning: trades, then the armies due; subclasses choose where."""

    name = "bot"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._key = hashlib.sha256(f"pbem-bot:{seed}".encode()).digest()

    def stream(self, seat: int, turn: int, what: str = "turn") -> DiceStream:
        return DiceStream(self._key, f"bot-{self.name}", f"{what}:{seat}:{turn}")

    # ------------------------------------------------------------------ setup
    def plan_setup(self, state: GameState, seat: int) -> list[SetupAction]:
        rng = self.stream(seat, 0, "setup")
        if state.phase == CLAIM:
            prefs = list(range(len(state.board.territories)))
            rng.shuffle(prefs)
            return [Claim(tuple(self.claim_order(state, seat, prefs)))]
        if state.phase == PLACE:
            own = state.territories_of(seat)
            plan: list[SetupAction] = [
                PlaceInitial(spread(self.setup_targets(state, seat, own), state.players[seat].to_place, rng))
            ]
            share = engine.neutral_share(state, seat)
            if share:
                neutral = state.territories_of(state.neutral_seat)  # type: ignore[arg-type]
                plan.append(PlaceNeutral(spread(neutral, share, rng)))
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
        rng = self.stream(seat, state.turn)
        actions: list[TurnAction] = []
        due = state.reinforcements
        hand = list(state.players[seat].cards)
        number = state.sets_traded
        trades = 0
        must = state.must_trade
        while trades < state.options.max_trades and state.options.card_values != "none":
            sets = all_sets(state.board, hand)
            if not sets or not (must or self.wants_trade(state, len(hand))):
                break
            chosen = sets[rng.uniform(len(sets))]
            actions.append(Trade(chosen))
            number += 1
            due += set_value(state.options, number, designs_of(state.board, chosen))
            for card in chosen:
                hand.remove(card)
            trades += 1
            must = False
        armies = list(state.armies)
        placements = self.place(state, seat, due, rng)
        if placements:
            actions.append(Place(tuple(placements)))
            for n, territory in placements:
                armies[territory] += n
        actions += self.attacks(state, seat, armies, rng)
        fortify = self.fortify(state, seat, armies, rng)
        if fortify is not None:
            actions.append(fortify)
        return actions

    def wants_trade(self, state: GameState, hand: int) -> bool:
        return True

    @abstractmethod
    def place(
        self, state: GameState, seat: int, due: int, rng: DiceStream
    ) -> list[tuple[int, int]]:
        """Where the armies due go: (armies, territory) pairs."""

    @abstractmethod
    def attacks(
        self, state: GameState, seat: int, armies: list[int], rng: DiceStream
    ) -> list[TurnAction]:
        """The attacks, planned on ``armies`` (the board after placement)."""

    def fortify(
        self, state: GameState, seat: int, armies: list[int], rng: DiceStream
    ) -> Fortify | None:
        """Move the largest interior stack to an adjacent border territory."""
        if state.options.fortify == "none":
            return None
        owner = state.owner
        territories = state.board.territories
        best = None
        for t in range(len(owner)):
            if owner[t] != seat or armies[t] < 2:
                continue
            if any(owner[n] != seat for n in territories[t].neighbours):
                continue
            targets = [
                n for n in territories[t].neighbours
                if any(owner[m] != seat for m in territories[n].neighbours)
            ]
            if targets and (best is None or armies[t] > armies[best[0]]):
                best = (t, targets[rng.uniform(len(targets))])
        if best is None:
            return None
        return Fortify(best[0], best[1], ALL)


def borders(state: GameState, seat: int) -> list[int]:
    owner = state.owner
    return [
        t for t in range(len(owner))
        if owner[t] == seat and any(owner[n] != seat for n in state.board.territories[t].neighbours)
    ]


def spread(targets: list[int], armies: int, rng: DiceStream) -> tuple[tuple[int, int], ...]:
    """``armies`` armies on random territories of ``targets``, merged per territory."""
    if armies <= 0 or not targets:
        return ()
    counts: dict[int, int] = {}
    for _ in range(armies):
        t = targets[rng.uniform(len(targets))]
        counts[t] = counts.get(t, 0) + 1
    return tuple((counts[t], t) for t in sorted(counts))


class RandomBot(Bot):
    """Legal random choices; attacks wherever its army outnumbers the target."""

    name = "random"

    def place(self, state: GameState, seat: int, due: int, rng: DiceStream) -> list[tuple[int, int]]:
        targets = borders(state, seat) or state.territories_of(seat)
        return list(spread(targets, due, rng))

    def attacks(
        self, state: GameState, seat: int, armies: list[int], rng: DiceStream
    ) -> list[TurnAction]:
        owner = list(state.owner)
        territories = state.board.territories
        plan: list[TurnAction] = []
        sources = [t for t in range(len(owner)) if owner[t] == seat]
        rng.shuffle(sources)
        while sources:
            source = sources.pop(0)
            targets = [
                n for n in territories[source].neighbours
                if owner[n] != seat and armies[source] - 1 > armies[n]
            ]
            if not targets:
                continue
            target = targets[rng.uniform(len(targets))]
            plan.append(Attack(source, target, move=ALL))
            # plan onwards as if it fell, with the losses of an even fight
            left = max(1, armies[source] - 1 - armies[target])
            owner[target] = seat
            armies[target] = left
            armies[source] = 1
            sources.insert(0, target)
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
        order = [t for c in smallest for t in c.territories]
        return order

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

    def place(self, state: GameState, seat: int, due: int, rng: DiceStream) -> list[tuple[int, int]]:
        if due <= 0:
            return []
        owner = state.owner
        territories = state.board.territories
        goal = set(state.board.continents[self.target_continent(state, seat)].territories)
        candidates = borders(state, seat) or state.territories_of(seat)

        def score(t: int) -> tuple[int, int, int]:
            enemies_in_goal = sum(
                1 for n in territories[t].neighbours if owner[n] != seat and n in goal
            )
            return (enemies_in_goal, state.armies[t], -t)

        best = max(candidates, key=score)
        return [(due, best)]

    def attacks(
        self, state: GameState, seat: int, armies: list[int], rng: DiceStream
    ) -> list[TurnAction]:
        owner = list(state.owner)
        territories = state.board.territories
        goal = set(state.board.continents[self.target_continent(state, seat)].territories)
        plan: list[TurnAction] = []
        for _ in range(len(owner)):
            best = None
            for source in range(len(owner)):
                if owner[source] != seat or armies[source] < 3:
                    continue
                for target in territories[source].neighbours:
                    if owner[target] == seat:
                        continue
                    chance = win_chance(armies[source] - 1, armies[target])
                    key = (chance + (0.1 if target in goal else 0.0), -source, -target)
                    if chance >= self.threshold and (best is None or key > best[0]):
                        best = (key, source, target)
            if best is None:
                break
            _, source, target = best
            plan.append(Attack(source, target, until=Until("left", 2), move=ALL_BUT_ONE))
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
