"""The fourth replay pass (docs/PERFORMANCE.md): each shortcut gives the same bytes."""

from __future__ import annotations

import gc
import hashlib
import hmac

import pytest

from pbem.orderlog.replay import paused_gc
from pbem.rules import state as state_module
from pbem.rules.dice import DiceStream


@pytest.mark.parametrize(
    "values",
    [
        [],
        [0],
        [8, 1, 2, 31, 1023],
        [1024, 5],  # past the table
        [3, -1],  # negative
        [2**70, 7],  # a big int
        [True, 1],  # a bool is not an int here: repr says True
        (4, 5, 6),  # a tuple
    ],
)
def test_ints_writes_what_repr_writes(values: object) -> None:
    expected = (
        repr(values).replace(" ", "")
        if isinstance(values, list)
        else "[" + ",".join(map(str, values)) + "]"  # type: ignore[call-overload]
    )
    assert state_module._ints(values) == expected


def test_stream_blocks_are_hmac_sha256_of_prefix_and_counter() -> None:
    secret = bytes(range(32))
    stream = DiceStream(secret, "g\u00e9", "turn:7")
    got = stream.read(32 * 9)  # two refills of 8 blocks
    want = b"".join(
        hmac.digest(secret, "g\u00e9".encode() + b"\x00turn:7\x00" + i.to_bytes(8, "big"), "sha256")
        for i in range(9)
    )
    assert got == want
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(want).hexdigest()


def test_paused_gc_restores_the_collector() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()


def test_paused_gc_restores_the_collector_after_an_error() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()
