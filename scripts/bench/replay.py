"""Benchmark `pbem verify`: replay with verification of an exported long game.

    python scripts/bench/replay.py                # longest of seeds 1..20, 4 greedy bots
    python scripts/bench/replay.py --seed 8 --repeat 20 --profile

The game: 4 greedy bots on the classic map, full classic rules. The longest
of the simulated games of seeds 1..N is picked (``--seed`` picks one), then
played again through the service layer (TextBot mails -> parse -> validate ->
log -> adjudicate -> snapshot) into a temporary SQLite database, checked
against the engine-only simulation of the same seed (same final state hash),
and exported as a record file (its secret is in it: the game is over).

Timed: read the record file, parse it (``read_record``), and verify it
(``verify_record``: the commitment, then every step replayed through the
order parser, the validator and the engine, its state hash computed and
compared with the one in the record). Prints player-turns per second (best
and median of ``--repeat`` runs), the game length and the time, and a
breakdown of where the time goes; ``--profile`` adds the top functions by
cProfile. Exits 1 if the record does not verify or the games disagree.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.maps import builtin_map  # noqa: E402
from pbem.maps.presets import load_preset  # noqa: E402
from pbem.orderlog import replay  # noqa: E402
from pbem.orderlog.records import definition_of, read_record, verify_record  # noqa: E402
from pbem.orders import TextBot, parse_orders  # noqa: E402
from pbem.orders.validate import checked_turn  # noqa: E402
from pbem.rules.bots import make_bot  # noqa: E402
from pbem.rules.dice import DICE_V1  # noqa: E402
from pbem.rules.simulate import COLOURS, game_secret, play_game  # noqa: E402
from pbem.rules.turnplan import play_turn  # noqa: E402
from pbem.service.play.archive import export_record  # noqa: E402
from pbem.service.play.games import PlayerSpec, create_game, find_game, load, players_of, submit  # noqa: E402
from pbem.store import init_db, session_scope  # noqa: E402

PLAYERS = 4
TARGET = 10_000  # player-turns per second


def longest_seed(first: int, count: int) -> tuple[int, int, str]:
    """(seed, turns, final hash) of the longest engine-only game among the seeds."""
    board, options = builtin_map("classic"), load_preset("classic")
    games = [play_game(board, options, PLAYERS, s, "greedy") for s in range(first, first + count)]
    if any(g.capped for g in games):
        raise SystemExit("FAIL: a simulated game was capped without a winner")
    best = max(games, key=lambda g: (g.turns, -g.seed))
    return best.seed, best.turns, best.final_hash


def play_through_service(
    seed: int, folder: Path, dice_version: str = DICE_V1
) -> tuple[str, int, str, float]:
    """The simulated game of ``seed`` played again as mail text through the service.

    Returns the exported record, the turns played, the final state hash and the seconds."""
    engine = init_db(f"sqlite:///{folder / 'bench.db'}")
    name = f"sim-{seed}"
    colours = list(builtin_map("classic").colours or COLOURS)
    specs = [PlayerSpec(f"p{i + 1}", f"p{i + 1}@example.org", colours[i]) for i in range(PLAYERS)]
    with session_scope(engine) as session:
        # v1 dice: the engine-only simulation has no orders text to key v2 streams with
        create_game(session, name, specs, secret=game_secret(seed), dice_version=dice_version)
    writers = [TextBot(make_bot("greedy", seed * 10 + seat)) for seat in range(PLAYERS)]
    turns = 0
    started = time.perf_counter()
    while True:
        with session_scope(engine) as session:
            game = find_game(session, name)
            state = load(session, game).state
            players = players_of(session, game)
            if game.phase == "over":
                break
            if game.phase == "setup":
                for seat in state.order:
                    outcome = submit(
                        session, game, players[seat], writers[seat].write_setup(state, seat)
                    )
                    assert outcome.accepted, outcome.problems
            else:
                text = writers[state.current].write_turn(state)
                outcome = submit(session, game, players[state.current], text)
                assert outcome.accepted, outcome.problems
                turns += 1
    seconds = time.perf_counter() - started
    with session_scope(engine, write=False) as session:
        record = export_record(session, find_game(session, name))
    engine.dispose()
    return record, turns, state.state_hash(), seconds


def cold_caches() -> None:
    """Forget what earlier runs left in the process: parsed maps, the tokens of lines
    and the parser's lines read before (a `pbem verify` starts with none of them)."""
    from pbem.orders import lexer, parser
    from pbem.rules import mapformat

    mapformat._BOARDS.clear()
    lexer._tokenize.cache_clear()
    parser._NAMES.clear()
    mapformat._fold.cache_clear()


