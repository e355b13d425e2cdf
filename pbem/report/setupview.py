"""The setup as a player may see it: the setup report's sections.

The opening's and every setup step's events, told in order: the turn order
drawn, the deal (or the neutral's share before a draft), the picks of the
draft or the claims one by one, the placement, the headquarters. A dealt
mission is an event too, but private: it never enters a section (each
player reads their own in the "you" lines, from the state).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.report.context import SetupReport
from pbem.report.textfmt import join_words, plural
from pbem.report.views import Who, territory_name, who
from pbem.rules import fog
from pbem.rules.events import (
    ArmiesPlaced,
    HeadquartersChosen,
    TerritoriesDealt,
    TerritoryClaimed,
    TurnOrderDrawn,
)


@dataclass
class SetupSection:
    title: str
    lines: list[str] = field(default_factory=list)  # "  " first: kept as it is (a table line)


@dataclass
class SetupView:
    order: list[Who]
    first: Who | None  # who plays turn 1 (None: the setup ended the game)
    sections: list[SetupSection]


def setup_view(report: SetupReport) -> SetupView:
    """What the setup was, the same for every reader."""
    game, state = report.game, report.state
    board = state.board
    order = [who(game, state, s) for s in state.order]
    dealt = SetupSection("The deal")
    picks = SetupSection(
        "The claims, in order" if state.options.claim == "turns" else "The draft, pick by pick"
    )
    placed: dict[tuple[int, int], list[str]] = {}  # (placer, owner) -> "5 Alaska"
    placer = -1
    hqs = SetupSection("Headquarters")
    for event in report.events:
        if isinstance(event, TurnOrderDrawn):
            order = [who(game, state, s) for s in event.order]
        elif isinstance(event, TerritoriesDealt):
            names = sorted(territory_name(board, t) for t in event.territories)
            count = plural(len(names), "territory", "territories")
            line = f"{state.players[event.seat].name} ({count}): {', '.join(names)}."
            dealt.lines.append(line)
        elif isinstance(event, TerritoryClaimed):
            name = state.players[event.seat].name
            picks.lines.append(f"{name}: {territory_name(board, event.territory)}")
        elif isinstance(event, ArmiesPlaced):
            if not state.players[event.seat].neutral:
                placer = event.seat
            lost = f" ({event.lost} lost over the limit)" if event.lost else ""
            where = f"{event.armies} {territory_name(board, event.territory)}{lost}"
            placed.setdefault((placer, event.seat), []).append(where)
        elif isinstance(event, HeadquartersChosen):
            name = state.players[event.seat].name
            hqs.lines.append(f"{name}: {territory_name(board, event.territory)}.")
    width = len(str(len(picks.lines)))
    picks.lines = [f"  {i:>{width}}. {line}" for i, line in enumerate(picks.lines, start=1)]
    sections = [s for s in (dealt, picks) if s.lines]
    sections += _placement(report, placed)
    if hqs.lines:
        sections.append(hqs)
    first = who(game, state, state.current) if state.current >= 0 and state.winner is None else None
    return SetupView(order, first, sections)


def _placement(report: SetupReport, placed: dict[tuple[int, int], list[str]]) -> list[SetupSection]:
    state = report.state
    if not placed:
        return []
    section = SetupSection("The starting armies")
    if state.options.placement == "auto":
        section.lines.append(
            "Placed at random, one army at a time in turn order; the board below shows "
            "where they stand."
        )
        return [section]
    if fog.HIDDEN in state.owner:  # a player's copy under fog of war
        section.lines.append("Only the placements in your sight are listed (fog of war).")
    for (placer, owner), where in placed.items():
        name = state.players[placer].name if placer >= 0 else state.players[owner].name
        if owner != placer and placer >= 0:
            section.lines.append(f"{name}, for the neutral: {join_words(where)}.")
        else:
            section.lines.append(f"{name}: {join_words(where)}.")
    return [section]
