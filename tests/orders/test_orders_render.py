"""The canonical form: exact lines, and parse(render(actions)) == actions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.maps import builtin_map
from pbem.orders import WILD_CARD, as_order, parse_orders, render_action, render_orders
from pbem.rules.actions import (
    MOVE_MIN,
    UNTIL_CONQUERED,
    Amount,
    Attack,
    Claim,
    Fortify,
    Headquarters,
    Place,
    PlaceInitial,
    PlaceNeutral,
    Trade,
    Until,
)

BOARD = builtin_map("classic")
T = BOARD.territory


@pytest.mark.parametrize(
    ("action", "text"),
    [
        (Place(((5, T("Alaska")),)), "PLACE 5 Alaska"),
        (Place(((2, T("Ontario")), (1, T("Quebec")))), "PLACE 2 Ontario, 1 Quebec"),
        (
            Attack(T("Kamchatka"), T("Japan"), 3, Until("left", 4), Amount("all")),
            "ATTACK Kamchatka -> Japan UNTIL 4 LEFT MOVE ALL",
        ),
        (
            Attack(T("Alaska"), T("Kamchatka"), 3, UNTIL_CONQUERED, MOVE_MIN),
            "ATTACK Alaska -> Kamchatka",
        ),
        (
            Attack(T("Ontario"), T("Quebec"), 2, Until("rolls", 3), Amount("n", 5)),
            "ATTACK Ontario -> Quebec WITH 2 DICE UNTIL 3 ROLLS MOVE 5",
        ),
        (
            Attack(T("Ontario"), T("Quebec"), 1, Until("rolls", 1), Amount("all_but", 1)),
            "ATTACK Ontario -> Quebec WITH 1 DICE UNTIL 1 ROLLS MOVE ALL BUT 1",
        ),
        (
            Fortify(T("Ontario"), T("Quebec"), Amount("all_but", 2)),
            "FORTIFY ALL BUT 2 Ontario -> Quebec",
        ),
        (Fortify(T("Ontario"), T("Quebec"), Amount("n", 4)), "FORTIFY 4 Ontario -> Quebec"),
        (Trade((T("Alaska"), T("Ontario"), 42)), "TRADE Alaska, Ontario, Wild"),
        (Trade((T("Alaska"), WILD_CARD, 43)), "TRADE Alaska, Wild, Wild"),
        (Claim((T("Alaska"), T("North Africa"))), "CLAIM Alaska, North Africa"),
        (Claim(()), "CLAIM"),
        (PlaceInitial(((3, T("Alaska")),)), "PLACE 3 Alaska"),
        (PlaceNeutral(((2, T("Peru")), (1, T("Egypt")))), "NEUTRAL 2 Peru, 1 Egypt"),
        (Headquarters(T("Western United States")), "HQ Western United States"),
    ],
)
def test_canonical_line(action: object, text: str) -> None:
    assert render_action(action, BOARD) == text  # type: ignore[arg-type]


def test_fortify_min_has_no_text() -> None:
    with pytest.raises(ValueError, match="never MIN"):
        render_action(Fortify(0, 1, MOVE_MIN), BOARD)


def test_render_orders_and_as_order() -> None:
    actions = [Place(((5, T("Alaska")),)), Attack(T("Alaska"), T("Kamchatka"))]
    assert render_orders(actions, BOARD) == "PLACE 5 Alaska\nATTACK Alaska -> Kamchatka\n"
    orders = [as_order(a, BOARD) for a in actions]
    assert [o.text for o in orders] == ["PLACE 5 Alaska", "ATTACK Alaska -> Kamchatka"]
    assert render_orders(orders, BOARD) == render_orders(actions, BOARD)


# -------------------------------------------------------------------- round trip
N_TERRITORIES = len(BOARD.territories)
territory = st.integers(0, N_TERRITORIES - 1)
armies = st.integers(1, 999_999)
placements = st.lists(st.tuples(armies, territory), min_size=1, max_size=5).map(tuple)
edges = st.sampled_from(BOARD.edges()).flatmap(lambda e: st.sampled_from([e, e[::-1]]))
until = st.one_of(
    st.just(UNTIL_CONQUERED),
    st.builds(Until, st.sampled_from(["left", "rolls"]), st.integers(1, 999)),
)
amount = st.one_of(
    st.just(Amount("all")),
    st.builds(Amount, st.sampled_from(["n", "all_but"]), st.integers(1, 999)),
)
move = st.one_of(st.just(MOVE_MIN), amount)
two_territories = st.lists(territory, min_size=2, max_size=2, unique=True)

turn_action = st.one_of(
    st.lists(st.integers(0, BOARD.n_cards - 1), min_size=3, max_size=3, unique=True).map(
        lambda cards: Trade(tuple(cards))
    ),
    placements.map(Place),
    st.builds(
        lambda edge, dice, u, m: Attack(edge[0], edge[1], dice, u, m),
        edges,
        st.integers(1, 3),
        until,
        move,
    ),
    st.builds(lambda pair, a: Fortify(pair[0], pair[1], a), two_territories, amount),
)
setup_action = st.one_of(
    st.lists(territory, unique=True, max_size=N_TERRITORIES).map(lambda ts: Claim(tuple(ts))),
    placements.map(PlaceInitial),
    placements.map(PlaceNeutral),
    territory.map(Headquarters),
)


def symbolic(action: object) -> object:
    """What parsing gives back: a wild card is written Wild, whichever it was."""
    if isinstance(action, Trade):
        n = N_TERRITORIES
        return Trade(tuple(WILD_CARD if c >= n else c for c in action.cards))  # type: ignore[arg-type]
    return action


@settings(max_examples=150, deadline=None)
@given(st.lists(turn_action, max_size=8))
def test_turn_actions_round_trip(actions: list[object]) -> None:
    text = render_orders(actions, BOARD)  # type: ignore[arg-type]
    mail = parse_orders(text, BOARD)
    assert [o.action for o in mail.orders] == [symbolic(a) for a in actions]
    assert render_orders(mail.orders, BOARD) == text


@settings(max_examples=100, deadline=None)
@given(st.lists(setup_action, max_size=6))
def test_setup_actions_round_trip(actions: list[object]) -> None:
    text = render_orders(actions, BOARD)  # type: ignore[arg-type]
    mail = parse_orders(text, BOARD)
    assert [o.action for o in mail.setup_orders] == actions


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_round_trip_on_the_fantasy_map(data: st.DataObject) -> None:
    board = builtin_map("fantasy")
    a, b = data.draw(st.sampled_from(board.edges()))
    action = Attack(a, b, 2, Until("left", 3), Amount("all"))
    text = render_action(action, board)
    assert [o.action for o in parse_orders(text, board).orders] == [action]
