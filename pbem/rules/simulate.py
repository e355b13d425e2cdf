"""Whole games between bots, for tests, benchmarks and the `simulate` command.

A simulated game is a real game: the same engine, the dice of DICE.md with a
secret derived from the seed, events for every step (``play_game`` rolls v1
dice unless told otherwise; ``pbem simulate`` rolls v2 like new games, without
contributions since bots write no mail). A safety cap on
turns stops a game that does not end; it is reported as capped, never won.

Everything here is pure: no clock, no processes. Each game's result depends
only on its own seed (game ``i`` of a run has seed ``seed + i``), so
``pbem.service.ops.simulation.simulate_many`` can spread the seeds over worker
processes and time them, and the figures do not depend on how many workers
played them (``summarise`` takes the results in seed order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pbem.rules import engine, freestyle, opening, teams
from pbem.rules.board import CLASSIC_COLOURS, Board
from pbem.rules.bots import Bot, make_bot
from pbem.rules.dice import DICE_V1, DICE_V2, make_stream
from pbem.rules.options import Options
from pbem.rules.setupplan import play_setup
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES, GameState
from pbem.rules.turnplan import play_turn

DEFAULT_CAP: Final = 3000
COLOURS: Final = CLASSIC_COLOURS  # a map without colours of its own


@dataclass
class GameResult:
    seed: int
    winner: str | None  # the winner's name (a team's win: "team A (p1, p2)"), None when capped
    turns: int
    capped: bool
    final_hash: str
    hashes: list[str] = field(default_factory=list)  # state hash after each turn, when kept
    reason: str = ""  # how the game was won: domination, capitals, mission, max_turns


def game_secret(seed: int) -> bytes:
    return hashlib.sha256(f"pbem-simulate:{seed}".encode()).digest()


def arrives_next(state: GameState, secret: bytes) -> int:
    """Freestyle: which of the seats still to move sends its orders first. A
    bot game has no mail: the arrival order of each round is drawn from the
    game's secret (a hash, not the dice streams, so the dice stay the same)."""

    def draw(seat: int) -> bytes:
        return hashlib.sha256(secret + f":arrival:{state.round}:{seat}".encode()).digest()

    return min(freestyle.waiting_for(state), key=draw)


def begin_next(state: GameState, secret: bytes) -> bool:
    """Freestyle, between turns: the seat whose orders "arrive" first takes the
    next turn (``arrives_next``). False when that ended the game."""
    if state.phase == ROUND:
        engine.take_turn(state, arrives_next(state, secret))
    return state.phase != ENDED


def setup_game(
    board: Board,
    options: Options,
    players: int,
    seed: int,
    bots: list[Bot],
    dice: str = DICE_V1,
) -> GameState:
    """Create the game and play its setup phases with the bots' choices."""
    secret = game_secret(seed)
    name = f"sim-{seed}"
    colours = list(board.colours or COLOURS)
    seats = [(f"p{i + 1}", colours[i % len(colours)]) for i in range(players)]
    state, _ = opening.new_game(
        board, options, name, seats, make_stream(dice, secret, name, "setup")
    )
    place_rng = make_stream(dice, secret, name, "setup:place")
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
    dice: str = DICE_V1,
) -> GameResult:
    """One whole game; ``bot`` is a bot kind, or several joined by commas (one per seat,
    repeated round the table). ``dice``: the dice version of every stream (v2 streams
    have no contributions here: a bot game has no mail to key them with)."""
    kinds = bot.split(",")
    bots = [make_bot(kinds[seat % len(kinds)], seed * 10 + seat) for seat in range(players)]
    state = setup_game(board, options, players, seed, bots, dice)
    secret = game_secret(seed)
    hashes: list[str] = []
    while state.phase != ENDED and state.turn <= cap:
        if not begin_next(state, secret):  # (a mission complete when the turn began)
            break
        rng = make_stream(dice, secret, state.game, f"turn:{state.turn}")
        play_turn(state, bots[state.current].plan_turn(state), rng)
        if keep_hashes:
            hashes.append(state.state_hash())
    capped = state.phase != ENDED
    winner = None if capped else teams.winner_words(state)  # a team's win names the team
    return GameResult(
        seed, winner, state.turn, capped, state.state_hash(), hashes, state.win_reason
    )


