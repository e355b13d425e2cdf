"""The reports of steps played, built one way for every reader: the mailed
turn report (telling.py), HISTORY, `pbem render` and the digest all make a
turn's report with ``report_of_step``, from the step replayed out of the store
(the snapshot before it and its log entry, as the decision played it), and the
setup report with ``setup_report``. What the mail knew that the store does not
keep (the next deadline, the roster of the time) is read back from the
report's notice while the notice is kept."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbem.orderlog import replay
from pbem.report import context as rc
from pbem.report import moving, render
from pbem.report.mime import RenderedMail
from pbem.rules.events import Event
from pbem.rules.state import SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play.games import definition_of, log_of, to_entry
from pbem.service.play.mailinfo import game_info
from pbem.service.play.notices import info_of, replay_to, when
from pbem.store import Game, Notice, OrderEntry, TurnResult
from pbem.vocab import NoticeKind


def results(session: Session, game: Game) -> list[TurnResult]:
    """Every stored step of the game, in the order played."""
    query = select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq))
    return list(session.exec(query))


def turns_played(session: Session, game: Game) -> list[int]:
    """The turns of the players' steps (what HISTORY lists)."""
    return [r.turn for r in results(session, game) if r.seat is not None]


# ------------------------------------------------------------------ a turn
def report_of_step(
    info: rc.GameInfo, step: replay.Step, deadline: datetime | None
) -> rc.TurnReport:
    """A played turn's report, the one way every reader gets it: who played it
    (the player, the defaults of a missed turn, the GM), its events, the states
    before and after, the dice's inputs; ``deadline``: the next player's."""
    if step.before is None or step.seat is None:
        raise ValueError("a turn report is of a player's step, replayed with its state before")
    names = {p.seat: p.name for p in info.players}
    return rc.TurnReport(
        info,
        step.turn,
        step.seat,
        tuple(step.events),
        step.before,
        step.state,
        step.state_hash,
        deadline,
        moving.next_seat(step.state),
        missed=any(e.source == "default" and e.kind == "turn" for e in step.entries),
        by_gm=any(e.source == "gm" and e.kind == "turn" for e in step.entries),
        dice_inputs=dice_inputs(step, names),
    )


def dice_inputs(step: replay.Step, names: dict[int, str]) -> tuple[tuple[str, str, str], ...]:
    """Whose contribution went into the step's dice (v2), as the turn report names it."""
    from pbem.rules.dice import salt_of

    return tuple(
        (names.get(seat, "the GM") if seat is not None else "the GM", kind, digest)
        for (seat, digest), entry in zip(step.contributions, step.entries, strict=False)
        for kind in ("SALT" if salt_of(entry.text) is not None else "orders",)
    )


def turn_seq(session: Session, game: Game, turn: int | None) -> int | None:
    """The log entry of a played turn (the latest played when ``turn`` is None);
    a RESIGN or REMOVE of the same turn is no turn."""
    query = (
        select(TurnResult.seq)
        .join(
            OrderEntry,
            (col(OrderEntry.game_id) == col(TurnResult.game_id))
            & (col(OrderEntry.seq) == col(TurnResult.seq)),
        )
        .where(TurnResult.game_id == game.id, OrderEntry.kind == replay.TURN, TurnResult.turn > 0)
    )
    if turn is not None:
        query = query.where(TurnResult.turn == turn)
    return session.exec(query.order_by(col(TurnResult.seq).desc())).first()


def decided(session: Session, game: Game, seq: int, kind: NoticeKind) -> dict[str, Any] | None:
    """The inputs a step's mail was decided with (the first notice of ``kind``
    about log entry ``seq``), while the notice is kept."""
    notice = session.exec(
        select(Notice)
        .where(Notice.game_id == game.id, Notice.step == seq, Notice.kind == str(kind))
        .order_by(col(Notice.id))
    ).first()
    return json.loads(notice.params_json or "{}") if notice is not None else None


def stored_report(
    session: Session, info: rc.GameInfo, game: Game, turn: int | None
) -> rc.TurnReport | None:
    """The report of a played turn (the latest when ``turn`` is None) as it was
    mailed, but for ``info``: the step replayed, with the next deadline its
    report's notice was decided with."""
    found = _turn_step(session, game, turn)
    if found is None:
        return None
    step, params = found
    return report_of_step(info, step, when(params.get("deadline")))


def _turn_step(
    session: Session, game: Game, turn: int | None
) -> tuple[replay.Step, dict[str, Any]] | None:
    """A played turn's step, replayed, and its report's notice's inputs ({} when
    the notice is no longer kept)."""
    seq = turn_seq(session, game, turn)
    if seq is None:
        return None
    _, step = replay_to(session, game, seq)
    if step is None or step.seat is None:
        return None
    return step, decided(session, game, seq, NoticeKind.REPORT) or {}


def _roster(session: Session, ctx: Context, game: Game, params: dict[str, Any]) -> rc.GameInfo:
    """The game as a mail's notice saw it, or as it is now when none is kept."""
    if "info" in params:
        return info_of(session, game, params["info"])
    return game_info(session, ctx, game)


# ---------------------------------------------------------------- the setup
def setup_report(
    session: Session, info: rc.GameInfo, game: Game, deadline: datetime | None = None
) -> rc.SetupReport | None:
    """The setup as it was played (None while it goes on): the game's opening
    and every setup step replayed from the order log, their events in order,
    and the board as the first turn begins; ``deadline``: the first turn's."""
    played = _setup_played(session, game)
    if played is None:
        return None
    events, state, state_hash, seq = played
    return rc.SetupReport(info, events, state, state_hash, deadline, seq)


def _setup_played(
    session: Session, game: Game
) -> tuple[tuple[Event, ...], GameState, str, int] | None:
    """The setup's events, the state it ended in, its hash and the log entry
    that ended it (0: the deal, no setup orders); None while it goes on."""
    definition = definition_of(session, game)
    loaded, events = replay.start(definition)
    every = list(events)
    seq = 0
    for row in log_of(session, game):
        if loaded.state.phase not in SETUP_PHASES:
            break
        step = replay.apply(loaded, to_entry(row))
        seq = row.seq
        if step is not None:
            every += step.events
    state = loaded.state
    if state.phase in SETUP_PHASES:
        return None
    return tuple(every), state, definition.state_hash(state), seq


def render_turn(
    session: Session,
    ctx: Context,
    game: Game,
    turn: int | None,
    seat: int | None,
) -> RenderedMail:
    """`pbem render`: a stored turn's report as ``seat`` (None: the GM) sees it,
    the very mail its notice was told as (turn 0: the setup report)."""
    if turn == 0:
        played = _setup_played(session, game)
        if played is None:
            raise ServiceError(f"game {game.name} is still in its setup: no setup report yet")
        events, state, state_hash, seq = played
        params = decided(session, game, seq, NoticeKind.SETUP_REPORT) or {}
        info = _roster(session, ctx, game, params)
        setup = rc.SetupReport(info, events, state, state_hash, when(params.get("deadline")), seq)
        return render.render_setup_report(setup, seat)
    found = _turn_step(session, game, turn)
    if found is None:
        which = f"turn {turn}" if turn is not None else "any turn"
        raise ServiceError(f"game {game.name} has no report of {which} yet")
    step, params = found
    report = report_of_step(_roster(session, ctx, game, params), step, when(params.get("deadline")))
    return render.render_turn_report(report, seat)
