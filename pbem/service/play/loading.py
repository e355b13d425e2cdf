"""A stored game as one transaction sees it: the row's players, its map,
its definition, its log, and the game now (the latest snapshot and the log
after it). A mail's transaction loads its game once (``load``) and hands it
down; players and rerolls are read once per transaction (``pertx``).
"""

from __future__ import annotations

import json
from functools import lru_cache

from sqlmodel import Session, col, select

from pbem.maps.copies import parse_named
from pbem.orderlog import replay
from pbem.rules.board import Board
from pbem.rules.dice import commitment
from pbem.rules.options import Options
from pbem.rules.state import GameState
from pbem.service.errors import NoSuchGame, NoSuchPlayer
from pbem.service.play import pertx
from pbem.store import Game, OrderEntry, Player, ServiceState, TurnResult, id_of


def find_game(session: Session, name: str) -> Game:
    game = session.exec(select(Game).where(Game.name == name)).first()
    if game is None:
        raise NoSuchGame(name)
    return game


def players_of(session: Session, game: Game) -> list[Player]:
    """The game's players by seat, read once per transaction (``pertx``)."""
    if game.id is None:
        return []
    known = pertx.kept(session, "players")
    if game.id not in known:
        statement = select(Player).where(Player.game_id == game.id).order_by(col(Player.seat))
        known[game.id] = list(session.exec(statement))
    return list(known[game.id])


def find_player(session: Session, game: Game, name: str) -> Player:
    for player in players_of(session, game):
        if player.name.lower() == name.lower():
            return player
    raise NoSuchPlayer(game.name, name)


@lru_cache(maxsize=32)
def board_of(map_text: str, map_name: str) -> Board:
    """A stored map, parsed once per process (boards are immutable). Keyed by
    the map's text, not the game: a hundred games on one map share one board.
    A built-in map is read from its JSON copy when that copy was made from this
    very text (tomllib is pure Python and slow)."""
    return parse_named(map_text, f"{map_name} (stored with the game)", map_name)


def stored_options(game: Game) -> Options:
    """The options a game started with, as stored (Options.from_stored: a name
    they lack reads as the behaviour before it); a `pbem upgrade-rules` move is
    in the log, so the rules played now are the loaded state's options."""
    return Options.from_stored(json.loads(game.options_json), source=f"game {game.name}")


def definition_of(session: Session, game: Game) -> replay.GameDefinition:
    board = board_of(game.map_text, game.map_name)
    options = stored_options(game)
    players = tuple((p.name, p.colour) for p in players_of(session, game))
    rerolls = tuple(
        (first, bytes.fromhex(secret)) for first, secret, _ in rerolls_of(session, game)
    )
    secret = bytes.fromhex(game.secret)
    return replay.GameDefinition(
        game.name, board, options, players, secret, game.dice_version, rerolls, game.hash_version
    )


def _rerolls_key(game: Game) -> str:
    return f"rerolls:{id_of(game)}"


def rerolls_of(session: Session, game: Game) -> list[tuple[int, str, str]]:
    """(first turn, secret hex, commitment) of every new dice secret drawn by
    `pbem rollback --reroll`, oldest first; the game's own secret stays in
    ``Game.secret`` and still gives every turn before the first reroll.
    Read once per transaction (``pertx``)."""
    known = pertx.kept(session, "rerolls")
    if game.id not in known:
        key = _rerolls_key(game)
        row = session.exec(select(ServiceState).where(ServiceState.key == key)).first()
        known[game.id] = (
            [(int(t), str(s), str(c)) for t, s, c in json.loads(row.value)] if row else []
        )
    return list(known[game.id])


def current_commitment(session: Session, game: Game) -> str:
    """The commitment of the secret the game's dice come from now: that of the last
    `pbem rollback --reroll` in force at the game's turn, else the game's own."""
    made = game.commitment
    for first, _, rerolled in rerolls_of(session, game):
        if first <= max(game.turn, 1):
            made = rerolled
    return made


def add_reroll(session: Session, game: Game, first_turn: int, secret: bytes) -> str:
    """Record a new secret for the dice from ``first_turn`` on; its commitment."""
    row = session.exec(select(ServiceState).where(ServiceState.key == _rerolls_key(game))).first()
    row = row or ServiceState(key=_rerolls_key(game), value="[]")
    made = commitment(secret)
    pertx.drop(session, "rerolls")  # rerolls_of must read the new one
    row.value = json.dumps([*json.loads(row.value), [first_turn, secret.hex(), made]])
    session.add(row)
    session.flush()
    return made


def log_of(session: Session, game: Game) -> list[OrderEntry]:
    return list(
        session.exec(
            select(OrderEntry).where(OrderEntry.game_id == game.id).order_by(col(OrderEntry.seq))
        )
    )


def to_entry(row: OrderEntry) -> replay.Entry:
    return replay.Entry(
        kind=row.kind, seat=row.seat, text=row.text, turn=row.turn, source=row.source
    )


def load(session: Session, game: Game) -> replay.Game:
    """The game now: the latest snapshot, then any log entries after it."""
    definition = definition_of(session, game)
    latest = session.exec(
        select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.id).desc())
    ).first()
    if latest is None:
        return replay.rebuild(definition, [to_entry(e) for e in log_of(session, game)])
    state = GameState.from_dict(
        json.loads(latest.snapshot_json), definition.board, definition.options
    )
    loaded = replay.Game(definition, state)
    later = session.exec(
        select(OrderEntry)
        .where(OrderEntry.game_id == game.id, OrderEntry.seq > latest.seq)
        .order_by(col(OrderEntry.seq))
    )
    for row in later:
        replay.apply(loaded, to_entry(row))
    return loaded
