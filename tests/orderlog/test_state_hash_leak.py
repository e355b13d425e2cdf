"""The published state hash (issue 27): does it give away hands and missions?

Every turn report carries ``state_hash()``, the SHA-256 of the whole state: the
deck, every hand, every mission. A player knows everything in it but the other
hands, the other missions and the order of the draw pile. On real games played
by the engine (bots, the rulebook's dice), a player who tries every candidate
against the published hash finds:

- with secret missions and no cards, every other mission, from the first turn on
  (at most 13 x 12 x 11 tries on the classic map);
- with the default cards (traded cards go under the pile, in the open), every
  other hand, once the cards dealt at the start are all drawn: the pile then holds
  only publicly traded cards, in the order they were traded.

``recover`` is that brute force, given only what the viewer knows; scripts/
hash_bruteforce.py prints its figures over more games.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem.maps import builtin_map
from pbem.orderlog.replay import HASH_KEYED, HASH_PLAIN, GameDefinition, hash_key
from pbem.orders.textbot import TextBot
from pbem.paths import maps_dir
from pbem.rules.bots import make_bot
from pbem.rules.dice import DICE_V1, commitment, make_stream
from pbem.rules.events import CardDrawn
from pbem.rules.options import Options
from pbem.rules.simulate import game_secret, setup_game
from pbem.rules.state import ENDED, GameState
from pbem.rules.turnplan import play_turn
from pbem.rules.victory import mission_deck

BOARD = builtin_map("classic")


@dataclass
class Found:
    hands: dict[int, list[int]]
    missions: dict[int, int | None]
    tries: int


def played(options: Options, seed: int, players: int = 4) -> Iterator[tuple[GameState, bool]]:
    """The state after every turn of a bot game, and whether every card dealt into the
    pile at the start has been drawn (from then on the pile is public)."""
    bots = [make_bot("greedy", seed * 10 + s) for s in range(players)]
    state = setup_game(BOARD, options, players, seed, bots)
    dealt, draws = len(state.deck), 0
    secret = game_secret(seed)
    while state.phase != ENDED and state.turn < 300:
        rng = make_stream(DICE_V1, secret, state.game, f"turn:{state.turn}")
        events = play_turn(state, bots[state.current].plan_turn(state), rng)
        draws += sum(isinstance(e, CardDrawn) for e in events)
        yield state, draws >= dealt


def public_view(state: GameState, viewer: int) -> GameState:
    """What ``viewer`` knows: their own cards and mission, everyone's card count, the
    board, the traded cards; the other hands and missions blanked."""
    view = state.copy()
    for seat, player in enumerate(view.players):
        if seat != viewer:
            player.cards = [-1] * len(player.cards)
            player.mission = None
            player.mission_fallback = False
    return view


def recover(
    view: GameState, viewer: int, published: str, missions: bool, limit: int = 2_000_000
) -> Found | None:
    """Every assignment of the unseen cards to the others' hands (in order: the order
    of draws is public), times every deal of the other missions, hashed against
    ``published``; the first match, or None."""
    others = [s for s, p in enumerate(view.players) if s != viewer and not p.neutral]
    slots = [(s, i) for s in others for i in range(len(view.players[s].cards))]
    seen = set(view.players[viewer].cards) | set(view.deck) | set(view.discard)
    cards_in_play = view.board.deck_cards() if view.options.card_values != "none" else []
    unseen = [c for c in cards_in_play if c not in seen | set(view.removed_cards)]
    assert len(unseen) == len(slots), "the pile still holds cards nobody has seen"
    deals: list[tuple[int | None, ...]] = [tuple(None for _ in others)]
    if missions:
        colours = {p.colour for p in view.players if not p.neutral}
        mine = view.players[viewer].mission
        pool = [m for m in mission_deck(view.board, view.options, colours) if m != mine]
        deals = list(itertools.permutations(pool, len(others)))  # type: ignore[arg-type]
    tries = 0
    for cards in itertools.permutations(unseen):
        for (seat, i), card in zip(slots, cards, strict=True):
            view.players[seat].cards[i] = card
        for deal in deals:
            for seat, mission in zip(others, deal, strict=True):
                player = view.players[seat]
                player.mission = mission
                player.mission_fallback = (
                    mission is not None
                    and view.board.missions[mission].colour == player.colour != ""
                )
            tries += 1
            if view.state_hash() == published:
                return Found(
                    {s: list(view.players[s].cards) for s in others},
                    {s: view.players[s].mission for s in others},
                    tries,
                )
            if tries >= limit:
                return None
    return None


def test_missions_are_recovered_from_the_first_turns_hash() -> None:
    """Secret missions, no cards: the pile is empty all game; after turn 1 the
    viewer finds every other player's mission from the published hash."""
    options = Options(goal="mission", card_values="none")
    state, _ = next(played(options, seed=3))
    viewer = state.order[0]
    found = recover(public_view(state, viewer), viewer, state.state_hash(), missions=True)
    assert found is not None
    assert found.missions == {
        s: p.mission for s, p in enumerate(state.players) if s != viewer and not p.neutral
    }
    assert found.tries <= 13 * 12 * 11


