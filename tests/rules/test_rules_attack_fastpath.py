"""attacking.attack slices its dice from the stream's decoded faces (face_cursor);
the games must be the same as when every roll goes through roll_tuple."""

from __future__ import annotations

import pytest

from pbem import native
from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.rules import combat
from pbem.rules.dice import DICE_V1, DICE_V2, DiceStream, make_stream
from pbem.rules.simulate import play_game
from tests.native_helpers import run_on_pure_engine


@pytest.mark.parametrize("dice", [DICE_V1, DICE_V2])
def test_games_same_without_the_face_cursor(monkeypatch: pytest.MonkeyPatch, dice: str) -> None:
    if native.state().compiled:
        # Compiled code calls face_cursor directly (no attribute lookup), so the
        # patch would not reach it: the same test runs on the pure engine.
        run_on_pure_engine(f"{__file__}::test_games_same_without_the_face_cursor[{dice}]")
        return
    board, options = builtin_map("classic"), load_preset("classic")
    fast = [play_game(board, options, 4, seed, keep_hashes=True, dice=dice) for seed in (1, 2, 3)]
    calls = []

    def no_cursor(self: DiceStream) -> None:
        calls.append(1)

    monkeypatch.setattr(DiceStream, "face_cursor", no_cursor)
    slow = [play_game(board, options, 4, seed, keep_hashes=True, dice=dice) for seed in (1, 2, 3)]
    assert len(calls) > 100  # the patch took effect: every attack rolled without the cursor
    assert [r.hashes for r in fast] == [r.hashes for r in slow]
    assert sum(len(r.hashes) for r in fast) > 100  # whole games, every turn compared


def test_face_cursor_and_skip() -> None:
    stream = make_stream(DICE_V2, b"k" * 32, "g", "turn:1")
    twin = make_stream(DICE_V2, b"k" * 32, "g", "turn:1")
    assert stream.face_cursor() == ((), 0)  # nothing decoded yet
    first = twin.roll_tuple(5)
    stream.roll_tuple(1)
    faces, i = stream.face_cursor()  # type: ignore[misc]
    assert faces[i : i + 4] == first[1:]
    stream.skip_faces(4)
    assert stream.roll_tuple(3) == twin.roll_tuple(3)
    stream.read(1)  # off the word boundary: no cursor
    assert stream.face_cursor() is None


def _battles(fight: object, dice_version: str, seed: int) -> list[object]:
    """Many battles from one stream (every dice count, army size and the defender's
    one-die order), each with the armies left, its Rolls and the next draw after it."""
    stream = make_stream(dice_version, seed.to_bytes(32, "big"), f"g{seed}", "turn:1")
    stream.log = []
    out: list[object] = []
    for have in (2, 3, 4, 7, 20):
        for left in (1, 2, 5, 30):
            for dice in (1, 2, 3):
                for one_die in (False, True):
                    rolls: list[object] = []
                    end = fight(stream, dice, one_die, have, left, rolls)  # type: ignore[operator]
                    out.append((end, rolls))
    out.append(stream.roll_tuple(7))
    out.append(list(stream.log))
    return out


@pytest.mark.parametrize("dice", [DICE_V1, DICE_V2])
def test_battle_from_faces_same_as_by_rolls(dice: str) -> None:
    """combat.battle (the dice sliced from the decoded faces, rolls found by code)
    gives the same Rolls, armies, stream position and logged draws as
    combat.battle_by_rolls (one combat.roll after another), over many seeds."""
    for seed in range(40):
        assert _battles(combat.battle, dice, seed) == _battles(combat.battle_by_rolls, dice, seed)


def test_battle_from_faces_off_the_word_boundary() -> None:
    """After a ``read`` the stream has no face cursor: the battle still rolls the
    same dice as one roll after another."""
    for seed in range(10):
        runs = []
        for fight in (combat.battle, combat.battle_by_rolls):
            stream = make_stream(DICE_V2, bytes([seed]) * 32, "g", "turn:2")
            stream.read(1)
            rolls: list[object] = []
            runs.append((fight(stream, 3, False, 40, 40, rolls), rolls, stream.roll_tuple(3)))
        assert runs[0] == runs[1]
