"""Tell: the notices decided and committed, rendered into mails and queued.

The stage after every decision (a poll's inbox and deadlines, a CLI command
that plays or changes a game): each pending notice (pbem/service/play/notices.py)
is rendered by the report layer and queued in the outbox, and marked told in
the outbox row's transaction. The game's row is not locked meanwhile: its
transaction committed with the notices in it.

Idempotent: a notice's Message-ID and Date were decided with it and its
inputs are in the store, so a notice told again gives the same bytes, and
the outbox queues a Message-ID once. A run killed between a decision's
commit and its telling leaves the notices pending; the next run tells them.
The notices of one step are rendered together, inside one ``render_once``
scope and from one replayed state, so what every reader shares is made once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem import orders
from pbem.orderlog import replay
from pbem.report import context as rc
from pbem.report import fogview, ics, letters, render, views
from pbem.report.mime import RenderedMail, thread_root_id
from pbem.report.shared import render_once
from pbem.report.wire import boundaries_of, mail_bytes
from pbem.rules.engine import turn_of
from pbem.rules.state import ROUND, SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.play import history, rounds
from pbem.service.play.mailinfo import host_of
from pbem.service.play.notices import info_of, replay_to, when
from pbem.service.play.passwords import turn_token
from pbem.service.tell import outbox
from pbem.store import Game, Notice, session_scope
from pbem.vocab import NoticeKind

log = logging.getLogger("pbem.tell")

BATCH = 200  # notices read at once; each step's notices are queued in their own transaction


@dataclass
class Told:
    """One rendered mail of a notice, ready for the outbox."""

    notice: Notice
    game: Game | None
    rendered: RenderedMail
    attachment: tuple[str, str] | None = None
    attachment_type: str = "plain"


@dataclass
class Shared:
    """What the notices of one step share: the game, its roster, the replayed state."""

    session: Session
    ctx: Context
    game: Game | None
    seq: int | None
    _state: tuple[GameState, replay.Step | None] | None = None
    _infos: dict[str, rc.GameInfo] = field(default_factory=dict)
    reports: dict[int | None, rc.TurnReport] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # the setup report, made once

    def info(self, params: dict[str, Any]) -> rc.GameInfo:
        key = json.dumps(params["info"], sort_keys=True)
        if key not in self._infos:
            assert self.game is not None
            self._infos[key] = info_of(self.session, self.game, params["info"])
        return self._infos[key]

    def replayed(self) -> tuple[GameState, replay.Step | None]:
        if self._state is None:
            assert self.game is not None and self.seq is not None
            self._state = replay_to(self.session, self.game, self.seq)
        return self._state

    @property
    def state(self) -> GameState:
        return self.replayed()[0]


Renderer = Callable[[Shared, Notice, dict[str, Any]], Told]


# ------------------------------------------------------------ the stage
def tell(engine: Engine, ctx: Context) -> int:
    """Render and queue every pending notice; how many mails were queued."""
    queued = 0
    after = 0
    while True:
        with session_scope(engine, write=False) as session:
            pending = list(
                session.exec(
                    select(Notice)
                    .where(col(Notice.told_at).is_(None), col(Notice.id) > after)
                    .order_by(col(Notice.id))
                    .limit(BATCH)
                )
            )
            if not pending:
                return queued
            after = pending[-1].id or after
            groups: dict[tuple[int | None, int | None], list[Notice]] = {}
            for notice in pending:
                groups.setdefault((notice.game_id, notice.step), []).append(notice)
            batches = [_render_group(session, ctx, notices) for notices in groups.values()]
        for told in batches:
            queued += _queue(engine, ctx, told)


def _render_group(session: Session, ctx: Context, notices: list[Notice]) -> list[Told]:
    """The mails of one step, rendered together; a notice that fails stays pending."""
    first = notices[0]
    game = session.get(Game, first.game_id) if first.game_id is not None else None
    shared = Shared(session, ctx, game, first.step)
    out = []
    with render_once():
        for notice in notices:
            try:
                out.append(render_notice(shared, notice))
            except Exception:  # noqa: BLE001 - one bad notice holds back no other mail
                log.exception("notice %s (%s) could not be told", notice.id, notice.message_id)
    return out


def render_notice(shared: Shared, notice: Notice) -> Told:
    """One notice as its mail (not queued)."""
    params = json.loads(notice.params_json or "{}")
    return RENDERERS[NoticeKind(notice.kind)](shared, notice, params)


def mail_again(session: Session, ctx: Context, notice: Notice) -> bytes:
    """A notice's mail made again from the store (a check: the same bytes as queued)."""
    game = session.get(Game, notice.game_id) if notice.game_id is not None else None
    with render_once():
        return mail_of(ctx, render_notice(Shared(session, ctx, game, notice.step), notice))


