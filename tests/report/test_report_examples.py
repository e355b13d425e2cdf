"""The example orders of a player's mails are their own and legal now (issue
29, point 9): read with the order parser and validated against the state
they are shown in, through whole seeded games and every setup phase."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.orders import parse_orders, validate_mail
from pbem.report.views import example_orders, setup_examples, turn_examples
from pbem.rules.actions import Attack, Fortify, Place, Trade
from pbem.rules.cards import set_value
from pbem.rules.dice import DiceStream
from pbem.rules.opening import new_game
from pbem.rules.options import Options
from pbem.rules.state import CLAIM, HQ, PLACE, GameState
from pbem.testing.sample import play_sample

COLOURS = [("alice", "red"), ("bob", "blue"), ("carol", "yellow"), ("dave", "green")]


def _check_turn(state: GameState) -> list[str]:
    seat = state.current
    lines = turn_examples(state, seat)
    parsed = parse_orders("\n".join(lines), state.board)
    problems = validate_mail(state, seat, parsed)
    assert problems == [], (state.turn, lines, problems)
    actions = [o.action for o in parsed.turn_orders]
    own = set(state.territories_of(seat))
    traded = 0
    for action in actions:
        if isinstance(action, Trade):
            traded += set_value(
                state.options,
                state.sets_traded + 1,
                [state.board.card_design(c) for c in action.cards],
            )
        elif isinstance(action, Place):
            assert {t for _, t in action.placements} <= own
            assert sum(n for n, _ in action.placements) == state.reinforcements + traded
        elif isinstance(action, Attack):
            assert action.source in own and action.target not in own
        elif isinstance(action, Fortify):
            assert {action.source, action.target} <= own
    return lines


@pytest.mark.parametrize(
    "options",
    [
        load_preset("classic"),
        load_preset("expert"),  # an army cap, unlimited fortifying
        load_preset("2016"),  # chained fortifying, cards removed
        load_preset("european-domination"),  # fixed card values
        replace(load_preset("classic"), fortify="none", card_values="none"),
    ],
    ids=["classic", "expert", "2016", "european-domination", "no-fortify-no-cards"],
)
def test_every_turn_notice_example_is_valid_for_the_mover(options: Options) -> None:
    sample = play_sample(seed=5, players=4, turns=60, options=options)
    states = [sample.start] + [r.after for r in sample.reports if r.next_seat is not None]
    shown = [_check_turn(state) for state in states]
    assert all(lines[0].startswith(("PLACE ", "TRADE ")) for lines in shown)
    forced = [lines for lines in shown if lines[0].startswith("TRADE ")]
    assert bool(forced) == (options.card_values != "none")  # a forced trade comes first
    if options.fortify == "none":
        assert not any(line.startswith("FORTIFY") for lines in shown for line in lines)
    else:
        assert any(line.startswith("FORTIFY") for lines in shown for line in lines)


def _setup(options: Options, players: int) -> GameState:
    rng = DiceStream(bytes([9]) * 32, "ex", "setup")
    state, _ = new_game(builtin_map("classic"), options, "ex", COLOURS[:players], rng)
    return state


@pytest.mark.parametrize(
    ("overrides", "players", "phase", "keywords"),
    [
        ({}, 3, PLACE, ["PLACE"]),
        ({}, 2, PLACE, ["PLACE", "NEUTRAL"]),
        ({"claim": "draft"}, 3, CLAIM, ["CLAIM"]),
        ({"claim": "turns"}, 4, CLAIM, ["CLAIM"]),
        ({"goal": "capital", "placement": "auto"}, 3, HQ, ["HQ"]),
    ],
)
def test_every_setup_example_is_valid_for_every_player(
    overrides: dict[str, str], players: int, phase: str, keywords: list[str]
) -> None:
    state = _setup(load_preset("classic").with_overrides(overrides), players)
    assert state.phase == phase
    for seat in state.order:
        lines = setup_examples(state, seat)
        assert lines == example_orders(state, seat)
        assert [line.split()[0] for line in lines] == keywords
        parsed = parse_orders("\n".join(lines), state.board)
        assert validate_mail(state, seat, parsed) == [], (seat, lines)


def test_the_examples_are_the_same_every_time() -> None:
    state = _setup(load_preset("classic"), 3)
    seat = state.order[0]
    own = [state.board.territories[t].name for t in state.territories_of(seat)]
    due = state.players[seat].to_place
    assert setup_examples(state, seat) == [
        f"PLACE {due - due // 2} {own[0]}, {due // 2} {own[1]}"  # the first two, in map order
    ]
