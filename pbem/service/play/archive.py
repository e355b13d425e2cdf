"""Replay, export, import, reveal: a stored game and its record.

The database half of the log: it reads rows and hands them to pbem/orderlog/
(replay, records, verify), which needs nothing but data."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, select

from pbem.orderlog import replay
from pbem.orderlog.records import (
    Record,
    RecordError,
    draws_of,
    read_record,
    reroll_problem,
    write_record,
)
from pbem.orderlog.verify import ReplayReport, compare_hashes
from pbem.rules.dice import commitment, secret_size_problem
from pbem.rules.state import ENDED, SETUP_PHASES
from pbem.service.errors import ServiceError
from pbem.service.play.games import (
    add_reroll,
    append_entry,
    definition_of,
    log_of,
    players_of,
    rerolls_of,
    store_result,
    sync_row,
    to_entry,
)
from pbem.service.play.passwords import hash_password, new_password
from pbem.store import Game, Player, SeatHolder, TurnResult, id_of
from pbem.vocab import GameStatus


def replay_game(
    session: Session, game: Game, progress: Callable[[int, int], None] | None = None
) -> ReplayReport:
    """Rebuild the game from its log and compare every stored state hash."""
    stored = {
        r.seq: r.state_hash
        for r in session.exec(select(TurnResult).where(TurnResult.game_id == game.id))
    }
    entries = [(row.seq, to_entry(row)) for row in log_of(session, game)]
    return compare_hashes(definition_of(session, game), entries, stored, progress)


def export_record(
    session: Session, game: Game, with_secret: bool = False, force: bool = False
) -> str:
    """The game record; ``with_secret`` writes the dice secret into it, which
    on a game still running needs ``force`` (as ``reveal`` does)."""
    if with_secret and not game.secret_revealed:
        _refuse_running(game, force, "writing it into the record", "write it anyway")
    rows = log_of(session, game)
    hashes = {
        r.seq: r.state_hash
        for r in session.exec(select(TurnResult).where(TurnResult.game_id == game.id))
    }
    players = players_of(session, game)
    definition = definition_of(session, game)
    published = game.secret_revealed or with_secret
    rerolls = [(t, c, s if published else None) for t, s, c in rerolls_of(session, game)]
    result = ""
    if game.winner_seat is not None:
        result = players[game.winner_seat].name
    record = Record(
        game=game.name,
        map_name=game.map_name,
        map_text=game.map_text,
        options=definition.options,
        players=[(p.name, p.colour) for p in players],
        commitment=game.commitment,
        entries=[to_entry(r) for r in rows],
        hashes=[hashes.get(r.seq) for r in rows],
        secret_hex=game.secret if (game.secret_revealed or with_secret) else None,
        result=result,
        preset=game.preset,
        dice_version=game.dice_version,
        rerolls=rerolls,
        hash_version=game.hash_version,
    )
    if record.secret_hex:  # every draw, so anyone can check the dice from the spec alone
        record.draws = draws_of(record, bytes.fromhex(record.secret_hex))
    return write_record(record)


def import_record(
    session: Session, text: str, secret_hex: str | None = None, source: str = "record"
) -> tuple[Game, dict[str, str]]:
    """Store a recorded game in this database, replaying and checking every step."""
    try:
        record = read_record(text, source)
    except RecordError as exc:
        raise ServiceError(str(exc)) from None
    secret = _checked_secret(record, secret_hex, source)
    if session.exec(select(Game).where(Game.name == record.game)).first() is not None:
        raise ServiceError(f"a game named {record.game!r} exists already")
    game = _imported_game(record, secret)
    session.add(game)
    session.flush()
    problem = reroll_problem(record)
    if problem:
        raise ServiceError(f"{source}: {problem}")
    for turn, _, reroll_hex in record.rerolls:
        add_reroll(session, game, turn, bytes.fromhex(reroll_hex or ""))
    passwords = _seat_players(session, game, record)
    _replay_into(session, game, record, source)
    session.add(game)
    return game, passwords


def _checked_secret(record: Record, secret_hex: str | None, source: str) -> bytes:
    """The game's secret (the record's or the one given), checked against its commitment."""
    secret_text = secret_hex or record.secret_hex
    if not secret_text:
        raise ServiceError(
            f"{source}: the record has no secret; pass --secret HEX (the dice cannot be "
            "recomputed without it)"
        )
    try:
        secret = bytes.fromhex(secret_text)
    except ValueError:
        raise ServiceError("the secret is not hexadecimal") from None
    if secret_size_problem(secret, record.dice_version):
        raise ServiceError(secret_size_problem(secret, record.dice_version))
    if commitment(secret) != record.commitment:
        raise ServiceError("the secret does not match the record's commitment")
    return secret


def _imported_game(record: Record, secret: bytes) -> Game:
    import json

    return Game(
        name=record.game,
        title=record.game,
        map_name=record.map_name,
        map_text=record.map_text,
        preset=record.preset or "classic",
        options_json=json.dumps(record.options.to_dict(), sort_keys=True),
        dice_version=record.dice_version,
        secret=secret.hex(),
        commitment=record.commitment,
        secret_revealed=record.secret_hex is not None,
        hash_version=record.hash_version,
    )


def _seat_players(session: Session, game: Game, record: Record) -> dict[str, str]:
    """The record's players seated under stand-in addresses, each with a new password."""
    passwords = {}
    for seat, (name, colour) in enumerate(record.players):
        password = new_password()
        passwords[name] = password
        address = f"{name}@imported.invalid"
        session.add(
            Player(
                game_id=id_of(game),
                seat=seat,
                name=name,
                colour=colour,
                address=address,
                secret_hash=hash_password(password),
            )
        )
        session.add(
            SeatHolder(game_id=id_of(game), seat=seat, name=name, address=address, from_turn=0)
        )
    session.flush()
    return passwords


