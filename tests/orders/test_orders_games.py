"""Whole bot games played through mail text give the same game as through the engine API.

Each bot's plan is rendered by TextBot, parsed, validated (it must pass) and
executed; the state hash after every turn must equal the one
simulate.play_game records for the same game.
"""

from __future__ import annotations

import pytest

from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.orders import (
    TextBot,
    execute_setup,
    execute_turn,
    parse_orders,
    validate_mail,
)
from pbem.rules import opening
from pbem.rules.bots import make_bot
from pbem.rules.dice import DiceStream
from pbem.rules.options import Options
from pbem.rules.simulate import COLOURS, game_secret, play_game
from pbem.rules.state import ENDED, SETUP_PHASES

BOARD = builtin_map("classic")


def play_by_mail(options: Options, players: int, seed: int, kind: str) -> tuple[list[str], int]:
    """The game of simulate.play_game, every order going through text.

    Returns the state hash after each turn and the number of orders parsed.
    """
    writers = [TextBot(make_bot(kind, seed * 10 + seat)) for seat in range(players)]
    secret = game_secret(seed)
    name = f"sim-{seed}"
    colours = list(BOARD.colours or COLOURS)
    seats = [(f"p{i + 1}", colours[i % len(colours)]) for i in range(players)]
    state, _ = opening.new_game(BOARD, options, name, seats, DiceStream(secret, name, "setup"))
    place_rng = DiceStream(secret, name, "setup:place")
    parsed = 0
    while state.phase in SETUP_PHASES:
        by_seat = {}
        for seat in state.order:
            mail = parse_orders(writers[seat].write_setup(state, seat), BOARD)
            assert validate_mail(state, seat, mail) == []
            by_seat[seat] = mail.orders
            parsed += len(mail.orders)
        state, _ = execute_setup(state, by_seat, place_rng)
    hashes = []
    while state.phase != ENDED:
        text = writers[state.current].write_turn(state)
        mail = parse_orders(text, BOARD)
        assert mail.game is not None and mail.game.value == name
        problems = validate_mail(state, state.current, mail)
        assert problems == [], (text, problems)
        parsed += len(mail.orders)
        rng = DiceStream(secret, state.game, f"turn:{state.turn}")
        state, _ = execute_turn(state, mail.orders, rng)
        hashes.append(state.state_hash())
    return hashes, parsed


CLASSIC = load_preset("classic")
GAMES = [
    (CLASSIC, players, seed, kind)
    for kind in ("random", "greedy")
    for players in (3, 4)
    for seed in (1, 2)
] + [
    (CLASSIC, 2, 3, "random"),  # neutral army: NEUTRAL orders in setup
    (Options(claim="draft"), 3, 1, "greedy"),  # CLAIM orders
    (Options(goal="capital"), 3, 1, "random"),  # HQ orders
    (Options(fortify="unlimited"), 4, 3, "random"),
    (Options(fortify="chained", card_values="fixed", territory_bonus="per_card"), 3, 2, "greedy"),
    (Options(fortify="none", max_armies=12), 3, 1, "random"),
    (Options(card_values="linear", move_in="survivors", commander=True), 4, 1, "greedy"),
]


@pytest.mark.parametrize(("options", "players", "seed", "kind"), GAMES)
def test_game_by_mail_equals_game_by_api(
    options: Options, players: int, seed: int, kind: str
) -> None:
    expected = play_game(BOARD, options, players, seed, kind, keep_hashes=True)
    assert not expected.capped
    hashes, parsed = play_by_mail(options, players, seed, kind)
    assert parsed > expected.turns  # every turn had orders
    assert hashes == expected.hashes


def test_game_where_a_bot_holds_both_wilds() -> None:
    """Text says only "Wild"; the rules offer sets with the lowest wilds held, so a
    bot holding both wilds trades the same card ids by mail as through the API."""
    expected = play_game(BOARD, Options(goal="capital"), 4, 2, "random", keep_hashes=True)
    hashes, _ = play_by_mail(Options(goal="capital"), 4, 2, "random")
    assert hashes == expected.hashes