# ------------------------------------------------------------------ many games
@dataclass
class SimulationSummary:
    games: int
    turns: int  # player-turns over all games
    seconds: float
    winners: dict[str, int]  # winner's name -> games won
    capped: int  # games stopped by the safety cap
    players: int = 0
    bot: str = ""
    seed: int = 0
    workers: int = 1
    reasons: dict[str, int] = field(default_factory=dict)  # how games were won -> count
    digest: str = ""  # SHA-256 over every game's final state hash, in game order
    dice: str = DICE_V2

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds if self.seconds > 0 else 0.0

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "turns": self.turns,
            "seconds": round(self.seconds, 3),
            "winners": dict(sorted(self.winners.items())),
            "capped": self.capped,
            "players": self.players,
            "bot": self.bot,
            "seed": self.seed,
            "workers": self.workers,
            "reasons": dict(sorted(self.reasons.items())),
            "turns_per_game": round(self.turns / self.games, 1) if self.games else 0.0,
            "turns_per_second": round(self.turns_per_second),
            "games_per_second": round(self.games_per_second, 1),
            "digest": self.digest,
            "dice": self.dice,
        }

    def describe(self) -> str:
        lines = [
            f"{self.games} games of {self.players} {self.bot} bots "
            f"(seeds {self.seed}..{self.seed + self.games - 1}, {self.workers} worker(s), "
            f"{self.dice})",
            f"{self.turns} player-turns, {self.turns / max(self.games, 1):.1f} per game, "
            f"{self.seconds:.2f} s: {self.turns_per_second:,.0f} turns/s, "
            f"{self.games_per_second:,.1f} games/s",
        ]
        wins = ", ".join(f"{name} {count}" for name, count in sorted(self.winners.items()))
        lines.append(f"winners: {wins or 'none'}")
        if self.reasons:
            lines.append(
                "won by: " + ", ".join(f"{r} {n}" for r, n in sorted(self.reasons.items()))
            )
        lines.append(f"capped (no winner after the cap): {self.capped}")
        lines.append(f"digest of final states: {self.digest}")
        return "\n".join(lines)


# board, options, players, bot, cap, seeds, dice version
Job = tuple[Board, Options, int, str, int, list[int], str]
Outcome = tuple[int, str | None, int, bool, str, str]  # seed, winner, turns, capped, hash, reason


def play_seeds(job: Job) -> list[Outcome]:
    """The games of ``job``'s seeds, in order (one worker's share of a run)."""
    board, options, players, bot, cap, seeds, dice = job
    out = []
    for seed in seeds:
        r = play_game(board, options, players, seed, bot, cap, dice=dice)
        out.append((seed, r.winner, r.turns, r.capped, r.final_hash, r.reason))
    return out


def check_request(options: Options, players: int, games: int, workers: int, bot: str) -> None:
    """Refuse a run that cannot be played, before any game (or process) starts."""
    if games < 1:
        raise ValueError("simulate at least one game")
    if workers < 1:
        raise ValueError("workers must be 1 or more")
    options.check_players(players)
    for kind in bot.split(","):
        make_bot(kind, 0)  # an unknown bot fails here


def summarise(
    results: Sequence[Outcome],
    seconds: float,
    players: int,
    bot: str,
    seed: int,
    workers: int,
    dice: str = DICE_V2,
) -> SimulationSummary:
    """The figures of a run from its games' outcomes, in seed order."""
    winners: dict[str, int] = {}
    reasons: dict[str, int] = {}
    digest = hashlib.sha256()
    for _, winner, _, _, final_hash, reason in results:
        if winner is not None:
            winners[winner] = winners.get(winner, 0) + 1
            reasons[reason] = reasons.get(reason, 0) + 1
        digest.update(final_hash.encode())
    return SimulationSummary(
        games=len(results),
        turns=sum(r[2] for r in results),
        seconds=seconds,
        winners=winners,
        capped=sum(1 for r in results if r[3]),
        players=players,
        bot=bot,
        seed=seed,
        workers=workers,
        reasons=reasons,
        digest=digest.hexdigest(),
        dice=dice,
    )
