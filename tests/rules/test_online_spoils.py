"""Spoils of the online sites (docs/RULES.md, "Online settings"): capped
escalation (``card_value_cap``) and flat rate (the preset ``flat-rate``:
``card_values = fixed`` with ``fixed_mixed_set = true``), exact values, every
place a set's worth is used, the options' combinations, records, bot games."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import parse_orders, turn_actions
from pbem.report.views import sets_view
from pbem.rules import engine
from pbem.rules.actions import Place, Trade
from pbem.rules.bots import make_bot
from pbem.rules.cards import set_value
from pbem.rules.dice import DiceStream
from pbem.rules.errors import OptionsError
from pbem.rules.events import CardsTraded
from pbem.rules.options import QUIET_DEFAULTS, Options
from pbem.rules.optionwords import WORDS
from pbem.rules.simulate import setup_game
from pbem.rules.state import ENDED, GameState
from pbem.rules.turnplan import play_turn
from tests.rules.online_support import bot_game, position, problems
from tests.rules.support import ScriptedDice, classic

ESCALATING = Options()
CAP_15 = Options(card_value_cap=15)


def values(options: Options, count: int = 12) -> list[int]:
    return [set_value(options, n, []) for n in range(1, count + 1)]


# ----------------------------------------------------------------- the values
def test_capped_escalation_rises_to_the_cap_and_stays() -> None:
    assert values(CAP_15) == [4, 6, 8, 10, 12, 15, 15, 15, 15, 15, 15, 15]
    assert values(Options(card_value_cap=30)) == [4, 6, 8, 10, 12, 15, 20, 25, 30, 30, 30, 30]
    assert values(Options(card_value_cap=22)) == [4, 6, 8, 10, 12, 15, 20, 22, 22, 22, 22, 22]
    assert values(Options(card_value_cap=4)) == [4] * 12
    assert values(Options(card_values="linear", card_value_cap=10)) == [
        4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 10, 10,
    ]  # fmt: skip
    # no cap (the default): as before
    assert values(ESCALATING) == [4, 6, 8, 10, 12, 15, 20, 25, 30, 35, 40, 45]
    assert load_preset("capped-escalation").card_value_cap == 30


def test_flat_rate_is_fixed_values_with_one_of_each_worth_10() -> None:
    flat = load_preset("flat-rate")
    assert (flat.card_values, flat.fixed_mixed_set) == ("fixed", True)
    cases = {
        ("infantry", "infantry", "infantry"): 4,
        ("cavalry", "cavalry", "cavalry"): 6,
        ("artillery", "artillery", "artillery"): 8,
        ("infantry", "cavalry", "artillery"): 10,
        ("infantry", "infantry", "wild"): 4,
        ("artillery", "artillery", "wild"): 8,
        ("infantry", "cavalry", "wild"): 10,
        ("cavalry", "wild", "wild"): 10,
    }
    for designs, worth in cases.items():
        for number in (1, 7, 30):  # the same all game long
            assert set_value(flat, number, list(designs)) == worth, designs


# ------------------------------------------------------------ the combinations
@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"card_values": "fixed", "card_value_cap": 20},
            "option card_value_cap caps escalating or linear card values, not "
            "card_values = fixed (set card_value_cap = 0)",
        ),
        (
            {"card_values": "none", "card_value_cap": 20},
            "option card_value_cap caps escalating or linear card values, not "
            "card_values = none (set card_value_cap = 0)",
        ),
        (
            {"card_value_cap": 3},
            "option card_value_cap must be 0 (no cap) or at least 4 (the first set's value)",
        ),
        (
            {"card_value_cap": -5},
            "option card_value_cap must be 0 (no cap) or at least 4 (the first set's value)",
        ),
        ({"card_value_cap": True}, "option card_value_cap must be a whole number, not True"),
    ],
)
def test_impossible_caps_are_refused_saying_why(changes: dict[str, object], message: str) -> None:
    with pytest.raises(OptionsError) as caught:
        Options.from_dict(changes)  # as presets, records and `-o` give them
    assert str(caught.value) == message


def test_the_cap_is_stated_next_to_the_card_values_and_only_when_set() -> None:
    lines = CAP_15.describe(3)
    sentence = str(WORDS["card_value_cap"]).format(15)
    assert lines[lines.index(str(WORDS["card_values"]["escalating"])) + 1] == sentence  # type: ignore[index]
    assert sentence == (
        "Capped escalation: no card set is worth more than 15 armies; the values rise "
        "to the cap and stay there."
    )
    assert not any("Capped" in line for line in ESCALATING.describe(3))
    assert CAP_15.applies("card_value_cap") and not ESCALATING.applies("card_value_cap")


def test_records_carry_the_cap_and_old_options_read_without_it() -> None:
    stored = CAP_15.to_dict()
    assert stored["card_value_cap"] == 15
    assert Options.from_stored(stored) == CAP_15
    old = ESCALATING.to_dict()
    assert "card_value_cap" not in old and "trench" not in old  # written as before
    assert Options.from_stored(old).card_value_cap == 0


# ------------------------------------------------------ where a set's worth is used
def _ten_sets_traded() -> tuple[GameState, tuple[int, int, int]]:
    """Seat 0 to move, 10 sets traded so far, holding three infantry cards of
    territories it does not own (no +2)."""
    board = classic()
    lands = {0: [board.territory(n) for n in ("Alaska", "Alberta", "Ontario")]}
    state = position(CAP_15, lands, {})
    infantry = [
        c
        for c in range(len(board.territories))
        if board.card_design(c) == "infantry" and state.owner[c] != 0
    ][:3]
    state.players[0].cards = list(infantry)
    for pile in (state.deck, state.discard):
        pile[:] = [c for c in pile if c not in infantry]
    state.sets_traded = 10
    return state, (infantry[0], infantry[1], infantry[2])


def test_a_capped_trade_gives_the_cap_everywhere_its_worth_is_read() -> None:
    state, cards = _ten_sets_traded()
    board = state.board
    assert state.reinforcements == 3
    # the turn mail's sets: the next set is worth the cap, not 35
    assert [s.value for s in sets_view(state, 0)] == [15]
    names = ", ".join(board.card_name(c) for c in cards)
    # the orders' check counts 3 + 15 = 18 armies due
    assert problems(state, f"TRADE {names}\nPLACE 18 Alaska") == []
    assert problems(state, f"TRADE {names}\nPLACE 38 Alaska") == [
        (2, "PLACE orders place 38 armies; 18 are due this turn (3 + 15 for the traded set)")
    ]
    # the engine's trade
    played = state.copy()
    events = engine.trade(played, cards)
    assert played.reinforcements == 18 and events[0].value == 15
    # a whole turn through the turn machine
    mail = parse_orders(f"TRADE {names}\nPLACE 18 Alaska", board)
    turn = state.copy()
    play_turn(turn, turn_actions(turn, mail.orders), ScriptedDice())
    assert turn.armies[board.territory("Alaska")] == 1 + 18


def test_a_bot_counts_the_capped_value_of_its_trade() -> None:
    state, cards = _ten_sets_traded()
    plan = make_bot("random", 5).plan_turn(state)
    assert isinstance(plan[0], Trade) and sorted(plan[0].cards) == sorted(cards)
    placed = sum(n for a in plan if isinstance(a, Place) for n, _ in a.placements)
    assert placed == 3 + 15


def test_a_linear_cap_and_a_fixed_value_are_unchanged_by_other_options() -> None:
    linear = replace(ESCALATING, card_values="linear", card_value_cap=6)
    assert values(linear, 5) == [4, 5, 6, 6, 6]


# ------------------------------------------------------------- whole bot games
@pytest.mark.parametrize(("preset", "seed"), [("capped-escalation", 2), ("flat-rate", 2)])
def test_a_bot_game_to_a_winner_replays_and_verifies(preset: str, seed: int) -> None:
    played = bot_game(load_preset(preset), seed, bot="random")
    result = played.result
    assert not result.capped and result.winner is not None
    assert played.replayed == result.hashes and played.final_hash == result.final_hash
    assert played.verified_ok, played.verify_message
    assert played.verified_steps == result.turns + 1  # the setup and every turn


def test_every_set_of_a_bot_game_is_worth_its_capped_escalation() -> None:
    options = Options(card_value_cap=12)
    bots = [make_bot("greedy", seat) for seat in range(3)]
    state = setup_game(classic(), options, 3, 4, bots)
    worth: list[tuple[int, int]] = []
    while state.phase != ENDED and state.turn < 1000:
        dice = DiceStream(bytes(32), state.game, f"turn:{state.turn}")
        events = play_turn(state, bots[state.current].plan_turn(state), dice)
        worth += [(e.set_number, e.value) for e in events if isinstance(e, CardsTraded)]
    assert state.phase == ENDED and len(worth) >= 6
    assert worth == [
        (n, min((4, 6, 8, 10, 12)[n - 1] if n <= 5 else 15 + 5 * (n - 6), 12)) for n, _ in worth
    ]
    assert [n for n, _ in worth] == list(range(1, len(worth) + 1))


def test_the_quiet_options_defaults_are_the_dataclass_defaults() -> None:
    defaults = {f.name: f.default for f in fields(Options)}
    assert {name: defaults[name] for name in QUIET_DEFAULTS} == QUIET_DEFAULTS
