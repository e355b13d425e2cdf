"""Trench warfare (``trench = true``, docs/RULES.md "Online settings"): a
territory taken this turn may not attack again this turn. Refused by the
orders' check (its line), by CHECK, by the engine and so by a replay; the
state carries the territories taken, hashed only while there are some; bots
respect it; a whole bot game replayed and verified. (By mail:
tests/service/test_online_trench_mail.py.)"""

from __future__ import annotations

import pytest

from pbem.maps.presets import load_preset
from pbem.orderlog import replay
from pbem.orders import check_text, parse_orders, render_orders
from pbem.orders.forecast import forecast, forecast_lines
from pbem.rules import attacking, engine
from pbem.rules.actions import Amount, AmountKind, Attack, Place
from pbem.rules.bots import make_bot
from pbem.rules.errors import RulesError
from pbem.rules.options import Options
from pbem.rules.state import GameState
from pbem.rules.turnplan import play_turn
from tests.rules.online_support import bot_game, position, problems
from tests.rules.support import SECRET, ScriptedDice, classic

TRENCH = Options(trench=True)
T = classic().territory
ALASKA, KAMCHATKA, JAPAN = T("Alaska"), T("Kamchatka"), T("Japan")
ORDERS = "PLACE 3 Alaska\nATTACK Alaska -> Kamchatka MOVE ALL\nATTACK Kamchatka -> Japan"
REFUSED = (
    "Kamchatka may not attack: an earlier ATTACK of these orders takes it, and under "
    "trench warfare (option trench) a territory taken this turn may not attack again "
    "until your next turn"
)
TAKEN = (
    "Kamchatka may not attack: it was taken this turn, and under trench warfare (option "
    "trench) a territory taken this turn may not attack again until your next turn"
)
CONQUER = [6, 6, 6, 1]  # 3 attacking dice against 1: Kamchatka's one army falls


def front(options: Options = TRENCH) -> GameState:
    """Seat 0 holds Alaska (10) alone; Kamchatka and Japan 1 army each (others').
    3 armies due."""
    state = position(options, {0: [ALASKA]}, {ALASKA: 10})
    assert state.reinforcements == 3 and state.owner[KAMCHATKA] != 0 != state.owner[JAPAN]
    return state


def test_the_attack_from_the_territory_just_taken_is_refused_at_its_line() -> None:
    assert problems(front(), ORDERS) == [(3, REFUSED)]
    assert problems(front(Options()), ORDERS) == []  # without trench: fine
    # two fronts, one territory each: fine
    both = "PLACE 3 Alaska\nATTACK Alaska -> Kamchatka MOVE 3\nATTACK Alaska -> Alberta"
    assert problems(front(), both) == []


def test_check_says_the_same_with_the_line() -> None:
    state = front()
    result = check_text(ORDERS, state.board, state)
    assert not result.ok
    assert REFUSED in " ".join(result.report.split())
    assert "line 3: ATTACK Kamchatka -> Japan\n" in result.report
    assert "line 2" not in result.report and "line 1" not in result.report


def test_the_engine_refuses_it_after_a_hand_computed_conquest() -> None:
    state = front()
    engine.place(state, ALASKA, 3)
    dice = ScriptedDice(CONQUER)
    attacking.attack(state, ALASKA, KAMCHATKA, dice)
    attacking.move_armies(state, 12, None)  # all but one of Alaska's 13
    assert (state.owner[KAMCHATKA], state.armies[ALASKA], state.armies[KAMCHATKA]) == (0, 1, 12)
    assert state.taken_this_turn == [KAMCHATKA]
    with pytest.raises(RulesError) as caught:
        attacking.attack(state, KAMCHATKA, JAPAN, ScriptedDice([6, 6, 6, 1]))
    assert (caught.value.rule, caught.value.message) == ("trench", TAKEN)
    # the state carries it, hashed the same both ways; the next turn clears it
    assert '"taken_this_turn":[33]' in state.canonical_json()
    assert state.canonical_json() == state.canonical_json_reference()
    assert GameState.from_dict(state.to_dict(), state.board, TRENCH).state_hash() == (
        state.state_hash()
    )
    engine.end_turn(state, ScriptedDice())
    assert state.taken_this_turn == [] and "taken_this_turn" not in state.canonical_json()


