"""The pbem-dice-v1 stream against published vectors (docs/DICE-VECTORS.md).

Every vector is checked twice: against a literal (so a change of the implementation
shows) and against a deliberately naive re-implementation written here straight from the
specification text (so a literal copied from a wrong implementation shows too).
"""

from __future__ import annotations

import hashlib
import hmac

import pytest

from pbem.rules.dice import (
    DICE_VERSION,
    DiceStream,
    commitment,
    new_secret,
    setup_stream,
    stream_for_turn,
)

SECRET = bytes(range(32))
GAME = "world-1"

# ---------------------------------------------------------------- the naive reference


def naive_stream(secret: bytes, game: str, label: str, length: int) -> bytes:
    """The first ``length`` bytes: block i = HMAC-SHA256(secret, game 0x00 label 0x00 i)."""
    out = b""
    i = 0
    while len(out) < length:
        msg = game.encode("utf-8") + b"\x00" + label.encode("utf-8") + b"\x00"
        msg += i.to_bytes(8, "big")
        out += hmac.new(secret, msg, hashlib.sha256).digest()
        i += 1
    return out[:length]


class NaiveDraws:
    """uniform / die / shuffle exactly as DICE.md words them, over a long naive stream."""

    def __init__(self, secret: bytes, game: str, label: str) -> None:
        self.data = naive_stream(secret, game, label, 4096)
        self.offset = 0

    def uniform(self, n: int) -> int:
        while True:
            u = int.from_bytes(self.data[self.offset : self.offset + 4], "big")
            self.offset += 4
            if u < 2**32 - (2**32 % n):
                return u % n

    def die(self) -> int:
        return self.uniform(6) + 1

    def shuffle(self, items: list) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.uniform(i + 1)
            items[i], items[j] = items[j], items[i]


# ---------------------------------------------------------------- the published vectors

FIRST_64_HEX = (
    "697abb3492125d3f33f4f75f9b0183adc91359f20601c5292b43b0df3eebe46b"
    "4d0c47970312a93f1a62ef569adeceac6fbcbb3f29034e177b1e4b85addd250a"
)
FIRST_20_DICE = [5, 6, 2, 2, 3, 6, 6, 6, 6, 2, 3, 5, 4, 2, 2, 1, 4, 1, 6, 6]
SHUFFLED_10 = [4, 1, 8, 3, 9, 2, 0, 7, 5, 6]
SETUP_FIRST_32_HEX = "01f8ef0a2350f861c7b71824f187224ea9f62d8bc5ab5d956c265f0203049c20"
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"

# Rejection: with n = 2**31 + 1 every u >= 2**31 + 1 is rejected (limit = 2**32 - (2**31 - 1)).
# Stream "turn:4" starts 0x8bc624dd 0xcbacf05c 0xd422e61a 0x2f3e28a0: three rejections,
# then 0x2f3e28a0 = 792602784 is taken, 16 bytes consumed.
REJECT_N = 2**31 + 1
REJECT_TURN = 4
REJECT_FIRST_U = [0x8BC624DD, 0xCBACF05C, 0xD422E61A, 0x2F3E28A0]
REJECT_RESULT = 792602784


def test_version_tag() -> None:
    assert DICE_VERSION == "pbem-dice-v1"


def test_first_64_bytes() -> None:
    stream = stream_for_turn(SECRET, GAME, 1)
    data = stream.read(64)
    assert data.hex() == FIRST_64_HEX
    assert naive_stream(SECRET, GAME, "turn:1", 64).hex() == FIRST_64_HEX
    assert stream.position == 64


def test_reads_of_any_size_give_the_same_bytes() -> None:
    stream = stream_for_turn(SECRET, GAME, 1)
    pieces = [stream.read(n) for n in (0, 1, 3, 5, 7, 31, 17)]
    assert b"".join(pieces).hex() == FIRST_64_HEX[: 2 * 64]
    assert stream.position == 64
    # far past the first refill: 1000 bytes read one at a time equal one read
    one_by_one = b"".join(stream.read(1) for _ in range(1000))
    assert one_by_one == naive_stream(SECRET, GAME, "turn:1", 1064)[64:]


