"""What happened, as plain data: the engine returns these from every step.

Reports, receipts and logs are built from events alone, so every die rolled
is in them. ``private`` events are shown only to the seat they name.

Events are values: compare them, hash them, never change one. (They are not
``frozen`` dataclasses only because a frozen dataclass is about four times
slower to build, and a simulated turn builds twenty of them.)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar


@dataclass(slots=True, unsafe_hash=True)
class Event:
    kind: ClassVar[str] = "event"
    #: seat that may see this event, or None when everybody may
    private: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["kind"] = self.kind
        return data


@dataclass(slots=True, unsafe_hash=True)
class TurnOrderDrawn(Event):
    kind: ClassVar[str] = "turn_order"
    order: tuple[int, ...]


@dataclass(slots=True, unsafe_hash=True)
class TerritoriesDealt(Event):
    kind: ClassVar[str] = "dealt"
    seat: int
    territories: tuple[int, ...]


@dataclass(slots=True, unsafe_hash=True)
class TerritoryClaimed(Event):
    kind: ClassVar[str] = "claimed"
    seat: int
    territory: int


@dataclass(slots=True, unsafe_hash=True)
class MissionDealt(Event):
    kind: ClassVar[str] = "mission"
    private: ClassVar[bool] = True
    seat: int
    mission: int  # index into board.missions
    fallback: bool = False  # own-colour "destroy" mission turned into 24 territories


@dataclass(slots=True, unsafe_hash=True)
class HeadquartersChosen(Event):
    kind: ClassVar[str] = "hq"
    seat: int
    territory: int


@dataclass(slots=True, unsafe_hash=True)
class DeckShuffled(Event):
    kind: ClassVar[str] = "deck_shuffled"
    size: int
    reshuffle: bool = False  # discards reshuffled into an empty pile


@dataclass(slots=True, unsafe_hash=True)
class TurnBegan(Event):
    kind: ClassVar[str] = "turn_began"
    turn: int
    seat: int
    territories: int
    base: int  # max(3, territories // 3)
    continents: tuple[int, ...]  # continents held whole
    bonus: int  # their bonus armies
    must_trade: bool


@dataclass(slots=True, unsafe_hash=True)
class CardsTraded(Event):
    kind: ClassVar[str] = "traded"
    seat: int
    cards: tuple[int, ...]
    value: int
    set_number: int  # 1 for the first set traded in the game
    bonus: tuple[tuple[int, int], ...] = ()  # (territory, armies) placed by the card bonus
    forced: bool = False  # traded automatically after an elimination


@dataclass(slots=True, unsafe_hash=True)
class ArmiesPlaced(Event):
    kind: ClassVar[str] = "placed"
    seat: int
    territory: int
    armies: int
    lost: int = 0  # armies over the max_armies cap, lost


@dataclass(slots=True, unsafe_hash=True)
class Roll:
    attacker: tuple[int, ...]  # dice sorted high to low
    defender: tuple[int, ...]
    attacker_losses: int
    defender_losses: int
    rerolled: tuple[int, int] | None = None  # (old, new) value of a card re-roll
    commander: tuple[int, int] | None = None  # (old value, 6) of the commander die


@dataclass(slots=True, unsafe_hash=True)
class AttackResolved(Event):
    kind: ClassVar[str] = "attack"
    seat: int
    defender: int
    source: int
    target: int
    rolls: tuple[Roll, ...]
    conquered: bool
    attacker_left: int  # armies on source after the last roll
    defender_left: int
    stop: str  # "conquered", "exhausted", "until_left", "max_rolls"


@dataclass(slots=True, unsafe_hash=True)
class AttackSkipped(Event):
    kind: ClassVar[str] = "attack_skipped"
    seat: int
    source: int
    target: int
    reason: str


@dataclass(slots=True, unsafe_hash=True)
class MovedIn(Event):
    kind: ClassVar[str] = "moved_in"
    seat: int
    source: int
    target: int
    armies: int
    asked: int | None = None  # what the order asked, when it was clamped
    lost: int = 0  # always 0: moves are clamped to max_armies (kept for stored events)


@dataclass(slots=True, unsafe_hash=True)
class PlayerEliminated(Event):
    kind: ClassVar[str] = "eliminated"
    seat: int
    by: int
    cards_taken: int


@dataclass(slots=True, unsafe_hash=True)
class CardsTaken(Event):
    kind: ClassVar[str] = "cards_taken"
    private: ClassVar[bool] = True
    seat: int  # who took them
    cards: tuple[int, ...]
    from_seat: int


@dataclass(slots=True, unsafe_hash=True)
class Fortified(Event):
    kind: ClassVar[str] = "fortified"
    seat: int
    source: int
    target: int
    armies: int
    asked: int | None = None
    lost: int = 0  # always 0: moves are clamped to max_armies (kept for stored events)


@dataclass(slots=True, unsafe_hash=True)
class FortifySkipped(Event):
    kind: ClassVar[str] = "fortify_skipped"
    seat: int
    source: int
    target: int
    reason: str


@dataclass(slots=True, unsafe_hash=True)
class PlaceSkipped(Event):
    """A PLACE after an ATTACK with no (or too few) elimination armies left."""

    kind: ClassVar[str] = "place_skipped"
    seat: int
    territory: int
    armies: int  # armies of the order that were not placed
    reason: str


@dataclass(slots=True, unsafe_hash=True)
class DefenceOrdered(Event):
    """The standing order DEFEND WITH n IN t (n = 2 clears it); private."""

    kind: ClassVar[str] = "defence"
    private: ClassVar[bool] = True
    seat: int
    territory: int
    dice: int


@dataclass(slots=True, unsafe_hash=True)
class CardDrawn(Event):
    kind: ClassVar[str] = "card_drawn"
    private: ClassVar[bool] = True
    seat: int
    card: int


@dataclass(slots=True, unsafe_hash=True)
class TurnEnded(Event):
    kind: ClassVar[str] = "turn_ended"
    turn: int
    seat: int
    next_seat: int | None


@dataclass(slots=True, unsafe_hash=True)
class GameWon(Event):
    kind: ClassVar[str] = "won"
    seat: int
    reason: str  # "domination", "capitals", "mission", "max_turns"
    detail: str = ""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        TurnOrderDrawn,
        TerritoriesDealt,
        TerritoryClaimed,
        MissionDealt,
        HeadquartersChosen,
        DeckShuffled,
        TurnBegan,
        CardsTraded,
        ArmiesPlaced,
        AttackResolved,
        AttackSkipped,
        MovedIn,
        PlayerEliminated,
        CardsTaken,
        Fortified,
        FortifySkipped,
        PlaceSkipped,
        DefenceOrdered,
        CardDrawn,
        TurnEnded,
        GameWon,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event stored as JSON (tuples come back as lists)."""
    data = dict(data)
    cls = EVENT_TYPES[data.pop("kind")]
    if cls is AttackResolved:
        data["rolls"] = tuple(
            Roll(
                attacker=tuple(r["attacker"]),
                defender=tuple(r["defender"]),
                attacker_losses=r["attacker_losses"],
                defender_losses=r["defender_losses"],
                rerolled=tuple(r["rerolled"]) if r.get("rerolled") else None,
                commander=tuple(r["commander"]) if r.get("commander") else None,
            )
            for r in data["rolls"]
        )
    for key, value in list(data.items()):
        if isinstance(value, list):
            data[key] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return cls(**data)


def seats_that_see(event: Event) -> int | None:
    """The only seat allowed to see a private event, or None for a public one."""
    return getattr(event, "seat", None) if event.private else None
