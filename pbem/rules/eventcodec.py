"""Events as stored (the turn table's JSON) and read back, and who may see one.

Kept apart from the event classes (pbem/rules/events.py): the readers of
stored events (the catch-up block, the site, tests) need this, the engine
does not.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    AttackSkipped,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    DefenceOrdered,
    Event,
    Fortified,
    FortifySkipped,
    GameWon,
    HeadquartersChosen,
    MissionDealt,
    MovedIn,
    PlaceSkipped,
    PlayerEliminated,
    PointScored,
    Roll,
    RoundBegan,
    RulesChanged,
    TargetDealt,
    TeamHandover,
    TerritoriesDealt,
    TerritoryClaimed,
    TradeSkipped,
    TurnBegan,
    TurnEnded,
    TurnOrderDrawn,
)

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
        TradeSkipped,
        DefenceOrdered,
        CardDrawn,
        TurnEnded,
        GameWon,
        RulesChanged,
        TargetDealt,
        PointScored,
        TeamHandover,
        RoundBegan,
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