def mail_of(ctx: Context, told: Told) -> bytes:
    """The mail's bytes: its headers from the notice (Message-ID, Date, thread)."""
    notice, game = told.notice, told.game
    references = []
    if game is not None:
        references.append(thread_root_id(game.name, notice.seat, host_of(ctx)))
    sender = ctx.config.mail.game_address
    name = ctx.config.mail.from_name
    with boundaries_of(notice.message_id):  # no random boundary: the same bytes every time
        return mail_bytes(
            told.rendered,
            sender=f"{name} <{sender}>" if name else sender,
            recipient=notice.recipient,
            message_id=notice.message_id,
            in_reply_to=notice.in_reply_to,
            references=references,
            date=notice.created_at,
            attachment=told.attachment,
            attachment_type=told.attachment_type,
        )


def _queue(engine: Engine, ctx: Context, batch: list[Told]) -> int:
    """One transaction: the step's mails in the outbox, their notices told."""
    if not batch:
        return 0
    queued = 0
    with session_scope(engine) as session:
        for told in batch:
            notice = told.notice
            queued += outbox.enqueue(
                session,
                message_id=notice.message_id,
                game_id=told.game.id if told.game is not None else None,
                kind=told.rendered.kind or "mail",
                recipient=notice.recipient,
                subject=told.rendered.subject,
                raw=mail_of(ctx, told),
                in_reply_to=notice.in_reply_to,
                now=notice.created_at,
            )
        ids = [t.notice.id for t in batch]
        session.execute(
            update(Notice).where(col(Notice.id).in_(ids)).values(told_at=ctx.clock.now())
        )
    return queued


