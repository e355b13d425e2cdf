"""One function per mail: the inputs of ``context`` in, a RenderedMail out.

Each mail is two jinja2 templates, rendered by ``templating``; ``views`` and
``turnview`` compute what they print; this module picks the recipient, the
subject, the picture and the context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pbem.report import (
    endnotes,
    fogview,
    folding,
    moving,
    setupview,
    subjects,
    teamview,
    turnview,
    views,
)
from pbem.report.context import (
    OUT,
    PLAYING,
    ErrorReply,
    GameInfo,
    GameOver,
    GameStart,
    GmAlert,
    Help,
    Press,
    Receipt,
    Reminder,
    RulesChange,
    SetupPrompt,
    SetupReport,
    Status,
    TurnReport,
    YourTurn,
)
from pbem.report.mime import RenderedMail
from pbem.report.picture import map_picture
from pbem.report.shared import shared
from pbem.report.templating import template_mail
from pbem.report.textfmt import join_words, plural, plural_hours, when, when_short
from pbem.rules import gametypes
from pbem.rules.state import CLAIM, ENDED, ROUND, SETUP_PHASES, GameState
from pbem.vocab import LetterKind


# -------------------------------------------------------------------- helpers
def _picture(
    game: GameInfo,
    state: GameState,
    changed: list[int],
    caption: str,
    label: str,
    viewer: int | None = None,
) -> tuple[str | None, dict[str, bytes]]:
    """The map picture as (cid, images); (None, {}) for a map without positions.
    ``viewer``: whose copy (a fogged state hides their hidden territories; the
    legend hides the others' counts)."""
    legend = fogview.sides(shared(views.sides, game, state), state, viewer)
    png = map_picture(state.board, state.owner, state.armies, legend, changed, caption)
    if png is None:
        return None, {}
    cid = f"map.{re.sub(r'[^A-Za-z0-9.-]+', '-', game.name)}.{label}@pbem"
    return cid, {cid: png}


def _board_context(
    game: GameInfo,
    state: GameState,
    to_move: int | None,
    changed: Sequence[int] = (),
    viewer: int | None = None,
) -> dict[str, Any]:
    fogged = fogview.active(state, viewer)  # a fogged copy: hidden rows and counts left out
    return {
        # the same for every reader of this board: computed once per render_once scope
        "blocks": fogview.board_blocks(
            shared(views.board_blocks, game, state, tuple(changed)), fogged
        ),
        "players": fogview.player_rows(
            shared(views.player_rows, game, state, to_move), viewer, fogged
        ),
        "marks_key": _marks_key(state, changed),
    }


def _marks_key(state: GameState, changed: Sequence[int]) -> str:
    keys = []
    if changed:
        keys.append("* changed hands this turn")
    if any(p.hq is not None for p in state.players):
        keys.append("H headquarters")
    return ", ".join(keys)


def _private(state: GameState, seat: int | None) -> dict[str, Any]:
    """The viewer's own cards, mission and assassin target (empty for an observer)."""
    if seat is None or seat >= len(state.players):
        return {"your_cards": None, "mission": "", "target": ""}
    return {
        "your_cards": views.hand_text(state.board, state.players[seat].cards),
        "your_card_count": len(state.players[seat].cards),
        "mission": views.mission_text(state, seat),
        "target": views.target_text(state, seat),  # assassin: private, like the mission
        # standing orders DEFEND WITH 1: private, like the cards
        "defend_one": [
            state.board.territories[t].name for t in state.defend_one if state.owner[t] == seat
        ]
        + [state.board.territories[t].name for s, t in state.defend_neutral if s == seat],
    }


def _common(game: GameInfo, seat: int | None) -> dict[str, Any]:
    you = game.player(seat) if seat is not None else None
    return {"you": you}


# ---------------------------------------------------------------------- mails
def render_turn_report(report: TurnReport, viewer: int | None, token: str = "") -> RenderedMail:
    """The report of one turn, for ``viewer`` (None: an observer's copy, to the GM);
    ``token``: the viewer's current reply token, in the subject of their own copy."""
    report = fogview.turn_report(report, viewer)
    game, after = report.game, report.after
    view = turnview.turn_view(report, viewer)
    next_who = (
        views.who(game, after, report.next_seat)
        if report.next_seat is not None and after.phase != ENDED
        else None
    )
    subject = subjects.turn_subject(
        game.name,
        report.turn,
        view.mover.name,
        view.conquests,
        view.continents_taken,
        view.out,
        next_who.name if next_who else None,
        view.winner.name if view.winner else None,
        token,
        fogged=fogview.hides_turn(report, viewer),
    )
    cid, images = _picture(
        game,
        after,
        view.changed,
        f"{game.name}: the board after turn {report.turn}",
        f"t{report.turn}",
        viewer,
    )
    context = {
        **_common(game, viewer),
        **_board_context(game, after, report.next_seat, view.changed, viewer),
        **_private(after, viewer),
        "report": report,
        "view": view,
        "next": next_who,
        "freestyle": moving.round_words(after),
        "deadline": when(report.deadline, game.timezone, game.zone_of(viewer)),
        "cid": cid,
        "round": views.round_of(report.before),
        "round_limit": report.after.options.max_turns,  # "round 3 of 20"
    }
    return template_mail("turn_report", subject, game.address_of(viewer), context, game, images)


def render_setup_report(report: SetupReport, viewer: int | None, token: str = "") -> RenderedMail:
    """The setup played, to every player when it ends (``viewer`` None: the
    GM's copy, and `pbem render --turn 0` without --as): the same board and
    picks for all, each player's own cards and mission (and ``token``, the
    subject's reply token) only in their own; under fog, each their own view."""
    report = fogview.setup_report(report, viewer)
    game, state = report.game, report.state
    view = setupview.setup_view(report)
    first = view.first.name if view.first is not None else None
    done = f"{subjects.tag(game.name)}The setup is done"
    candidates = [f"{done}: {first} plays turn 1"] if first is not None else []
    subject = subjects.fit([subjects.with_token(c, token) for c in [*candidates, done]])
    cid, images = _picture(
        game, state, [], f"{game.name}: the board after the setup", "setup", viewer
    )
    context = {
        **_common(game, viewer),
        **_board_context(game, state, view.first.seat if view.first else None, (), viewer),
        **_private(state, viewer),
        "report": report,
        "view": view,
        "deadline": when(report.deadline, game.timezone, game.zone_of(viewer)),
        "cid": cid,
    }
    return template_mail("setup_report", subject, game.address_of(viewer), context, game, images)


def render_game_start(start: GameStart) -> RenderedMail:
    game, seat = start.game, start.seat
    state = fogview.state_for(start.state, seat)
    you = game.player(seat)
    dealt = any(o >= 0 for o in state.owner)
    cid, images = _picture(game, state, [], f"{game.name}: the board at the start", "start", seat)
    candidates = (
        [
            f"{subjects.tag(game.name)}The game begins: you are {you.name} ({you.colour}), "
            f"{plural(len(game.players), 'player')}",
            f"{subjects.tag(game.name)}The game begins: you are {you.name}",
        ]
        if not start.holder
        else [
            f"{subjects.tag(game.name)}Welcome: you take over the seat of {you.name} "
            f"({you.colour}) from turn {start.turn}",
            f"{subjects.tag(game.name)}Welcome: you take over the seat of {you.name} "
            f"from turn {start.turn}",
            f"{subjects.tag(game.name)}Welcome: you take over {you.name}",
        ]
    )
    subject = subjects.fit([subjects.with_token(c, start.token) for c in candidates])
    hq = state.players[seat].hq if seat < len(state.players) else None
    playing = state.phase not in (*SETUP_PHASES, ENDED) and state.current >= 0
    context = {
        **_common(game, seat),
        **(_board_context(game, state, None, (), seat) if dealt else {"blocks": [], "players": []}),
        **_private(state, seat),
        "marks_key": "",
        "state": state,
        "password": start.password,
        "me": views.who(game, state, seat),
        "order": [views.who(game, state, s) for s in state.order],
        "order_note": views.order_note(game.options.placement, game.options.play_order),
        "rules": state.options.describe(len(game.players)),  # after any `pbem upgrade-rules`
        "continents": state.board.continents,
        "setup": views.setup_task(state, seat),
        "first": views.who(game, state, state.current) if state.current >= 0 else None,
        "deadline": when(start.deadline, game.timezone, game.zone_of(seat)),
        "has_deadline": start.deadline is not None,
        "your_territories": [state.board.territories[t].name for t in state.territories_of(seat)],
        "cid": cid,
        "holder": start.holder,
        "takeover_turn": start.turn,
        "mover": views.who(game, state, state.current) if playing else None,
        "round_open": state.round if state.phase == ROUND else 0,  # freestyle
        "capital": game.options.goal == "capital",
        "headquarters": state.board.territories[hq].name if hq is not None else "",
        "your_team": teamview.your_team(state, seat),
    }
    return template_mail("game_start", subject, you.address, context, game, images)


def render_setup_prompt(prompt: SetupPrompt) -> RenderedMail:
    game, seat = prompt.game, prompt.seat
    state = fogview.state_for(prompt.state, seat)
    cid, images = _picture(game, state, [], f"{game.name}: the board", f"setup-{state.phase}", seat)
    what = SETUP_WORDS.get(state.phase, "setup")
    if state.phase == CLAIM and state.options.claim == "turns":
        what = f"claim ({state.owner.count(-1)} territories free)"
    due = when_short(prompt.deadline, game.timezone)
    subject = subjects.with_token(
        f"{subjects.tag(game.name)}Setup: your {what} orders, due {due}", prompt.token
    )
    context = {
        **_common(game, seat),
        **_board_context(game, state, None, (), seat),
        **_private(state, seat),
        "setup": views.setup_task(state, seat),
        "deadline": when(prompt.deadline, game.timezone, game.zone_of(seat)),
        "cid": cid,
    }
    return template_mail("setup_prompt", subject, game.address_of(seat), context, game, images)


def render_your_turn(notice: YourTurn) -> RenderedMail:
    game, seat = notice.game, notice.seat
    state = fogview.state_for(notice.state, seat)
    cid, images = _picture(
        game,
        state,
        [],
        f"{game.name}: the board before turn {state.turn}",
        f"t{state.turn}-start",
        seat,
    )
    start = views.due(state, seat)
    sets = views.sets_view(state, seat)
    context = {
        **_common(game, seat),
        **_board_context(game, state, seat, (), seat),
        **_private(state, seat),
        "state": state,
        "due": start.sentence("You"),
        "due_total": state.reinforcements,
        "must_trade": state.must_trade,
        "forced_at": game.options.forced_trade_at,
        "sets": sets,
        "token": notice.token,
        "deadline": when(notice.deadline, game.timezone, game.zone_of(seat)),
        "example_orders": views.turn_examples(state, seat),
        "since": notice.since,
        "cid": cid,
        "freestyle_round": notice.freestyle_round,
        "title": (
            f"Your move in round {notice.freestyle_round}"
            if notice.freestyle_round
            else f"Your turn {state.turn}"
        ),
    }
    subject = subjects.your_turn_subject(
        game.name, state.turn, notice.token, notice.freestyle_round
    )
    return template_mail("your_turn", subject, game.address_of(seat), context, game, images)


def render_reminder(reminder: Reminder) -> RenderedMail:
    game, state, seat = reminder.game, reminder.state, reminder.seat
    setup = state.phase in SETUP_PHASES
    # freestyle: the round (the turn's number depends on who moves before)
    period = f"round {state.round}" if state.phase == ROUND else f"turn {state.turn}"
    subject = subjects.reminder_subject(
        game.name,
        None if setup else period,
        reminder.token,
        when_short(reminder.deadline, game.timezone),
    )
    context = {
        **_common(game, seat),
        "setup": setup,
        "period": period,
        "token": reminder.token,
        "deadline": when(reminder.deadline, game.timezone, game.zone_of(seat)),
        "missed": reminder.missed,
        "missed_limit": reminder.missed_limit,
        "when_default": (
            "by then"
            if not reminder.grace_hours
            else f"within {plural_hours(reminder.grace_hours)} after it (the game's grace)"
        ),
        "removal": (
            "the greedy bot plays their seat"
            if reminder.on_removal == "bot"
            else teamview.removal_words(state, seat)
        ),
    }
    return template_mail("reminder", subject, game.address_of(seat), context, game)


SETUP_WORDS = {"claim": "draft", "place": "placement", "hq": "headquarters"}


def render_receipt(receipt: Receipt) -> RenderedMail:
    """Orders accepted (or CHECKed): for which turn or setup phase, and "late"
    only for orders that came after their deadline, in the grace period."""
    game = receipt.game
    what = (
        f"your {SETUP_WORDS.get(receipt.setup, 'setup')} orders"
        if receipt.setup
        else f"your orders for turn {receipt.turn}"
    )
    if receipt.freestyle_round and receipt.check_only:  # no turn number before it is played
        what = f"your orders for round {receipt.freestyle_round}"
    if receipt.no_orders:
        title = "Noted" if receipt.changed else "Nothing changed"
    elif receipt.check_only:
        title = f"CHECK: {what} are valid"
    elif receipt.setup:
        title = f"Setup orders accepted ({SETUP_WORDS.get(receipt.setup, 'setup')})"
    else:
        title = f"Orders accepted for turn {receipt.turn}"
    late = ""
    if receipt.late is not None and not (receipt.check_only or receipt.no_orders):
        title += " (late, in the grace period)"
        late = when(receipt.late, game.timezone, game.zone_of(receipt.seat))
    context = {
        **_common(game, receipt.seat),
        "receipt": receipt,
        "title": title,
        "late": late,
        "orders": receipt.orders_text.strip("\n").splitlines(),
    }
    subject = subjects.fit(
        [subjects.with_token(f"{subjects.tag(game.name)}{title}", receipt.token)]
    )
    return template_mail("receipt", subject, game.address_of(receipt.seat), context, game)


def render_error_reply(reply: ErrorReply) -> RenderedMail:
    name = reply.game.name if reply.game else None
    count = plural(folding.total(reply.problems), "problem")
    turn = reply.turn if reply.game is not None else None
    title = f"Checked, {count}" if reply.check else f"Not applied, {count}"
    subject = subjects.reply_subject(name, title, turn, reply.token, reply.freestyle_round)
    context = {
        "you": reply.game.player(reply.seat) if reply.game and reply.seat is not None else None,
        "reply": reply,
        "problems": reply.problems,
        "count": count,
    }
    return template_mail("error_reply", subject, reply.address, context, reply.game)


def render_game_over(over: GameOver, viewer: int | None, token: str = "") -> RenderedMail:
    game, state = over.game, over.state
    if state.winner is None:
        raise ValueError(f"game {game.name} has no winner yet")
    winner = views.who(game, state, state.winner)
    won_by = teamview.winners(state)  # (team games: the team and its players)
    standings = _standings(over)
    subject = subjects.fit(
        [
            subjects.with_token(
                f"{subjects.tag(game.name)}Game over: {won_by} wins after "
                f"{plural(state.turn, 'turn')}",
                token,
            ),
            subjects.with_token(f"{subjects.tag(game.name)}Game over: {won_by} wins", token),
        ]
    )
    cid, images = _picture(game, state, [], f"{game.name}: the final board", "final")
    win_mission = views.mission_text(state, state.winner) if state.win_reason == "mission" else ""
    context = {
        **_common(game, viewer),
        **_board_context(game, state, None),
        "state": state,
        "winner": winner,
        "won_by": won_by,
        "reason": (
            endnotes.limit_reason(state)
            if state.win_reason in ("max_turns", "points")
            else turnview.WIN_REASONS.get(state.win_reason, state.win_reason)
        ),
        "win_mission": win_mission,
        "end_notes": endnotes.end_notes(state),
        "standings": standings,
        "secret": game.secret_hex,
        "cid": cid,
    }
    return template_mail("game_over", subject, game.address_of(viewer), context, game, images)


def _standings(over: GameOver) -> list[list[str]]:
    game, state = over.game, over.state
    playing = [s for s in range(len(state.players)) if not state.players[s].neutral]
    ranked = gametypes.standings(state)  # terminator: by points, out of the game or not

    def key(seat: int) -> tuple:
        if seat == state.winner:
            return (0, 0, 0, 0)
        if state.options.goal == gametypes.TERMINATOR:
            return (1, ranked.index(seat), 0, seat)
        if state.players[seat].alive:
            return (1, -state.territory_count(seat), -state.army_count(seat), seat)
        return (2, -over.out_turns.get(seat, -1), 0, seat)

    rows = []
    for place, seat in enumerate(sorted(playing, key=key), start=1):
        player = state.players[seat]
        try:
            status = game.player(seat).status
        except KeyError:
            status = PLAYING
        if seat == state.winner:
            result = "winner"
        elif player.alive:
            result = "still in"
        elif status not in (PLAYING, OUT, "winner"):
            result = status
        else:
            by = player.eliminated_by
            result = "out"
            if by is not None and not state.players[by].neutral:
                result += f", by {state.players[by].name}"
            if seat in over.out_turns:
                result += f", turn {over.out_turns[seat]}"
        rows.append(
            [
                str(place),
                player.name,
                views.who(game, state, seat).colour,
                endnotes.points_result(state, seat, result),
                str(state.territory_count(seat)),
                str(state.army_count(seat)),
            ]
        )
    return rows


def render_gm_alert(alert: GmAlert) -> RenderedMail:
    game = alert.game
    address = alert.address or (game.gm_address if game else "")
    # "GM alert:" only in mail to the GM (not on the answer to their commands);
    # a player gets the notice as it is.
    to_gm = game is None or not alert.address or alert.address == game.gm_address
    prefix = "GM alert: " if to_gm and not alert.answer else ""
    subject = subjects.fit(
        [
            subjects.with_token(
                f"{subjects.tag(game.name if game else None)}{prefix}{alert.subject}", alert.token
            )
        ]
    )
    heading = f"{prefix}{alert.subject}"
    context: dict[str, object] = {"alert": alert, "heading": heading}
    if alert.answer:  # the GM's help pointer, not the players' order language
        context["footer_help"] = GM_COMMANDS_HELP
    rendered = template_mail("gm_alert", subject, address, context, game)
    if to_gm:
        return rendered
    kind = LetterKind.ANSWER if alert.replies else LetterKind.NOTICE
    return replace(rendered, kind=str(kind))


def render_rules_changed(change: RulesChange) -> RenderedMail:
    """The announcement of `pbem upgrade-rules`, to a player or the GM."""
    game = change.game
    subject = subjects.fit(
        [
            subjects.with_token(
                f"{subjects.tag(game.name)}Rules version {change.new} "
                + (f"from turn {change.turn} on" if change.turn else "from the setup on"),
                change.token,
            ),
            subjects.with_token(f"{subjects.tag(game.name)}New rules version", change.token),
        ]
    )
    heading = f"The game moves to rules version {change.new}"
    context: dict[str, object] = {"change": change, "heading": heading}
    return template_mail("rules_changed", subject, change.address, context, game)


GM_COMMANDS_HELP = (
    "GM commands by mail, one a line under PASSWORD and the GM password: PAUSE, "
    "RESUME, EXTEND hours, PROCESS, KICK player, STATUS (docs/GAME-MASTERS.md, "
    '"Commands by mail").'
)


def render_help(help_: Help) -> RenderedMail:
    game = help_.game
    subject = subjects.with_token(
        f"{subjects.tag(game.name if game else None)}{help_.title}", help_.token
    )
    return template_mail("help", subject, help_.address, {"help": help_}, game)


def render_press(press: Press, recipient: int) -> RenderedMail:
    """The press message as delivered to seat ``recipient``."""
    game = press.game
    sender = game.player(press.sender).name if press.sender is not None else None
    others = [game.player(s).name for s in press.to if s != recipient]
    if press.to_all:
        audience = "all players"
    else:
        audience = join_words(["you"] + others) if others else "you"
    what = f"Press from {sender}" if sender else "Anonymous press"
    subject = subjects.fit([subjects.with_token(f"{subjects.tag(game.name)}{what}", press.token)])
    context = {
        **_common(game, recipient),
        "press": press,
        "sender": sender,
        "audience": audience,
        "team_game": bool(game.options.team_size),  # the hint names PRESS TO TEAM
    }
    return template_mail("press", subject, game.address_of(recipient), context, game)


def render_status(status: Status, viewer: int | None) -> RenderedMail:
    game = status.game
    state = fogview.state_for(status.state, viewer)
    to_move = moving.next_seat(state)
    mover = views.who(game, state, to_move) if to_move is not None else None
    if state.phase == ENDED and state.winner is not None:
        where = f"game over, {state.players[state.winner].name} won"
    elif state.phase in SETUP_PHASES:
        where = f"setup ({state.phase})"
    else:
        where = f"turn {state.turn}, {moving.to_move(state)}"
    subject = subjects.fit(
        [subjects.with_token(f"{subjects.tag(game.name)}Status: {where}", status.token)]
    )
    cid, images = _picture(
        game, state, [], f"{game.name}: the board, {where}", f"status-{state.turn}", viewer
    )
    context = {
        **_common(game, viewer),
        **_board_context(game, state, to_move, (), viewer),
        **_private(state, viewer),
        "state": state,
        "where": where,
        "mover": mover,
        "deadline": when(status.deadline, game.timezone, game.zone_of(viewer)),
        "cid": cid,
    }
    return template_mail("status", subject, game.address_of(viewer), context, game, images)
