"""What the GM does to a running game: pause, extend, kick, replace, roll back,
play the turn now. Each runs in the caller's one transaction, is announced
to the players, and returns one line for the GM."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, delete, select

from pbem.orderlog import replay
from pbem.rules.dice import new_secret
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ENDED, SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play import notify
from pbem.service.play.deadlines import kick_in_setup, play_missing
from pbem.service.play.games import (
    Outcome,
    add_reroll,
    definition_of,
    find_player,
    load,
    log_of,
    players_of,
    store_result,
    sync_row,
    to_entry,
)
from pbem.service.play.gamesettings import DEFAULTS, bot_seats, check_settings, settings
from pbem.service.play.names import check_address, check_player_name, name_from_address
from pbem.service.play.passwords import hash_password, new_password
from pbem.service.play.rulesupgrade import undone_move
from pbem.service.play.schedule import (
    aware_utc,
    clear_absences,
    grant_extra_hours,
    on_allowed_day,
    start_period,
)
from pbem.service.play.turns import held_orders, play, play_bot_turns, remove
from pbem.store import (
    Game,
    OrderEntry,
    PendingOrders,
    Player,
    SeatHolder,
    ServiceState,
    TurnResult,
    id_of,
)
from pbem.vocab import GamePhase, GameStatus, SeatStatus


def _under_way(game: Game) -> None:
    if game.status == GameStatus.FINISHED or game.phase == GamePhase.OVER:
        raise ServiceError(f"game {game.name} is over")
    if game.phase == GamePhase.OPEN:
        raise ServiceError(f"game {game.name} has not started: it waits for players to join")


def _when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment else "none"


# The service's own bookkeeping in settings_json, never set by hand.
_BOOKKEEPING = {"bot_seats", "bot_since", "setup_autopilot", "mail_prefs", "tz_prefs"}


def change_settings(session: Session, ctx: Context, game: Game, changes: dict[str, Any]) -> str:
    """`pbem set`: timing and policy settings may change in a running game
    (announced to the players); rule options may not, as they would change
    the meaning of turns already played."""
    _under_way(game)
    unknown = sorted(k for k in changes if k not in DEFAULTS or k in _BOOKKEEPING)
    if unknown:
        from pbem.rules.options import Options

        if unknown[0] == "rules_version":
            raise ServiceError(
                f"rules_version moves by `pbem upgrade-rules {game.name}` (it says what would "
                "change, and tells the players), not by `pbem set`"
            )
        if unknown[0] in Options.__dataclass_fields__:
            raise ServiceError(
                f"{unknown[0]} is a rule option: the rules of a game cannot change once it "
                "has begun (every turn already played, and its replay, depends on them)"
            )
        raise ServiceError(
            f"{unknown[0]}: no such setting (settings: {', '.join(sorted(DEFAULTS))})"
        )
    stored = json.loads(game.settings_json or "{}")
    before = settings(game)
    check_settings({**stored, **changes})
    changed = {k: v for k, v in changes.items() if before.get(k) != v}
    if not changed:
        return f"{game.name}: nothing changed"
    stored.update(changed)
    game.settings_json = json.dumps(stored, sort_keys=True)
    session.add(game)
    lines = [f"{k}: {before.get(k)!r} -> {v!r}" for k, v in sorted(changed.items())]
    notify.announce(
        session,
        ctx,
        game,
        "The GM changed the settings of the game:\n"
        + "\n".join(f"  {line}" for line in lines)
        + "\nThe current deadline stands; the new timing applies from the next one.",
        subject="The game's settings changed",
    )
    return f"{game.name}: " + "; ".join(lines)


def pause(session: Session, ctx: Context, game: Game) -> str:
    _under_way(game)
    if game.status == GameStatus.PAUSED:
        raise ServiceError(f"game {game.name} is paused already")
    game.status = GameStatus.PAUSED
    session.add(game)
    session.add(ServiceState(key=f"paused:{game.id}", value=ctx.clock.now().isoformat()))
    notify.announce(
        session,
        ctx,
        game,
        f"The GM has paused {game.name}. Deadlines are frozen until the game resumes; "
        "orders sent meanwhile are refused.",
        subject="The game is paused",
    )
    return f"{game.name} paused"


def resume(session: Session, ctx: Context, game: Game) -> str:
    """The deadline moves by as long as the game was paused."""
    if game.status != GameStatus.PAUSED:
        raise ServiceError(f"game {game.name} is not paused")
    marker = session.exec(
        select(ServiceState).where(ServiceState.key == f"paused:{game.id}")
    ).first()
    game.status = GameStatus.RUNNING
    paused_for = timedelta(0)
    if marker is not None:
        paused_for = ctx.clock.now() - aware_utc(datetime.fromisoformat(marker.value))
        session.delete(marker)
    if game.deadline is not None:
        game.deadline = aware_utc(game.deadline) + paused_for
    session.add(game)
    hours = paused_for.total_seconds() / 3600
    notify.announce(
        session,
        ctx,
        game,
        f"The GM has resumed {game.name} after {hours:.1f} hours. The deadline moved "
        f"by as much, to {_when(game.deadline)}.",
        subject="The game resumes",
    )
    play_bot_turns(session, ctx, game)
    return f"{game.name} resumed; deadline {_when(game.deadline)}"


def extend(session: Session, ctx: Context, game: Game, hours: float) -> str:
    _under_way(game)
    if game.deadline is None:
        raise ServiceError(f"game {game.name} has no deadline to extend")
    if hours <= 0:
        raise ServiceError("extend by a positive number of hours")
    game.deadline = aware_utc(game.deadline) + timedelta(hours=hours)
    session.add(game)
    notify.announce(
        session,
        ctx,
        game,
        f"The GM extended the deadline by {hours:g} hours, to {_when(game.deadline)}.",
        subject=f"Deadline extended by {hours:g} hours",
    )
    return f"deadline of {game.name} now {_when(game.deadline)}"


def kick(session: Session, ctx: Context, game: Game, name: str) -> str:
    """Remove a player now, by the game's on_removal policy."""
    _under_way(game)
    player = find_player(session, game, name)
    if player.status != SeatStatus.ACTIVE:
        raise ServiceError(f"{player.name} is no longer playing ({player.status})")
    if game.phase == GamePhase.SETUP:
        return "; ".join(kick_in_setup(session, ctx, game, player))
    lines = remove(session, ctx, game, player, [], reason="removed by the GM")
    return "; ".join(lines)


