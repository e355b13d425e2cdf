"""Whole games between bots, for tests, benchmarks and the `simulate` command.

A simulated game is a real game: the same engine, the HMAC dice of DICE.md
with a secret derived from the seed, events for every step. A safety cap on
turns stops a game that does not end; it is reported as capped, never won.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from pbem.rules import engine
from pbem.rules.board import Board
from pbem.rules.bots import Bot, make_bot
from pbem.rules.dice import DiceStream
from pbem.rules.options import Options
from pbem.rules.setupplan import play_setup
from pbem.rules.state import OVER, SETUP_PHASES, GameState
from pbem.rules.turnplan import play_turn

DEFAULT_CAP = 3000
COLOURS = ("red", "blue", "yellow", "green", "black", "purple")


@dataclass
class GameResult:
    seed: int
    winner: str | None  # the winner's name, None when capped
    turns: int
    capped: bool
    final_hash: str
    hashes: list[str] = field(default_factory=list)  # state hash after each turn, when kept


def game_secret(seed: int) -> bytes:
    return hashlib.sha256(f"pbem-simulate:{seed}".encode()).digest()


def setup_game(
    board: Board, options: Options, players: int, seed: int, bots: list[Bot]
) -> GameState:
    """Create the game and play its setup phases with the bots' choices."""
    secret = game_secret(seed)
    name = f"sim-{seed}"
    colours = list(board.colours or COLOURS)
    seats = [(f"p{i + 1}", colours[i % len(colours)]) for i in range(players)]
    state, _ = engine.new_game(board, options, name, seats, DiceStream(secret, name, "setup"))
    place_rng = DiceStream(secret, name, "setup:place")
    while state.phase in SETUP_PHASES:
        plans = {seat: bots[seat].plan_setup(state, seat) for seat in state.order}
        play_setup(state, plans, place_rng)
    return state


def play_game(
    board: Board,
    options: Options,
    players: int,
    seed: int,
    bot: str = "random",
    cap: int = DEFAULT_CAP,
    keep_hashes: bool = False,
) -> GameResult:
    bots = [make_bot(bot, seed * 10 + seat) for seat in range(players)]
    state = setup_game(board, options, players, seed, bots)
    secret = game_secret(seed)
    hashes: list[str] = []
    while state.phase != OVER and state.turn <= cap:
        rng = DiceStream(secret, state.game, f"turn:{state.turn}")
        play_turn(state, bots[state.current].plan_turn(state), rng)
        if keep_hashes:
            hashes.append(state.state_hash())
    capped = state.phase != OVER
    winner = None if capped else state.players[state.winner].name  # type: ignore[index]
    return GameResult(seed, winner, state.turn, capped, state.state_hash(), hashes)
