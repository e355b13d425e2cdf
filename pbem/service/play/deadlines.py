"""Deadlines: reminders, late notices, missed turns, removal, outages, bots.

Time comes only from the clock in the context. Each game is handled in its
own transaction, so one game's trouble never holds up another's. Markers in
ServiceState make every notice go out once, however often the poller runs:
"reminded:<period>:<hours>" and "late:<period>", where a period is one
deadline of one turn (or setup phase) of one game.

A game's timing and policies are its settings (pbem.service.play.gamesettings); when
a deadline falls is pbem.service.play.schedule's to say.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.service.context import Context
from pbem.service.play.gamesettings import DEFAULTS, autopilot_seats, bot_seats, settings
from pbem.service.play.schedule import absent_at, aware_utc, period_key, state_row
from pbem.store import (
    Game,
    PendingOrders,
    Player,
    ServiceState,
    id_of,
    lock_game,
    session_scope,
)
from pbem.vocab import GamePhase, GameStatus, SeatStatus

if TYPE_CHECKING:
    from pbem.orderlog import replay

log = logging.getLogger("pbem.deadlines")
MIN_OUTAGE = timedelta(minutes=30)  # a poller down at least this long had an outage
LAST_POLL = "last_poll"  # the last poll on the game's clock (a GM's --now moves it)
LAST_POLL_REAL = "last_poll_real"  # ... and on the real clock: outages are measured on it


def _marked(session: Session, key: str) -> bool:
    return session.exec(select(ServiceState).where(ServiceState.key == key)).first() is not None


def _mark(session: Session, key: str) -> bool:
    """True the first time a key is marked."""
    if _marked(session, key):
        return False
    session.add(ServiceState(key=key, value="1"))
    session.flush()
    return True


# ------------------------------------------------------------------ the run
def run(engine: Engine, ctx: Context) -> list[str]:
    """Everything the clock causes: outage shift, reminders, late notices,
    deadline adjudication, missed turns. Returns one line per thing done."""
    done: list[str] = []
    done += _outage(engine, ctx)
    # Only games with something due are locked (one write transaction each):
    # at 1,000 games, most have nothing to do at a given poll.
    with session_scope(engine, write=False) as session:
        rows = session.exec(
            select(Game.id, Game.name, Game.deadline, Game.settings_json).where(
                Game.status == GameStatus.RUNNING,
                Game.phase.in_((GamePhase.SETUP, GamePhase.PLAYING)),  # type: ignore[attr-defined]
                col(Game.deadline).is_not(None),  # ``_game`` needs one
            )
        )  # four columns, no ORM object: at 1,000 games this read is most of the stage
        now = ctx.clock.now()
        games = [
            (game_id, name)
            for game_id, name, deadline, stored in rows
            if game_id is not None and _maybe_due(deadline, stored, now)
        ]
    for game_id, name in games:
        try:
            with session_scope(engine) as session:
                game = lock_game(session, game_id)
                if game.status == GameStatus.RUNNING and game.deadline is not None:
                    done += _game(session, ctx, game)
        except Exception as exc:  # one game's trouble must not hold up the others
            log.exception("deadlines of game %s failed", name)
            done.append(f"{name}: deadline handling failed ({exc}); nothing changed")
    return done


def _outage(engine: Engine, ctx: Context) -> list[str]:
    """After the poller was down for longer than a game's grace period, every
    deadline of that game that passed meanwhile moves back by the downtime,
    so nobody is punished for it; the players and the GM are told.

    Deadlines still ahead are left alone: they either lost nothing, or were
    set by mail this very poll handled.

    The downtime is measured on the real clock, from the last poll's real
    time: a GM who tries deadlines with ``pbem --now`` moves the game's time
    (which deadlines passed), never the downtime. (A database from before
    ``last_poll_real`` has none: its first poll measures no outage.)"""
    now = ctx.clock.now()
    out: list[str] = []
    with session_scope(engine) as session:
        row = state_row(session, LAST_POLL_REAL)
        if row is None:
            return []
        last = aware_utc(datetime.fromisoformat(row.value))
        assert last is not None
        downtime = ctx.clock.real() - last
        if downtime <= MIN_OUTAGE:  # no game's threshold is lower: the usual case
            return []
        from pbem.service.play import notify

        passed = select(Game).where(
            Game.status == GameStatus.RUNNING, col(Game.deadline) <= now
        )  # only these can move: the other games are not loaded
        for game in session.exec(passed):
            deadline = aware_utc(game.deadline)
            conf = settings(game)
            if deadline is None or deadline > now:
                continue
            # A gap between two polls is no outage (with grace_hours = 0 every gap
            # would otherwise push the deadline back, and it would never pass).
            if downtime <= max(timedelta(hours=conf["grace_hours"]), MIN_OUTAGE):
                continue
            late_before = _marked(session, f"late:{period_key(game)}")
            game.deadline = deadline + downtime
            session.add(game)
            if late_before:  # the late notice went out already: not twice
                _mark(session, f"late:{period_key(game)}")
            hours = downtime.total_seconds() / 3600
            out.append(f"{game.name}: deadline pushed back {hours:.1f} h after an outage")
            notify.announce(
                session,
                ctx,
                game,
                f"The game server did not run for {hours:.1f} hours (since "
                f"{last:%Y-%m-%d %H:%M} UTC), past the deadline. So that nobody is "
                f"punished for it, the deadline was pushed back by as much, to "
                f"{game.deadline:%Y-%m-%d %H:%M} UTC.",
                subject=f"Deadline pushed back after a server outage of {hours:.0f} hours",
            )
    return out


def _maybe_due(deadline: datetime | None, settings_json: str, now: datetime) -> bool:
    """Could ``_game`` do anything for this game now? False only when it would
    return at once: no bot or autopilot seat (``bot_seats``, ``autopilot_seats``)
    and no reminder due yet. (Read outside the game's lock: a game changed
    meanwhile is seen next poll.)"""
    stored = json.loads(settings_json or "{}")
    if stored.get("bot_seats") or stored.get("setup_autopilot"):
        return True
    due = aware_utc(deadline)
    if due is None:
        return False
    hours = {**DEFAULTS, **stored}["reminder_hours"]
    earliest = max((float(h) for h in hours), default=0.0)
    return now >= due - timedelta(hours=earliest)


def _game(session: Session, ctx: Context, game: Game) -> list[str]:
    from pbem.rules.state import SETUP_PHASES
    from pbem.service.play import notify
    from pbem.service.play.games import load, players_of
    from pbem.service.play.turns import held_orders, must_act, play_bot_turns

    out = play_bot_turns(session, ctx, game)  # a bot seat to move never waits
    if out or game.deadline is None:
        return out
    conf = settings(game)
    now = ctx.clock.now()
    deadline = aware_utc(game.deadline)
    assert deadline is not None
    earliest = max((float(h) for h in conf["reminder_hours"]), default=0.0)
    if now < deadline - timedelta(hours=earliest):
        return out  # nothing is due before the first reminder: no need to load the game
    loaded = load(session, game)
    state = loaded.state
    players = players_of(session, game)
    waiting = must_act(session, game, state, players)
    period = period_key(game)
    due = [h for h in conf["reminder_hours"] if deadline - timedelta(hours=float(h)) <= now]
    fresh = [h for h in due if now < deadline and _mark(session, f"reminded:{period}:{h}")]
    if fresh and waiting:  # several due at once (a short turn, an outage): one mail
        for player in waiting:
            notify.reminder(session, ctx, game, state, player)
        hours = min(float(h) for h in fresh)
        out.append(
            f"{game.name}: reminder {hours:g} h before the deadline to "
            + ", ".join(p.name for p in waiting)
        )
    if now < deadline:
        return out
    if conf["adjudicate"] == "deadline" and state.phase not in SETUP_PHASES:
        held = held_orders(session, game, state.current)
        if held is not None:
            return out + _play_held(session, ctx, game, players[state.current], held)
    missed = now >= deadline + timedelta(hours=conf["grace_hours"])
    if waiting and _mark(session, f"late:{period}"):
        notify.late_notice(session, ctx, game, state, [p.name for p in waiting])
        if not missed:  # else the default played says it, on the next line
            out.append(
                f"{game.name}: deadline passed, waiting for " + ", ".join(p.name for p in waiting)
            )
    if missed:
        out += play_missing(session, ctx, game, loaded)
    return out


def _play_held(
    session: Session, ctx: Context, game: Game, player: Player, held: PendingOrders
) -> list[str]:
    """Deadline mode: the latest valid orders received are played now."""
    from pbem.service.play.games import load
    from pbem.service.play.turns import play, play_bot_turns

    text, message_id = held.text, held.message_id
    session.delete(held)
    session.flush()
    outcome = play(session, ctx, game, player, text, source="mail", message_id=message_id)
    if not outcome.accepted:  # the board changed under them (a GM's kick): default instead
        log.warning("held orders of %s in %s no longer valid", player.name, game.name)
        return play_missing(session, ctx, game, load(session, game))
    out = [f"{game.name}: turn {outcome.steps[-1].turn} played at the deadline"]
    return out + play_bot_turns(session, ctx, game)


def play_missing(
    session: Session,
    ctx: Context,
    game: Game,
    loaded: replay.Game,
    count_miss: bool = True,
) -> list[str]:
    """Play the default for everyone who has not sent orders, and apply the
    game's removal policy (``count_miss``: the deadline is really missed, not
    merely cut short by the GM)."""
    from pbem.orders import render_orders
    from pbem.rules.defaults import default_setup
    from pbem.rules.state import ENDED, ROUND, SETUP_PHASES
    from pbem.service.play.games import players_of
    from pbem.service.play.turns import must_act, play, play_bot_turns

    state = loaded.state
    players = players_of(session, game)
    out: list[str] = []
    if state.phase in SETUP_PHASES:
        for player in must_act(session, game, state, players):
            text = render_orders(default_setup(state, player.seat), state.board)
            done = play(session, ctx, game, player, text, source="default", allow_inactive=True)
            if not done.accepted:  # a bug of the defaults, never the player's: said, not hidden
                log.error("default setup orders of %s in %s refused", player.name, game.name)
                out.append(f"{game.name}: the default setup orders for {player.name} were REFUSED")
                continue
            out.append(f"{game.name}: default setup orders for {player.name}")
        return out + play_bot_turns(session, ctx, game)
    if state.phase == ENDED:
        return out
    if state.phase == ROUND:  # freestyle: everyone still to move, in turn order
        for player in must_act(session, game, state, players):
            if loaded.state.phase != ROUND:  # the round (or the game) ended meanwhile
                break
            away = absent_at(session, game, player, ctx.clock.now())  # (announced: no miss)
            out += _miss_turn(session, ctx, game, loaded, player, count_miss, away)
        return out + play_bot_turns(session, ctx, game)
    seat = state.current
    player = players[seat]
    if seat in bot_seats(game):
        return play_bot_turns(session, ctx, game)
    return _miss_turn(session, ctx, game, loaded, player, count_miss) + play_bot_turns(
        session, ctx, game
    )


def _miss_turn(
    session: Session,
    ctx: Context,
    game: Game,
    loaded: replay.Game,
    player: Player,
    count_miss: bool,
    away: bool = False,
) -> list[str]:
    """The default turn of ``player`` (whose turn it is, or in a freestyle round
    one still to move), the missed-turn notice and the removal policy; ``away``:
    a freestyle round's deadline in the player's announced absence, no miss."""
    from pbem.orders import render_orders
    from pbem.rules.defaults import default_turn
    from pbem.rules.engine import turn_of
    from pbem.rules.state import ROUND
    from pbem.service.play import notify
    from pbem.service.play.games import record_turn
    from pbem.service.play.turns import play, remove, report

    out: list[str] = []
    state = loaded.state
    shared = None  # in turn order the turn is played on the game as loaded anew (as ever)
    if state.phase == ROUND:  # freestyle: the turn as it begins now, on the game loaded
        state, shared = turn_of(state, player.seat), loaded
    text = render_orders(default_turn(state), state.board)
    # Before the deadline (the GM's `pbem process`) the turn is the GM's doing,
    # not a miss: logged as the GM's, reported as such.
    source = "default" if count_miss else "gm"
    # reported below: the missed-turn notice goes out before the turn's reports
    outcome = play(session, ctx, game, player, text, source=source, tell=False, loaded=shared)
    if away:
        out.append(f"{game.name}: turn {state.turn} of {player.name} (absent), default played")
        count_miss = False
    elif count_miss:
        out.append(f"{game.name}: turn {state.turn} missed by {player.name}, default played")
    else:
        out.append(f"{game.name}: turn {state.turn} played by the GM, default orders")
    removed = False
    if count_miss:
        misses = record_turn(player, missed=True)
        session.add(player)
        removed = removal_due(settings(game), misses)
        notify.missed_turn(session, ctx, game, player, state.turn, removed)
    if removed:
        out += remove(session, ctx, game, player, outcome.steps, loaded=shared)
    else:
        report(session, ctx, game, outcome.steps)
    return out


def removal_due(conf: dict[str, Any], history: list[bool]) -> bool:
    """The removal policies: N misses in a row, or N among the last M turns
    (``history``: the player's own turns, True for a miss, oldest first)."""
    in_row = int(conf["remove_after_misses"])
    if in_row and len(history) >= in_row and all(history[-in_row:]):
        return True
    n, m = (int(x) for x in conf["remove_after_of_last"])
    return bool(n and m and sum(history[-m:]) >= n)


def kick_in_setup(session: Session, ctx: Context, game: Game, player: Player) -> list[str]:
    """Remove a player during the initial placement (the GM's kick).

    The seat's remaining setup orders are played by the autopilot (the same
    defaults a missed setup deadline plays); once the setup is over the
    game's removal policy applies (territories neutral, or the bot plays
    the seat), announced to the table like any removal.
    """
    from pbem.service.play import notify
    from pbem.service.play.loading import stored_options
    from pbem.service.play.turns import play_bot_turns

    stored = json.loads(game.settings_json or "{}")
    stored["setup_autopilot"] = sorted(autopilot_seats(game) | {player.seat})
    game.settings_json = json.dumps(stored, sort_keys=True)
    session.add(game)
    player.status = SeatStatus.REMOVED  # their own mail is refused from now on
    session.add(player)
    notify.announce(
        session,
        ctx,
        game,
        f"{player.name} was removed by the GM during the setup; their remaining "
        "placements are made automatically, and once the setup is over "
        + (
            "the greedy bot plays the seat."
            if settings(game)["on_removal"] == "bot"
            else "their territories become neutral."
            if not stored_options(game).team_size
            else "their territories and cards go to their first surviving teammate."
        ),
        subject=f"{player.name} removed during the setup",
    )
    bot = settings(game)["on_removal"] == "bot"
    leaving = "the bot plays it" if bot else "its territories go neutral"
    said = (
        f"{game.name}: {player.name} removed during the setup; the seat is on autopilot "
        f"until the setup ends, then {leaving} (`pbem show` marks it)"
    )
    return [said] + play_bot_turns(session, ctx, game)


def hold(
    session: Session, game: Game, player: Player, canonical: str, message_id: str | None
) -> bool:
    """Deadline mode: keep the latest valid orders until the deadline. True
    when they replace earlier ones."""
    from pbem.service.play.turns import held_orders

    row = held_orders(session, game, player.seat)
    replaced = row is not None
    row = row or PendingOrders(game_id=id_of(game), turn=game.turn, seat=player.seat, text="")
    row.text = canonical
    row.message_id = message_id
    session.add(row)
    session.flush()
    return replaced