def test_hands_are_recovered_once_the_pile_is_public() -> None:
    """The default cards (traded ones under the pile): at the first turn after every
    card dealt at the start was drawn, the viewer finds every other hand, card for
    card and in order, from the published hash."""
    options = Options()
    assert options.traded_cards == "bottom"
    state = next(s for s, public in played(options, seed=5) if public)
    viewer = state.current
    hidden = sum(len(p.cards) for s, p in enumerate(state.players) if s != viewer)
    assert hidden >= 2, "a state with something to find"
    found = recover(public_view(state, viewer), viewer, state.state_hash(), missions=False)
    assert found is not None
    assert found.hands == {s: p.cards for s, p in enumerate(state.players) if s != viewer}


@pytest.mark.parametrize("seed", [5])
def test_the_brute_force_can_fail(seed: int) -> None:
    """A hash of another state matches no candidate (the test above is no accident)."""
    state = next(s for s, public in played(Options(), seed=seed) if public)
    viewer = state.current
    assert recover(public_view(state, viewer), viewer, "0" * 64, missions=False) is None


# ------------------------------------------------------------------- the fix
def _definition(options: Options, version: int) -> GameDefinition:
    players = tuple((f"p{i + 1}", c) for i, c in enumerate(("red", "blue", "yellow", "green")))
    return GameDefinition("keyed", BOARD, options, players, bytes([7]) * 32, hash_version=version)


def test_a_keyed_hash_gives_nothing_away() -> None:
    """Hash version 2 (new games): the published hash is keyed by the game's secret;
    the same brute force that finds every mission from the plain hash finds nothing."""
    options = Options(goal="mission", card_values="none")
    state, _ = next(played(options, seed=3))
    viewer = state.order[0]
    keyed = _definition(options, HASH_KEYED).state_hash(state)
    assert keyed == state.keyed_hash(hash_key(bytes([7]) * 32)) != state.state_hash()
    assert recover(public_view(state, viewer), viewer, keyed, missions=True) is None
    plain = _definition(options, HASH_PLAIN).state_hash(state)
    assert plain == state.state_hash()  # version 1: what games and records before it hold
    assert recover(public_view(state, viewer), viewer, plain, missions=True) is not None


def test_keyed_hashes_are_written_verified_and_refused_in_records() -> None:
    """A record of a version-2 game says so ([HashVersion "2"]), and verifies only as
    one: the same hashes read as version 1 fail at the first step; a record without
    the header is version 1 (every record from before); an unknown version is refused."""
    from pbem.orderlog.records import Record, RecordError, read_record, verify_record, write_record
    from pbem.orderlog.replay import Entry, apply, start

    definition = _definition(Options(), HASH_KEYED)
    bots = [TextBot(make_bot("greedy", s)) for s in range(4)]
    game, _ = start(definition)
    entries: list[Entry] = []
    hashes: list[str | None] = []
    for seat in list(game.state.order):
        entries.append(Entry("setup", seat, bots[seat].write_setup(game.state, seat)))
    while game.state.phase != ENDED and game.state.turn < 6:
        if entries[len(hashes) :]:
            entry = entries[len(hashes)]
        else:
            state = game.state
            entry = Entry("turn", state.current, bots[state.current].write_turn(state), state.turn)
            entries.append(entry)
        step = apply(game, entry)
        hashes.append(step.state_hash if step else None)
    record = Record(
        "keyed", "classic", (Path(maps_dir()) / "classic.toml").read_text(encoding="utf-8"),
        Options(), list(definition.players), commitment(definition.secret), entries, hashes,
        hash_version=HASH_KEYED,
    )  # fmt: skip
    text = write_record(record)
    assert '[HashVersion "2"]' in text
    secret = definition.secret.hex()
    assert verify_record(read_record(text), secret).ok
    plain = text.replace('[HashVersion "2"]\n', "")
    assert read_record(plain).hash_version == HASH_PLAIN
    assert not verify_record(read_record(plain), secret).ok
    with pytest.raises(RecordError, match="HashVersion '3'"):
        read_record(text.replace('[HashVersion "2"]', '[HashVersion "3"]'))
