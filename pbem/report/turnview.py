"""What happened in a turn, as a viewer may see it: the turn report's sections.

The events of the turn are told in order; each kind of event adds its lines to
one section (reinforcements, attacks, fortify, cards), and a few also to the
viewer's private lines. The viewer's seat decides what is private: another
seat's card or standing order never enters a view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pbem.report.context import GameInfo, TurnReport
from pbem.report.fogview import PUBLIC, hides_turn
from pbem.report.textfmt import join_words, plural
from pbem.report.views import Who, card_text, conquered, due, hand_text, territory_name, who
from pbem.rules.board import Board
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    AttackSkipped,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    DefenceOrdered,
    Fortified,
    FortifySkipped,
    GameWon,
    MovedIn,
    PlaceSkipped,
    PlayerEliminated,
    PointScored,
    Roll,
    TargetDealt,
    TeamHandover,
    TradeSkipped,
)
from pbem.rules.state import GameState

ROLL_KEY = "each roll: [attacker v defender dice: armies lost by attacker/defender]"
STOPS = {
    "exhausted": "failed, {source} down to {left}",
    "until_left": "stopped with {left} left on {source}",
    "max_rolls": "stopped after {rolls}",
}
WIN_REASONS = {
    "domination": "by eliminating every other player",
    "capitals": "by holding the headquarters",
    "mission": "by completing a secret mission",
    "max_turns": "on the turn limit: most territories",
    "assassin": "as assassin: their secret target was eliminated",
    "points": "on the round limit: most points",
    "team": "with their team: every other team is out",
}


@dataclass(frozen=True)
class AttackLine:
    head: str  # "Kamchatka (7) -> Japan (3, bob)"
    rolls: tuple[str, ...]  # "[6 5 2 v 4 3: 0/2]"
    result: str
    conquered: bool


@dataclass
class Section:
    title: str
    items: list[str | AttackLine] = field(default_factory=list)
    note: str = ""  # a key printed under the title


@dataclass
class TurnView:
    mover: Who
    headline: list[str]
    sections: list[Section]
    changed: list[int]
    conquests: list[str]
    out: list[str]
    continents_taken: list[str]
    winner: Who | None
    win_text: str
    private: list[str]  # the viewer's own lines (cards drawn or taken)


def turn_view(report: TurnReport, viewer: int | None) -> TurnView:
    """What happened in a turn, as ``viewer`` may see it."""
    telling = _Telling(report, viewer)
    telling.opening()
    telling.tell(list(report.events))
    telling.closing()
    return telling.view()


@dataclass
class _Telling:
    """A turn's sections as its events are told, one event at a time."""

    report: TurnReport
    viewer: int | None
    reinforce: Section = field(default_factory=lambda: Section("Reinforcements"))
    attacks: Section = field(default_factory=lambda: Section("Attacks", note=ROLL_KEY))
    fortify: Section = field(default_factory=lambda: Section("Fortify"))
    cards: Section = field(default_factory=lambda: Section("Cards"))
    private: list[str] = field(default_factory=list)
    placed: list[str] = field(default_factory=list)  # the mover's placements, one sentence
    out: list[str] = field(default_factory=list)
    standing: list[str] = field(default_factory=list)  # the viewer's DEFEND orders
    last_attack: AttackLine | None = None  # the attack a MovedIn completes
    winner: Who | None = None
    win_text: str = ""

    after: GameState = field(init=False)
    board: Board = field(init=False)
    name: str = field(init=False)  # the mover's
    # " in your sight" in another's turn under fog: what it does not tell may
    # have happened out of the viewer's sight ("did not attack" would be untrue)
    sight: str = field(init=False)

    def __post_init__(self) -> None:
        self.after = self.report.after
        self.board = self.after.board
        self.name = self.after.players[self.report.seat].name
        if not hides_turn(self.report, self.viewer):
            self.sight = ""
        else:  # the site's public view has no "you": it sees no territory at all
            self.sight = " in public view" if self.viewer == PUBLIC else " in your sight"

    def opening(self) -> None:
        """The lines before any event: a missed turn, the armies due, a forced trade."""
        report, name = self.report, self.name
        if report.missed:
            self.reinforce.items.append(
                f"{name} sent no orders in time: the default turn was played (forced trades, "
                "armies spread on the borders, no attacks, no fortify)."
            )
        if hides_turn(report, self.viewer):  # the fog hides another's territory count
            self.reinforce.items.append(f"{name} received their armies.")
        else:
            self.reinforce.items.append(due(report.before, report.seat).sentence(name))
        if report.before.must_trade:
            held = len(report.before.players[report.seat].cards)
            self.reinforce.items.append(f"{name} held {held} cards and had to trade a set.")

    def tell(self, events: list[Any]) -> None:
        """Every event in order; a trade takes the placements of its bonus with it."""
        i = 0
        while i < len(events):
            event = events[i]
            i += 1
            if isinstance(event, CardsTraded):
                bonus_places = len(event.bonus) + (1 if event.forced else 0)
                extra = [e for e in events[i : i + bonus_places] if isinstance(e, ArmiesPlaced)]
                i += len(extra)
                self.traded(event, extra)
                continue
            told = _TELLERS.get(type(event))
            if told is not None:
                told(self, event)

    def closing(self) -> None:
        """What a section says when no event added to it, and the standing orders."""
        name, sight = self.name, self.sight
        if self.placed:
            self.reinforce.items.append(f"{name} placed {join_words(self.placed)}{sight}.")
        if not [x for x in self.attacks.items if isinstance(x, AttackLine)]:
            self.attacks.note = ""
            if not self.attacks.items:
                self.attacks.items.append(f"{name} did not attack{sight}.")
        if not self.fortify.items:
            self.fortify.items.append(f"No fortifying move{sight}.")
        self.fortify.items += self.standing
        if not self.cards.items:
            self.cards.items.append("No card drawn (no territory taken).")

    def view(self) -> TurnView:
        """The view: the sections, and the headline of conquests and continents."""
        report, board, after = self.report, self.board, self.after
        changed = conquered(report.before, after)
        conquests = [territory_name(board, t) for t in changed if after.owner[t] == report.seat]
        gained, lost_continents = _continent_changes(report.before, after)
        taken_continents = [board.continents[c].name for s, c in gained if s == report.seat]
        headline = _headline(after, report.seat, conquests, self.out, gained, lost_continents)
        if self.sight:  # another's turn under fog: what was out of sight is not told
            headline[0] = headline[0][:-1] + self.sight + "."
        if self.winner is not None:
            headline.append(f"{self.winner.name} wins the game {self.win_text}!")
        return TurnView(
            who(report.game, after, report.seat),
            headline,
            [self.reinforce, self.attacks, self.fortify, self.cards],
            changed,
            conquests,
            self.out,
            taken_continents,
            self.winner,
            self.win_text,
            self.private,
        )

    # ------------------------------------------------------------ one event each
    def traded(self, event: CardsTraded, extra: list[ArmiesPlaced]) -> None:
        line = _trade_line(self.board, self.after, event, extra)
        (self.attacks if event.forced else self.reinforce).items.append(line)

    def armies_placed(self, event: ArmiesPlaced) -> None:
        lost = f" ({event.lost} lost over the cap)" if event.lost else ""
        where = f"{event.armies} on {territory_name(self.board, event.territory)}{lost}"
        if self.last_attack is not None or self.attacks.items:  # an elimination's forced trade
            self.attacks.items.append(f"{self.name} placed {where} (armies of a forced trade).")
        else:
            self.placed.append(where)

    def place_skipped(self, event: PlaceSkipped) -> None:
        self.attacks.items.append(
            f"PLACE {event.armies} {territory_name(self.board, event.territory)}: skipped, "
            f"{event.reason}."
        )

    def trade_skipped(self, event: TradeSkipped) -> None:
        cards = ", ".join(self.board.card_name(c) for c in event.cards)
        self.attacks.items.append(f"TRADE {cards}: skipped, {event.reason}.")

    def defence_ordered(self, event: DefenceOrdered) -> None:
        if self.viewer == event.seat:
            dice = "1 die" if event.dice == 1 else "the most dice allowed"
            where = territory_name(self.board, event.territory)
            line = f"Standing order: you defend {where} with {dice}."
            self.standing.append(line)
            self.private.append(line)

    def attack_resolved(self, event: AttackResolved) -> None:
        attack = _attack_line(self.report.game, self.after, event)
        self.attacks.items.append(attack)
        self.last_attack = attack

    def moved_in(self, event: MovedIn) -> None:
        if self.last_attack is not None:
            index = self.attacks.items.index(self.last_attack)
            self.attacks.items[index] = _with_move(self.board, self.last_attack, event)
            self.last_attack = None

    def attack_skipped(self, event: AttackSkipped) -> None:
        board = self.board
        self.attacks.items.append(
            f"{territory_name(board, event.source)} -> {territory_name(board, event.target)}:"
            f" skipped, {event.reason}."
        )

    def player_eliminated(self, event: PlayerEliminated) -> None:
        players = self.after.players
        loser = players[event.seat].name
        self.out.append(loser)
        if players[event.by].neutral:
            self.attacks.items.append(f"{loser} left the game: their territories are now neutral.")
        else:
            taken = f", who takes {plural(event.cards_taken, 'card')}" if event.cards_taken else ""
            by = players[event.by].name
            self.attacks.items.append(f"{loser} is out: eliminated by {by}{taken}.")

    def point_scored(self, event: PointScored) -> None:
        name = self.after.players[event.seat].name
        self.attacks.items.append(f"{name} scores a point ({plural(event.points, 'point')}).")

    def target_dealt(self, event: TargetDealt) -> None:
        """An inherited assassin target: told to the hunter alone."""
        if self.viewer == event.seat and event.inherited_from is not None:
            players = self.after.players
            line = (
                f"Your new secret target: {players[event.target].name} (the target of "
                f"{players[event.inherited_from].name}, who left the game)."
            )
            self.attacks.items.append(line)
            self.private.append(line)

    def team_handover(self, event: TeamHandover) -> None:
        players = self.after.players
        self.out.append(players[event.seat].name)
        held = (  # a count below 0: hidden by the fog of war
            plural(event.territories, "territory", "territories")
            if event.territories >= 0
            else "territories"
        )
        self.attacks.items.append(
            f"{players[event.seat].name} left the game: their {held} and "
            f"{plural(event.cards, 'card')} go to their teammate {players[event.to].name}."
        )

    def cards_taken(self, event: CardsTaken) -> None:
        if self.viewer == event.seat:
            line = f"You took {hand_text(self.board, event.cards)}."
            self.attacks.items.append(line)
            self.private.append(line)

    def fortified(self, event: Fortified) -> None:
        board = self.board
        asked = f" (asked {event.asked})" if event.asked is not None else ""
        lost = f" ({event.lost} lost over the cap)" if event.lost else ""
        self.fortify.items.append(
            f"{self.name} moved {plural(event.armies, 'army', 'armies')} from "
            f"{territory_name(board, event.source)} to "
            f"{territory_name(board, event.target)}{asked}{lost}."
        )

    def fortify_skipped(self, event: FortifySkipped) -> None:
        board = self.board
        self.fortify.items.append(
            f"{territory_name(board, event.source)} -> {territory_name(board, event.target)}:"
            f" skipped, {event.reason}."
        )

    def card_drawn(self, event: CardDrawn) -> None:
        if self.viewer == event.seat:
            line = f"You drew {card_text(self.board, event.card)}."
            self.cards.items.append(line)
            self.private.append(line)
        else:
            self.cards.items.append(f"{self.after.players[event.seat].name} drew a card.")

    def deck_shuffled(self, event: DeckShuffled) -> None:
        self.cards.items.append(
            f"The discards were shuffled into a new draw pile of {event.size} cards."
        )

    def game_won(self, event: GameWon) -> None:
        self.winner = who(self.report.game, self.after, event.seat)
        self.win_text = _win_text(self.after, event)


