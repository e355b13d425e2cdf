"""Fog of war in the rules layer: what a player sees, the fogged state, the
events a player reads, the option's words, and bots that decide from their
own player's view only."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pbem.orders.errors import not_yours
from pbem.orders.forecast import FOG_NO_ODDS, fog_hides
from pbem.rules import fog
from pbem.rules.actions import Attack
from pbem.rules.bots import make_bot
from pbem.rules.events import (
    AttackResolved,
    CardDrawn,
    CardsTraded,
    Fortified,
    PlayerEliminated,
    TerritoriesDealt,
)
from pbem.rules.options import Options
from pbem.rules.simulate import play_game
from pbem.rules.state import ENDED, REINFORCE, GameState
from tests.rules.support import arrange, new_state

AUSTRALIA = ["Indonesia", "New Guinea", "Eastern Australia", "Western Australia"]


def fogged_state() -> GameState:
    """p0 holds Australia (5 armies each), p1 Siam (3) and China (9), the rest
    round robin to p1 and p2; p0 to reinforce with 4 armies."""
    state = new_state(3, Options(fog=True, placement="auto"))
    board = state.board
    t = {x.name: x.index for x in board.territories}
    arrange(
        state,
        {0: [t[n] for n in AUSTRALIA], 1: [t["Siam"], t["China"]]},
        {**{t[n]: 5 for n in AUSTRALIA}, t["Siam"]: 3, t["China"]: 9},
    )
    state.phase, state.current, state.reinforcements = REINFORCE, 0, 4
    return state


def index(state: GameState, name: str) -> int:
    return next(t.index for t in state.board.territories if t.name == name)


def test_a_player_sees_their_territories_and_their_neighbours() -> None:
    state = fogged_state()
    names = sorted(state.board.territories[t].name for t in fog.visible(state, 0))
    assert names == sorted([*AUSTRALIA, "Siam"])  # Indonesia's one neighbour outside
    assert len(fog.visible(state, 1)) > 5
    assert fog.visible(state, None) == frozenset(range(42))  # the GM: everything
    assert fog.visible(replace_options(state, fog=False), 0) == frozenset(range(42))
    state.phase = ENDED
    assert fog.visible(state, 0) == frozenset(range(42))  # the final board, to all


def replace_options(state: GameState, **changes: object) -> GameState:
    out = state.copy()
    out.options = replace(state.options, **changes)  # type: ignore[arg-type]
    return out


def test_the_fogged_state_hides_owner_and_armies() -> None:
    state = fogged_state()
    seen = fog.seen(state, 0)
    china, siam = index(state, "China"), index(state, "Siam")
    assert (seen.owner[siam], seen.armies[siam]) == (1, 3)
    assert (seen.owner[china], seen.armies[china]) == (fog.HIDDEN, 0)
    assert sum(1 for o in seen.owner if o == fog.HIDDEN) == 42 - 5
    assert state.owner[china] == 1 and state.armies[china] == 9  # the real state untouched
    assert fog.seen(state, None) is state
    plain = replace_options(state, fog=False)
    assert fog.seen(plain, 0) is plain


def test_events_a_player_reads_under_fog() -> None:
    state = fogged_state()
    view = fog.visible(state, 0)
    siam, china, indonesia = (index(state, n) for n in ("Siam", "China", "Indonesia"))
    near = AttackResolved(1, 0, siam, indonesia, (), False, 2, 5, "exhausted")
    far = AttackResolved(1, 2, china, index(state, "Mongolia"), (), True, 3, 0, "conquered")
    assert fog.event_seen(near, 0, view) == near
    assert fog.event_seen(far, 0, view) is None
    assert fog.event_seen(Fortified(1, china, siam, 4), 0, view) is None
    trade = CardsTraded(1, (0, 5, 42), 8, 2, ((0, 2),))
    assert fog.event_seen(trade, 0, view) == CardsTraded(1, (), 8, 2, ())
    assert fog.event_seen(trade, 1, view) == trade  # their own trade, whole
    assert fog.event_seen(TerritoriesDealt(1, (china,)), 0, view) is None
    assert fog.event_seen(PlayerEliminated(2, 1, 3), 0, view) == PlayerEliminated(2, 1, 3)
    assert fog.event_seen(CardDrawn(1, 7), 0, view) == CardDrawn(1, 7)
    assert fog.event_seen(far, None, view) == far  # the GM


def test_the_option_is_said_and_stored_only_when_on() -> None:
    on = Options(fog=True)
    assert on.applies("fog") and not Options().applies("fog")
    assert any(line.startswith("Fog of war: you see owners and armies") for line in on.describe())
    assert "fog" not in Options().to_dict() and on.to_dict()["fog"] is True
    assert Options.from_stored(Options().to_dict()).fog is False
    assert Options.from_stored(on.to_dict()).fog is True


def test_an_error_never_names_the_owner_under_fog() -> None:
    state = fogged_state()
    china = index(state, "China")
    assert not_yours(state, china) == "China is not yours"
    plain = replace_options(state, fog=False)
    assert not_yours(plain, china) == "China is not yours; it is p1's"


def test_no_odds_for_an_attack_into_the_fog() -> None:
    state = fogged_state()
    indonesia, siam, china = (index(state, n) for n in ("Indonesia", "Siam", "China"))
    assert not fog_hides(state, 0, [Attack(indonesia, siam)])
    assert fog_hides(state, 0, [Attack(indonesia, siam), Attack(siam, china)])
    assert "out of your sight" in FOG_NO_ODDS


def test_a_bot_decides_from_its_players_view_only() -> None:
    """Whatever happens out of p0's sight, p0's bot plans the same turn; without
    fog the same change of the hidden board changes the greedy bot's plan."""
    state = fogged_state()
    changed = state.copy()
    hidden = [t for t in range(42) if t not in fog.visible(state, 0)]
    for i, t in enumerate(hidden):
        changed.armies[t] = 1 + (i * 7) % 11
        changed.owner[t] = 1 if i % 3 else 2
    for kind in ("greedy", "random"):
        for seed in (1, 2, 3):
            plan = make_bot(kind, seed).plan_turn(state)
            assert make_bot(kind, seed).plan_turn(changed) == plan, (kind, seed)
            assert plan
    plain, plain_changed = replace_options(state, fog=False), replace_options(changed, fog=False)
    assert make_bot("greedy", 1).plan_turn(plain) != make_bot("greedy", 1).plan_turn(plain_changed)


