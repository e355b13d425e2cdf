"""Helpers shared by the rules tests: positions built by hand, scripted dice, and
a shadow that replays events to check that they tell the whole story.

(No tests here; the module name keeps it with the rules tests it serves.)
"""

from __future__ import annotations

from dataclasses import replace

from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.rules import engine, opening
from pbem.rules.board import Board
from pbem.rules.dice import DiceStream
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    Event,
    Fortified,
    MovedIn,
)
from pbem.rules.options import Options
from pbem.rules.state import ATTACK, GameState

SECRET = bytes(range(32))
_BOARD: Board | None = None


def classic() -> Board:
    global _BOARD
    if _BOARD is None:
        _BOARD = builtin_map("classic")
    return _BOARD


class ScriptedDice:
    """A stand-in for the game's stream that returns the dice a test chose.

    Records how many dice each roll asked for. ``shuffle`` reverses the list (so
    a test knows the exact result) and counts the calls.
    """

    def __init__(self, dice: list[int] | tuple[int, ...] = ()) -> None:
        self.dice = list(dice)
        self.requests: list[int] = []
        self.shuffles = 0

    def roll(self, count: int) -> list[int]:
        if len(self.dice) < count:
            raise AssertionError(f"the test gave too few dice: {count} asked, {self.dice} left")
        self.requests.append(count)
        out, self.dice = self.dice[:count], self.dice[count:]
        return out

    def die(self) -> int:
        self.requests.append(1)
        return self.dice.pop(0)

    def uniform(self, n: int) -> int:
        return 0

    def shuffle(self, items: list) -> None:
        self.shuffles += 1
        items.reverse()


def new_state(players: int = 3, options: Options | None = None, game: str = "t") -> GameState:
    """A game just past its setup (dealt, armies placed by the seeded stream), with
    ``options`` in force from then on. With goal = capital it waits for HQs."""
    options = options or load_preset("classic")
    setup = replace(options, placement="auto", claim="deal")
    colours = ("red", "blue", "yellow", "green", "black", "purple")
    seats = [(f"p{i}", colours[i]) for i in range(players)]
    state, _ = opening.new_game(classic(), setup, game, seats, DiceStream(SECRET, game, "setup"))
    state.options = options
    return state


def arrange(
    state: GameState,
    lands: dict[int, list[int]],
    armies: dict[int, int] | None = None,
    default_armies: int = 1,
) -> None:
    """Give each seat the territories listed; every other territory goes round
    robin to the seats not listed (or to all playing seats when all are listed)."""
    n = len(state.board.territories)
    owner = [-1] * n
    for seat, territories in lands.items():
        for t in territories:
            owner[t] = seat
    rest = [s for s in state.order if s not in lands] or list(state.order)
    free = [t for t in range(n) if owner[t] < 0]
    for i, t in enumerate(free):
        owner[t] = rest[i % len(rest)]
    state.owner = owner
    state.armies = [default_armies] * n
    for t, a in (armies or {}).items():
        state.armies[t] = a
    for seat, player in enumerate(state.players):
        player.alive = seat in owner


def give_cards(state: GameState, seat: int, cards: list[int]) -> None:
    """Move ``cards`` from wherever they are into the hand of ``seat``."""
    for card in cards:
        for pile in (state.deck, state.discard, *(p.cards for p in state.players)):
            if card in pile:
                pile.remove(card)
                break
        else:
            raise AssertionError(f"card {card} is nowhere")
        state.players[seat].cards.append(card)


def start_turn(state: GameState, seat: int, rng: ScriptedDice | None = None) -> list[Event]:
    """End the turn of the seat before ``seat`` (no conquest, nothing due) so
    that ``seat``'s turn begins through the engine's own path."""
    alive = state.alive_seats()
    before = alive[(alive.index(seat) - 1) % len(alive)]
    state.current = before
    state.phase = ATTACK
    state.reinforcements = 0
    state.must_trade = False
    state.conquered_this_turn = False
    state.pending_move = None
    return engine.end_turn(state, rng or ScriptedDice())


def full_deck_ok(state: GameState) -> bool:
    """Draw pile + hands + discards + removed cards = every card, once."""
    cards = list(state.deck) + list(state.discard) + list(state.removed_cards)
    for p in state.players:
        cards += p.cards
    expected = range(state.board.n_cards) if state.options.card_values != "none" else range(0)
    return sorted(cards) == list(expected)