_TELLERS: dict[type, Callable[[_Telling, Any], None]] = {
    ArmiesPlaced: _Telling.armies_placed,
    PlaceSkipped: _Telling.place_skipped,
    TradeSkipped: _Telling.trade_skipped,
    DefenceOrdered: _Telling.defence_ordered,
    AttackResolved: _Telling.attack_resolved,
    MovedIn: _Telling.moved_in,
    AttackSkipped: _Telling.attack_skipped,
    PlayerEliminated: _Telling.player_eliminated,
    CardsTaken: _Telling.cards_taken,
    TeamHandover: _Telling.team_handover,
    Fortified: _Telling.fortified,
    FortifySkipped: _Telling.fortify_skipped,
    CardDrawn: _Telling.card_drawn,
    DeckShuffled: _Telling.deck_shuffled,
    GameWon: _Telling.game_won,
    PointScored: _Telling.point_scored,
    TargetDealt: _Telling.target_dealt,
}


def _trade_line(
    board: Board, state: GameState, event: CardsTraded, placed: list[ArmiesPlaced]
) -> str:
    name = state.players[event.seat].name
    names = join_words([board.card_name(c) for c in event.cards]) or "a set"  # fog: no cards
    line = f"{name} traded {names} (set {event.set_number}) for {event.value} armies"
    if event.bonus:
        bonus = join_words(
            [f"+{armies} on {territory_name(board, t)}" for t, armies in event.bonus]
        )
        line += f"; {bonus} for holding the card's territory"
    if event.forced and placed:
        where = territory_name(board, placed[-1].territory)
        line = f"{line}, placed on {where} (a forced trade after an elimination)"
    return line + "."


