"""Dice cost per player-turn, pbem-dice-v1 against pbem-dice-v2; prints figures, asserts nothing.

    python scripts/bench/dice.py [--games N] [--runs N]

N games of greedy bots (classic rules and map) are played once to learn what each
player-turn draws. Then, for every player-turn, the bench builds that turn's stream
(v2: hashing the turn's orders as the contribution, as the service does) and draws the
same numbers again (a die for each uniform(6), uniform(n) otherwise). Two figures per
version, each the best of the runs in microseconds per player-turn, and their ratios:
"stream", building the stream and producing the bytes the turn reads (4 a draw; the rare
rejected word is left out), the cryptographic cost; "stream and draws", with the Python
work of turning bytes into dice, which is the same code in both versions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pbem.maps import builtin_map  # noqa: E402
from pbem.maps.presets import load_preset  # noqa: E402
from pbem.orderlog import replay  # noqa: E402
from pbem.orders import render_orders  # noqa: E402
from pbem.rules.bots import make_bot  # noqa: E402
from pbem.rules.dice import DICE_V1, DICE_V2, contribution, make_stream  # noqa: E402
from pbem.rules.state import ENDED, SETUP_PHASES  # noqa: E402

SECRET = bytes(range(32))
PLAYERS = (("ann", "red"), ("bob", "blue"), ("cat", "yellow"), ("dan", "green"))

Turn = tuple[str, str, list[int]]  # (label, the turn's canonical orders, n of each draw)


def play(seed: int) -> tuple[str, list[Turn]]:
    """One bot game; the draws of each of its player-turns."""
    board = builtin_map("classic")
    name = f"bench-{seed}"
    definition = replay.GameDefinition(
        name, board, load_preset("classic"), PLAYERS, SECRET, DICE_V1
    )
    game, _ = replay.start(definition, log_draws=True)
    bots = [make_bot("greedy", seed * 10 + seat) for seat in range(len(PLAYERS))]
    while game.state.phase in SETUP_PHASES:
        for seat in list(game.state.order):
            text = render_orders(bots[seat].plan_setup(game.state, seat), board)
            replay.apply(game, replay.Entry("setup", seat, text, 0, "bot"))
    while game.state.phase != ENDED and game.state.turn < 500:
        state = game.state
        text = render_orders(bots[state.current].plan_turn(state), board)
        replay.apply(game, replay.Entry("turn", state.current, text, state.turn, "bot"))
    assert game.draws is not None
    turns = [
        (d.label, d.entries[0].text, [n for n, _ in d.log])
        for d in game.draws
        if d.label.startswith("turn:")
    ]
    return name, turns


def cost(version: str, games: list[tuple[str, list[Turn]]], draw: bool) -> float:
    """Seconds to build every turn's stream and read (or draw) what the turn drew."""
    start = time.perf_counter()
    for name, turns in games:
        for label, text, draws in turns:
            hashes = (contribution(text),) if version == DICE_V2 else ()
            stream = make_stream(version, SECRET, name, label, hashes)
            if not draw:
                stream.read(4 * len(draws))
                continue
            die, uniform = stream.die, stream.uniform
            for n in draws:
                if n == 6:
                    die()
                else:
                    uniform(n)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    games = [play(seed) for seed in range(1, args.games + 1)]
    turns = sum(len(t) for _, t in games)
    draws = sum(len(d) for _, t in games for _, _, d in t)
    print(f"{args.games} games, {turns} player-turns, {draws} draws ({draws / turns:.1f} a turn)")
    for title, draw in (("stream", False), ("stream and draws", True)):
        best = {}
        for version in (DICE_V1, DICE_V2):
            seconds = min(cost(version, games, draw) for _ in range(args.runs))
            best[version] = seconds / turns * 1e6
            print(f"{title}, {version}: {best[version]:.1f} us per player-turn")
        print(f"{title}: v2 is {best[DICE_V1] / best[DICE_V2]:.1f} times as fast as v1")


if __name__ == "__main__":
    main()