def time_verify(path: Path, secret_hex: str, steps: int, warm: bool = False) -> float:
    """One timed run: file -> parser -> engine -> hashes compared. Returns seconds.
    The caches start empty, as in a new process, unless ``warm``."""
    if not warm:
        cold_caches()
    started = time.perf_counter()
    record = read_record(path.read_text(encoding="utf-8"), str(path))
    report = verify_record(record, secret_hex)
    seconds = time.perf_counter() - started
    if not report.ok or report.steps != steps:
        raise SystemExit(f"FAIL: the record does not verify: {report.message}")
    return seconds


def time_minimal_parse(path: Path) -> float:
    """The baseline: read the file and its entries, and cut every turn's orders into
    words (the least any parser does). Returns seconds."""
    started = time.perf_counter()
    record = read_record(path.read_text(encoding="utf-8"), str(path))
    words = 0
    for entry in record.entries:
        if entry.kind == "turn":
            for line in entry.text.splitlines():
                words += len(line.split())
    seconds = time.perf_counter() - started
    if not words:
        raise SystemExit("FAIL: the record has no orders")
    return seconds


def breakdown(path: Path, secret_hex: str) -> dict[str, float]:
    """Seconds spent in each stage of one verification, measured stage by stage
    (caches cold at the start, as in a new process)."""
    cold_caches()
    text = path.read_text(encoding="utf-8")
    t0 = time.perf_counter()
    record = read_record(text)
    t1 = time.perf_counter()
    definition = definition_of(record, bytes.fromhex(secret_hex))
    t2 = time.perf_counter()
    game, _ = replay.start(definition)
    parse = validate = engine = hashing = 0.0
    for entry in record.entries:
        if entry.kind != "turn":
            replay.apply(game, entry)
            continue
        state = game.state
        assert entry.seat is not None, "a turn entry names its seat"
        a = time.perf_counter()
        parsed = parse_orders(entry.text, state.board)
        b = time.perf_counter()
        problems, actions = checked_turn(state, entry.seat, parsed.orders)
        c = time.perf_counter()
        assert not problems, problems
        play_turn(state, actions, replay.turn_stream(definition, state.turn))
        d = time.perf_counter()
        state.state_hash()
        e = time.perf_counter()
        parse += b - a
        validate += c - b
        engine += d - c
        hashing += e - d
    return {
        "read_record (headers, entries)": t1 - t0,
        "parse the map": t2 - t1,
        "parse the orders": parse,
        "validate the orders": validate,
        "engine (play_turn, dice)": engine,
        "state hash (canonical JSON + SHA-256)": hashing,
    }


