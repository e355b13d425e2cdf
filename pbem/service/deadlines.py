"""Deadlines: reminders, late notices, missed turns, removal, and outages.

Time comes only from the clock in the context. Each game is handled in its
own transaction, so one game's trouble never holds up another's. Markers in
ServiceState ("reminded:<game>:<turn>:<phase>:<hours>") make every notice go
out once, however often the poller runs.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from pbem.orders import render_orders
from pbem.rules.bots import make_bot
from pbem.rules.defaults import default_setup, default_turn
from pbem.rules.state import OVER, SETUP_PHASES, GameState
from pbem.service import replay
from pbem.service.context import Context
from pbem.service.games import command, load, players_of, record_turn, submit
from pbem.store import Game, PendingOrders, Player, ServiceState, session_scope

DEFAULTS: dict[str, Any] = {
    "turn_hours": 48.0,
    "setup_hours": 72.0,
    "grace_hours": 24.0,
    "reminder_hours": [24.0, 6.0],
    "allowed_days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    "timezone": "UTC",
    "adjudicate": "orders",  # or "deadline"
    "remove_after_misses": 3,  # in a row; 0: never
    "remove_after_of_last": [0, 0],  # [N, M]: N misses among the player's last M turns
    "on_removal": "neutral",  # or "bot": the greedy bot plays the seat
    "absence_days_per_year": 21,
    "press_anonymous": False,
    "press_copy_gm": False,
    "press_per_hour": 10,
    "replacement_extra_hours": 24.0,
}
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def settings(game: Game) -> dict[str, Any]:
    stored = json.loads(game.settings_json or "{}")
    return {**DEFAULTS, **stored}


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=ZoneInfo("UTC"))


def on_allowed_day(moment: datetime, conf: dict[str, Any]) -> datetime:
    """Move a deadline forward, a day at a time, to a day the game allows
    (days are those of the game's time zone)."""
    allowed = {d.lower()[:3] for d in conf["allowed_days"]} or set(DAYS)
    zone = ZoneInfo(conf["timezone"])
    for _ in range(7):
        if DAYS[moment.astimezone(zone).weekday()] in allowed:
            return moment
        moment += timedelta(days=1)
    return moment


def _absence_end(player: Player | None, deadline: datetime) -> datetime:
    if player is None or player.absent_from is None or player.absent_to is None:
        return deadline
    start, end = _aware(player.absent_from), _aware(player.absent_to)
    if start <= deadline <= end:  # type: ignore[operator]
        return end  # type: ignore[return-value]
    return deadline


def start_period(session: Session, ctx: Context, game: Game, state: GameState) -> None:
    """Set the deadline for whoever must act now (setup: everyone)."""
    if state.phase == OVER or game.status != "running":
        game.deadline = None
        session.add(game)
        return
    conf = settings(game)
    now = ctx.clock.now()
    if state.phase in SETUP_PHASES:
        deadline = now + timedelta(hours=conf["setup_hours"])
    else:
        deadline = now + timedelta(hours=conf["turn_hours"])
        players = players_of(session, game)
        if 0 <= state.current < len(players):
            deadline = _absence_end(players[state.current], deadline)
    game.deadline = on_allowed_day(deadline, conf)
    session.add(game)


def _mark(session: Session, key: str) -> bool:
    """True the first time a key is marked."""
    if session.exec(select(ServiceState).where(ServiceState.key == key)).first() is not None:
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
    with session_scope(engine, write=False) as session:
        ids = [
            g.id
            for g in session.exec(
                select(Game).where(Game.status == "running", Game.phase.in_(("setup", "playing")))
            )
        ]  # type: ignore[union-attr]
    for game_id in ids:
        with session_scope(engine) as session:
            game = session.get(Game, game_id)
            if game is not None and game.deadline is not None:
                done += _game(session, ctx, game)
    return done


def _outage(engine: Engine, ctx: Context) -> list[str]:
    """After the poller was down for longer than a grace period, push every
    deadline back by the downtime, so nobody is punished for it; tell the GM."""
    from pbem.service import notify

    now = ctx.clock.now()
    with session_scope(engine) as session:
        row = session.exec(select(ServiceState).where(ServiceState.key == "last_poll")).first()
        if row is None:
            return []
        last = _aware(datetime.fromisoformat(row.value))
        downtime = now - last  # type: ignore[operator]
        out = []
        for game in session.exec(select(Game).where(Game.status == "running")):
            conf = settings(game)
            if game.deadline is None or downtime <= timedelta(hours=conf["grace_hours"]):
                continue
            game.deadline = _aware(game.deadline) + downtime  # type: ignore[operator]
            session.add(game)
            hours = downtime.total_seconds() / 3600
            out.append(f"{game.name}: deadline pushed back {hours:.1f} h after an outage")
            notify.gm_note(
                session,
                ctx,
                game,
                f"pbem did not poll for {hours:.1f} hours (since {last:%Y-%m-%d %H:%M} "
                f"UTC). The deadline of {game.name} was pushed back by as much, to "
                f"{game.deadline:%Y-%m-%d %H:%M} UTC.",
                key=f"outage:{now.isoformat()}",
            )
        return out


def _game(session: Session, ctx: Context, game: Game) -> list[str]:
    from pbem.service import notify

    conf = settings(game)
    now = ctx.clock.now()
    deadline = _aware(game.deadline)
    assert deadline is not None
    loaded = load(session, game)
    state = loaded.state
    players = players_of(session, game)
    must_act = _must_act(session, game, state, players)
    phase_key = f"{game.id}:{game.turn}:{state.phase}:{deadline.isoformat()}"
    out: list[str] = []
    for hours in sorted(conf["reminder_hours"], reverse=True):
        when = deadline - timedelta(hours=float(hours))
        if now >= when and now < deadline and _mark(session, f"reminded:{phase_key}:{hours}"):
            for player in must_act:
                notify.reminder(session, ctx, game, state, player)
            out.append(f"{game.name}: reminder {hours} h before the deadline")
    if now >= deadline and _mark(session, f"late:{phase_key}"):
        notify.late_notice(session, ctx, game, state, [p.name for p in must_act])
        out.append(f"{game.name}: deadline passed")
    if now >= deadline and conf["adjudicate"] == "deadline" and state.phase not in SETUP_PHASES:
        held = _held_orders(session, game, state.current)
        if held is not None:
            out += _play_held(session, ctx, game, players[state.current], held)
            return out
    if now >= deadline + timedelta(hours=conf["grace_hours"]):
        out += play_missing(session, ctx, game, loaded)
    return out


def _must_act(
    session: Session, game: Game, state: GameState, players: list[Player]
) -> list[Player]:
    if state.phase in SETUP_PHASES:
        waiting = {
            p.seat
            for p in session.exec(
                select(PendingOrders).where(
                    PendingOrders.game_id == game.id, PendingOrders.turn == 0
                )
            )
        }
        return [players[s] for s in state.order if s not in waiting]
    if 0 <= state.current < len(players):
        return [players[state.current]]
    return []


def _held_orders(session: Session, game: Game, seat: int) -> PendingOrders | None:
    return session.exec(
        select(PendingOrders).where(
            PendingOrders.game_id == game.id,
            PendingOrders.turn == game.turn,
            PendingOrders.seat == seat,
        )
    ).first()


def _play_held(
    session: Session, ctx: Context, game: Game, player: Player, held: PendingOrders
) -> list[str]:
    """Deadline mode: the latest valid orders received are played now."""
    from pbem.service import notify

    text = held.text
    session.delete(held)
    outcome = submit(session, game, player, text, source="mail", message_id=held.message_id)
    if not outcome.accepted:  # the game moved on under them (e.g. a GM fix): default instead
        return play_missing(session, ctx, game, load(session, game))
    notify.after_steps(session, ctx, game, outcome.steps)
    return [f"{game.name}: turn {outcome.steps[-1].turn} played at the deadline"]


def play_missing(session: Session, ctx: Context, game: Game, loaded: replay.Game) -> list[str]:
    """Play the default for everyone who has not sent orders, and apply the
    game's removal policy."""
    from pbem.service import notify

    state = loaded.state
    players = players_of(session, game)
    out: list[str] = []
    if state.phase in SETUP_PHASES:
        for player in _must_act(session, game, state, players):
            text = render_orders(default_setup(state, player.seat), state.board)
            outcome = submit(session, game, player, text, source="default")
            out.append(f"{game.name}: default setup for {player.name}")
            if outcome.steps:
                notify.after_steps(session, ctx, game, outcome.steps)
        return out
    seat = state.current
    player = players[seat]
    text = render_orders(default_turn(state), state.board)
    outcome = submit(session, game, player, text, source="default")
    out.append(f"{game.name}: turn {state.turn} missed by {player.name}, default played")
    misses = record_turn(player, missed=True)
    session.add(player)
    removed = _removal_due(settings(game), misses)
    notify.missed_turn(session, ctx, game, player, state.turn, removed)
    if removed:
        out += remove(session, ctx, game, player, outcome.steps)
    else:
        notify.after_steps(session, ctx, game, outcome.steps)
    return out


def _removal_due(conf: dict[str, Any], history: list[bool]) -> bool:
    in_row = conf["remove_after_misses"]
    if in_row and len(history) >= in_row and all(history[-in_row:]):
        return True
    n, m = conf["remove_after_of_last"]
    return bool(n and m and sum(history[-m:]) >= n)


def remove(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    steps: list[replay.Step],
    reason: str = "missed turns",
) -> list[str]:
    """Take a player out: territories to the neutral, or the seat to the bot."""
    from pbem.service import notify

    conf = settings(game)
    if conf["on_removal"] == "bot":
        player.status = "removed"
        session.add(player)
        bots = set(conf.get("bot_seats", [])) | {player.seat}
        stored = json.loads(game.settings_json or "{}")
        stored["bot_seats"] = sorted(bots)
        game.settings_json = json.dumps(stored, sort_keys=True)
        session.add(game)
        notify.after_steps(session, ctx, game, steps)
        notify.announce(
            session,
            ctx,
            game,
            f"{player.name} was removed ({reason}); the greedy bot plays the seat from now on.",
        )
        return [f"{game.name}: {player.name} removed, seat to the bot"] + play_bot_turns(
            session, ctx, game
        )
    step = command(session, game, player, "REMOVE", source="default")
    notify.after_steps(session, ctx, game, [*steps, step])
    notify.announce(
        session,
        ctx,
        game,
        f"{player.name} was removed ({reason}); their territories are neutral now.",
    )
    return [f"{game.name}: {player.name} removed, territories neutral"]


def play_bot_turns(session: Session, ctx: Context, game: Game) -> list[str]:
    """Seats handed to the bot play at once, until a human seat is to move."""
    from pbem.service import notify

    out = []
    seats = set(settings(game).get("bot_seats", []))
    for _ in range(1000):
        loaded = load(session, game)
        state = loaded.state
        if state.phase in SETUP_PHASES or state.phase == OVER or state.current not in seats:
            break
        bot = make_bot("greedy", int.from_bytes(bytes.fromhex(game.secret)[:4], "big"))
        text = render_orders(bot.plan_turn(state), state.board)
        player = players_of(session, game)[state.current]
        outcome = submit(session, game, player, text, source="bot", allow_inactive=True)
        notify.after_steps(session, ctx, game, outcome.steps)
        out.append(f"{game.name}: the bot played turn {state.turn} for {player.name}")
    return out


def hold(
    session: Session, game: Game, player: Player, canonical: str, message_id: str | None
) -> bool:
    """Deadline mode: keep the latest valid orders until the deadline. True
    when they replace earlier ones."""
    row = _held_orders(session, game, player.seat)
    replaced = row is not None
    row = row or PendingOrders(game_id=game.id, turn=game.turn, seat=player.seat, text="")
    row.text = canonical
    row.message_id = message_id
    session.add(row)
    session.flush()
    return replaced


def absence(
    session: Session, ctx: Context, game: Game, player: Player, start: date, end: date
) -> str:
    """ABSENT FROM start TO end: deadlines of this player inside it move to its end,
    within the game's allowance of days per year."""
    if end < start:
        return f"ABSENT: {end} is before {start}; nothing changed."
    days = (end - start).days + 1
    allowed = int(settings(game)["absence_days_per_year"])
    if player.absence_days_used + days > allowed:
        left = max(0, allowed - player.absence_days_used)
        return (
            f"ABSENT: {days} days asked, but only {left} of the {allowed} days a year "
            "this game allows are left; nothing changed."
        )
    zone = ZoneInfo(settings(game)["timezone"])
    player.absent_from = datetime.combine(start, time.min, zone).astimezone(ZoneInfo("UTC"))
    player.absent_to = datetime.combine(end, time.max, zone).astimezone(ZoneInfo("UTC"))
    player.absence_days_used += days
    session.add(player)
    state = load(session, game).state
    if state.phase not in SETUP_PHASES and state.current == player.seat and game.deadline:
        game.deadline = on_allowed_day(
            _absence_end(player, _aware(game.deadline)),  # type: ignore[arg-type]
            settings(game),
        )
        session.add(game)
    return (
        f"Absence noted from {start} to {end}: your deadlines falling inside it move "
        f"to its end. ({allowed - player.absence_days_used} days left this year.)"
    )
