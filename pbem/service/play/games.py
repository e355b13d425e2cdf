"""Use cases on stored games, each inside the caller's one transaction.

Creating a game, accepting a player's orders (validate, log, adjudicate,
store the result), and the queries the GM's command line needs; loading a
game's current state is pbem.service.play.loading's (its names are imported from
here too). The order log is the truth; TurnResult rows hold the state hash
and a snapshot after each step, as a cache and a check.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, func, select

from pbem.maps.presets import load_preset
from pbem.orderlog import replay
from pbem.orders import (
    OrderProblem,
    OrdersError,
    ParsedMail,
    parse_orders,
    render_orders,
    validate_mail,
)
from pbem.orders.mailorders import checked_mail
from pbem.rules.board import Board
from pbem.rules.dice import (
    DEFAULT_DICE_VERSION,
    SALT_PREFIX,
    check_version,
    commitment,
    new_secret,
)
from pbem.rules.events import Event
from pbem.rules.freestyle import turn_taken
from pbem.rules.options import Options, parse_value
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES, GameState
from pbem.service.errors import ServiceError
from pbem.service.play import pertx, rounds, teamplay
from pbem.service.play.gamesettings import check_settings
from pbem.service.play.loading import add_reroll as add_reroll
from pbem.service.play.loading import (
    board_of,
    definition_of,
    find_game,
    find_player,
    load,
    players_of,
)
from pbem.service.play.loading import current_commitment as current_commitment
from pbem.service.play.loading import log_of as log_of
from pbem.service.play.loading import rerolls_of as rerolls_of
from pbem.service.play.loading import to_entry as to_entry
from pbem.service.play.names import check_address, check_game_name, check_player_name, shown
from pbem.service.play.passwords import hash_password, new_password
from pbem.store import (
    Game,
    OrderEntry,
    PendingOrders,
    Player,
    SeatHolder,
    TurnResult,
    id_of,
    utcnow,
)
from pbem.vocab import GamePhase, GameStatus, SeatStatus


@dataclass(frozen=True)
class PlayerSpec:
    name: str
    address: str
    colour: str = ""


@dataclass
class Created:
    game: Game
    passwords: dict[str, str]  # player name -> password, shown once
    events: list[Event]


@dataclass
class Outcome:
    """What became of one player's orders."""

    accepted: bool
    problems: list[OrderProblem] = field(default_factory=list)
    canonical: str = ""
    steps: list[replay.Step] = field(default_factory=list)
    waiting_for: list[str] = field(default_factory=list)
    message: str = ""


