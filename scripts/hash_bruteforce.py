"""What the published state hash gives away; prints figures, asserts nothing.

    python scripts/hash_bruteforce.py [--seeds N]

For N greedy-bot games (classic map, 4 players) under two rule sets, a player tries
every candidate for what they cannot see against the hash published after a turn:

- "missions": secret missions without cards (the pile is empty all game), after turn 1;
- "cards": the default cards (traded cards go under the pile, in the open), at the
  first turn after every card dealt into the pile at the start has been drawn.

Per game: what was hidden, the tries and the seconds to find all of it from the plain
hash (hash version 1), and whether the keyed hash of version 2 gives anything (it
cannot: the same search runs through every candidate and finds nothing). The brute
force is tests/orderlog/test_state_hash_leak.py's ``recover``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbem.orderlog.replay import hash_key  # noqa: E402
from pbem.rules.options import Options  # noqa: E402
from tests.orderlog.test_state_hash_leak import played, public_view, recover  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args()
    key = hash_key(bytes(32))
    cases = (
        ("missions", Options(goal="mission", card_values="none"), True),
        ("cards", Options(), False),
    )
    print("case      seed  turn  hidden                      tries    seconds  keyed")
    for label, options, missions in cases:
        for seed in range(1, args.seeds + 1):
            found_state = None
            for state, public in played(options, seed):
                if missions or public:
                    found_state = state
                    break
            if found_state is None:
                print(f"{label:9} {seed:4}  -     (the game ended before the pile was public)")
                continue
            state = found_state
            viewer = state.current
            cards = sum(len(p.cards) for s, p in enumerate(state.players) if s != viewer)
            others = sum(1 for s, p in enumerate(state.players) if s != viewer and not p.neutral)
            hidden = f"{others} missions" if missions else f"{cards} cards in {others} hands"
            started = time.perf_counter()
            found = recover(public_view(state, viewer), viewer, state.state_hash(), missions)
            seconds = time.perf_counter() - started
            right = found is not None and all(
                found.hands[s] == state.players[s].cards
                and found.missions[s] == state.players[s].mission
                for s in found.hands
            )
            tries = f"{found.tries:>9}" if found else "not found"
            keyed = recover(public_view(state, viewer), viewer, state.keyed_hash(key), missions)
            print(
                f"{label:9} {seed:4} {state.turn:5}  {hidden:26} {tries} {seconds:9.3f}  "
                f"{'FOUND' if keyed else 'nothing'}{'' if right else '  (plain: wrong!)'}"
            )


if __name__ == "__main__":
    main()
