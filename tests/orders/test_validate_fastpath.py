"""validate._TurnCheck.attack tells an ATTACK's problems only when one of its checks
fails: the short test in front of them must pass exactly the attacks that have none."""

from __future__ import annotations

import itertools
from pathlib import Path

from pbem.orderlog import replay
from pbem.orderlog.records import definition_of, read_record
from pbem.orders.model import Order
from pbem.orders.validate import _TurnCheck
from pbem.rules.actions import (
    MOVE_MIN,
    UNTIL_CONQUERED,
    Amount,
    AmountKind,
    Attack,
    Until,
    UntilKind,
)
from pbem.rules.state import GameState

RECORD = Path(__file__).parents[1] / "data" / "records" / "greedy-seed3-v1.pgn"


def states() -> list[GameState]:
    """The state before a few turns of a pinned game."""
    record = read_record(RECORD.read_text(encoding="utf-8"))
    assert record.secret_hex is not None
    game, _ = replay.start(definition_of(record, bytes.fromhex(record.secret_hex)))
    found = []
    for n, entry in enumerate(record.entries):
        if entry.kind == "turn" and n % 15 == 5:
            found.append(game.state.copy())
        replay.apply(game, entry)
    return found


def test_the_short_test_passes_exactly_the_attacks_without_a_problem() -> None:
    untils = [UNTIL_CONQUERED, Until(UntilKind.LEFT, 2), Until(UntilKind.ROLLS, 0)]
    moves = [
        MOVE_MIN,
        Amount(AmountKind.ALL),
        Amount(AmountKind.N, 0),
        Amount(AmountKind.ALL_BUT, 1),
    ]
    passed = told = 0
    for state in states():
        seat = state.current
        n = len(state.board.territories)
        for source, target in itertools.product(range(n), repeat=2):
            for dice, reroll, until, move in itertools.product(
                (0, 1, 3, 4), (False, True), untils, moves
            ):
                if (dice, reroll, until, move) != (3, False, UNTIL_CONQUERED, MOVE_MIN) and (
                    (source + target) % 7
                ):
                    continue  # every pair with the defaults, a seventh with the rest
                action = Attack(source, target, dice, until, move, reroll)
                order = Order(action, 1, 1, "ATTACK ...", (8, 20))
                fast = _TurnCheck(state, seat)
                fast.taken.add(5)  # an earlier ATTACK took territory 5
                full = _TurnCheck(state, seat)
                full.taken.add(5)
                fast.attack(order, action)
                full.attack_problems(order, action)
                assert fast.problems == full.problems, action
                assert fast.actions == [action]
                passed += not fast.problems
                told += bool(fast.problems)
    assert passed > 100 and told > 10_000