def test_first_20_dice() -> None:
    stream = stream_for_turn(SECRET, GAME, 1)
    assert stream.roll(20) == FIRST_20_DICE
    assert stream.position == 80  # no rejection among these: 20 draws of 4 bytes
    naive = NaiveDraws(SECRET, GAME, "turn:1")
    assert [naive.die() for _ in range(20)] == FIRST_20_DICE


def test_die_rejection_limit_is_the_specs() -> None:
    # die() inlines uniform(6); no known stream rejects a die (4 in 2**32), so check the limit
    from pbem.rules import dice

    assert dice._DIE_LIMIT == 2**32 - (2**32 % 6) == 2**32 - 4


def test_die_and_roll_draw_the_same_sequence() -> None:
    by_die = stream_for_turn(SECRET, GAME, 1)
    by_roll = stream_for_turn(SECRET, GAME, 1)
    by_uniform = stream_for_turn(SECRET, GAME, 1)
    naive = NaiveDraws(SECRET, GAME, "turn:1")
    dice = [by_die.die() for _ in range(600)]  # crosses several buffer refills
    assert [d for _ in range(200) for d in by_roll.roll(3)] == dice
    assert [by_uniform.uniform(6) + 1 for _ in range(600)] == dice
    assert [naive.die() for _ in range(600)] == dice
    assert by_die.position == by_roll.position == by_uniform.position == naive.offset


def test_shuffle_of_ten() -> None:
    items = list(range(10))
    stream_for_turn(SECRET, GAME, 1).shuffle(items)
    assert items == SHUFFLED_10
    naive_items = list(range(10))
    NaiveDraws(SECRET, GAME, "turn:1").shuffle(naive_items)
    assert naive_items == SHUFFLED_10


def test_shuffle_of_short_lists_draws_nothing() -> None:
    for items in ([], ["only"]):
        stream = stream_for_turn(SECRET, GAME, 1)
        before = list(items)
        stream.shuffle(items)
        assert items == before
        assert stream.position == 0


def test_uniform_rejection_is_exercised() -> None:
    # The vector really does hit the rejection branch: the first three u are over the limit.
    raw = stream_for_turn(SECRET, GAME, REJECT_TURN).read(16)
    us = [int.from_bytes(raw[i : i + 4], "big") for i in range(0, 16, 4)]
    assert us == REJECT_FIRST_U
    limit = 2**32 - 2**32 % REJECT_N
    assert limit == 2**31 + 1
    assert [u >= limit for u in us] == [True, True, True, False]

    stream = stream_for_turn(SECRET, GAME, REJECT_TURN)
    assert stream.uniform(REJECT_N) == REJECT_RESULT == us[3] % REJECT_N
    assert stream.position == 16
    naive = NaiveDraws(SECRET, GAME, f"turn:{REJECT_TURN}")
    assert naive.uniform(REJECT_N) == REJECT_RESULT
    assert naive.offset == 16


def test_uniform_rejection_in_the_middle_of_turn_1() -> None:
    # u0 = 0x697abb34 is kept; u1, u3, u4 are rejected: 3 results from 6 draws.
    stream = stream_for_turn(SECRET, GAME, 1)
    assert [stream.uniform(REJECT_N) for _ in range(3)] == [1769650996, 871692127, 100779305]
    assert stream.position == 24
    naive = NaiveDraws(SECRET, GAME, "turn:1")
    assert [naive.uniform(REJECT_N) for _ in range(3)] == [1769650996, 871692127, 100779305]


def test_uniform_bounds() -> None:
    stream = stream_for_turn(SECRET, GAME, 1)
    assert stream.uniform(1) == 0  # still consumes a draw, as the spec reads
    assert stream.position == 4
    assert stream.uniform(2**32) == 0x92125D3F  # never rejects: u itself
    naive = NaiveDraws(SECRET, GAME, "turn:1")
    assert [naive.uniform(1), naive.uniform(2**32)] == [0, 0x92125D3F]
    for bad in (0, -1, 2**32 + 1, 2.0, True, "6"):
        with pytest.raises(ValueError, match="uniform"):
            stream.uniform(bad)  # type: ignore[arg-type]
    assert stream.position == 8  # bad calls consumed nothing


