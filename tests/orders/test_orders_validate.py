"""Orders against hand-made positions: exact problems, and all-or-nothing execution.

The positions start from a real 3-player game (set up by bots, seed 7: seat 2,
"p3", is to move) and are then edited into a small, hand-computed board:
p3 holds six territories, p2 everything else with 3 armies each.
"""

from __future__ import annotations

import pytest

from pbem.maps import builtin_map
from pbem.orders import (
    OrdersError,
    check_text,
    execute_setup,
    execute_turn,
    format_problems,
    parse_orders,
    turn_actions,
    validate_mail,
    validate_setup,
    validate_turn,
)
from pbem.rules import engine, opening
from pbem.rules.actions import Place, Trade
from pbem.rules.bots import make_bot
from pbem.rules.dice import DiceStream
from pbem.rules.options import Options
from pbem.rules.simulate import game_secret, setup_game
from pbem.rules.state import EnginePhase, GameState

BOARD = builtin_map("classic")
T = BOARD.territory
WILD_1, WILD_2 = 42, 43
ME, OTHER = 2, 1  # seats of p3 (to move) and p2

MINE = {
    "Alaska": 5,
    "Northwest Territory": 1,
    "Ontario": 5,
    "Quebec": 2,
    "Kamchatka": 6,
    "Greenland": 3,
}


def position(
    options: Options | None = None,
    cards: tuple[int, ...] = (T("Alaska"), T("Alberta"), T("Ontario"), WILD_1),
    mine: dict[str, int] | None = None,
) -> GameState:
    options = options or Options()
    bots = [make_bot("random", seat) for seat in range(3)]
    state = setup_game(BOARD, options, 3, 7, bots)
    assert (state.current, state.turn, state.players[ME].name) == (ME, 1, "p3")
    mine = MINE if mine is None else mine
    for t in range(len(BOARD.territories)):
        state.owner[t], state.armies[t] = OTHER, 3
    for name, armies in mine.items():
        state.owner[T(name)], state.armies[T(name)] = ME, armies
    for player in state.players:
        player.cards = []
    state.players[ME].cards = list(cards)
    state.deck = [c for c in range(BOARD.n_cards) if c not in cards]
    state.reinforcements = engine.reinforcement_base(len(mine))  # 3; no continent held
    state.must_trade = len(cards) >= options.forced_trade_at
    return state


def problems(text: str, state: GameState, seat: int = ME) -> list[str]:
    try:
        mail = parse_orders(text, BOARD)
    except OrdersError as error:
        return [p.message for p in error.problems]
    return [p.message for p in validate_mail(state, seat, mail)]


def rng() -> DiceStream:
    return DiceStream(game_secret(7), "sim-7", "turn:1")