def replace(
    session: Session,
    ctx: Context,
    game: Game,
    name: str,
    address: str,
    new_name: str | None = None,
) -> str:
    """Give a seat to a new address: a new password, an extended first
    deadline; the seat's history (SeatHolder) keeps who held it when.

    The seat keeps its name in the game (the name is part of the game's
    state, and so of every state hash); ``new_name`` is the newcomer's own
    name, kept in the seat's history and shown in the announcement."""
    _under_way(game)
    player = find_player(session, game, name)
    state = load(session, game).state
    if not state.players[player.seat].alive:
        raise ServiceError(
            f"{player.name}'s seat is out of the game (its territories are "
            "neutral); there is nothing to hand over"
        )
    address = check_address(address)  # pbem.service.play.names: as `pbem new` and JOIN check it
    others = [p for p in players_of(session, game) if p.seat != player.seat]
    if any(p.address == address for p in others):
        raise ServiceError(f"{address} holds another seat of {game.name} already")
    if address == player.address:
        raise ServiceError(f"{address} holds {player.name}'s seat already")
    # the newcomer's own name: given, else read from the address (never the seat's)
    holder_name = check_player_name(new_name or name_from_address(address), "name")

    old_address = player.address
    password = _hand_over(session, game, player, holder_name, address)
    acting_now = _replacement_time(session, ctx, game, player, state)
    notify.game_start(
        session, ctx, game, {player.name: password}, only_seat=player.seat, holder=holder_name
    )
    if acting_now:
        notify.prompt_next(session, ctx, game, state)
    _farewell(session, ctx, game, player.name, old_address)
    # Players learn who plays the seat now, never anyone's address.
    notify.announce(
        session,
        ctx,
        game,
        f"{_newcomer(holder_name, player.name)} takes over the seat of {player.name} from "
        f"turn {game.turn} on; the seat keeps its name, {player.name}, and its former "
        "player no longer plays it.",
        subject=f"A new player takes over {player.name}'s seat",
    )
    notify.gm_note(
        session,
        ctx,
        game,
        f"Seat {player.seat} ({player.name}): {holder_name} <{address}> from turn "
        f"{game.turn} on, after {old_address}.",
        key=f"replace:{player.seat}:{game.turn}:{address}",
        subject=f"Seat of {player.name} handed over",
    )
    return (
        f"{holder_name} ({address}) holds seat {player.seat} ({player.name}) from turn "
        f"{game.turn}; password {password}; deadline {_when(game.deadline)}"
    )