def _replay_into(session: Session, game: Game, record: Record, source: str) -> None:
    """Every entry logged and replayed, each step checked against the record's hash."""
    definition = definition_of(session, game)
    loaded, events = replay.start(definition)
    if loaded.state.phase not in SETUP_PHASES:
        store_result(
            session,
            game,
            replay.Step(0, None, [], events, loaded.state, definition.state_hash(loaded.state)),
            seq=0,
        )
    for entry, expected in zip(record.entries, record.hashes, strict=True):
        seq = append_entry(session, game, entry, None)
        try:
            step = replay.apply(loaded, entry)
        except replay.ReplayError as exc:
            raise ServiceError(f"{source}: {exc}") from None
        if step is None:
            continue
        if expected is not None and expected != step.state_hash:
            where = f"turn {step.turn}" if step.turn else "the setup"
            raise ServiceError(f"{source}: {where} does not replay to the recorded hash")
        if step.state.phase not in SETUP_PHASES:
            store_result(session, game, step, seq)
    if loaded.state.phase == ENDED:
        game.secret_revealed = True
    sync_row(game, loaded.state)  # the row shows the replayed phase, turn, winner


def reveal(session: Session, game: Game, force: bool = False) -> str:
    """Publish the secret: from now on anyone can verify every roll. On a game
    still running that also tells everyone every future roll, so it needs
    ``force``."""
    _refuse_running(game, force, "publishing it now", "publish it anyway")
    game.secret_revealed = True
    session.add(game)
    return game.secret


def _refuse_running(game: Game, force: bool, doing: str, anyway: str) -> None:
    """A running game's secret is every roll still to come: not without ``force``."""
    if game.status != GameStatus.FINISHED and not force:
        raise ServiceError(
            f"game {game.name} is still running: its secret decides every roll still to "
            f"come, so {doing} would let anyone compute the future dice. It "
            f"is published with the game record when the game ends; use --force to "
            f"{anyway}"
        )