# ------------------------------------------------------------ renderers
def _report(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    """A step's turn report: the TurnReport made once per step (history.report_of_step,
    as `pbem render` and HISTORY make it), seen as each reader."""
    if notice.step not in shared.reports:
        _, step = shared.replayed()
        if step is None or step.before is None or step.state_hash != params["hash"]:
            raise ValueError(f"log entry {notice.step} does not replay to the step reported")
        report = history.report_of_step(shared.info(params), step, when(params["deadline"]))
        shared.reports[notice.step] = report
    report = shared.reports[notice.step]
    rendered = render.render_turn_report(report, notice.seat, params.get("token", ""))
    return Told(notice, shared.game, rendered)


def _setup_report(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    """The setup played (history.setup_report, as `pbem render --turn 0` makes it)."""
    assert shared.game is not None
    if "setup" not in shared.extra:
        info = shared.info(params)
        report = history.setup_report(shared.session, info, shared.game, when(params["deadline"]))
        if report is None or report.step != notice.step or report.state_hash != params["hash"]:
            raise ValueError(f"log entry {notice.step} does not replay to the setup reported")
        shared.extra["setup"] = report
    setup, token = shared.extra["setup"], params.get("token", "")
    rendered = render.render_setup_report(setup, notice.seat, token)
    return Told(notice, shared.game, rendered)


def _game_over(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    from pbem.service.play.archive import export_record

    assert shared.game is not None
    over = rc.GameOver(shared.info(params), shared.state)
    record = (f"{shared.game.name}.pgn", export_record(shared.session, shared.game))
    rendered = render.render_game_over(over, notice.seat, params.get("token", ""))
    return Told(notice, shared.game, rendered, attachment=record)


def _your_turn(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    game, state, seat = shared.game, shared.state, notice.seat
    assert game is not None and seat is not None
    info = shared.info(params)
    token = turn_token(bytes.fromhex(game.secret), game.name, seat, state.turn)
    deadline = when(params["deadline"])
    since = tuple(params["since"])
    free = 0
    if state.phase == ROUND:  # freestyle: the turn as it would begin if played now
        free, state = state.round, turn_of(state, seat)
    notice_of = rc.YourTurn(info, state, seat, token, deadline, since, free)
    rendered = render.render_your_turn(notice_of)
    attachment = None
    if deadline is not None:
        due = ics.Deadline(game.name, state.turn, info.player(seat).name, deadline, seat)
        text = ics.calendar([due], host_of(shared.ctx), notice.created_at)
        name = f"round{free}" if free else f"turn{state.turn}"
        attachment = (f"{game.name}-{name}.ics", text)
    return Told(notice, game, rendered, attachment=attachment, attachment_type="calendar")


def _setup_prompt(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    assert notice.seat is not None
    prompt = rc.SetupPrompt(
        shared.info(params),
        shared.state,
        notice.seat,
        when(params["deadline"]),
        params.get("token", ""),
    )
    return Told(notice, shared.game, render.render_setup_prompt(prompt))


def _game_start(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    assert notice.seat is not None
    start = rc.GameStart(
        shared.info(params),
        shared.state,
        notice.seat,
        params["password"],
        when(params["deadline"]),
        params["holder"],
        params["turn"],
        params.get("token", ""),
    )
    game = None if params.get("root") else shared.game  # the thread's root: no references
    return Told(notice, game, render.render_game_start(start))


def _receipt(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    assert notice.seat is not None
    receipt = rc.Receipt(
        game=shared.info(params),
        seat=notice.seat,
        turn=params["turn"],
        orders_text=params["orders"],
        adjudicated=params["played"],
        check_only=params["check"],
        forecast=tuple(params["forecast"]),
        setup=params["setup"],
        late=when(params["late"]),
        no_orders=params.get("no_orders", False),  # older notices: a receipt of orders
        changed=params.get("changed", True),
        next_setup=bool(params["setup"]) and _setup_continues(shared, params),
        token=params.get("token", ""),
        freestyle_round=_round_of(shared),
    )
    return Told(notice, shared.game, render.render_receipt(receipt))


def _setup_continues(shared: Shared, params: dict[str, Any]) -> bool:
    """Setup orders: whether a mail asking for more setup orders follows them
    (a next phase or round), rather than the setup report."""
    state = shared.state  # the game when the receipt was decided
    if params["played"]:
        return state.phase in SETUP_PHASES
    return state.phase in SETUP_PHASES and views.setup_continues(state)


def _errors(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    reply = rc.ErrorReply(
        address=notice.recipient,
        problems=tuple(rc.Problem(*p) for p in params["problems"]),
        game=shared.info(params),
        seat=notice.seat,
        original_subject=params["subject"],
        turn=params["turn"],
        token=params.get("token", ""),
        check=bool(params.get("check", False)),
        freestyle_round=_round_of(shared),
    )
    return Told(notice, shared.game, render.render_error_reply(reply))


def _round_of(shared: Shared) -> int:
    """Freestyle, between turns: the round (an answer names it, not a turn). Other
    games need no state for it (an answer to a stranger has no game)."""
    if shared.game is None or shared.seq is None or not rounds.is_freestyle(shared.game):
        return 0
    state = shared.state
    return state.round if state.phase == ROUND else 0


def _help(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    info = shared.info(params)
    seat = notice.seat
    # the examples from the asker's own view (under fog: no territory out of sight)
    mine = (
        ()
        if seat is None
        else tuple(views.example_orders(fogview.state_for(shared.state, seat), seat))
    )
    text = letters.your_games(params.get("games", [])) + orders.help_text(info.board)
    help_ = rc.Help(notice.recipient, text, info, mine, token=params.get("token", ""))
    return Told(notice, shared.game, render.render_help(help_))


def _status(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    status = rc.Status(
        shared.info(params), shared.state, when(params["deadline"]), params.get("token", "")
    )
    return Told(notice, shared.game, render.render_status(status, notice.seat))


def _history(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    info, game, address = shared.info(params), shared.game, notice.recipient
    token = params.get("token", "")
    assert game is not None
    if "turns" in params:
        return Told(notice, game, letters.turns_played(info, address, params["turns"], token))
    report = history.stored_report(shared.session, info, game, params["turn"])
    if report is None:
        return Told(notice, game, letters.no_report(info, address, params["turn"], token))
    return Told(notice, game, render.render_turn_report(report, notice.seat, token))


def _press(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    assert notice.seat is not None
    press = rc.Press(
        shared.info(params),
        params["sender"],
        tuple(params["seats"]),
        params["body"],
        params["all"],
        params.get("token", ""),
    )
    return Told(notice, shared.game, render.render_press(press, notice.seat))


def _reminder(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    assert notice.seat is not None
    reminder = rc.Reminder(
        shared.info(params),
        shared.state,
        notice.seat,
        params["token"],
        when(params["deadline"]),
        params["missed"],
        params["limit"],
        params["grace"],
        params["on_removal"],
    )
    return Told(notice, shared.game, render.render_reminder(reminder))


def _alert(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    info = shared.info(params) if "info" in params else None
    token = params.get("token", "")  # an announcement to a player: their token
    answer = bool(params.get("answer", False))
    alert = rc.GmAlert(
        params["subject"], params["text"], info, notice.recipient, token, answer=answer
    )
    return Told(notice, shared.game, render.render_gm_alert(alert))


def _rules_changed(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    """`pbem upgrade-rules`: what the decision kept, as it kept it."""
    change = rc.RulesChange(
        shared.info(params),
        notice.recipient,
        int(params["old"]),
        int(params["new"]),
        int(params["turn"]),
        tuple(params["changes"]),
        params.get("message", ""),
        params.get("token", ""),
        notice.seat,
    )
    return Told(notice, shared.game, render.render_rules_changed(change))


def _letter(shared: Shared, notice: Notice, params: dict[str, Any]) -> Told:
    """One of report/letters.py's letters: its name and arguments, the game's roster first."""
    args = [tuple(a) if isinstance(a, list) else a for a in params["args"]]
    if "info" in params:
        args.insert(0, shared.info(params))
    rendered = getattr(letters, params["letter"])(*args)
    return Told(notice, shared.game, rendered)


RENDERERS: dict[NoticeKind, Renderer] = {
    NoticeKind.REPORT: _report,
    NoticeKind.GAME_OVER: _game_over,
    NoticeKind.YOUR_TURN: _your_turn,
    NoticeKind.SETUP_PROMPT: _setup_prompt,
    NoticeKind.SETUP_REPORT: _setup_report,
    NoticeKind.GAME_START: _game_start,
    NoticeKind.RECEIPT: _receipt,
    NoticeKind.ERRORS: _errors,
    NoticeKind.HELP: _help,
    NoticeKind.STATUS: _status,
    NoticeKind.HISTORY: _history,
    NoticeKind.PRESS: _press,
    NoticeKind.REMINDER: _reminder,
    NoticeKind.ALERT: _alert,
    NoticeKind.LETTER: _letter,
    NoticeKind.RULES_CHANGED: _rules_changed,
}
