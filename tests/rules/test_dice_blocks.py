"""The block path of DiceStream.roll_tuple (faces decoded once per refill) gives the dice of
the word-by-word rules of DICE.md: rejected words skipped, any alignment, any stream."""

from __future__ import annotations

import pytest

from pbem.rules.dice import DICE_V1, DICE_V2, DiceStream, _faces, make_stream

SECRET = bytes(range(32))
WORDS = [5, 0xFFFFFFFD, 7, 11, 0xFFFFFFFC, 0xFFFFFFFB, 6, 12]  # two rejected, 0xFFFFFFFB kept


def _loaded(words: list[int]) -> DiceStream:
    stream = DiceStream(SECRET, "g", "turn:1")
    stream._buf = b"".join(w.to_bytes(4, "big") for w in words)
    stream._faces = _faces(stream._buf)
    return stream


def test_rejected_words_are_skipped_by_the_block_path() -> None:
    assert _faces(_loaded(WORDS)._buf) == (6, 0, 2, 6, 0, 6, 1, 1)
    stream = _loaded(WORDS)
    stream.log = []
    assert stream.roll_tuple(3) == (6, 2, 6)  # 5 % 6 + 1, skip, 7 % 6 + 1, 11 % 6 + 1
    assert stream.position == 16
    assert stream.roll_tuple(3) == (6, 1, 1)  # skip, 0xFFFFFFFB % 6 + 1, 6 % 6 + 1, 12 % 6 + 1
    assert stream.position == 32
    assert stream.log == [(6, 5), (6, 1), (6, 5), (6, 5), (6, 0), (6, 0)]


def test_unaligned_reads_give_the_word_by_word_dice() -> None:
    a, b = DiceStream(SECRET, "g", "turn:2"), DiceStream(SECRET, "g", "turn:2")
    a.read(3)
    b.read(3)
    got = [d for _ in range(40) for d in a.roll_tuple(5)]
    want = [b.die() for _ in range(200)]
    assert got == want and a.position == b.position == 3 + 800


@pytest.mark.parametrize("version", [DICE_V1, DICE_V2])
def test_blocks_match_single_dice_across_refills(version: str) -> None:
    by_block = make_stream(version, SECRET, "g", "turn:3")
    by_die = make_stream(version, SECRET, "g", "turn:3")
    sizes = [3, 5, 2, 4, 1, 5] * 60  # crosses several refills at odd places
    got = [d for n in sizes for d in by_block.roll_tuple(n)]
    assert got == [by_die.die() for _ in range(sum(sizes))]
    assert by_block.position == by_die.position == 4 * sum(sizes)
    assert by_block.roll(4) == list(by_die.roll_tuple(4))
