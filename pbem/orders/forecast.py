"""The odds of a player's orders before any die is rolled (receipts, `pbem check`).

For each attack, in the order it will run: the chance it runs at all (an earlier attack may
have left its source with one army, or taken its target already), the chance it takes its
target, and the armies expected on its source and target afterwards; then the chance the
whole plan succeeds (every territory attacked is the player's at the end of the attacks).

Two methods, and the answer says which:

* exact: the board is carried as a distribution over boards, roll by roll, through the
  rules engine itself (every roll is one engine call fed a representative of each class of
  equally decided dice), so UNTIL, MOVE, card re-rolls, the commander, eliminations and a
  win in mid-turn act exactly as in the game.  Boards that agree are merged after every
  roll.  A chain of attacks (each from the territory the one before it took) stays small,
  so it is always exact; other plans are exact while they stay under `MAX_BOARDS`.
* Monte Carlo: `RUNS` plays of the orders through the same code the game runs
  (`turnplan`), with a dice stream of a fixed key of its own: never the game's secret, so
  the forecast neither uses nor reveals the game's dice, and the same orders on the same
  board always get the same figures.

Probabilities of the exact method are floats (about 1e-15 off the fractions).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import product
from typing import Any

from pbem.orders.model import Order
from pbem.orders.validate import turn_actions
from pbem.rules import attacking, combat, defence, engine, fog, gametypes
from pbem.rules.actions import (
    Attack,
    CommanderUse,
    Fortify,
    Place,
    Trade,
    TurnAction,
    UntilKind,
    commander_named,
    commander_use,
)
from pbem.rules.dice import DiceStream
from pbem.rules.errors import RulesError
from pbem.rules.events import AttackSkipped
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ENDED, REINFORCE, ROUND, SETUP_PHASES, GameState
from pbem.rules.turnplan import _attack as play_attack
from pbem.rules.turnplan import attack_problem, place_after_attack

RUNS = 10_000
MAX_BOARDS = 3_000  # distinct boards the exact method carries before it gives way
FORECAST_KEY = hashlib.sha256(b"pbem forecast stream v1").digest()  # not any game's secret
FORECAST_LABEL = "forecast"


class Method(StrEnum):
    EXACT = "exact"
    MONTE_CARLO = "monte carlo"


@dataclass(frozen=True)
class AttackForecast:
    """One attack order: the chances (0..1) and the armies expected once it has run."""

    number: int  # the attack's place among the mail's attacks, from 1
    source: int
    target: int
    runs: float  # chance it is not skipped
    takes: float  # chance it takes the target
    source_left: float  # expected armies on source after it, given that it ran
    target_left: float  # expected own armies on target after it (0 where not taken), given it ran


@dataclass(frozen=True)
class Forecast:
    method: Method
    attacks: tuple[AttackForecast, ...]
    plan: float  # chance every attacked territory is the player's after the attacks
    chain: bool  # each attack starts where the one before it ended
    runs: int = 0  # Monte Carlo runs (0 for exact)


class _TooMany(Exception):
    """The exact method would carry too many boards."""


# ------------------------------------------------------------------------------ entry


def forecast(state: GameState, actions: Sequence[TurnAction], runs: int = RUNS) -> Forecast:
    """The odds of ``actions`` played by the player to move, from ``state`` (unchanged).

    The defenders' standing orders (DEFEND WITH 1) are private: the odds
    assume every defender rolls the most dice, as the attacker must."""
    if state.defend_one or state.defend_neutral:
        state = state.copy()
        state.defend_one = []
        state.defend_neutral = []
    attacks = [a for a in actions if isinstance(a, Attack)]
    chain = all(b.source == a.target for a, b in zip(attacks, attacks[1:], strict=False))
    try:
        stats, plan = _exact(state, actions)
        method, used = Method.EXACT, 0
    except _TooMany:
        stats, plan = _monte_carlo(state, actions, runs)
        method, used = Method.MONTE_CARLO, runs
    return Forecast(method, tuple(stats), plan, chain, used)


# ------------------------------------------------------------------------------ shared


class _Tally:
    """Sums for one attack order over weighted outcomes."""

    def __init__(self, number: int, attack: Attack) -> None:
        self.number, self.attack = number, attack
        self.ran = self.took = self.source = self.target = 0.0

    def add(self, state: GameState, me: int, p: float, count_run: bool = True) -> None:
        a = self.attack
        if count_run:
            self.ran += p
        self.source += p * state.armies[a.source]
        if state.owner[a.target] == me:
            self.took += p
            self.target += p * state.armies[a.target]

    def result(self, total: float) -> AttackForecast:
        ran = self.ran
        return AttackForecast(
            self.number,
            self.attack.source,
            self.attack.target,
            ran / total,
            self.took / total,
            self.source / ran if ran else 0.0,
            self.target / ran if ran else 0.0,
        )


def _skip_reason(state: GameState, action: Attack) -> str | None:
    """Why turnplan would skip this attack now (same tests, same order)."""
    problem = attack_problem(state, action.source, action.target)
    if (
        problem is None
        and action.until.kind == UntilKind.LEFT
        and state.armies[action.source] <= action.until.n
    ):
        problem = "source too small"
    return problem


def _apply_fixed(state: GameState, action: TurnAction) -> None:
    """The actions without dice, as turnplan plays them."""
    if isinstance(action, Place):
        if state.phase != REINFORCE or not state.reinforcements:
            place_after_attack(state, action)  # the armies of an elimination, if any
            return
        for armies, territory in action.placements:
            if state.phase == ENDED:
                break
            engine.place(state, territory, armies)
    elif isinstance(action, Trade):
        if state.phase != REINFORCE:
            # rules version 3: a TRADE after an ATTACK chooses an elimination's
            # forced trade; the odds take the set worth most to the player
            # (attacking.set_worth_most) instead: only where the armies of an
            # elimination's trade go may differ
            return
        engine.trade(state, action.cards)


def _success(state: GameState, me: int, targets: set[int]) -> bool:
    if state.phase == ENDED:
        return state.winner == me
    return all(state.owner[t] == me for t in targets)


# ------------------------------------------------------------------------------ exact


class _Fixed:
    """A dice stream that gives back the dice it was made with."""

    __slots__ = ("dice",)

    def __init__(self, dice: tuple[int, ...]) -> None:
        self.dice = list(dice)

    def roll(self, count: int) -> list[int]:
        out, self.dice = self.dice[:count], self.dice[count:]
        return out

    def die(self) -> int:
        return self.dice.pop(0)


@cache
def roll_classes(
    att_dice: int, def_dice: int, reroll: bool, commander: bool, only_if_helps: bool = False
) -> tuple[tuple[tuple[int, ...], float], ...]:
    """One representative dice sequence per outcome (losses, commander used) and its chance.

    Every roll is enumerated through `combat.roll` itself, with the extra die of a card
    re-roll where the rules may draw one (``only_if_helps``: the policy of rules version 3,
    which draws it only where it helps; where it does not, the six extras give the same
    outcome), so the chances are those of the game's dice.
    """
    weights: dict[tuple[int, int, bool], list[Any]] = {}  # [dice, count]
    total = 6 ** (att_dice + def_dice) * (6 if reroll else 1)
    for drawn in product(range(1, 7), repeat=att_dice + def_dice):
        plain = combat.roll(_Fixed(drawn), att_dice, def_dice)
        extras: tuple[tuple[int, ...], ...] = ((),)
        each = 6 if reroll else 1
        if reroll and plain.attacker_losses:
            extras, each = tuple((e,) for e in range(1, 7)), 1
        for extra in extras:
            dice = drawn + extra
            result = combat.roll(_Fixed(dice), att_dice, def_dice, reroll, commander, only_if_helps)
            key = (result.attacker_losses, result.defender_losses, result.commander is not None)
            entry = weights.setdefault(key, [dice, 0])
            entry[1] += each
    return tuple((dice, count / total) for _, (dice, count) in sorted(weights.items()))


def _board_key(state: GameState) -> tuple[object, ...]:
    players = tuple((p.alive, tuple(p.cards)) for p in state.players)
    return (
        tuple(state.owner),
        tuple(state.armies),
        players,
        state.phase,
        state.commander_used,
        state.winner,
        state.sets_traded,
        state.reinforcements,
        state.conquered_this_turn,
        state.last_conquest,
        tuple(state.deck),
        tuple(state.discard),
    )


def _merge(
    branches: list[tuple[GameState, float]], key: Callable[[GameState], tuple[object, ...]]
) -> list[tuple[GameState, float]]:
    merged: dict[tuple[object, ...], list[Any]] = {}
    for state, p in branches:
        k = key(state)
        if k in merged:
            merged[k][1] += p
        else:
            merged[k] = [state, p]
    if len(merged) > MAX_BOARDS:
        raise _TooMany
    return [(s, p) for s, p in merged.values()]


def _exact(state: GameState, actions: Sequence[TurnAction]) -> tuple[list[AttackForecast], float]:
    me = state.current
    named = commander_named(actions)
    dist: list[tuple[GameState, float]] = [(state.copy(), 1.0)]
    tallies: list[_Tally] = []
    for action in actions:
        if isinstance(action, Fortify):
            continue  # moves armies after the attacks: no chance involved
        if not isinstance(action, Attack):
            for s, _ in dist:
                if s.phase != ENDED:
                    _apply_fixed(s, action)
            continue
        tally = _Tally(len(tallies) + 1, action)
        tallies.append(tally)
        after: list[tuple[GameState, float]] = []
        for s, p in dist:
            if s.phase == ENDED or _skip_reason(s, action) is not None:
                after.append((s, p))
                continue
            tally.ran += p  # once per board, not per outcome: no rounding above 1
            for done, q in _exact_attack(s, action, commander_use(action, named)):
                tally.add(done, me, p * q, count_run=False)
                after.append((done, p * q))
        dist = _merge(after, _board_key)
    targets = {a.target for a in actions if isinstance(a, Attack)}
    plan = sum(p for s, p in dist if _success(s, me, targets))
    return [t.result(1.0) for t in tallies], plan


def _exact_attack(
    state: GameState, action: Attack, use: CommanderUse = CommanderUse.DEFAULT
) -> list[tuple[GameState, float]]:
    """Every way one attack order can end, from one board, with its chance; ``use``:
    where the commander may be used (rules version 3)."""
    source, target = action.source, action.target
    until = action.until
    until_left = until.n if until.kind == UntilKind.LEFT else None
    hand = state.players[state.current].cards
    # rules version 1 re-rolled without REROLL (attacking.attack)
    asked = action.reroll or state.options.rules_version == 1
    reroll = asked and state.options.card_reroll and (source in hand or target in hand)
    only_if_helps = state.options.rules_version >= 3  # the re-roll policy of version 3
    active: list[tuple[GameState, float]] = [(state, 1.0)]
    rolls = 0
    ended: list[tuple[GameState, float]] = []
    while active:
        rolled: list[tuple[GameState, float]] = []
        rolls += 1
        for s, p in active:
            have = s.armies[source]
            att = action.dice if action.dice < have else have - 1
            dfn = defence.defender_dice(s, target)
            commander = attacking.commander_on_roll(s, use, att)
            for dice, q in roll_classes(att, dfn, reroll, commander, only_if_helps):
                branch = s.copy()
                attacking.attack(
                    branch,
                    source,
                    target,
                    _Fixed(dice),
                    dice=action.dice,
                    until_left=until_left,
                    max_rolls=1,
                    reroll=action.reroll,
                    commander=use,
                )
                rolled.append((branch, p * q))
        active = []
        for s, p in rolled:
            if s.owner[target] == s.current or s.phase == ENDED:
                _move_in(s, action)
                ended.append((s, p))
            elif (
                s.armies[source] < 2
                or (until_left is not None and s.armies[source] <= until_left)
                or (until.kind == UntilKind.ROLLS and rolls >= until.n)
            ):
                ended.append((s, p))
            else:
                active.append((s, p))
        active = _merge(active, lambda s: (s.armies[source], s.armies[target], s.commander_used))
    return _merge(ended, _board_key)


def _move_in(state: GameState, action: Attack) -> None:
    """After a conquest: the MOVE of the order, clamped as turnplan clamps it."""
    if state.pending_move is None:
        return
    source, _, minimum = state.pending_move
    available = state.armies[source] - 1
    asked = action.move.resolve(available, minimum)
    armies = max(minimum, min(asked, available))
    attacking.move_in(state, armies, asked if armies != asked else None)


# ------------------------------------------------------------------------------ sampled


def forecast_stream(game: str) -> DiceStream:
    """The forecast's own dice: a fixed key, never the game's secret."""
    return DiceStream(FORECAST_KEY, game, FORECAST_LABEL)


def _monte_carlo(
    state: GameState, actions: Sequence[TurnAction], runs: int
) -> tuple[list[AttackForecast], float]:
    me = state.current
    named = commander_named(actions)
    rng = forecast_stream(state.game)
    attacks = [a for a in actions if isinstance(a, Attack)]
    tallies = [_Tally(i + 1, a) for i, a in enumerate(attacks)]
    targets = {a.target for a in attacks}
    successes = 0
    for _ in range(runs):
        s = state.copy()
        n = 0
        for action in actions:
            if s.phase == ENDED or isinstance(action, Fortify):
                continue
            if isinstance(action, Attack):
                tally = tallies[n]
                n += 1
                events = play_attack(s, action, rng, commander_use(action, named))
                if not (events and isinstance(events[0], AttackSkipped)):
                    tally.add(s, me, 1.0)
            else:
                _apply_fixed(s, action)
        successes += _success(s, me, targets)
    return [t.result(runs) for t in tallies], successes / runs


# ------------------------------------------------------------------------------ words


def _pct(p: float) -> str:
    if 0 < p < 0.0005:
        return "<0.1%"
    if 0.9995 <= p < 1:
        return ">99.9%"
    return f"{100 * p:.1f}%"


def format_forecast(result: Forecast, state: GameState) -> list[str]:
    """Lines for a receipt or `pbem check`: one per attack, then the plan."""
    if not result.attacks:
        return []
    names = [t.name for t in state.board.territories]
    if result.method is Method.EXACT:
        how = "exact odds" + (", the attacks form a chain" if result.chain else "")
    else:
        how = (
            f"Monte Carlo estimate of {result.runs:,} seeded runs, "
            "the attacks are not a chain: about +/-1 point"
        )
    lines = [f"Odds before the dice ({how}; the game's own dice are not used):"]
    for a in result.attacks:
        line = f"  {a.number}. {names[a.source]} -> {names[a.target]}: "
        if a.runs < 0.9995:
            line += f"runs {_pct(a.runs)}, "
        line += f"takes it {_pct(a.takes)}"
        if a.runs > 0:
            line += (
                f"; armies left {a.source_left + a.target_left:.1f} "
                f"({names[a.source]} {a.source_left:.1f}, {names[a.target]} {a.target_left:.1f})"
            )
        lines.append(line)
    lines.append(f"  Whole plan (every territory attacked taken): {_pct(result.plan)}")
    return lines


FOG_NO_ODDS = (
    "No odds for these orders: an attack aims at a territory out of your sight "
    "(fog of war), whose armies the odds would tell."
)


def fog_hides(state: GameState, seat: int, actions: Sequence[TurnAction]) -> bool:
    """Whether an attack of ``actions`` aims at a territory ``seat`` does not see
    now: under fog its odds would give away its armies, so none are given."""
    view = fog.visible(state, seat)
    return any(isinstance(a, Attack) and a.target not in view for a in actions)


def forecast_lines(state: GameState, orders: Sequence[Order], seat: int | None = None) -> list[str]:
    """The forecast of validated turn orders, as lines (none outside ``seat``'s turn or
    without attacks). A forecast the rules refuse is said so, never raised: it is advice."""
    if state.phase in SETUP_PHASES or state.phase == ENDED:
        return []
    if state.phase == ROUND and seat is not None and seat in waiting_for(state):
        state = engine.turn_of(state, seat)  # freestyle: the turn as it would begin now
    if seat is not None and seat != state.current:
        return []
    actions = turn_actions(state, orders)
    if not any(isinstance(a, Attack) for a in actions):
        return []
    if seat is not None and fog_hides(state, seat, actions):
        return [FOG_NO_ODDS]
    try:
        lines = format_forecast(forecast(state, actions), state)
    except RulesError as exc:
        return [f"No odds for these orders: {exc}."]
    if fog.fogged(state):  # "eliminates bob" would tell how many territories bob holds
        return lines
    return lines + game_type_notes(state, actions)


def game_type_notes(state: GameState, actions: Sequence[TurnAction]) -> list[str]:
    """Assassin and terminator: what taking a player's last territory (on the
    board as it stands) would do. Told to the player to move only, like the
    odds: the mover's own target is theirs to know."""
    goal = state.options.goal
    if goal not in (gametypes.ASSASSIN, gametypes.TERMINATOR):
        return []
    me, names = state.current, state.board.territories
    notes = []
    for action in actions:
        if not isinstance(action, Attack):
            continue
        defender = state.owner[action.target]
        if defender < 0 or state.players[defender].neutral or state.owner.count(defender) != 1:
            continue
        who, where = state.players[defender].name, names[action.target].name
        if goal == gametypes.TERMINATOR:
            notes.append(f"  Taking {where} eliminates {who}: a point for you.")
        elif gametypes.target_of(state, me) == defender:
            notes.append(f"  Taking {where} eliminates {who}, your target: you win the game.")
        else:
            notes.append(
                f"  Taking {where} eliminates {who}, who is not your target: their hunter "
                "wins the game."
            )
    return notes