def _newcomer(holder_name: str, seat_name: str) -> str:
    """The newcomer as the other players read it: "dave", or "A new player,
    also called carol," when the name is the seat's own."""
    if holder_name.lower() == seat_name.lower():
        return f"A new player, also called {holder_name},"
    return holder_name


def _hand_over(
    session: Session, game: Game, player: Player, holder_name: str, address: str
) -> str:
    """The seat's history closed and opened under its new holder, who gets a new
    password (returned), a clean record of misses and no bot in the seat."""
    current = session.exec(
        select(SeatHolder).where(
            SeatHolder.game_id == game.id,
            SeatHolder.seat == player.seat,
            SeatHolder.to_turn.is_(None),  # type: ignore[union-attr]
        )
    ).first()
    if current is not None:
        current.to_turn = game.turn
        session.add(current)
    session.add(
        SeatHolder(
            game_id=id_of(game),
            seat=player.seat,
            name=holder_name,
            address=address,
            from_turn=game.turn,
        )
    )
    player.address = address
    password = new_password()
    player.secret_hash = hash_password(password)
    player.status = SeatStatus.ACTIVE
    player.missed_in_row = 0
    player.misses_json = "[]"
    clear_absences(session, game, player)
    if player.seat in bot_seats(game):
        stored = json.loads(game.settings_json or "{}")
        stored["bot_seats"] = sorted(bot_seats(game) - {player.seat})
        stored.get("bot_since", {}).pop(str(player.seat), None)
        game.settings_json = json.dumps(stored, sort_keys=True)
    return password


def _replacement_time(
    session: Session, ctx: Context, game: Game, player: Player, state: GameState
) -> bool:
    """The newcomer's extra hours: on the current deadline when the seat is to
    act now (returned True), else granted for its next turn."""
    conf = settings(game)
    extra = float(conf["replacement_extra_hours"])
    acting_now = state.phase in SETUP_PHASES or state.current == player.seat
    acting_now = acting_now or player.seat in waiting_for(state)  # freestyle: still to move
    if acting_now and game.deadline is not None:
        hours = conf["setup_hours"] if state.phase in SETUP_PHASES else conf["turn_hours"]
        fresh = on_allowed_day(ctx.clock.now() + timedelta(hours=hours + extra), conf)
        game.deadline = max(aware_utc(game.deadline), fresh)
    elif extra:
        grant_extra_hours(session, game, player.seat, extra)
    session.add(game)
    session.add(player)
    session.flush()
    return acting_now


def _farewell(session: Session, ctx: Context, game: Game, seat_name: str, address: str) -> None:
    """The seat's former holder is told once that they no longer play it."""
    text = (
        f"The GM has given the seat of {seat_name} in {game.name} to another player. "
        "Mail from this address is no longer read for it. Thank you for playing."
    )
    about = ("farewell", game.name, seat_name, address, game.turn)
    notify.alert(session, ctx, game, address, "You no longer play in this game", text, about)


def _rollback_cut(session: Session, game: Game, turn: int) -> tuple[list[OrderEntry], int]:
    """The log entries a rollback to ``turn`` keeps, and how many it undoes;
    a rollback that cannot be is refused here, before anything changes."""
    if game.phase == GamePhase.OPEN:
        raise ServiceError(f"game {game.name} has not started")
    if turn < 1 or turn > game.turn:
        raise ServiceError(f"turn must be between 1 and {game.turn}")
    rows = log_of(session, game)
    keep = [r for r in rows if not (r.kind in ("turn", "command") and r.turn >= turn)]
    cut = len(rows) - len(keep)
    if cut == 0:
        raise ServiceError(f"nothing has been played from turn {turn} on")
    if rows[: len(keep)] != keep:
        raise ServiceError(f"the log of {game.name} is not in turn order; nothing changed")
    return keep, cut


