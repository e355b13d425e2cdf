"""Helpers of the online-settings tests (spoils, parachute, trench): hand-made
positions, orders checked as a mail is, and whole bot games played by the
simulation, then logged, replayed, written as a record and verified.

(No tests here; the module name keeps it with the rules tests it serves.)
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.orderlog import replay
from pbem.orderlog.records import Record, read_record, verify_record, write_record
from pbem.orders import parse_orders, render_orders, validate_turn
from pbem.paths import maps_dir
from pbem.rules import engine
from pbem.rules.bots import make_bot
from pbem.rules.dice import commitment
from pbem.rules.mapformat import parse_map
from pbem.rules.options import Options
from pbem.rules.simulate import COLOURS, GameResult, arrives_next, game_secret, play_game
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES, GameState
from tests.rules.support import arrange, classic, new_state, start_turn

CAP = 1500  # turns: every seeded game here ends far sooner


def position(options: Options, lands: dict[int, list[int]], armies: dict[int, int]) -> GameState:
    """Seat 0 to move on the classic map at the start of its turn, owning
    ``lands[0]``; every territory holds 1 army but those in ``armies``."""
    state = new_state(3, options)
    arrange(state, lands, armies)
    for player in state.players:
        player.cards = []
    start_turn(state, 0)
    return state


def problems(state: GameState, text: str) -> list[tuple[int, str]]:
    """(line, message) of every problem the orders' check finds."""
    found = validate_turn(state, state.current, parse_orders(text, state.board).orders)
    return [(p.line, p.message) for p in found]


@dataclass
class Played:
    result: GameResult  # the simulation's
    replayed: list[str]  # the state hash after each turn, replayed from the log
    final_hash: str  # of the replayed game
    record_text: str
    verified_steps: int
    verified_ok: bool
    verify_message: str


def bot_game(options: Options, seed: int, players: int = 3, bot: str = "greedy") -> Played:
    """One whole game of bots by the simulation (seeded); the same bots' orders
    logged as mail is (rendered, parsed, checked, played), replayed, written as
    a record, read back and verified with the secret."""
    board = classic()
    result = play_game(board, options, players, seed, bot, cap=CAP, keep_hashes=True)
    name, secret = f"sim-{seed}", game_secret(seed)
    colours = list(board.colours or COLOURS)
    seats = tuple((f"p{i + 1}", colours[i % len(colours)]) for i in range(players))
    definition = replay.GameDefinition(name, board, options, seats, secret)
    game, _ = replay.start(definition)
    kinds = bot.split(",")
    bots = [make_bot(kinds[seat % len(kinds)], seed * 10 + seat) for seat in range(players)]
    entries: list[replay.Entry] = []
    hashes: list[str | None] = []
    turn_hashes: list[str] = []

    def log(entry: replay.Entry) -> replay.Step | None:
        step = replay.apply(game, entry)
        entries.append(entry)
        hashes.append(step.state_hash if step else None)
        return step

    while game.state.phase in SETUP_PHASES:
        state = game.state
        plans = {seat: bots[seat].plan_setup(state, seat) for seat in state.order}
        for seat in list(state.order):
            log(replay.Entry("setup", seat, render_orders(plans[seat], board), 0, "bot"))
    while game.state.phase != ENDED and game.state.turn <= CAP:
        state = game.state
        if state.phase == ROUND:  # freestyle: the seat the simulation let move first
            seat = arrives_next(state, secret)
            state = engine.turn_of(state, seat)
        text = render_orders(bots[state.current].plan_turn(state), board)
        step = log(replay.Entry("turn", state.current, text, state.turn, "bot"))
        assert step is not None
        turn_hashes.append(step.state_hash)
    final = game.state
    map_text = (maps_dir() / "classic.toml").read_text(encoding="utf-8")
    assert parse_map(map_text, "classic").name == board.name
    record = Record(
        game=name,
        map_name="classic",
        map_text=map_text,
        options=options,
        players=list(seats),
        commitment=commitment(secret),
        entries=entries,
        hashes=hashes,
        secret_hex=secret.hex(),
        result=final.players[final.winner].name if final.winner is not None else "",
    )
    text = write_record(record)
    again = read_record(text, "online.pgn")
    assert again.options == options
    report = verify_record(again, secret.hex())
    return Played(
        result,
        turn_hashes,
        final.state_hash(),
        text,
        report.steps,
        report.ok,
        report.message,
    )