# ------------------------------------------------------------------ creation
def parse_player(text: str) -> PlayerSpec:
    """NAME:ADDRESS or NAME:ADDRESS:COLOUR, as `pbem new --player` takes it."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[0] or "@" not in parts[1]:
        raise ServiceError(
            f"--player {shown(text)}: expected NAME:ADDRESS (e.g. alice:alice@example.org)"
        )
    name = check_player_name(parts[0])
    address = check_address(parts[1])
    return PlayerSpec(name, address, parts[2].strip() if len(parts) == 3 else "")


def options_for(preset: str, overrides: dict[str, str]) -> Options:
    options = load_preset(preset)
    typed = {key: parse_value(key, value) for key, value in overrides.items()}
    return options.with_overrides(typed, source="--option")


def map_text_of(map_name: str) -> tuple[str, str, Board]:
    """(name, text, board) of a shipped map, or of a map file given by path: a
    .toml map (e.g. one made by `pbem maps import`) or a Domination, Conquest or
    Lux map, imported on the way. The game stores the text, so it never depends
    on the file again (but for the images of an imported map, by absolute path)."""
    from pathlib import Path

    from pbem.maps import map_names
    from pbem.maps.files import is_file_name, map_source

    if not is_file_name(map_name) and map_name not in map_names():
        raise ServiceError(f"no map {map_name!r} (known: {', '.join(map_names())})")
    if is_file_name(map_name) and not Path(map_name).is_file():
        raise ServiceError(f"{map_name}: no such map file")
    return map_source(map_name)


def create_game(
    session: Session,
    name: str,
    players: list[PlayerSpec],
    *,
    preset: str = "classic",
    overrides: dict[str, str] | None = None,
    map_name: str = "classic",
    gm_address: str | None = None,
    settings: dict | None = None,
    secret: bytes | None = None,
    title: str = "",
    open_seats: int = 0,
    dice_version: str = DEFAULT_DICE_VERSION,
    open_teams: str = "",
) -> Created:
    """A new game with its players seated and dealt; or, with ``open_seats``,
    a game open for that many players to JOIN by mail (it starts when full;
    ``open_teams``: the GM's teams, "alice,carol / bob,dave", the names to join as)."""
    check_game_name(session, name)
    if gm_address is not None:
        gm_address = check_address(gm_address)
    try:
        dice_version = check_version(dice_version)
    except ValueError as exc:
        raise ServiceError(str(exc)) from None
    options = options_for(preset, overrides or {})
    options.check_players(open_seats or len(players))
    if options.play_order == rounds.FREESTYLE and (settings or {}).get("adjudicate") == "deadline":
        raise ServiceError(
            "a freestyle game plays each player's orders as they arrive: it cannot hold "
            "them for the deadline (adjudicate = deadline); leave adjudicate = orders"
        )
    map_name, map_text, _ = map_text_of(map_name)
    secret = secret if secret is not None else new_secret()
    stored = _stored_settings(settings or {}, open_seats, open_teams, options.team_size)
    row = Game(
        name=name,
        title=title or name,
        map_name=map_name,
        map_text=map_text,
        preset=preset,
        options_json=json.dumps(options.to_dict(), sort_keys=True),
        settings_json=json.dumps(stored, sort_keys=True),
        dice_version=dice_version,
        secret=secret.hex(),
        commitment=commitment(secret),
        gm_address=gm_address,
        phase=GamePhase.OPEN,
        hash_version=replay.HASH_KEYED,
    )
    session.add(row)
    session.flush()
    if open_seats:
        return Created(row, {}, [])
    board = board_of(row.map_text, row.map_name)
    asked = {map_colour(board, spec.colour) for spec in players} - {""}  # seat_player spells them
    passwords = {spec.name: seat_player(session, row, spec, asked) for spec in players}
    return Created(row, passwords, start_game(session, row))


def _stored_settings(
    settings: dict, open_seats: int, open_teams: str, team_size: int
) -> dict[str, Any]:
    """The settings a new game stores: those given, checked, and for a game open
    for JOIN its seats and the GM's teams."""
    stored = dict(settings)
    check_settings(stored)
    if open_seats:
        stored["seats"] = open_seats
    if open_teams:
        stored[teamplay.OPEN_TEAMS] = teamplay.open_teams(open_teams, team_size, open_seats)
    return stored


def map_colour(board: Board, text: str) -> str:
    """A colour as a player or GM typed it, in the map's spelling ("Red" is red:
    the mission cards name colours so); "" for none; one the map does not
    offer is refused, naming those it does."""
    text = text.strip()
    if not text:
        return ""
    colour = board.colour_of(text)
    if colour is None:
        known = ", ".join(board.palette())
        raise ServiceError(f"no colour {text!r} on map {board.name}: the colours are {known}")
    return colour


def seat_player(
    session: Session, game: Game, spec: PlayerSpec, reserved: Collection[str] = ()
) -> str:
    """Add a player in the next seat; returns their password (shown once).
    ``reserved``: colours that players seated later asked for."""
    spec = PlayerSpec(check_player_name(spec.name), check_address(spec.address), spec.colour)
    players = players_of(session, game)
    if any(p.name.lower() == spec.name.lower() for p in players):
        raise ServiceError(f"game {game.name} has a player named {spec.name} already")
    if any(p.address == spec.address for p in players):
        raise ServiceError(f"{spec.address} plays in {game.name} already")
    board = board_of(game.map_text, game.map_name)
    taken = [p.colour for p in players]
    colour = map_colour(board, spec.colour) or next(
        c for c in board.palette() if c not in taken and c not in reserved
    )
    if colour in taken:
        raise ServiceError(f"two players have the colour {colour}")
    password = new_password()
    seat = len(players)
    pertx.drop(session, "players")  # players_of must read the new seat
    session.add(
        Player(
            game_id=id_of(game),
            seat=seat,
            name=spec.name,
            colour=colour,
            address=spec.address,
            secret_hash=hash_password(password),
        )
    )
    session.add(
        SeatHolder(
            game_id=id_of(game), seat=seat, name=spec.name, address=spec.address, from_turn=0
        )
    )
    session.flush()
    return password


def start_game(session: Session, game: Game) -> list[Event]:
    """Deal with the seated players: the setup stream of DICE.md."""
    definition = definition_of(session, game)
    definition.options.check_players(len(definition.players))
    game_state, events = replay.start(definition)
    sync_row(game, game_state.state)
    session.add(game)
    if game_state.state.phase not in SETUP_PHASES:
        state = game_state.state
        step = replay.Step(0, None, [], events, state, definition.state_hash(state))
        store_result(session, game, step, seq=0)
    return events


def sync_row(row: Game, state: GameState, now: datetime | None = None) -> None:
    """Copy what the GM's listings show from the state to the game row."""
    row.turn = state.turn
    row.current_seat = state.current if state.current >= 0 else None
    if state.phase == ROUND:  # freestyle: between turns; the round opened this many turns ago
        rounds.note_round(row, state.turn - len(state.moved))
    if state.phase == ENDED:
        row.phase = GamePhase.OVER
        row.status = GameStatus.FINISHED
        row.winner_seat = state.winner
        row.secret_revealed = True  # the game is over: anyone may now verify every roll
    elif state.phase in SETUP_PHASES:
        row.phase = GamePhase.SETUP
    else:
        row.phase = GamePhase.PLAYING
    row.updated_at = now or utcnow()  # ``now``: the service's clock, where the caller has it


def _next_seq(session: Session, game: Game) -> int:
    last = session.exec(select(func.max(OrderEntry.seq)).where(OrderEntry.game_id == game.id)).one()
    return (last or 0) + 1


def append_entry(session: Session, game: Game, entry: replay.Entry, message_id: str | None) -> int:
    seq = _next_seq(session, game)
    session.add(
        OrderEntry(
            game_id=id_of(game),
            seq=seq,
            turn=entry.turn,
            seat=entry.seat,
            kind=entry.kind,
            source=entry.source,
            message_id=message_id,
            text=entry.text,
        )
    )
    session.flush()
    return seq


def store_result(
    session: Session, game: Game, step: replay.Step, seq: int, now: datetime | None = None
) -> None:
    session.add(
        TurnResult(
            game_id=id_of(game),
            seq=seq,
            turn=step.turn,
            seat=step.seat,
            events_json=json.dumps([e.to_dict() for e in step.events], sort_keys=True),
            state_hash=step.state_hash,
            snapshot_json=step.state.canonical_json(),
        )
    )
    sync_row(game, step.state, now)
    session.add(game)
    _sync_players(session, game, step.state)


def _sync_players(session: Session, game: Game, state: GameState) -> None:
    for player in players_of(session, game):
        if player.seat < len(state.players) and not state.players[player.seat].alive:
            if player.status == SeatStatus.ACTIVE:
                player.status = SeatStatus.ELIMINATED
                session.add(player)


# ------------------------------------------------------------------ accepting
NO_ORDERS = OrderProblem(
    0,
    0,
    "",
    "There are no orders here: nothing was applied. Write one order per line, "
    "e.g. PLACE 3 Alaska (HELP lists the order language).",
)


def submit(
    session: Session,
    game: Game,
    player: Player,
    text: str,
    *,
    source: str = "gm",
    message_id: str | None = None,
    dry_run: bool = False,
    allow_inactive: bool = False,
    parsed: ParsedMail | None = None,
    now: datetime | None = None,
    loaded: replay.Game | None = None,
) -> Outcome:
    """Validate a player's orders against the game now; if valid, log and
    adjudicate them. All or nothing: invalid orders change nothing.
    ``now``: the service's clock (the rows' timestamps), the wall clock if None.
    ``parsed``: ``text`` as the caller has already read it (parse_orders against
    this game's board), so that a mail is read once. ``loaded``: the game as the
    caller has loaded it in this transaction (``load``), so that it is loaded
    once; the orders played advance it in place."""
    if game.status == GameStatus.PAUSED:
        raise ServiceError(f"game {game.name} is paused by the GM")
    if game.phase == GamePhase.OVER:
        raise ServiceError(f"game {game.name} is over")
    if player.status != SeatStatus.ACTIVE and not allow_inactive:
        raise ServiceError(f"{player.name} is no longer playing in {game.name}")
    if loaded is None:
        loaded = load(session, game)
    state = loaded.state
    if parsed is None:
        try:
            parsed = parse_orders(text, state.board)
        except OrdersError as exc:  # the lines that were read are checked too
            from pbem.orders.check import all_problems  # (and the forecast: not at start)

            return Outcome(False, all_problems(exc, state, player.seat, text))
    if not parsed.orders:
        return Outcome(False, [NO_ORDERS])
    seat = player.seat
    if state.phase in SETUP_PHASES:
        problems = validate_mail(state, seat, parsed)
        if problems:
            return Outcome(False, problems)
        canonical = with_salt(
            render_orders([o.action for o in parsed.setup_orders], state.board), parsed
        )
        if dry_run:
            return Outcome(True, canonical=canonical, message="valid (nothing applied)")
        return _accept_setup(session, game, loaded, player, canonical, source, message_id, now)
    problems, actions = checked_mail(state, seat, parsed)  # one walk: problems and actions
    if problems:
        return Outcome(False, problems)
    canonical = with_salt(render_orders(actions, state.board), parsed)
    if dry_run:
        return Outcome(True, canonical=canonical, message="valid (nothing applied)")
    turn = turn_taken(state)
    entry = replay.Entry("turn", seat, canonical, turn, source)
    seq = append_entry(session, game, entry, message_id)
    # the actions just validated are the ones the canonical text reads back as
    step = replay.apply(loaded, entry, keep_before=True, actions=actions)
    assert step is not None
    store_result(session, game, step, seq, now)
    if source in ("mail", "gm"):
        record_turn(player, missed=False)
        session.add(player)
    return Outcome(True, canonical=canonical, steps=[step], message=f"turn {step.turn} played")


def with_salt(canonical: str, parsed: ParsedMail) -> str:
    """The canonical text keeps the player's SALT (last line): in dice version 2
    it is the player's share in the dice, so the log must hold it to replay."""
    if parsed.salt is None:
        return canonical
    return canonical.rstrip("\n") + f"\n{SALT_PREFIX}{parsed.salt.value}"


def record_turn(player: Player, missed: bool) -> list[bool]:
    """Keep each player's own turns as played/missed, for the removal policies."""
    history = json.loads(player.misses_json or "[]")
    history.append(missed)
    player.misses_json = json.dumps(history[-100:])
    if missed:
        player.missed_in_row += 1
        player.missed_total += 1
    else:
        player.missed_in_row = 0
    return history


def _accept_setup(
    session: Session,
    game: Game,
    loaded: replay.Game,
    player: Player,
    canonical: str,
    source: str,
    message_id: str | None,
    now: datetime | None = None,
) -> Outcome:
    """Setup orders wait (replaceable) until every player has sent theirs."""
    pending = session.exec(
        select(PendingOrders).where(
            PendingOrders.game_id == game.id,
            PendingOrders.turn == 0,
            PendingOrders.seat == player.seat,
        )
    ).first()
    replaced = pending is not None
    if pending is None:
        pending = PendingOrders(game_id=id_of(game), turn=0, seat=player.seat, text=canonical)
    pending.text = canonical
    pending.source = source
    pending.message_id = message_id
    pending.received_at = now or utcnow()
    session.add(pending)
    session.flush()
    waiting = list(
        session.exec(
            select(PendingOrders).where(PendingOrders.game_id == game.id, PendingOrders.turn == 0)
        )
    )
    by_seat = {p.seat: p for p in waiting}
    players = players_of(session, game)
    missing = [players[s].name for s in loaded.state.order if s not in by_seat]
    note = "replaces your earlier setup orders" if replaced else "setup orders received"
    if missing:
        return Outcome(
            True,
            canonical=canonical,
            waiting_for=missing,
            message=f"{note}; waiting for {', '.join(missing)}",
        )
    steps = []
    for seat in loaded.state.order:
        row = by_seat[seat]
        entry = replay.Entry("setup", seat, row.text, 0, row.source)
        seq = append_entry(session, game, entry, row.message_id)
        step = replay.apply(loaded, entry, keep_before=True)
        session.delete(row)
        if step is not None:
            steps.append(step)
            if step.state.phase not in SETUP_PHASES:
                store_result(session, game, step, seq, now)
            else:
                sync_row(game, step.state, now)
                session.add(game)
    return Outcome(True, canonical=canonical, steps=steps, message=f"{note}; setup played")


def command(
    session: Session,
    game: Game,
    player: Player,
    word: str,
    source: str = "gm",
    message_id: str | None = None,
    loaded: replay.Game | None = None,
) -> replay.Step:
    """RESIGN (by the player) or REMOVE (by the GM): logged and applied
    (to ``loaded``, the caller's game of this transaction, when given)."""
    if loaded is None:
        loaded = load(session, game)
    entry = replay.Entry("command", player.seat, word, loaded.state.turn, source)
    try:
        step = replay.apply(loaded, entry, keep_before=True)
    except replay.ReplayError as exc:
        raise ServiceError(f"{player.name} cannot {word.lower()} now: {exc}") from None
    assert step is not None
    seq = append_entry(session, game, entry, message_id)
    store_result(session, game, step, seq)
    player.status = SeatStatus.RESIGNED if word == "RESIGN" else SeatStatus.REMOVED
    session.add(player)
    return step


def list_games(session: Session) -> list[Game]:
    return list(session.exec(select(Game).order_by(Game.name)))


def author_of(session: Session, game: Game, name: str | None) -> Player:
    """Whose orders a GM's file holds: the player named, else whose turn it is."""
    if name is not None:
        return find_player(session, game, name)
    if game.current_seat is not None and game.phase == GamePhase.PLAYING:
        return players_of(session, game)[game.current_seat]
    if game.phase == GamePhase.PLAYING and rounds.is_freestyle(game):
        raise ServiceError(
            "freestyle: any player still to move this round may play next; say whose "
            "orders these are with --as PLAYER"
        )
    raise ServiceError("the game is setting up: say whose orders these are with --as PLAYER")


def check_against_game(  # noqa: ANN201
    config,  # noqa: ANN001
    game_name: str,
    text: str,
    player_name: str | None,
    source: str = "the file",
):
    """`pbem check --game`: validate orders against a stored game; nothing
    changes. Valid: the orders as recorded, then the odds of every attack
    as the CHECK mail gives them (pbem.orders.forecast.forecast_lines, for
    the player to move); refused: every problem the mail's reply would list
    (pbem.orders.check.all_problems), in the GM's words."""
    from pbem.orders import CheckResult
    from pbem.orders.check import all_problems, gm_valid_report
    from pbem.orders.errors import format_problems_for_gm
    from pbem.store import init_db, session_scope

    engine = init_db(config.database_url)
    with session_scope(engine, write=False) as session:
        game = find_game(session, game_name)
        player = author_of(session, game, player_name)
        loaded = load(session, game)
        what = f"{player.name}'s orders in {source}"
        try:
            parsed = parse_orders(text, loaded.state.board)
        except OrdersError as exc:  # every problem, as the mail's reply lists them
            problems = all_problems(exc, loaded.state, player.seat, text)
            return CheckResult(False, format_problems_for_gm(problems, text, what, player.name))
        outcome = submit(
            session, game, player, text, source="gm", dry_run=True, parsed=parsed, loaded=loaded
        )
    if outcome.accepted:
        state = loaded.state
        return CheckResult(True, gm_valid_report(parsed, state.board, state, what, player.seat))
    return CheckResult(False, format_problems_for_gm(outcome.problems, text, what, player.name))