def test_uniform_matches_naive_for_many_bounds() -> None:
    bounds = [2, 3, 5, 6, 7, 10, 42, 1000, 2**16 + 1, 3 * 2**30, 2**31 + 1, 2**32 - 1]
    stream = stream_for_turn(SECRET, GAME, 7)
    naive = NaiveDraws(SECRET, GAME, "turn:7")
    assert [stream.uniform(n) for n in bounds * 5] == [naive.uniform(n) for n in bounds * 5]
    assert stream.position == naive.offset


def test_setup_stream_vector() -> None:
    stream = setup_stream(SECRET, GAME)
    assert stream.label == "setup"
    assert stream.read(32).hex() == SETUP_FIRST_32_HEX
    assert naive_stream(SECRET, GAME, "setup", 32).hex() == SETUP_FIRST_32_HEX


def test_labels_and_games_give_different_streams() -> None:
    def head(game: str, label: str) -> bytes:
        return DiceStream(SECRET, game, label).read(32)

    heads = {
        head(GAME, "setup"),
        head(GAME, "turn:1"),
        head(GAME, "turn:2"),
        head(GAME, "turn:10"),
        head("world-2", "turn:1"),
        head("world-1x", "turn:1"),
        head(GAME, "turn:1x"),
    }
    assert len(heads) == 7
    other_secret = DiceStream(bytes(range(1, 33)), GAME, "turn:1").read(32)
    assert other_secret not in heads
    assert stream_for_turn(SECRET, GAME, 2).label == "turn:2"
    assert stream_for_turn(SECRET, GAME, 2).read(32) == head(GAME, "turn:2")


def test_separator_keeps_game_and_label_apart() -> None:
    # "ab" + "c" and "a" + "bc" must not collide: the NUL between them is part of the message.
    assert DiceStream(SECRET, "ab", "c").read(32) != DiceStream(SECRET, "a", "bc").read(32)
    with pytest.raises(ValueError, match="NUL"):
        DiceStream(SECRET, "a\x00b", "c")
    with pytest.raises(ValueError, match="NUL"):
        DiceStream(SECRET, "a", "b\x00c")


def test_non_ascii_names_are_utf8() -> None:
    stream = DiceStream(SECRET, "Königsberg", "turn:1")
    assert stream.read(40) == naive_stream(SECRET, "Königsberg", "turn:1", 40)


def test_commitment_is_sha256_hex() -> None:
    assert commitment(SECRET) == COMMITMENT
    assert commitment(SECRET) == hashlib.sha256(SECRET).hexdigest()


def test_new_secret() -> None:
    first, second = new_secret(), new_secret()
    assert isinstance(first, bytes) and len(first) == 32
    assert first != second
    assert len(commitment(first)) == 64


def test_bad_secret_and_turn_are_refused_without_echoing_the_secret() -> None:
    for bad in (b"short", bytes(33), "x" * 32, None):
        with pytest.raises(ValueError, match="exactly 32 bytes") as info:
            DiceStream(bad, GAME, "turn:1")  # type: ignore[arg-type]
        assert "short" not in str(info.value)
    with pytest.raises(ValueError, match="exactly 32 bytes"):
        commitment(b"short")
    for turn in (0, -3, True):
        with pytest.raises(ValueError, match="turns are numbered"):
            stream_for_turn(SECRET, GAME, turn)


def test_bad_counts_are_refused() -> None:
    stream = stream_for_turn(SECRET, GAME, 1)
    with pytest.raises(ValueError, match="roll"):
        stream.roll(-1)
    with pytest.raises(ValueError, match="read"):
        stream.read(-1)
    assert stream.roll(0) == []
    assert stream.position == 0