class Shadow:
    """A copy of the board that changes only through events.

    After every step the shadow must equal the state: proof that the events
    report every army and card that moved, and that armies change only by
    placements (reinforcements, card bonuses), dice losses and the max_armies cap.
    """

    def __init__(self, state: GameState) -> None:
        self.owner = list(state.owner)
        self.armies = list(state.armies)
        self.hands = [list(p.cards) for p in state.players]
        self.deck = list(state.deck)
        self.discard = list(state.discard)
        self.deck_order_known = True
        self.placed = 0  # armies added by placements
        self.lost_in_battle = 0
        self.lost_to_cap = 0

    def apply(self, events: list[Event], state: GameState) -> None:
        for event in events:
            if isinstance(event, ArmiesPlaced):
                self.armies[event.territory] += event.armies
                self.placed += event.armies
                self.lost_to_cap += event.lost
            elif isinstance(event, AttackResolved):
                for roll in event.rolls:
                    self.armies[event.source] -= roll.attacker_losses
                    self.armies[event.target] -= roll.defender_losses
                    self.lost_in_battle += roll.attacker_losses + roll.defender_losses
                assert self.armies[event.source] == event.attacker_left
                assert self.armies[event.target] == event.defender_left
                if event.conquered:
                    assert event.defender_left == 0
                    self.owner[event.target] = event.seat
            elif isinstance(event, MovedIn | Fortified):
                self.armies[event.source] -= event.armies + event.lost
                self.armies[event.target] += event.armies
                self.lost_to_cap += event.lost
            elif isinstance(event, CardsTraded):
                for card in event.cards:
                    self.hands[event.seat].remove(card)
                mode = state.options.traded_cards
                if mode != "removed":  # removed (2016): out of the game
                    pile = self.deck if mode == "bottom" else self.discard
                    pile.extend(event.cards)
            elif isinstance(event, CardsTaken):
                self.hands[event.seat].extend(event.cards)
                self.hands[event.from_seat] = []
            elif isinstance(event, DeckShuffled) and event.reshuffle:
                # the new order comes from the stream: from here on compare contents
                assert not self.deck
                self.deck, self.discard = sorted(self.discard), []
                self.deck_order_known = False
            elif isinstance(event, CardDrawn):
                if self.deck_order_known:
                    assert self.deck.pop(0) == event.card
                else:
                    self.deck.remove(event.card)
                self.hands[event.seat].append(event.card)

    def check(self, state: GameState) -> None:
        assert self.owner == state.owner
        assert self.armies == state.armies
        assert self.hands == [p.cards for p in state.players]
        if not self.deck_order_known:
            assert self.deck == sorted(state.deck)
            self.deck, self.deck_order_known = list(state.deck), True
        assert self.deck == state.deck
        assert self.discard == state.discard


def check_board(state: GameState) -> None:
    """Every territory has an owner still in the game and at least one army."""
    n_seats = len(state.players)
    for t, (seat, armies) in enumerate(zip(state.owner, state.armies, strict=True)):
        assert 0 <= seat < n_seats, f"territory {t} has no owner"
        assert state.players[seat].alive, f"territory {t} belongs to a dead seat {seat}"
        assert armies >= 1, f"territory {t} has {armies} armies"
        cap = state.options.max_armies
        assert not cap or armies <= cap, f"territory {t} holds {armies} > {cap}"
    assert state.pending_move is None
    assert full_deck_ok(state)


def play_checked_game(
    options: Options, players: int, seed: int, bots: list[str], cap: int = 3000
) -> tuple[GameState, int]:
    """A whole bot game, checking the board and the events after every turn."""
    from pbem.rules.bots import make_bot
    from pbem.rules.simulate import game_secret, setup_game
    from pbem.rules.state import ENDED
    from pbem.rules.turnplan import play_turn

    board = classic()
    players_bots = [make_bot(bots[s % len(bots)], seed * 10 + s) for s in range(players)]
    state = setup_game(board, options, players, seed, players_bots)
    secret = game_secret(seed)
    shadow = Shadow(state)
    total = sum(state.armies)
    check_board(state)
    turns = 0
    while state.phase != ENDED and state.turn <= cap:
        rng = DiceStream(secret, state.game, f"turn:{state.turn}")
        placed, lost = shadow.placed, shadow.lost_in_battle
        events = play_turn(state, players_bots[state.current].plan_turn(state), rng)
        shadow.apply(events, state)
        shadow.check(state)
        gained = shadow.placed - placed
        total += gained - (shadow.lost_in_battle - lost)
        assert sum(state.armies) == total
        check_board(state)
        turns += 1
    return state, turns