# ----------------------------------------------------------- the brief's table
BAD = [
    # misspelled territory
    ("PLACE 3 Kamchatca", ["Kamchatca: no such territory; did you mean Kamchatka?"]),
    # non-adjacent attack
    (
        "PLACE 3 Alaska\nATTACK Alaska -> Japan",
        [
            "Alaska and Japan are not adjacent; "
            "Alaska borders Alberta, Kamchatka, Northwest Territory"
        ],
    ),
    # wrong army total, without and with a trade
    ("PLACE 2 Alaska", ["PLACE orders place 2 armies; 3 are due this turn"]),
    (
        "TRADE Alaska, Ontario, Wild\nPLACE 1 Alaska, 2 Ontario",
        ["PLACE orders place 3 armies; 7 are due this turn (3 + 4 for the traded set)"],
    ),
    ("ATTACK Alaska -> Alberta", ["no PLACE order: 3 armies must be placed this turn"]),
    # trade of cards not held
    ("TRADE Alaska, Quebec, Wild\nPLACE 7 Alaska", ["you do not hold the Quebec card"]),
    (
        "TRADE Alaska, Wild, Wild\nPLACE 7 Alaska",
        ["you hold only 1 Wild card"],
    ),
    # invalid set
    (
        "TRADE Alaska, Alberta, Ontario\nPLACE 7 Alaska",
        [
            "Alaska, Alberta, Ontario is not a set (infantry, infantry, cavalry): "
            "a set is three of a design, one of each, or any two and a Wild"
        ],
    ),
    # fortify of all armies
    ("PLACE 3 Alaska\nFORTIFY 5 Ontario -> Quebec", ["Ontario has 5 armies; at most 4 can move"]),
    (
        "PLACE 3 Alaska\nFORTIFY ALL Northwest Territory -> Alaska",
        ["Northwest Territory has 1 army; none can move"],
    ),
    (
        "PLACE 3 Alaska\nFORTIFY ALL BUT 4 Ontario -> Quebec",
        ["Ontario has 5 armies; ALL BUT 4 leaves none to move"],
    ),
    # unknown keyword
    ("PLACE 3 Alaska\nATACK Alaska -> Alberta", ["ATACK: no such order; did you mean ATTACK?"]),
    # number where a name belongs
    ("PLACE 3 5", ["5: a number where a territory name belongs"]),
    ("PLACE 3 Alaska\nATTACK 5 -> Alberta", ["5: a number where a territory name belongs"]),
    # two FORTIFY where one is allowed
    (
        "PLACE 3 Alaska\nFORTIFY 1 Ontario -> Quebec\nFORTIFY 1 Alaska -> Northwest Territory",
        ["only one FORTIFY is allowed in a turn"],
    ),
    # more
    ("PLACE 3 Alberta", ["Alberta is not yours; it is p2's"]),
    (
        "PLACE 3 Alaska\nATTACK Alberta -> Western United States",
        ["Alberta is not yours; it is p2's, and no earlier ATTACK takes it"],
    ),
    ("PLACE 3 Alaska\nATTACK Alaska -> Kamchatka", ["Kamchatka is already yours"]),
    (
        "PLACE 3 Alaska\nATTACK Northwest Territory -> Alberta",
        ["Northwest Territory has 1 army; an attack needs at least 2"],
    ),
    ("PLACE 3 Alaska\nFORTIFY 1 Alaska -> Alberta", ["Alberta is not yours; it is p2's"]),
    (
        "PLACE 3 Alaska\nFORTIFY 1 Alaska -> Ontario",
        [
            "Alaska and Ontario are not adjacent; "
            "Alaska borders Alberta, Kamchatka, Northwest Territory"
        ],
    ),
    (
        "PLACE 7 Alaska\nTRADE Alaska, Ontario, Wild",
        ["TRADE must come before PLACE, ATTACK and FORTIFY"],
    ),
    ("FORTIFY 1 Ontario -> Quebec\nPLACE 3 Alaska", ["PLACE must come before ATTACK and FORTIFY"]),
    (
        "PLACE 3 Alaska\nFORTIFY 1 Ontario -> Quebec\nATTACK Alaska -> Alberta",
        ["ATTACK must come before FORTIFY"],
    ),
    ("CLAIM Alaska\nPLACE 3 Alaska", ["CLAIM is a setup order; the game is under way"]),
    ("TURN 3\nPLACE 3 Alaska", ["TURN 3: the game is at turn 1"]),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_orders_have_exact_messages(text: str, expected: list[str]) -> None:
    assert problems(text, position()) == expected


def test_missing_forced_trade() -> None:
    state = position(cards=(T("Alaska"), T("Alberta"), T("Ontario"), T("Quebec"), WILD_1))
    assert state.must_trade
    assert problems("PLACE 3 Alaska", state) == [
        "you hold 5 cards, so you must trade a set this turn (TRADE)"
    ]
    # one set is enough; the armies due grow by its value (first set of the game: 4)
    assert problems("TRADE Alaska, Ontario, Quebec\nPLACE 7 Alaska", state) == []


def test_orders_when_it_is_not_your_turn() -> None:
    assert problems("PLACE 3 Alberta", position(), seat=OTHER) == [
        "it is not your turn: p3 is to move"
    ]


def test_at_most_max_trades_sets() -> None:
    cards = (
        T("Alaska"),
        T("Alberta"),
        T("Western United States"),
        T("Ontario"),
        T("Quebec"),
        WILD_1,
    )
    state = position(Options(max_trades=1), cards=cards)
    text = (
        "TRADE Alaska, Alberta, Western United States\nTRADE Ontario, Quebec, Wild\nPLACE 7 Alaska"
    )
    assert problems(text, state) == ["at most 1 set may be traded in a turn"]
    # with the default two sets: 3 + 4 + 6 due, and the second set's value counts
    state = position(cards=cards)
    assert problems(text.replace("PLACE 7", "PLACE 13"), state) == []
    assert problems(text, state) == [
        "PLACE orders place 7 armies; 13 are due this turn (3 + 4 + 6 for the traded sets)"
    ]


def test_the_same_card_in_two_trades() -> None:
    cards = (T("Alaska"), T("Alberta"), T("Western United States"), T("Ontario"), WILD_1, WILD_2)
    text = (
        "TRADE Alaska, Alberta, Western United States\nTRADE Alaska, Ontario, Wild\nPLACE 13 Alaska"
    )
    assert problems(text, position(cards=cards)) == ["the Alaska card is already traded on line 1"]


def test_no_fortify_rule() -> None:
    state = position(Options(fortify="none"))
    assert problems("PLACE 3 Alaska\nFORTIFY 1 Ontario -> Quebec", state) == [
        "these rules allow no FORTIFY"
    ]


def test_chained_and_unlimited_fortify() -> None:
    chained = position(Options(fortify="chained"))
    # Alaska - Northwest Territory - Ontario are all p3's: a chain, though not adjacent
    assert problems("PLACE 3 Alaska\nFORTIFY 2 Alaska -> Ontario", chained) == []
    assert problems(
        "PLACE 3 Alaska\nFORTIFY 2 Alaska -> Kamchatka\nFORTIFY 1 Ontario -> Quebec", chained
    ) == ["only one FORTIFY is allowed in a turn"]
    without_nwt = {name: n for name, n in MINE.items() if name != "Northwest Territory"}
    cut_off = position(Options(fortify="chained"), mine=without_nwt)
    assert problems("PLACE 3 Alaska\nFORTIFY 2 Alaska -> Ontario", cut_off) == [
        "no chain of your territories joins Alaska and Ontario"
    ]
    # a chain through a territory an earlier ATTACK takes is accepted (turnplan skips if it fails)
    assert (
        problems(
            "PLACE 3 Alaska\nATTACK Alaska -> Alberta\nFORTIFY 2 Kamchatka -> Ontario", cut_off
        )
        == []
    )
    unlimited = position(Options(fortify="unlimited"))
    text = "PLACE 3 Alaska\nFORTIFY 2 Alaska -> Ontario\nFORTIFY 1 Ontario -> Quebec"
    assert problems(text, unlimited) == []


def test_placed_and_bonus_armies_count_for_fortify_and_attack() -> None:
    state = position()
    # Northwest Territory has 1 army, but 3 are placed on it first
    assert (
        problems("PLACE 3 Northwest Territory\nFORTIFY 3 Northwest Territory -> Alaska", state)
        == []
    )
    assert (
        problems("PLACE 3 Northwest Territory\nATTACK Northwest Territory -> Alberta", state) == []
    )
    # the +2 of the traded Alaska card lands on Alaska: 5 + 2 armies
    text = "TRADE Alaska, Ontario, Wild\nPLACE 7 Quebec\nFORTIFY 6 Alaska -> Kamchatka"
    assert problems(text, state) == []
    assert problems(text.replace("FORTIFY 6", "FORTIFY 7"), state) == [
        "Alaska has 7 armies; at most 6 can move"
    ]


def test_attack_from_a_territory_taken_earlier() -> None:
    text = (
        "PLACE 3 Alaska\nATTACK Alaska -> Alberta MOVE ALL\nATTACK Alberta -> Western United States"
    )
    assert problems(text, position()) == []


def test_every_problem_is_reported_at_once() -> None:
    text = (
        "TRADE Alaska, Quebec, Wild\nPLACE 3 Alberta\n"
        "ATTACK Ontario -> Quebec\nFORTIFY 9 Ontario -> Quebec\n"
    )
    state = position()
    mail = parse_orders(text, BOARD)
    found = validate_turn(state, ME, mail.orders)
    assert [(p.line, p.column, p.text, p.message) for p in found] == [
        (1, 15, "Quebec", "you do not hold the Quebec card"),
        (2, 9, "Alberta", "Alberta is not yours; it is p2's"),
        (3, 19, "Quebec", "Quebec is already yours"),
        (4, 11, "Ontario", "Ontario has 5 armies; at most 4 can move"),
    ]


def test_game_over_and_setup_phases_refuse_turn_orders() -> None:
    state = position()
    state.phase = EnginePhase.ENDED  # (the enum: the compiled GameState holds no plain text)
    assert problems("PLACE 3 Alaska", state) == ["the game is over"]
    state.phase = EnginePhase.PLACE
    assert [
        p.message for p in validate_turn(state, ME, parse_orders("PLACE 3 Alaska", BOARD).orders)
    ] == ["the game is still being set up (placing initial armies); turn orders come later"]


# ------------------------------------------------------------------- execution
def test_execute_turn_leaves_the_input_state_untouched() -> None:
    state = position()
    before = state.state_hash()
    mail = parse_orders(
        "TRADE Alaska, Ontario, Wild\nPLACE 7 Quebec\nATTACK Kamchatka -> Japan", BOARD
    )
    new, events = execute_turn(state, mail.orders, rng())
    assert state.state_hash() == before
    assert new is not state
    assert new.players[ME].cards == [T("Alberta")]  # no conquest, so no card drawn
    assert new.sets_traded == 1
    assert new.armies[T("Alaska")] == 5 + 2  # the bonus of the Alaska card
    assert new.armies[T("Quebec")] == 2 + 7
    assert (new.armies[T("Kamchatka")], new.armies[T("Japan")]) == (1, 2)  # these dice lost
    assert new.current == OTHER  # the turn ended
    assert [e.kind for e in events] == [
        "traded",
        "placed",
        "placed",
        "attack",
        "turn_ended",
        "turn_began",
    ]


def test_execute_turn_refuses_invalid_orders_and_changes_nothing() -> None:
    state = position()
    before = state.state_hash()
    mail = parse_orders("PLACE 2 Alaska", BOARD)
    with pytest.raises(OrdersError) as caught:
        execute_turn(state, mail.orders, rng())
    assert [p.message for p in caught.value.problems] == [
        "PLACE orders place 2 armies; 3 are due this turn"
    ]
    assert state.state_hash() == before


def test_wild_resolves_to_the_lowest_wild_held() -> None:
    cards = (T("Alaska"), T("Ontario"), WILD_1, WILD_2)
    state = position(cards=cards)
    mail = parse_orders("TRADE Alaska, Wild, Wild\nPLACE 7 Quebec", BOARD)
    assert turn_actions(state, mail.orders) == [
        Trade((T("Alaska"), WILD_1, WILD_2)),
        Place(((7, T("Quebec")),)),
    ]
    state.players[ME].cards = [T("Alaska"), T("Ontario"), WILD_2]
    mail = parse_orders("TRADE Alaska, Ontario, Wild\nPLACE 7 Quebec", BOARD)
    assert turn_actions(state, mail.orders)[0] == Trade((T("Alaska"), T("Ontario"), WILD_2))


# ------------------------------------------------------------------------ setup
def setup_state(options: Options, players: int = 3) -> GameState:
    state, _ = opening.new_game(
        BOARD,
        options,
        "setup-test",
        [(f"p{i + 1}", "") for i in range(players)],
        DiceStream(game_secret(3), "setup-test", "setup"),
    )
    return state


def test_setup_placement() -> None:
    state = setup_state(Options())
    seat = state.order[0]
    own = state.territories_of(seat)
    due = state.players[seat].to_place
    names = [BOARD.territories[t].name for t in own]
    other = next(t for t in range(42) if state.owner[t] != seat)
    other_name = BOARD.territories[other].name
    owner_name = state.players[state.owner[other]].name

    def setup_problems(text: str) -> list[str]:
        return [p.message for p in validate_setup(state, seat, parse_orders(text, BOARD).orders)]

    assert due == 35 - 14
    assert setup_problems(f"PLACE {due - 1} {names[0]}, 1 {names[1]}") == []
    assert setup_problems(f"PLACE {due} {names[0]}") == []
    assert setup_problems(f"PLACE 3 {names[0]}") == [f"PLACE orders place 3 armies; {due} are due"]
    assert setup_problems(f"PLACE {due} {other_name}") == [
        f"{other_name} is not yours; it is {owner_name}'s"
    ]
    assert setup_problems("HQ Alaska") == [
        "HQ is not an order of this phase: the game is placing initial armies (send PLACE)",
        f"no PLACE order: {due} armies must be placed",
    ]
    assert setup_problems(f"PLACE {due} {names[0]}\nATTACK Alaska -> Kamchatka") == [
        "ATTACK is a turn order; the game is still being set up (placing initial armies)"
    ]
    assert setup_problems(f"PLACE {due} {names[0]}\nNEUTRAL 1 {names[0]}") == [
        "there are no neutral armies for you to place"
    ]


def test_setup_placement_over_the_cap_is_refused_at_the_door() -> None:
    """A setup PLACE past max_armies was told "accepted" and then stopped the
    setup when the last player's orders came in (the engine refuses it only
    then); the mail's check refuses it, naming the cap and the room."""
    state = setup_state(Options(max_armies=12))
    seat = state.order[0]
    own = state.territories_of(seat)
    due = state.players[seat].to_place
    first, second = (BOARD.territories[t].name for t in own[:2])
    held = state.armies[own[0]]
    mail = parse_orders(f"PLACE {due - 1} {first}, 1 {second}", BOARD)
    assert [(p.line, p.message) for p in validate_mail(state, seat, mail)] == [
        (
            1,
            f"{first} would hold {held + due - 1} armies, over the cap of 12 (max_armies): "
            f"room for {12 - held} more there",
        )
    ]
    spread = ", ".join(f"{n} {BOARD.territories[t].name}" for t, n in _spread(state, own, due))
    assert validate_mail(state, seat, parse_orders(f"PLACE {spread}", BOARD)) == []
    # the replay's own check (validate_setup) is unchanged: a log may hold such an entry
    assert validate_setup(state, seat, mail.orders) == []


def _spread(state: GameState, own: list[int], due: int) -> list[tuple[int, int]]:
    """``due`` armies over ``own``, none past 12."""
    out = []
    for t in own:
        n = min(due, 12 - state.armies[t])
        if n > 0:
            out.append((t, n))
            due -= n
    assert due == 0
    return out


def test_two_player_neutral_share() -> None:
    state = setup_state(Options(), players=2)
    first, second = state.order
    neutral = state.territories_of(state.neutral_seat)
    n_name = BOARD.territories[neutral[0]].name
    own = BOARD.territories[state.territories_of(first)[0]].name
    assert (opening.neutral_share(state, first), opening.neutral_share(state, second)) == (13, 13)
    text = f"PLACE 26 {own}\nNEUTRAL 13 {n_name}"
    assert validate_setup(state, first, parse_orders(text, BOARD).orders) == []
    text = f"PLACE 26 {own}"
    assert [p.message for p in validate_setup(state, first, parse_orders(text, BOARD).orders)] == [
        "no NEUTRAL order: 13 neutral armies must be placed"
    ]
    text = f"PLACE 26 {own}\nNEUTRAL 13 {own}"
    assert [p.message for p in validate_setup(state, first, parse_orders(text, BOARD).orders)] == [
        f"{own} is not neutral"
    ]


def test_claim_and_hq_phases_and_execute_setup() -> None:
    state = setup_state(Options(claim="draft", goal="capital"))
    assert state.phase == "claim"
    orders = {seat: parse_orders("CLAIM Alaska, Japan", BOARD).orders for seat in state.order}
    assert [p.message for p in validate_setup(state, 0, [])] == [
        "no CLAIM order: send one, with your preference list"
    ]
    place_rng = DiceStream(game_secret(3), "setup-test", "setup:place")
    with pytest.raises(OrdersError) as caught:
        execute_setup(state, {0: orders[0]}, place_rng)
    assert sorted(p.message for p in caught.value.problems) == [
        "p2: no setup orders",
        "p3: no setup orders",
    ]
    before = state.state_hash()
    claimed, _ = execute_setup(state, orders, place_rng)
    assert state.state_hash() == before
    assert claimed.phase == "place"
    assert claimed.owner[T("Alaska")] == state.order[0]  # first in turn order picks first
    assert claimed.owner[T("Japan")] == state.order[1]
    # HQ phase
    hq = claimed.copy()
    hq.phase = EnginePhase.HQ
    seat = hq.order[0]
    assert [
        p.message for p in validate_setup(hq, seat, parse_orders("HQ Alaska", BOARD).orders)
    ] == []
    assert [
        p.message for p in validate_setup(hq, seat, parse_orders("HQ Japan", BOARD).orders)
    ] == [f"Japan is not yours; it is {hq.players[hq.order[1]].name}'s"]


# ------------------------------------------------------------------------ check
def test_check_text_against_a_state() -> None:
    state = position()
    good = check_text(
        "CHECK\nPLACE 1 Alaska, 2 Ontario\nATTACK alaska->alberta move all", BOARD, state
    )
    assert good.ok
    assert good.report == (
        "Your orders are valid, checked against game sim-7, turn 1. Nothing was applied.\n"
        "\n"
        "Orders, as they would be recorded:\n"
        "  PLACE 1 Alaska, 2 Ontario\n"
        "  ATTACK Alaska -> Alberta MOVE ALL\n"
        "\n"
        "Odds before the dice (exact odds, the attacks form a chain; the game's own dice are "
        "not used):\n"
        "  1. Alaska -> Alberta: takes it 76.9%; armies left 3.8 (Alaska 1.0, Alberta 2.8)\n"
        "  Whole plan (every territory attacked taken): 76.9%\n"
        "\n"
        "Commands:\n"
        "  CHECK\n"
    )
    text = "PLACE 2 Alaska\nFORTIFY 5 Ontario -> Quebec\n"
    bad = check_text(text, BOARD, state)
    assert not bad.ok
    assert bad.report == (
        "Your orders were not applied: 2 problems found. Nothing in this mail was applied.\n"
        "\n"
        "line 1: PLACE 2 Alaska\n"
        "        ^^^^^\n"
        "  PLACE orders place 2 armies; 3 are due this turn\n"
        "\n"
        "line 2: FORTIFY 5 Ontario -> Quebec\n"
        "                  ^^^^^^^\n"
        "  Ontario has 5 armies; at most 4 can move\n"
        "\n"
        "Send all the orders again, corrected. HELP replies with the order language.\n"
    )


def test_check_text_on_the_map_alone() -> None:
    result = check_text("PLACE 5 Alberta", BOARD)
    assert result.ok
    assert result.report.startswith("Your orders are valid, checked against the map only")
    # "Dear GM" above the first order is a greeting: ignored, not a problem (issue 13)
    bad = check_text("Dear GM\nPLACE 5 Kamchatca\n", BOARD)
    assert not bad.ok
    assert bad.report == (
        "Your orders were not applied: 1 problem found. Nothing in this mail was applied.\n"
        "\n"
        "line 2: PLACE 5 Kamchatca\n"
        "                ^^^^^^^^^\n"
        "  Kamchatca: no such territory; did you mean Kamchatka?\n"
        "  expected: a territory name\n"
        "\n"
        "Send all the orders again, corrected. HELP replies with the order language.\n"
    )


def test_format_problems_of_the_whole_mail() -> None:
    with pytest.raises(OrdersError) as caught:
        parse_orders("x" * 30, BOARD, max_chars=20)
    assert format_problems(caught.value.problems, "x" * 30) == (
        "Your orders were not applied: 1 problem found. Nothing in this mail was applied.\n"
        "\n"
        "the mail as a whole:\n"
        "  the mail is 30 characters long; "
        "orders are read only from mails of at most 20 characters\n"
        "\n"
        "Send all the orders again, corrected. HELP replies with the order language.\n"
    )