def test_whole_fogged_games_of_bots_reach_a_winner() -> None:
    """Bots that see only their view still finish games: greedy (never into the
    fog) and random, four players on the classic map."""
    board = new_state(3).board
    for bot in ("greedy", "random", "greedy,random"):
        result = play_game(board, Options(fog=True), 4, seed=3, bot=bot, cap=3000)
        assert not result.capped and result.winner is not None, bot
        assert result.reason == "domination"


def test_two_players_place_the_neutral_only_where_they_see_under_fog() -> None:
    """Two players' blind placement under fog: a NEUTRAL placement out of the
    placer's sight is refused in words that do not say whose the territory is,
    whether it is neutral or the opponent's; in sight it is accepted; the bot
    places the neutral where its player sees. (A replay does not run this
    check: it is made at the door, like the army cap's.)"""
    from pbem.orders import parse_orders
    from pbem.orders.mailorders import validate_mail
    from pbem.rules import fog as fogrules
    from pbem.rules import opening
    from pbem.rules.actions import PlaceNeutral
    from pbem.rules.bots import make_bot
    from pbem.rules.dice import DiceStream
    from pbem.rules.options import Options
    from pbem.rules.state import PLACE
    from tests.rules.support import SECRET, classic

    options = Options(fog=True, placement="blind")
    state, _ = opening.new_game(
        classic(), options, "duel", [("ann", "red"), ("bob", "blue")],
        DiceStream(SECRET, "duel", "setup"),
    )  # fmt: skip
    assert state.phase == PLACE and state.neutral_seat == 2
    seat, other, neutral = 0, 1, 2
    seen = fogrules.sight(state, seat)
    names = state.board.territories
    own = next(t for t in range(42) if state.owner[t] == seat)
    near = next(t for t in seen if state.owner[t] == neutral)
    far_neutral = next(t for t in range(42) if state.owner[t] == neutral and t not in seen)
    far_other = next(t for t in range(42) if state.owner[t] == other and t not in seen)
    due, share = state.players[seat].to_place, opening.neutral_share(state, seat)

    def problems(where: int) -> list[str]:
        text = f"PLACE {due} {names[own].name}\nNEUTRAL {share} {names[where].name}\n"
        return [p.message for p in validate_mail(state, seat, parse_orders(text, state.board))]

    assert problems(near) == []
    for hidden in (far_neutral, far_other):
        assert problems(hidden) == [
            f"{names[hidden].name} is out of your sight (fog of war): NEUTRAL places on the "
            "neutral territories you can see"
        ]
    plan = make_bot("greedy", 5).plan_setup(state, seat)
    placed = [t for a in plan if isinstance(a, PlaceNeutral) for _, t in a.placements]
    assert placed and set(placed) <= seen


@pytest.mark.parametrize("game", ["duel", "duel-2", "duel-3", "duel-4", "duel-5"])
def test_two_players_default_setup_under_fog_passes_the_door(game: str) -> None:
    """The defaults a missed setup plays (and `pbem process`) place the neutral
    where the player sees: refused at the door, they left the setup waiting
    for ever."""
    from pbem.orders import parse_orders, render_orders
    from pbem.orders.mailorders import validate_mail
    from pbem.rules import opening
    from pbem.rules.defaults import default_setup
    from pbem.rules.dice import DiceStream
    from pbem.rules.options import Options
    from tests.rules.support import SECRET, classic

    options = Options(fog=True, placement="blind")
    state, _ = opening.new_game(
        classic(), options, game, [("ann", "red"), ("bob", "blue")],
        DiceStream(SECRET, game, "setup"),
    )  # fmt: skip
    for seat in (0, 1):
        text = render_orders(default_setup(state, seat), state.board)
        assert validate_mail(state, seat, parse_orders(text, state.board)) == [], text
