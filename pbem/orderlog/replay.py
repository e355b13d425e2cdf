"""Rebuild a game from its definition and its order log (event sourcing).

A game is its map, options, players, secret and the ordered log of entries;
the state after any entry is a replay of the log up to it. This module is
pure (no database, no clock): the store feeds it entries, the record file
feeds it entries, and both must give the same states and hashes.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Final

from pbem.orders import OrderProblem, OrdersError, parse_orders, validate_setup
from pbem.orders.validate import checked_turn
from pbem.rules import engine, opening
from pbem.rules.actions import SetupAction, TurnAction
from pbem.rules.board import Board
from pbem.rules.dice import DICE_V1, DICE_V2, DiceStream, contribution, make_stream
from pbem.rules.errors import RulesError
from pbem.rules.events import Event, RulesChanged
from pbem.rules.options import Options
from pbem.rules.ruleversions import RULES_VERSIONS
from pbem.rules.setupplan import play_setup
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES, GameState
from pbem.rules.turnplan import play_turn

SETUP = "setup"
TURN = "turn"
COMMAND = "command"
RULES = "RULES"  # the command word of `pbem upgrade-rules`


@dataclass(frozen=True)
class Entry:
    """One line of the order log: what a seat did (canonical text)."""

    kind: str  # "setup" | "turn" | "command"
    seat: int | None
    text: str
    turn: int = 0
    source: str = "gm"  # "mail" | "gm" | "default" | "bot"


HASH_PLAIN: Final = 1  # SHA-256 of the canonical state: anyone can test a guess against it
HASH_KEYED: Final = 2  # HMAC-SHA256 under hash_key(secret): what new games use
HASH_VERSIONS: Final = (HASH_PLAIN, HASH_KEYED)


def hash_key(secret: bytes) -> bytes:
    """The key of a game's keyed state hashes: from its first dice secret (a reroll
    does not change it), so it is as secret as the dice until the game ends and
    anyone can check the hashes once the secret is published."""
    return hashlib.sha256(b"pbem-state-hash-v2\x00" + secret).digest()


@dataclass(frozen=True)
class GameDefinition:
    name: str
    board: Board
    options: Options
    players: tuple[tuple[str, str], ...]  # (name, colour) by seat
    secret: bytes
    dice_version: str = DICE_V1  # games and records from before version 2 are v1
    # `pbem rollback --reroll`: (first turn, secret) in the order they were made;
    # a turn's dice come from the last one whose first turn is at or before it.
    rerolls: tuple[tuple[int, bytes], ...] = ()
    # What the stored and published state hashes are: HASH_PLAIN (version 1, the
    # SHA-256 of the state: games and records older than version 2) or HASH_KEYED
    # (version 2, keyed by a key that follows from the game's own secret).
    hash_version: int = 1

    def state_hash(self, state: GameState) -> str:
        """The state hash this game stores, reports and verifies, by its version."""
        if self.hash_version == HASH_PLAIN:
            return state.state_hash()
        return state.keyed_hash(self._hash_key)

    @cached_property
    def _hash_key(self) -> bytes:
        return hash_key(self.secret)

    def secret_of_turn(self, turn: int) -> bytes:
        """The secret a turn's dice come from: the game's, unless rerolled."""
        secret = self.secret
        for first, rerolled in self.rerolls:
            if first <= turn:
                secret = rerolled
        return secret


@dataclass
class Step:
    """The result of one adjudication: a turn, a completed setup phase, or a command."""

    turn: int  # the player-turn number the step belongs to (0: setup)
    seat: int | None
    entries: list[Entry]
    events: list[Event]
    state: GameState
    state_hash: str
    before: GameState | None = None  # the state before the step, when asked for
    # v2: (seat, hex SHA-256) of each contribution mixed into the step's dice, in order
    contributions: tuple[tuple[int | None, str], ...] = ()


class ReplayError(Exception):
    """The log does not replay: an entry is refused by the order language or the rules."""

    def __init__(self, turn: int, seat: int | None, message: str) -> None:
        where = f"turn {turn}" if turn else "setup"
        super().__init__(f"{where}: {message}")
        self.turn = turn
        self.seat = seat


@dataclass
class Draws:
    """One stream as a game used it: its label, the log entries whose contributions
    key it (v2), and every ``uniform(n)`` drawn from it as ``(n, result)``."""

    label: str
    entries: list[Entry]
    log: list[tuple[int, int]]


@dataclass
class Game:
    """A game being replayed: its state and the stream labels of DICE.md."""

    definition: GameDefinition
    state: GameState
    pending_setup: dict[int, list[SetupAction]] = field(default_factory=dict)
    pending_entries: list[Entry] = field(default_factory=list)
    draws: list[Draws] | None = None  # every stream used, when a record's draws are written

    def stream(self, label: str, entries: list[Entry]) -> DiceStream:
        rng = stream_of(self.definition, label, entries)
        if self.draws is not None:
            rng.log = []
            self.draws.append(Draws(label, list(entries), rng.log))
        return rng


def start(definition: GameDefinition, log_draws: bool = False) -> tuple[Game, list[Event]]:
    """Seat the players and deal: the ``setup`` stream. ``log_draws`` keeps every
    draw of every stream in ``Game.draws`` (for a record's draws sections)."""
    rng = stream_of(definition, "setup", [])
    draws: list[Draws] | None = None
    if log_draws:
        rng.log = []
        draws = [Draws("setup", [], rng.log)]
    state, events = opening.new_game(
        definition.board, definition.options, definition.name, list(definition.players), rng
    )
    return Game(definition, state, draws=draws), events


def stream_of(definition: GameDefinition, label: str, entries: list[Entry]) -> DiceStream:
    """The stream ``label``; in v2 keyed with the contributions of ``entries`` in log order.
    A turn's secret is the game's unless `pbem rollback --reroll` drew a new one for it."""
    contributions: tuple[bytes, ...] = ()
    if definition.dice_version == DICE_V2:
        contributions = tuple(contribution(e.text) for e in entries)
    secret = definition.secret
    if label.startswith("turn:"):
        secret = definition.secret_of_turn(int(label.removeprefix("turn:")))
    return make_stream(definition.dice_version, secret, definition.name, label, contributions)


def turn_stream(
    definition: GameDefinition, turn: int, entries: list[Entry] | None = None
) -> DiceStream:
    return stream_of(definition, f"turn:{turn}", entries or [])


def setup_place_stream(
    definition: GameDefinition, entries: list[Entry] | None = None
) -> DiceStream:
    """Automatic placement after a draft happens later than the deal, so it has
    a stream of its own (documented in docs/DICE.md); in v2 every player's
    setup orders go into it."""
    return stream_of(definition, "setup:place", entries or [])


def contributions_of(
    definition: GameDefinition, entries: list[Entry]
) -> tuple[tuple[int | None, str], ...]:
    """What a report shows: whose contribution went into the step's dice (v2 only)."""
    if definition.dice_version != DICE_V2:
        return ()
    return tuple((e.seat, contribution(e.text).hex()) for e in entries)


def parse_turn(game: Game, seat: int, text: str) -> list[TurnAction]:
    """Parse and validate a turn's canonical text; raise ReplayError when refused."""
    state = game.state
    try:
        parsed = parse_orders(text, state.board)
    except OrdersError as exc:
        raise ReplayError(state.turn, seat, _first(exc.problems)) from None
    problems, actions = checked_turn(state, seat, parsed.orders)
    if problems:
        raise ReplayError(state.turn, seat, _first(problems))
    return actions


def parse_setup(game: Game, seat: int, text: str) -> list[SetupAction]:
    state = game.state
    try:
        parsed = parse_orders(text, state.board)
    except OrdersError as exc:
        raise ReplayError(0, seat, _first(exc.problems)) from None
    problems = validate_setup(state, seat, parsed.orders)
    if problems:
        raise ReplayError(0, seat, _first(problems))
    return [order.action for order in parsed.setup_orders]  # type: ignore[misc]  # setup only


def _first(problems: list[OrderProblem]) -> str:
    p = problems[0]
    return f"line {p.line}: {p.message}"


def apply(
    game: Game,
    entry: Entry,
    keep_before: bool = False,
    actions: list[TurnAction] | None = None,
) -> Step | None:
    """Apply one log entry; returns the step it completes, or None when a setup
    phase still waits for other players. ``keep_before`` keeps a copy of the
    state before the step (reports need it; replays do not). ``actions``: a turn
    entry's actions when the caller has just parsed and validated the mail whose
    canonical text the entry is (games.submit), so the text is not read twice."""
    state = game.state
    definition = game.definition
    before = state.copy() if keep_before else None
    if entry.kind == SETUP:
        if state.phase not in SETUP_PHASES or entry.seat is None:
            raise ReplayError(0, entry.seat, "setup orders after the setup")
        game.pending_setup[entry.seat] = parse_setup(game, entry.seat, entry.text)
        game.pending_entries.append(entry)
        if any(seat not in game.pending_setup for seat in state.order):
            return None
        entries = list(game.pending_entries)
        events = _guard(
            0,
            entry.seat,
            lambda: play_setup(state, game.pending_setup, game.stream("setup:place", entries)),
        )
        game.pending_entries, game.pending_setup = [], {}
        turn = 0
        seat = None
    elif entry.kind == TURN:
        if state.phase in SETUP_PHASES or state.phase == ENDED:
            raise ReplayError(state.turn, entry.seat, f"no turn to play in the {state.phase} phase")
        taken: list[Event] = []
        if state.phase == ROUND and entry.seat is not None:  # freestyle: the first to arrive
            mover = entry.seat
            taken = _guard(state.turn + 1, mover, lambda: engine.take_turn(state, mover))
            before = state.copy() if keep_before else None  # the turn begun, as in turn order
        if entry.seat != state.current:
            raise ReplayError(state.turn, entry.seat, "orders for a seat whose turn it is not")
        turn = state.turn
        if actions is None:
            actions = parse_turn(game, entry.seat, entry.text)
        events = taken + _guard(
            turn,
            entry.seat,
            lambda: play_turn(state, actions, game.stream(f"turn:{turn}", [entry])),
        )
        entries = [entry]
        seat = entry.seat
    elif entry.kind == COMMAND:
        turn = state.turn
        seat = entry.seat
        events = _command(game, entry)
        entries = [entry]
    else:
        raise ReplayError(state.turn, entry.seat, f"unknown log entry kind {entry.kind!r}")
    inputs = contributions_of(definition, entries) if entry.kind != COMMAND else ()
    return Step(turn, seat, entries, events, state, definition.state_hash(state), before, inputs)


def _guard(turn: int, seat: int | None, run: Callable[[], list[Event]]) -> list[Event]:
    try:
        return run()
    except RulesError as exc:
        raise ReplayError(turn, seat, str(exc)) from None


def _command(game: Game, entry: Entry) -> list[Event]:
    """Commands that change the game: RESIGN (a player), REMOVE (the GM), and
    RULES n (the GM, no seat: `pbem upgrade-rules`)."""
    word = entry.text.strip().split()[0].upper() if entry.text.strip() else ""
    if word == RULES and entry.seat is None:
        return _rules(game, entry)
    if word not in ("RESIGN", "REMOVE") or entry.seat is None:
        raise ReplayError(game.state.turn, entry.seat, f"not a game-changing command: {entry.text}")
    reason = "resigned" if word == "RESIGN" else "removed"
    seat = entry.seat
    return _guard(
        game.state.turn,
        seat,
        lambda: engine.remove_player(
            game.state,
            seat,
            reason,
        ),
    )


def rules_entry(version: int, turn: int) -> Entry:
    """The log entry of `pbem upgrade-rules`: the GM moves the game to ``version``."""
    return Entry(COMMAND, None, f"{RULES} {version}", turn, "gm")


def _rules(game: Game, entry: Entry) -> list[Event]:
    """RULES n: the game plays rules version n from this step on (the state's
    options; the game's stored options keep the version it started with).
    Only forward, to a version this pbem knows."""
    state = game.state
    words = entry.text.split()
    old = state.options.rules_version
    if len(words) != 2 or not words[1].isdigit():
        raise ReplayError(state.turn, None, f"not a rules command: {entry.text}")
    new = int(words[1])
    if new not in RULES_VERSIONS:
        known = ", ".join(str(v) for v in RULES_VERSIONS)
        raise ReplayError(
            state.turn, None, f"{entry.text}: this pbem knows rules versions {known} only"
        )
    if new == old:
        raise ReplayError(
            state.turn, None, f"{entry.text}: the game plays rules version {old} already"
        )
    if new < old:
        raise ReplayError(
            state.turn, None, f"{entry.text}: rules never move back (the game plays version {old})"
        )
    if state.phase == ENDED:
        raise ReplayError(state.turn, None, f"{entry.text}: the game is over")
    state.options = replace(state.options, rules_version=new)
    state.rules_upgraded_to = new
    return [RulesChanged(old, new)]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bounded replay, then restore it.

    A replay allocates tens of thousands of small containers that die by reference
    counting; each 700 of them start a collection that walks the young objects and
    every tenth a walk of older ones, the whole process heap included (a large share
    of a verify's time: docs/PERFORMANCE.md). What the replay
    leaves in cycles is collected as usual once the collector runs again."""
    if not gc.isenabled():  # nested, or the caller chose: leave it as it is
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def replay(definition: GameDefinition, entries: list[Entry]) -> Iterator[Step]:
    """Every completed step of a game, in order, from the start."""
    game, _ = start(definition)
    for entry in entries:
        step = apply(game, entry)
        if step is not None:
            yield step


def rebuild(definition: GameDefinition, entries: list[Entry]) -> Game:
    """The game after all entries (pending setup orders included)."""
    game, _ = start(definition)
    for entry in entries:
        apply(game, entry)
    return game