def test_without_trench_the_state_and_hash_are_as_before() -> None:
    state = front(Options())
    engine.place(state, ALASKA, 3)
    attacking.attack(state, ALASKA, KAMCHATKA, ScriptedDice(CONQUER))
    assert state.taken_this_turn == [] and "taken_this_turn" not in state.canonical_json()


def _moves() -> list[object]:
    """The orders as actions, past the check (what a forged log would hold)."""
    return [
        Place(((3, ALASKA),)),
        Attack(ALASKA, KAMCHATKA, move=Amount(AmountKind.ALL)),
        Attack(KAMCHATKA, JAPAN),
    ]


def test_a_log_holding_one_does_not_replay() -> None:
    state = front()
    players = tuple((p.name, p.colour) for p in state.players)
    definition = replay.GameDefinition(state.game, state.board, TRENCH, players, SECRET)
    entry = replay.Entry("turn", 0, ORDERS, state.turn, "mail")
    with pytest.raises(replay.ReplayError) as caught:
        replay.apply(replay.Game(definition, state.copy()), entry)
    assert str(caught.value) == f"turn {state.turn}: line 3: {REFUSED}"
    # past the check, the engine refuses it: the dice take Kamchatka first
    game = replay.Game(definition, state.copy())
    with pytest.raises(RulesError, match="Kamchatka may not attack: it was taken this turn"):
        play_turn(game.state, _moves(), ScriptedDice(CONQUER))  # type: ignore[arg-type]
    with pytest.raises(replay.ReplayError, match=r"\(rule: trench\)"):
        replay.apply(
            replay.Game(definition, state.copy()),
            entry,
            actions=_moves(),  # type: ignore[arg-type]
        )


def test_the_forecast_of_lawful_orders_and_of_the_refused_one() -> None:
    state = front()
    lawful = "PLACE 3 Alaska\nATTACK Alaska -> Kamchatka MOVE 3\nATTACK Alaska -> Alberta"
    lines = forecast_lines(state, parse_orders(lawful, state.board).orders)
    assert lines and any("Kamchatka" in line for line in lines)
    # the refused orders never reach a forecast; forced past the check, its engine refuses them
    with pytest.raises(RulesError) as caught:
        forecast(state, _moves())  # type: ignore[arg-type]
    assert (caught.value.rule, caught.value.message) == ("trench", TAKEN)


def test_bots_attack_only_from_territories_held_at_the_start_of_the_turn() -> None:
    armies = {ALASKA: 30, T("Alberta"): 30}
    for kind in ("random", "greedy"):
        for options, chained in ((Options(), True), (TRENCH, False)):
            state = position(options, {0: [ALASKA, T("Alberta")]}, armies)
            plan = make_bot(kind, 3).plan_turn(state)
            attacks = [a for a in plan if isinstance(a, Attack)]
            assert attacks, kind
            sources = {a.source for a in attacks}
            assert (sources - {ALASKA, T("Alberta")} != set()) == chained, (kind, options)
            assert problems(state, render_orders(plan, state.board)) == []


@pytest.mark.parametrize(("bot", "seed"), [("greedy", 1), ("random", 2)])
def test_a_trench_bot_game_to_a_winner_replays_and_verifies(bot: str, seed: int) -> None:
    game = bot_game(load_preset("trench"), seed, bot=bot)
    result = game.result
    assert not result.capped and result.winner is not None
    assert game.replayed == result.hashes and game.final_hash == result.final_hash
    assert game.verified_ok, game.verify_message
    assert game.verified_steps == result.turns + 1


def test_records_carry_trench_and_older_options_read_without_it() -> None:
    stored = load_preset("trench").to_dict()
    assert stored["trench"] is True and "card_value_cap" not in stored
    assert Options.from_stored(stored) == load_preset("trench")
    older = Options().to_dict()
    assert "trench" not in older and Options.from_stored(older).trench is False
    assert TRENCH.applies("trench") and not Options().applies("trench")
