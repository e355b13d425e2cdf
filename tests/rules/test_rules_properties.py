"""Properties of whole bot games (random and greedy bots, 2 to 6 players):

- armies change only by placements and dice losses, and the events account
  for every army and card (a shadow board replays the events each turn);
- after every turn each territory has a living owner and at least one army;
- draw pile + hands + discards + removed cards is always the whole deck;
- every game ends with one winner who holds the board (neutrals aside);
- a seed gives the same chain of state hashes under any PYTHONHASHSEED.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.maps.presets import load_preset
from pbem.rules.state import ENDED
from tests.rules.support import play_checked_game

CLASSIC = load_preset("classic")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**31),
    bots=st.lists(st.sampled_from(["random", "greedy"]), min_size=1, max_size=6),
)
def test_bot_games_keep_the_invariants_and_end_with_one_winner(
    seed: int, players: int, bots: list[str]
) -> None:
    state, turns = play_checked_game(CLASSIC, players, seed, bots)
    assert state.phase == ENDED and state.win_reason == "domination"
    winner = state.winner
    assert winner is not None and state.players[winner].alive
    assert state.alive_seats() == [winner]
    neutral = state.neutral_seat
    assert all(o == winner or o == neutral for o in state.owner)
    assert turns == state.turn


HASH_CHAIN = """
import hashlib, sys
from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.rules.simulate import play_game
board = builtin_map("classic")
chain = hashlib.sha256()
for preset, players, seed, bot in [("classic", 4, 7, "random"), ("classic", 2, 8, "greedy"),
                                   ("classic", 6, 9, "greedy"), ("secret-mission", 5, 3, "random"),
                                   ("capital", 4, 4, "greedy"), ("expert", 3, 5, "random,greedy")]:
    result = play_game(board, load_preset(preset), players, seed, bot, keep_hashes=True)
    for h in result.hashes:
        chain.update(h.encode())
    chain.update(f"{result.winner}:{result.turns}".encode())
print(chain.hexdigest())
"""


def test_same_seed_same_hash_chain_under_any_hash_seed() -> None:
    digests = set()
    for hash_seed in ("0", "1", "12345"):
        env = {"PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
        out = subprocess.run(
            [sys.executable, "-c", HASH_CHAIN], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1 and len(digests.pop()) == 64
