"""Where a turn is played: orders in, engine, store, reports and deadline, bots.

Every way a turn gets played (a player's mail, orders held for the deadline,
the defaults of a missed turn, the GM's ``process``, a seat on autopilot or
given to the bot) goes through ``play``:

1. ``games.submit`` checks the orders (parsed once: a mail hands its parsed
   orders in), appends the canonical text to the order log and adjudicates
   it with the engine through ``log.replay.apply``; the result is stored;
2. ``report`` starts the next deadline (``schedule.start_period``), then
   ``notify.after_steps`` queues the reports and the next player's notice;
3. ``play_bot_turns`` then lets every bot seat to move play, until a human
   is to move (setup orders of seats on autopilot first).

Who the game waits for (``must_act``) and taking a player out (``remove``,
the seat to the bot or the territories to the neutral) live here too,
because both decide who plays next. deadlines.py (when to act), gm.py and
mailflow.py call this module; it calls none of them.
"""

from __future__ import annotations

import json

from sqlmodel import Session, select

from pbem.orderlog import replay
from pbem.orders import ParsedMail, render_orders
from pbem.rules.bots import make_bot
from pbem.rules.defaults import default_setup
from pbem.rules.engine import turn_of
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play import notify, schedule
from pbem.service.play.games import Outcome, command, load, players_of, submit
from pbem.service.play.gamesettings import autopilot_seats, bot_seats, settings
from pbem.store import Game, PendingOrders, Player
from pbem.vocab import GameStatus, SeatStatus


def play(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    text: str,
    *,
    source: str,
    message_id: str | None = None,
    dry_run: bool = False,
    allow_inactive: bool = False,
    parsed: ParsedMail | None = None,
    tell: bool = True,
    loaded: replay.Game | None = None,
) -> Outcome:
    """Play one player's orders: check, log, adjudicate, store (``games.submit``),
    then set the next deadline and report the steps (``report``)
    unless ``tell`` is off (the caller has a notice to queue first). Bots
    are the caller's next call (``play_bot_turns``), once its own turn is told.
    ``loaded``: the game the caller loaded in this transaction (advanced in place)."""
    outcome = submit(
        session,
        game,
        player,
        text,
        source=source,
        message_id=message_id,
        dry_run=dry_run,
        allow_inactive=allow_inactive,
        parsed=parsed,
        now=ctx.clock.now(),
        loaded=loaded,
    )
    if tell and outcome.accepted:
        report(session, ctx, game, outcome.steps)
    return outcome


def report(session: Session, ctx: Context, game: Game, steps: list[replay.Step]) -> None:
    """Start the next deadline (``schedule.start_period``) when the steps start a
    new period, then tell them: reports to every player, the next player's
    notice (``notify.after_steps``, which shows the new deadline)."""
    if steps and _starts_period(steps):
        schedule.start_period(session, ctx, game, steps[-1].state)
    notify.after_steps(session, ctx, game, steps)


def _starts_period(steps: list[replay.Step]) -> bool:
    """Whether the steps start a new period (a new deadline): not when they are
    only commands (RESIGN, REMOVE) that leave the same player to act in the
    same turn and phase: another player's leaving keeps the deadline."""
    first, last = steps[0].before, steps[-1].state
    if last.phase == ROUND:  # freestyle: one period a round, whoever moved
        return first is None or first.round != last.round or first.phase in SETUP_PHASES
    if first is None or any(not st.entries or st.entries[-1].kind != "command" for st in steps):
        return True
    return (first.phase, first.current, first.turn) != (last.phase, last.current, last.turn)


def must_act(session: Session, game: Game, state: GameState, players: list[Player]) -> list[Player]:
    """Who the game waits for: in setup, everyone who has not sent setup
    orders; else the player to move (not a bot seat, not one whose orders
    are held for the deadline)."""
    if state.phase in SETUP_PHASES:
        sent = {
            p.seat
            for p in session.exec(
                select(PendingOrders).where(
                    PendingOrders.game_id == game.id, PendingOrders.turn == 0
                )
            )
        }
        return [players[s] for s in state.order if s not in sent]
    if state.phase == ROUND:  # freestyle: everyone yet to move in this round
        bots = bot_seats(game)
        return [players[s] for s in waiting_for(state) if s not in bots]
    seat = state.current
    if not 0 <= seat < len(players) or seat in bot_seats(game):
        return []
    if held_orders(session, game, seat) is not None:
        return []
    return [players[seat]]


def held_orders(session: Session, game: Game, seat: int) -> PendingOrders | None:
    """Deadline mode: the orders kept for this seat's current turn, if any."""
    return session.exec(
        select(PendingOrders).where(
            PendingOrders.game_id == game.id,
            PendingOrders.turn == game.turn,
            PendingOrders.turn > 0,
            PendingOrders.seat == seat,
        )
    ).first()