def time_process(path: Path, secret_hex: str) -> float:
    """CPU seconds (user + system) of one new `python -m pbem verify FILE --secret HEX`
    process: start-up, imports and the replay, as a user runs it."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pbem", "verify", str(path), "--secret", secret_hex],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: pbem verify: {done.stdout}{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def profile(path: Path, secret_hex: str, steps: int, top: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    time_verify(path, secret_hex, steps)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, help="play this seed (default: the longest game)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds 1..N to pick the longest from")
    parser.add_argument("--repeat", type=int, default=10, help="timed verifications")
    parser.add_argument("--profile", action="store_true", help="cProfile one verification")
    parser.add_argument(
        "--warm", action="store_true", help="keep the caches of earlier runs (default: cold)"
    )
    parser.add_argument("--top", type=int, default=25, help="functions shown by --profile")
    parser.add_argument(
        "--process", type=int, default=0, help="also run `pbem verify` in N new processes"
    )
    parser.add_argument("--keep", type=Path, help="also write the record to this file")
    args = parser.parse_args()

    if args.seed is None:
        seed, turns, final_hash = longest_seed(1, args.seeds)
        print(f"game: seed {seed}, the longest of seeds 1..{args.seeds}: {turns} player-turns")
    else:
        seed = args.seed
        result = play_game(builtin_map("classic"), load_preset("classic"), PLAYERS, seed, "greedy")
        turns, final_hash = result.turns, result.final_hash
        print(f"game: seed {seed}: {turns} player-turns")

    with tempfile.TemporaryDirectory(prefix="pbem-bench-") as tmp:
        folder = Path(tmp)
        text, played, service_hash, seconds = play_through_service(seed, folder)
        print(
            f"played through the service (SQLite): {played} turns in {seconds:.2f} s, "
            f"{played / seconds:,.0f} turns/s"
        )
        if (played, service_hash) != (turns, final_hash):
            print("FAIL: the service game differs from the engine-only simulation of the seed")
            return 1
        path = folder / f"sim-{seed}.pgn"
        path.write_text(text, encoding="utf-8")
        if args.keep:
            args.keep.write_text(text, encoding="utf-8")
        record = read_record(text)
        secret_hex = record.secret_hex
        assert secret_hex is not None, "a finished game's record carries its secret"
        steps = sum(1 for h in record.hashes if h)
        print(
            f"record: {path.stat().st_size:,} bytes, {len(record.entries)} log entries, "
            f"{steps} steps with a hash (the setup, then {turns} turns)"
        )

        time_verify(path, secret_hex, steps)  # warm-up: imports, caches
        runs = [time_verify(path, secret_hex, steps, args.warm) for _ in range(args.repeat)]
        best, median = min(runs), statistics.median(runs)
        print(
            f"replay with verification, file -> parser -> engine -> hashes compared, "
            f"{args.repeat} runs:"
        )
        print(f"  best   {best * 1000:8.1f} ms  {turns / best:10,.0f} turns/s")
        print(f"  median {median * 1000:8.1f} ms  {turns / median:10,.0f} turns/s")
        print(f"  game length {turns} player-turns ({steps} steps)")
        verdict = "met" if turns / median >= TARGET else "NOT met"
        print(f"  target {TARGET:,} turns/s: {verdict}")
        bare = statistics.median(time_minimal_parse(path) for _ in range(max(3, args.repeat)))
        print(
            f"baseline, a minimal parse (read the record, split every order line into words): "
            f"{bare * 1000:.1f} ms, {turns / bare:,.0f} turns/s"
        )
        print(f"ratio replay / minimal parse   {median / bare:.1f}x")

        if args.process:
            cpu = sorted(time_process(path, secret_hex) for _ in range(args.process))
            print(
                f"`python -m pbem verify` in a new process, {args.process} runs, CPU seconds "
                f"(start-up and imports included): best {cpu[0]:.3f} s, "
                f"median {statistics.median(cpu):.3f} s, "
                f"{turns / statistics.median(cpu):,.0f} turns per CPU-second"
            )
        parts = breakdown(path, secret_hex)
        total = sum(parts.values())
        print("where the time goes (one run, stage by stage):")
        for label, part in parts.items():
            print(f"  {label:<40}{part * 1000:8.1f} ms  {100 * part / total:5.1f} %")
        if args.profile:
            print(profile(path, secret_hex, steps, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