def _dice(roll: Roll) -> str:
    a = " ".join(str(d) for d in roll.attacker)
    d = " ".join(str(d) for d in roll.defender)
    extra = ""
    if roll.rerolled:
        extra += f" reroll {roll.rerolled[0]}>{roll.rerolled[1]}"
    if roll.commander:
        extra += f" commander {roll.commander[0]}>6"
    return f"[{a} v {d}: {roll.attacker_losses}/{roll.defender_losses}{extra}]"


def _attack_line(game: GameInfo, state: GameState, event: AttackResolved) -> AttackLine:
    board = state.board
    lost = sum(r.attacker_losses for r in event.rolls)
    killed = sum(r.defender_losses for r in event.rolls)
    source = territory_name(board, event.source)
    target = territory_name(board, event.target)
    defender = state.players[event.defender].name
    head = (
        f"{source} ({event.attacker_left + lost}) -> "
        f"{target} ({event.defender_left + killed}, {defender}):"
    )
    rolls = tuple(_dice(r) for r in event.rolls)
    if event.conquered:
        result = "taken"
    else:
        result = STOPS.get(event.stop, "stopped").format(
            source=source, left=event.attacker_left, rolls=plural(len(event.rolls), "roll")
        )
    result += f" (lost {lost}, killed {killed})."
    return AttackLine(head, rolls, result, event.conquered)


