""" "Since your last turn": what changed for one player while the others moved.

The your-turn mail opens with it: territories others took from the player (and who),
eliminations, sets traded by others, press received. Read from the stored steps
(TurnResult events) after the player's own last step, and the press relayed to them
(the outbox) since then.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlmodel import Session, col, select

from pbem.rules.eventcodec import event_from_dict
from pbem.rules.events import (
    AttackResolved,
    CardsTraded,
    Event,
    PlayerEliminated,
    PointScored,
    RulesChanged,
    TargetDealt,
    TeamHandover,
    )
from pbem.rules.state import GameState
from pbem.store import Game, Outbox, Player, TurnResult

PRESS_KIND = "press"  # the outbox kind of relayed press (render.render_press)
YOUR_TURN_KIND = "your_turn"


def _names(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _inherited_by(event: Event, seat: int) -> bool:
    """An assassin target ``seat`` took over from a player who left the game."""
    if not isinstance(event, TargetDealt):
        return False
    return event.seat == seat and event.inherited_from is not None


def since_lines(state: GameState, seat: int, events: Sequence[Event], press: int) -> list[str]:
    """A few lines, for ``seat``, from the events of the others' steps since its turn."""
    board = state.board
    name = [p.name for p in state.players]
    lost: dict[int, list[str]] = {}  # by whom -> territories, in the order taken
    out: list[str] = []
    trades: dict[int, list[int]] = {}
    rules: list[str] = []
    for event in events:
        if isinstance(event, RulesChanged):
            rules.append(
                f"The GM moved the game from rules version {event.old} to {event.new} "
                "(their notice says what changes)."
            )
        elif isinstance(event, AttackResolved) and event.conquered and event.defender == seat:
            lost.setdefault(event.seat, []).append(board.territories[event.target].name)
        elif isinstance(event, PlayerEliminated):
            taken = f" (and {event.cards_taken} cards)" if event.cards_taken else ""
            out.append(f"{name[event.by]} eliminated {name[event.seat]}{taken}.")
        elif isinstance(event, PointScored):  # terminator: public
            points = f"{event.points} point{'' if event.points == 1 else 's'}"
            out.append(f"{name[event.seat]} scores a point ({points} now).")
        elif _inherited_by(event, seat):  # assassin: this player's own, the event is private
            assert isinstance(event, TargetDealt) and event.inherited_from is not None
            rules.append(
                f"Your new secret target: {name[event.target]} (the target of "
                f"{name[event.inherited_from]}, who left the game)."
            )
        elif isinstance(event, TeamHandover):  # team games: a removed player's all to a teammate
            out.append(f"{name[event.seat]} left the game; {name[event.to]} took their armies.")
        elif isinstance(event, CardsTraded) and event.seat != seat:
            trades.setdefault(event.seat, []).append(event.value)
    lines = rules + [
        f"{name[by]} took {_names(places)} from you." for by, places in sorted(lost.items())
    ]
    lines += out
    for by, values in sorted(trades.items()):
        sets = "a set" if len(values) == 1 else f"{len(values)} sets"
        lines.append(f"{name[by]} traded {sets} for {' + '.join(str(v) for v in values)} armies.")
    if press:
        lines.append(
            f"You received {press} press message{'' if press == 1 else 's'} (sent separately)."
        )
    if not lines:
        lines.append("Nothing changed for you: nobody took a territory from you.")
    held = state.territory_count(seat)
    lines.append(f"You hold {held} territor{'y' if held == 1 else 'ies'} now.")
    return lines


def since_last_turn(session: Session, game: Game, player: Player, state: GameState) -> list[str]:
    """The lines for ``player`` from the store: the steps after their own last one."""
    rows = list(
        session.exec(
            select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq))
        )
    )
    own = [i for i, r in enumerate(rows) if r.seat == player.seat and r.turn > 0]
    start = own[-1] + 1 if own else 0
    events: list[Event] = []
    for row in rows[start:]:
        if row.seat == player.seat:
            continue
        told = [event_from_dict(e) for e in json.loads(row.events_json)]
        if row.seat is None:  # the deal, a rollback, or the GM's `pbem upgrade-rules`
            told = [e for e in told if isinstance(e, RulesChanged)]
        events += told
    return since_lines(state, player.seat, events, _press_since(session, game, player))


def _press_since(session: Session, game: Game, player: Player) -> int:
    """Press relayed to the player after their previous your-turn notice (outbox rows
    are numbered in the order they were queued, whatever the clock says)."""
    mine = select(Outbox.id).where(Outbox.game_id == game.id, Outbox.recipient == player.address)
    last = session.exec(
        mine.where(Outbox.kind == YOUR_TURN_KIND).order_by(Outbox.id.desc())  # type: ignore[union-attr]
    ).first()
    press = mine.where(Outbox.kind == PRESS_KIND)
    if last is not None:
        press = press.where(Outbox.id > last)  # type: ignore[operator]
    return len(list(session.exec(press)))