def _undone(session: Session, game: Game, turn: int) -> str:
    """The turns a rollback to ``turn`` undoes, in words: "turn 2", "turns 2 to
    4" (the turns played from ``turn`` on; the GM's commands alone: "the GM's
    commands of turn 2")."""
    played = sorted({r.turn for r in log_of(session, game) if r.kind == "turn" and r.turn >= turn})
    if not played:
        return f"the GM's commands of turn {turn}"
    if len(played) == 1:
        return f"turn {played[0]}"
    return f"turns {played[0]} to {played[-1]}"


def rollback_question(session: Session, game: Game, turn: int) -> str:
    """What `pbem rollback` asks before it acts (refused as rollback would be)."""
    keep, cut = _rollback_cut(session, game, turn)
    rules = undone_move(session, game, len(keep))
    return (
        f"Roll {game.name} back to the start of turn {turn} (it is at turn {game.turn}), "
        f"undoing {_undone(session, game, turn)} ({cut} log "
        f"{'entry' if cut == 1 else 'entries'}), and tell every player?"
        + (f" {rules}" if rules else "")
    )


def rollback(
    session: Session,
    ctx: Context,
    game: Game,
    turn: int,
    reroll: bool = False,
    message: str | None = None,
) -> str:
    """Undo every step from ``turn`` on: truncate the log, replay, announce
    (with the GM's ``message`` to the players, when given).

    The replayed turns roll the same dice (they follow from the committed
    secret). With ``reroll`` the dice from ``turn`` on come from a new
    secret, drawn now; its commitment is announced, and the old secret is
    kept, as it still gives every turn before ``turn``."""
    keep, cut = _rollback_cut(session, game, turn)
    undone = _undone(session, game, turn)
    were = "were" if undone.startswith(("turns", "the GM's")) else "was"
    entries = f"{cut} log {'entry' if cut == 1 else 'entries'}"
    last_seq = keep[-1].seq if keep else 0
    rules = undone_move(session, game, len(keep))
    definition = definition_of(session, game)
    rebuilt = replay.rebuild(definition, [to_entry(r) for r in keep])
    state = rebuilt.state
    _cut_log(session, game, last_seq, state, definition)
    stored = _rolled_back_row(game, state, turn)
    bots = {int(s) for s in stored.get("bot_seats", [])}
    for player in players_of(session, game):
        playing = player.seat < len(state.players) and state.players[player.seat].alive
        if playing and player.status != SeatStatus.ACTIVE and player.seat not in bots:
            player.status = SeatStatus.ACTIVE
        _recount_misses(session, game, player, keep)
        session.add(player)
    start_period(session, ctx, game, state)
    if reroll:
        made = add_reroll(session, game, turn, new_secret())
        dice = (
            f"The dice from turn {turn} on come from a new secret, drawn now; its "
            f"SHA-256, the new commitment, is\n  {made}\nKeep it with the first one: "
            f"the game's first secret still gives every turn before {turn}, and both "
            "are published when the game ends."
        )
        told = f"new dice from turn {turn} on (commitment {made})"
    else:
        dice = (
            "The dice are the game's committed dice: the same orders would roll the "
            "same dice again."
        )
        told = (
            "the dice of the replayed turns are the same as before (they follow from the "
            "committed secret), so the same orders roll the same dice; --reroll draws new ones"
        )
    notify.announce(
        session,
        ctx,
        game,
        f"The GM rolled {game.name} back to the start of turn "
        f"{state.turn}: {undone} {were} undone. The board is as it was then; "
        f"the deadline is {_when(game.deadline)}. {dice}"
        + (f"\n\n{rules}" if rules else "")
        + (f"\n\nThe GM says why: {message.strip()}" if message and message.strip() else ""),
        subject=f"Rolled back to turn {state.turn}" + (": new dice from here on" if reroll else ""),
    )
    if state.phase != ENDED:
        notify.prompt_next(session, ctx, game, state)
    play_bot_turns(session, ctx, game)
    moved = f"; rules version {state.options.rules_version} again" if rules else ""
    return (
        f"{game.name} rolled back to turn {state.turn} ({undone} undone, {entries}); {told}{moved}"
    )


