"""Rebuild a game from its definition and its order log (event sourcing).

A game is its map, options, players, secret and the ordered log of entries;
the state after any entry is a replay of the log up to it. This module is
pure (no database, no clock): the store feeds it entries, the record file
feeds it entries, and both must give the same states and hashes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pbem.orders import (
    OrderProblem,
    OrdersError,
    parse_orders,
    turn_actions,
    validate_setup,
    validate_turn,
)
from pbem.rules import engine
from pbem.rules.actions import SetupAction, TurnAction
from pbem.rules.board import Board
from pbem.rules.dice import DiceStream
from pbem.rules.errors import RulesError
from pbem.rules.events import Event
from pbem.rules.options import Options
from pbem.rules.setupplan import play_setup
from pbem.rules.state import OVER, SETUP_PHASES, GameState
from pbem.rules.turnplan import play_turn

SETUP = "setup"
TURN = "turn"
COMMAND = "command"


@dataclass(frozen=True)
class Entry:
    """One line of the order log: what a seat did (canonical text)."""

    kind: str  # "setup" | "turn" | "command"
    seat: int | None
    text: str
    turn: int = 0
    source: str = "gm"  # "mail" | "gm" | "default" | "bot"


@dataclass(frozen=True)
class GameDefinition:
    name: str
    board: Board
    options: Options
    players: tuple[tuple[str, str], ...]  # (name, colour) by seat
    secret: bytes
    # `pbem rollback --reroll`: (first turn, secret) in the order they were made;
    # a turn's dice come from the last one whose first turn is at or before it.
    rerolls: tuple[tuple[int, bytes], ...] = ()

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


class ReplayError(Exception):
    """The log does not replay: an entry is refused by the order language or the rules."""

    def __init__(self, turn: int, seat: int | None, message: str) -> None:
        where = f"turn {turn}" if turn else "setup"
        super().__init__(f"{where}: {message}")
        self.turn = turn
        self.seat = seat


@dataclass
class Game:
    """A game being replayed: its state and the stream labels of DICE.md."""

    definition: GameDefinition
    state: GameState
    pending_setup: dict[int, list[SetupAction]] = field(default_factory=dict)
    pending_entries: list[Entry] = field(default_factory=list)


def start(definition: GameDefinition) -> tuple[Game, list[Event]]:
    """Seat the players and deal: the ``setup`` stream."""
    rng = DiceStream(definition.secret, definition.name, "setup")
    state, events = engine.new_game(
        definition.board, definition.options, definition.name, list(definition.players), rng
    )
    return Game(definition, state), events


def turn_stream(definition: GameDefinition, turn: int) -> DiceStream:
    return DiceStream(definition.secret_of_turn(turn), definition.name, f"turn:{turn}")


def setup_place_stream(definition: GameDefinition) -> DiceStream:
    """Automatic placement after a draft happens later than the deal, so it has
    a stream of its own (documented in docs/DICE-VECTORS.md)."""
    return DiceStream(definition.secret, definition.name, "setup:place")


def parse_turn(game: Game, seat: int, text: str) -> list[TurnAction]:
    """Parse and validate a turn's canonical text; raise ReplayError when refused."""
    state = game.state
    try:
        parsed = parse_orders(text, state.board)
    except OrdersError as exc:
        raise ReplayError(state.turn, seat, _first(exc.problems)) from None
    problems = validate_turn(state, seat, parsed.orders)
    if problems:
        raise ReplayError(state.turn, seat, _first(problems))
    return turn_actions(state, parsed.orders)


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


def apply(game: Game, entry: Entry, keep_before: bool = False) -> Step | None:
    """Apply one log entry; returns the step it completes, or None when a setup
    phase still waits for other players. ``keep_before`` keeps a copy of the
    state before the step (reports need it; replays do not)."""
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
        events = _guard(
            0,
            entry.seat,
            lambda: play_setup(state, game.pending_setup, setup_place_stream(definition)),
        )
        entries, game.pending_entries, game.pending_setup = game.pending_entries, [], {}
        turn = 0
        seat = None
    elif entry.kind == TURN:
        if state.phase in SETUP_PHASES or state.phase == OVER:
            raise ReplayError(state.turn, entry.seat, f"no turn to play in the {state.phase} phase")
        if entry.seat != state.current:
            raise ReplayError(state.turn, entry.seat, "orders for a seat whose turn it is not")
        turn = state.turn
        actions = parse_turn(game, entry.seat, entry.text)
        events = _guard(
            turn, entry.seat, lambda: play_turn(state, actions, turn_stream(definition, turn))
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
    return Step(turn, seat, entries, events, state, state.state_hash(), before)


def _guard(turn: int, seat: int | None, run):  # noqa: ANN001, ANN202
    try:
        return run()
    except RulesError as exc:
        raise ReplayError(turn, seat, str(exc)) from None


def _command(game: Game, entry: Entry) -> list[Event]:
    """Commands that change the game: RESIGN (a player), REMOVE (the GM)."""
    word = entry.text.strip().split()[0].upper() if entry.text.strip() else ""
    if word not in ("RESIGN", "REMOVE") or entry.seat is None:
        raise ReplayError(game.state.turn, entry.seat, f"not a game-changing command: {entry.text}")
    reason = "resigned" if word == "RESIGN" else "removed"
    return _guard(
        game.state.turn,
        entry.seat,
        lambda: engine.remove_player(
            game.state,
            entry.seat,
            reason,
        ),
    )


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
