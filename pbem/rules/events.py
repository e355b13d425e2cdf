"""What happened, as plain data: the engine returns these from every step.

Reports, receipts and logs are built from events alone, so every die rolled
is in them. ``private`` events are shown only to the seat they name.

Events are values: compare them, hash them, never change one. (They are not
``frozen`` dataclasses only because a frozen dataclass is slower to build,
and a simulated turn builds many of them.) Each writes its
own ``__init__`` (``init=False``): compiled with mypyc, a generated one would
run as Python code, and building events is a good part of a simulated game.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar


class Event:
    """The common base: ``kind`` names the event in stored JSON, ``private`` events
    are shown only to their seat. Each subclass sets both after its definition
    (compiled with mypyc, a ClassVar in a dataclass body would become a field)."""

    __slots__ = ()
    kind: ClassVar[str] = "event"
    private: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = asdict(self)  # type: ignore[call-overload]  # subclasses are
        data["kind"] = self.kind
        return data


@dataclass(init=False, slots=True, unsafe_hash=True)
class TurnOrderDrawn(Event):
    order: tuple[int, ...]

    def __init__(self, order: tuple[int, ...]) -> None:
        self.order = order


TurnOrderDrawn.kind = "turn_order"


@dataclass(init=False, slots=True, unsafe_hash=True)
class TerritoriesDealt(Event):
    seat: int
    territories: tuple[int, ...]

    def __init__(self, seat: int, territories: tuple[int, ...]) -> None:
        self.seat = seat
        self.territories = territories


TerritoriesDealt.kind = "dealt"


@dataclass(init=False, slots=True, unsafe_hash=True)
class TerritoryClaimed(Event):
    seat: int
    territory: int

    def __init__(self, seat: int, territory: int) -> None:
        self.seat = seat
        self.territory = territory


TerritoryClaimed.kind = "claimed"


@dataclass(init=False, slots=True, unsafe_hash=True)
class MissionDealt(Event):
    seat: int
    mission: int  # index into board.missions
    fallback: bool = False  # own-colour "destroy" mission turned into 24 territories

    def __init__(self, seat: int, mission: int, fallback: bool = False) -> None:
        self.seat = seat
        self.mission = mission
        self.fallback = fallback


MissionDealt.kind = "mission"
MissionDealt.private = True


@dataclass(init=False, slots=True, unsafe_hash=True)
class HeadquartersChosen(Event):
    seat: int
    territory: int

    def __init__(self, seat: int, territory: int) -> None:
        self.seat = seat
        self.territory = territory


HeadquartersChosen.kind = "hq"


@dataclass(init=False, slots=True, unsafe_hash=True)
class DeckShuffled(Event):
    size: int
    reshuffle: bool = False  # discards reshuffled into an empty pile

    def __init__(self, size: int, reshuffle: bool = False) -> None:
        self.size = size
        self.reshuffle = reshuffle


DeckShuffled.kind = "deck_shuffled"


@dataclass(init=False, slots=True, unsafe_hash=True)
class TurnBegan(Event):
    turn: int
    seat: int
    territories: int
    base: int  # max(3, territories // 3)
    continents: tuple[int, ...]  # continents held whole
    bonus: int  # their bonus armies
    must_trade: bool

    def __init__(
        self,
        turn: int,
        seat: int,
        territories: int,
        base: int,
        continents: tuple[int, ...],
        bonus: int,
        must_trade: bool,
    ) -> None:
        self.turn = turn
        self.seat = seat
        self.territories = territories
        self.base = base
        self.continents = continents
        self.bonus = bonus
        self.must_trade = must_trade


TurnBegan.kind = "turn_began"


@dataclass(init=False, slots=True, unsafe_hash=True)
class CardsTraded(Event):
    seat: int
    cards: tuple[int, ...]
    value: int
    set_number: int  # 1 for the first set traded in the game
    bonus: tuple[tuple[int, int], ...] = ()  # (territory, armies) placed by the card bonus
    forced: bool = False  # traded automatically after an elimination

    def __init__(
        self,
        seat: int,
        cards: tuple[int, ...],
        value: int,
        set_number: int,
        bonus: tuple[tuple[int, int], ...] = (),
        forced: bool = False,
    ) -> None:
        self.seat = seat
        self.cards = cards
        self.value = value
        self.set_number = set_number
        self.bonus = bonus
        self.forced = forced


CardsTraded.kind = "traded"


@dataclass(init=False, slots=True, unsafe_hash=True)
class ArmiesPlaced(Event):
    seat: int
    territory: int
    armies: int
    lost: int = 0  # armies over the max_armies cap, lost

    def __init__(self, seat: int, territory: int, armies: int, lost: int = 0) -> None:
        self.seat = seat
        self.territory = territory
        self.armies = armies
        self.lost = lost


ArmiesPlaced.kind = "placed"


@dataclass(init=False, slots=True, unsafe_hash=True)
class Roll:
    attacker: tuple[int, ...]  # dice sorted high to low
    defender: tuple[int, ...]
    attacker_losses: int
    defender_losses: int
    rerolled: tuple[int, int] | None = None  # (old, new) value of a card re-roll
    commander: tuple[int, int] | None = None  # (old value, 6) of the commander die

    def __init__(
        self,
        attacker: tuple[int, ...],
        defender: tuple[int, ...],
        attacker_losses: int,
        defender_losses: int,
        rerolled: tuple[int, int] | None = None,
        commander: tuple[int, int] | None = None,
    ) -> None:
        self.attacker = attacker
        self.defender = defender
        self.attacker_losses = attacker_losses
        self.defender_losses = defender_losses
        self.rerolled = rerolled
        self.commander = commander


@dataclass(init=False, slots=True, unsafe_hash=True)
class AttackResolved(Event):
    seat: int
    defender: int
    source: int
    target: int
    rolls: tuple[Roll, ...]
    conquered: bool
    attacker_left: int  # armies on source after the last roll
    defender_left: int
    stop: str  # "conquered", "exhausted", "until_left", "max_rolls"

    def __init__(
        self,
        seat: int,
        defender: int,
        source: int,
        target: int,
        rolls: tuple[Roll, ...],
        conquered: bool,
        attacker_left: int,
        defender_left: int,
        stop: str,
    ) -> None:
        self.seat = seat
        self.defender = defender
        self.source = source
        self.target = target
        self.rolls = rolls
        self.conquered = conquered
        self.attacker_left = attacker_left
        self.defender_left = defender_left
        self.stop = stop


AttackResolved.kind = "attack"


@dataclass(init=False, slots=True, unsafe_hash=True)
class AttackSkipped(Event):
    seat: int
    source: int
    target: int
    reason: str

    def __init__(self, seat: int, source: int, target: int, reason: str) -> None:
        self.seat = seat
        self.source = source
        self.target = target
        self.reason = reason


AttackSkipped.kind = "attack_skipped"


@dataclass(init=False, slots=True, unsafe_hash=True)
class MovedIn(Event):
    seat: int
    source: int
    target: int
    armies: int
    asked: int | None = None  # what the order asked, when it was clamped
    lost: int = 0  # always 0: moves are clamped to max_armies (kept for stored events)

    def __init__(
        self,
        seat: int,
        source: int,
        target: int,
        armies: int,
        asked: int | None = None,
        lost: int = 0,
    ) -> None:
        self.seat = seat
        self.source = source
        self.target = target
        self.armies = armies
        self.asked = asked
        self.lost = lost


MovedIn.kind = "moved_in"


@dataclass(init=False, slots=True, unsafe_hash=True)
class PlayerEliminated(Event):
    seat: int
    by: int
    cards_taken: int

    def __init__(self, seat: int, by: int, cards_taken: int) -> None:
        self.seat = seat
        self.by = by
        self.cards_taken = cards_taken


PlayerEliminated.kind = "eliminated"


@dataclass(init=False, slots=True, unsafe_hash=True)
class CardsTaken(Event):
    seat: int  # who took them
    cards: tuple[int, ...]
    from_seat: int

    def __init__(self, seat: int, cards: tuple[int, ...], from_seat: int) -> None:
        self.seat = seat
        self.cards = cards
        self.from_seat = from_seat


CardsTaken.kind = "cards_taken"
CardsTaken.private = True


@dataclass(init=False, slots=True, unsafe_hash=True)
class Fortified(Event):
    seat: int
    source: int
    target: int
    armies: int
    asked: int | None = None
    lost: int = 0  # always 0: moves are clamped to max_armies (kept for stored events)

    def __init__(
        self,
        seat: int,
        source: int,
        target: int,
        armies: int,
        asked: int | None = None,
        lost: int = 0,
    ) -> None:
        self.seat = seat
        self.source = source
        self.target = target
        self.armies = armies
        self.asked = asked
        self.lost = lost


Fortified.kind = "fortified"


@dataclass(init=False, slots=True, unsafe_hash=True)
class FortifySkipped(Event):
    seat: int
    source: int
    target: int
    reason: str

    def __init__(self, seat: int, source: int, target: int, reason: str) -> None:
        self.seat = seat
        self.source = source
        self.target = target
        self.reason = reason


FortifySkipped.kind = "fortify_skipped"


@dataclass(init=False, slots=True, unsafe_hash=True)
class PlaceSkipped(Event):
    """A PLACE after an ATTACK with no (or too few) elimination armies left."""

    seat: int
    territory: int
    armies: int  # armies of the order that were not placed
    reason: str

    def __init__(self, seat: int, territory: int, armies: int, reason: str) -> None:
        self.seat = seat
        self.territory = territory
        self.armies = armies
        self.reason = reason


PlaceSkipped.kind = "place_skipped"


@dataclass(init=False, slots=True, unsafe_hash=True)
class TradeSkipped(Event):
    """A TRADE after an ATTACK (rules version 3) that no forced trade used."""

    seat: int
    cards: tuple[int, ...]
    reason: str

    def __init__(self, seat: int, cards: tuple[int, ...], reason: str) -> None:
        self.seat = seat
        self.cards = cards
        self.reason = reason


TradeSkipped.kind = "trade_skipped"


@dataclass(init=False, slots=True, unsafe_hash=True)
class DefenceOrdered(Event):
    """The standing order DEFEND WITH n IN t (n = 2 clears it); private."""

    seat: int
    territory: int
    dice: int

    def __init__(self, seat: int, territory: int, dice: int) -> None:
        self.seat = seat
        self.territory = territory
        self.dice = dice


DefenceOrdered.kind = "defence"
DefenceOrdered.private = True


@dataclass(init=False, slots=True, unsafe_hash=True)
class CardDrawn(Event):
    seat: int
    card: int

    def __init__(self, seat: int, card: int) -> None:
        self.seat = seat
        self.card = card


CardDrawn.kind = "card_drawn"
CardDrawn.private = True


@dataclass(init=False, slots=True, unsafe_hash=True)
class TurnEnded(Event):
    turn: int
    seat: int
    next_seat: int | None

    def __init__(self, turn: int, seat: int, next_seat: int | None) -> None:
        self.turn = turn
        self.seat = seat
        self.next_seat = next_seat


TurnEnded.kind = "turn_ended"


@dataclass(init=False, slots=True, unsafe_hash=True)
class RoundBegan(Event):
    """Freestyle: a round opens, and every seat named may move once, in any order."""

    round: int
    seats: tuple[int, ...]

    def __init__(self, round: int, seats: tuple[int, ...]) -> None:
        self.round = round
        self.seats = seats


RoundBegan.kind = "round_began"


@dataclass(init=False, slots=True, unsafe_hash=True)
class GameWon(Event):
    seat: int
    reason: str  # "domination", "capitals", "mission", "max_turns", "assassin", "points", "team"
    detail: str = ""

    def __init__(self, seat: int, reason: str, detail: str = '') -> None:
        self.seat = seat
        self.reason = reason
        self.detail = detail


GameWon.kind = "won"


@dataclass(init=False, slots=True, unsafe_hash=True)
class TeamHandover(Event):
    """Team games: a player removed from the game (resigned, removed by the GM,
    kicked) hands their territories and cards to their first surviving teammate."""

    seat: int
    to: int
    territories: int
    cards: int

    def __init__(self, seat: int, to: int, territories: int, cards: int) -> None:
        self.seat = seat
        self.to = to
        self.territories = territories
        self.cards = cards


TeamHandover.kind = "team_handover"


@dataclass(init=False, slots=True, unsafe_hash=True)
class RulesChanged(Event):
    """The GM moved the game to newer rules (`pbem upgrade-rules`, the log's
    ``RULES n`` command): from ``old`` to ``new`` from this step on."""

    old: int
    new: int

    def __init__(self, old: int, new: int) -> None:
        self.old = old
        self.new = new


RulesChanged.kind = "rules_changed"


@dataclass(init=False, slots=True, unsafe_hash=True)
class TargetDealt(Event):
    """Assassin: ``seat`` hunts ``target`` (dealt at the start, or inherited
    from a hunted player who left the game: ``inherited_from``); private."""

    seat: int
    target: int
    inherited_from: int | None = None

    def __init__(self, seat: int, target: int, inherited_from: int | None = None) -> None:
        self.seat = seat
        self.target = target
        self.inherited_from = inherited_from


TargetDealt.kind = "target"
TargetDealt.private = True


@dataclass(init=False, slots=True, unsafe_hash=True)
class PointScored(Event):
    """Terminator: ``seat`` eliminated ``eliminated`` and has ``points`` now."""

    seat: int
    eliminated: int
    points: int

    def __init__(self, seat: int, eliminated: int, points: int) -> None:
        self.seat = seat
        self.eliminated = eliminated
        self.points = points


PointScored.kind = "point"
