"""A fixed, seeded bot game turned into report inputs: for previews, fixtures and tests.

The game is a real one (simulate.setup_game, the bots, turnplan.play_turn, the
HMAC dice of DICE.md), so every mail a real game sends can be rendered from
it without a database or a mail server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pbem.maps import builtin_map
from pbem.report.context import OUT, PLAYING, WINNER, GameInfo, PlayerInfo, TurnReport
from pbem.rules.board import Board
from pbem.rules.bots import make_bot
from pbem.rules.dice import DICE_VERSION, DiceStream, commitment
from pbem.rules.options import Options
from pbem.rules.simulate import begin_next, game_secret, setup_game
from pbem.rules.state import ENDED, GameState
from pbem.rules.turnplan import play_turn

START = datetime(2025, 3, 3, 17, 0, tzinfo=UTC)  # a Monday, 18:00 in Paris
TURN_HOURS = 24


@dataclass
class SampleGame:
    game: GameInfo
    start: GameState  # after setup: the first turn begun
    reports: list[TurnReport] = field(default_factory=list)
    out_turns: dict[int, int] = field(default_factory=dict)

    @property
    def final(self) -> GameState:
        return self.reports[-1].after if self.reports else self.start


def deadline(turn: int) -> datetime:
    return START + timedelta(hours=TURN_HOURS * turn)


def game_info(state: GameState, seed: int, revealed: bool = False) -> GameInfo:
    secret = game_secret(seed)
    players = tuple(
        PlayerInfo(
            seat=seat,
            name=p.name,
            colour=p.colour,
            address=f"{p.name}@players.example",
            status=WINNER if state.winner == seat else (PLAYING if p.alive else OUT),
        )
        for seat, p in enumerate(state.players)
        if not p.neutral
    )
    return GameInfo(
        name=state.game,
        title=state.board.title,
        board=state.board,
        options=state.options,
        commitment=commitment(secret),
        secret_hex=secret.hex() if revealed else None,
        dice_version=DICE_VERSION,
        players=players,
        gm_address="gm@pbem.example",
        timezone="Europe/Paris",
        from_address="pbem@pbem.example",
        preset="classic",
    )


def play_sample(
    seed: int = 7,
    players: int = 4,
    turns: int | None = 8,
    bot: str = "greedy",
    board: Board | None = None,
    options: Options | None = None,
) -> SampleGame:
    """Play ``turns`` turns (None: to the end) and keep every turn's report inputs."""
    board = board or builtin_map("classic")
    options = options or Options()
    bots = [make_bot(bot, seed * 10 + seat) for seat in range(players)]
    state = setup_game(board, options, players, seed, bots)
    secret = game_secret(seed)
    sample = SampleGame(game_info(state, seed), state.copy())
    while state.phase != ENDED and (turns is None or len(sample.reports) < turns):
        if not begin_next(state, secret):  # freestyle: the first to "arrive" moves
            break
        before = state.copy()
        turn, seat = state.turn, state.current
        rng = DiceStream(secret, state.game, f"turn:{turn}")
        events = play_turn(state, bots[seat].plan_turn(state), rng)
        for s, p in enumerate(state.players):
            if before.players[s].alive and not p.alive:
                sample.out_turns[s] = turn
        next_seat = None if state.phase == ENDED else state.current
        sample.reports.append(
            TurnReport(
                game=game_info(state, seed),
                turn=turn,
                seat=seat,
                events=tuple(events),
                before=before,
                after=state.copy(),
                state_hash=state.state_hash(),
                deadline=None if next_seat is None else deadline(turn + 1),
                next_seat=next_seat,
            )
        )
    sample.game = game_info(state, seed, revealed=state.phase == ENDED)
    return sample