def _with_move(board: Board, line: AttackLine, event: MovedIn) -> AttackLine:
    moved = f"{event.armies} moved in"
    if event.asked is not None:
        moved += f" (asked {event.asked})"
    if event.lost:
        moved += f" ({event.lost} lost over the cap)"
    result = line.result[:-1] + f", {moved}."
    return AttackLine(line.head, line.rolls, result, line.conquered)


def _win_text(state: GameState, event: GameWon) -> str:
    text = WIN_REASONS.get(event.reason, event.reason)
    if event.detail:
        text += f" ({event.detail})"
    return text


def _continent_changes(
    before: GameState, after: GameState
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(seat, continent) pairs gained and lost between two states."""
    gained, lost = [], []
    for seat in range(len(after.players)):
        was = set(before.continents_held(seat)) if seat < len(before.players) else set()
        now = set(after.continents_held(seat))
        gained += [(seat, c) for c in sorted(now - was)]
        lost += [(seat, c) for c in sorted(was - now)]
    return gained, lost


def _headline(
    state: GameState,
    seat: int,
    conquests: list[str],
    out: list[str],
    gained: list[tuple[int, int]],
    lost: list[tuple[int, int]],
) -> list[str]:
    board = state.board
    name = state.players[seat].name
    lines = []
    if conquests:
        if len(conquests) <= 4:
            lines.append(f"{name} took {join_words(conquests)}.")
        else:
            lines.append(f"{name} took {len(conquests)} territories.")
    else:
        lines.append(f"{name} took no territory.")
    for s in sorted({s for s, _ in gained}):
        held = [board.continents[c] for g, c in gained if g == s]
        names = join_words([f"{c.name} (+{c.bonus})" for c in held])
        lines.append(f"{state.players[s].name} now holds {names}.")
    for s in sorted({s for s, _ in lost}):
        names = join_words([board.continents[c].name for g, c in lost if g == s])
        lines.append(f"{state.players[s].name} lost {names}.")
    if out:
        lines.append(f"{join_words(out)} {'is' if len(out) == 1 else 'are'} out.")
    return lines