def _cut_log(
    session: Session, game: Game, last_seq: int, state: GameState, definition: Any
) -> None:
    """The log and results past ``last_seq`` deleted, held orders dropped; the
    stored snapshot checked against the replayed state."""
    for table in (OrderEntry, TurnResult):
        session.exec(
            delete(table).where(
                col(table.game_id) == game.id,
                col(table.seq) > last_seq,
            )
        )
    session.exec(
        delete(PendingOrders).where(
            col(PendingOrders.game_id) == game.id,
            col(PendingOrders.turn) > 0,
        )
    )
    session.flush()
    latest = session.exec(
        select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq).desc())
    ).first()
    if latest is None:
        step = replay.Step(state.turn, None, [], [], state, definition.state_hash(state))
        store_result(session, game, step, seq=last_seq)
    elif latest.state_hash != definition.state_hash(state):
        raise ServiceError(
            f"the log of {game.name} does not replay to its stored hash at entry "
            f"{latest.seq}; run `pbem replay {game.name}` before rolling back"
        )


def _rolled_back_row(game: Game, state: GameState, turn: int) -> dict[str, Any]:
    """The game's row as the replayed state has it, one more rollback counted (new
    Message-IDs for the turns played again), bots of the undone turns gone; its
    settings returned."""
    if game.status == GameStatus.FINISHED:
        game.status = GameStatus.RUNNING
    game.winner_seat = None
    game.secret_revealed = False if game.phase == GamePhase.OVER else game.secret_revealed
    sync_row(game, state)
    stored: dict[str, Any] = json.loads(game.settings_json or "{}")
    stored["rollbacks"] = int(stored.get("rollbacks", 0)) + 1  # new Message-IDs for replays
    since = stored.get("bot_since", {})
    undone = sorted(int(s) for s, t in since.items() if t >= turn)
    if undone:  # seats handed to the bot from the rolled back turns on are players' again
        stored["bot_seats"] = [s for s in stored.get("bot_seats", []) if s not in undone]
        stored["bot_since"] = {s: t for s, t in since.items() if int(s) not in undone}
    game.settings_json = json.dumps(stored, sort_keys=True)
    return stored


def _recount_misses(session: Session, game: Game, player: Player, log: list[OrderEntry]) -> None:
    """The player's record of played and missed turns, as the kept log tells it
    (since they took the seat; a default counts as a miss)."""
    since = session.exec(
        select(SeatHolder.from_turn).where(
            SeatHolder.game_id == game.id,
            SeatHolder.seat == player.seat,
            SeatHolder.to_turn.is_(None),  # type: ignore[union-attr]
        )
    ).first()
    history = [
        e.source == "default"
        for e in log
        if e.kind == "turn"
        and e.seat == player.seat
        and e.turn >= (since or 0)
        and e.source in ("mail", "gm", "default")
    ]
    player.misses_json = json.dumps(history[-100:])
    player.missed_total = sum(history)
    row = 0
    for missed in reversed(history):
        if not missed:
            break
        row += 1
    player.missed_in_row = row


def process(session: Session, ctx: Context, game: Game) -> str:
    """Play the current turn (or setup phase) now: orders held for the
    deadline if there are any, else the defaults for the missing. A miss
    counts against a player only once their deadline has passed."""
    _under_way(game)
    if game.status == GameStatus.PAUSED:
        raise ServiceError(f"game {game.name} is paused")
    loaded = load(session, game)
    state = loaded.state
    lines: list[str] = []
    held = None if state.phase in SETUP_PHASES else held_orders(session, game, state.current)
    if held is not None:
        player = players_of(session, game)[state.current]
        text, message_id = held.text, held.message_id
        session.delete(held)
        session.flush()
        outcome = play(session, ctx, game, player, text, source="mail", message_id=message_id)
        if outcome.accepted:
            lines.append(f"{game.name}: turn {state.turn} played with {player.name}'s orders")
            loaded = load(session, game)
    if not lines:
        deadline = aware_utc(game.deadline)
        overdue = deadline is not None and ctx.clock.now() >= deadline
        lines += play_missing(session, ctx, game, loaded, count_miss=overdue)
    lines += play_bot_turns(session, ctx, game)
    return "; ".join(lines) or "nothing to play"


def adjudicate(
    session: Session, ctx: Context, game: Game, player: Player, text: str, dry_run: bool
) -> Outcome:
    """`pbem adjudicate`: the GM enters a player's orders by hand. Played like
    orders by mail (logged as the GM's), so the players get their reports and
    the next player the notice; then the bots' seats play."""
    outcome = play(session, ctx, game, player, text, source="gm", dry_run=dry_run)
    if outcome.accepted and not dry_run:
        play_bot_turns(session, ctx, game)
    return outcome