def _run_autopilot(session: Session, ctx: Context, game: Game, loaded: replay.Game) -> list[str]:
    """Setup orders for the seats on autopilot; after the setup, their removal."""
    seats = autopilot_seats(game)
    if not seats:
        return []
    out: list[str] = []
    for _ in range(20):  # one round per setup phase at most
        state = loaded.state
        if state.phase not in SETUP_PHASES:
            break
        players = players_of(session, game)
        due = [p for p in must_act(session, game, state, players) if p.seat in seats]
        if not due:
            return out
        for player in due:
            state = loaded.state
            if state.phase not in SETUP_PHASES:
                break
            text = render_orders(default_setup(state, player.seat), state.board)
            play(
                session,
                ctx,
                game,
                player,
                text,
                source="default",
                allow_inactive=True,
                loaded=loaded,
            )
            out.append(f"{game.name}: setup orders by the autopilot for {player.name}")
    if loaded.state.phase in SETUP_PHASES:
        return out
    stored = json.loads(game.settings_json or "{}")
    stored.pop("setup_autopilot", None)
    game.settings_json = json.dumps(stored, sort_keys=True)
    session.add(game)
    for player in players_of(session, game):
        if player.seat in seats:
            out += remove(session, ctx, game, player, [], reason="removed by the GM", loaded=loaded)
    return out


def play_bot_turns(
    session: Session, ctx: Context, game: Game, loaded: replay.Game | None = None
) -> list[str]:
    """Seats handed to the bot play at once, until a human seat is to move
    (and seats removed during the setup get their setup played). ``loaded``:
    the game the caller loaded in this transaction, else it is loaded here."""
    running = game.status == GameStatus.RUNNING
    seats = bot_seats(game)
    if not running or not (seats or autopilot_seats(game)):
        return []
    if loaded is None:
        loaded = load(session, game)
    out = _run_autopilot(session, ctx, game, loaded)
    seats = bot_seats(game)
    if not seats or game.status != GameStatus.RUNNING:
        return out
    bot = make_bot("greedy", int.from_bytes(bytes.fromhex(game.secret)[:4], "big"))
    for _ in range(1000):
        state = loaded.state
        if state.phase == ROUND:  # freestyle: the bot seats still to move, in turn order
            seat = next((s for s in waiting_for(state) if s in seats), None)
            if seat is None:
                break
            state = turn_of(state, seat)
        if state.phase in SETUP_PHASES or state.phase == ENDED or state.current not in seats:
            break
        text = render_orders(bot.plan_turn(state), state.board)
        player = players_of(session, game)[state.current]
        outcome = play(
            session, ctx, game, player, text, source="bot", allow_inactive=True, loaded=loaded
        )
        if not outcome.accepted:  # the bot's own plan refused: a bug, not a player's fault
            raise ServiceError(f"the bot's orders for {player.name} were refused")
        out.append(f"{game.name}: the bot played turn {state.turn} for {player.name}")
    return out


def remove(
    session: Session,
    ctx: Context,
    game: Game,
    player: Player,
    steps: list[replay.Step],
    reason: str = "missed turns",
    loaded: replay.Game | None = None,
) -> list[str]:
    """Take a player out: territories to the neutral, or the seat to the bot
    (``steps``: what was just played and not yet reported; ``loaded``: the
    game the caller loaded in this transaction, if any)."""
    conf = settings(game)
    if conf["on_removal"] == "bot":
        player.status = SeatStatus.REMOVED
        session.add(player)
        stored = json.loads(game.settings_json or "{}")
        stored["bot_seats"] = sorted(bot_seats(game) | {player.seat})
        stored.setdefault("bot_since", {})[str(player.seat)] = game.turn
        game.settings_json = json.dumps(stored, sort_keys=True)
        session.add(game)
        report(session, ctx, game, steps)
        notify.announce(
            session,
            ctx,
            game,
            f"{player.name} was removed ({reason}); the greedy bot plays the seat from now on.",
            subject=f"{player.name} removed, the bot plays the seat",
        )
        return [f"{game.name}: {player.name} removed, seat to the bot"] + play_bot_turns(
            session, ctx, game, loaded
        )
    step = command(session, game, player, "REMOVE", source="default", loaded=loaded)
    report(session, ctx, game, [*steps, step])
    notify.announce(
        session,
        ctx,
        game,
        f"{player.name} was removed ({reason}); their territories are neutral now.",
        subject=f"{player.name} removed, territories neutral",
    )
    return [f"{game.name}: {player.name} removed, territories neutral"]
