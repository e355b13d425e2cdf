"""Game records (the PGN-like files of `pbem export`): exact round trips, maps
embedded when they are not shipped, verification, and errors that name the line.

Records are made here without a database: the games are played by greedy bots
through the pure replay module (canonical orders in, state hashes out), the
way the service writes its log. A few tests then import a record into a
SQLite database and export it again.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from pbem.maps.presets import load_preset
from pbem.orderlog import replay
from pbem.orderlog.records import (
    Record,
    RecordError,
    draws_of,
    read_record,
    verify_record,
    write_record,
)
from pbem.orders import render_orders
from pbem.paths import maps_dir
from pbem.rules.actions import Place, Trade
from pbem.rules.bots import make_bot
from pbem.rules.dice import commitment
from pbem.rules.mapformat import parse_map
from pbem.rules.options import Options
from pbem.rules.state import SETUP_PHASES
from pbem.service.play.archive import export_record, import_record, replay_game
from pbem.service.play.games import find_game
from pbem.store import init_db, session_scope

SECRET = bytes([9]) * 32
TINY = (Path(__file__).parents[1] / "data" / "maps" / "tiny.toml").read_text(encoding="utf-8")
CLASSIC = (maps_dir() / "classic.toml").read_text(encoding="utf-8")


def play_record(
    map_name: str,
    map_text: str,
    players: list[tuple[str, str]],
    *,
    game: str = "world-1",
    secret: bytes = SECRET,
    resign_at: int | None = None,
    quiet_turn: int | None = None,
    revealed: bool = True,
    options: Options | None = None,
) -> Record:
    """A whole game of greedy bots as a record; with ``resign_at``, the last seat
    (if it is not to move) resigns once that turn has been played; at ``quiet_turn``
    the player to move only trades and places (valid orders, another game)."""
    board = parse_map(map_text, map_name)
    options = options or load_preset("classic")
    definition = replay.GameDefinition(game, board, options, tuple(players), secret)
    played, _ = replay.start(definition)
    bots = [make_bot("greedy", seat) for seat in range(len(players))]
    entries: list[replay.Entry] = []
    hashes: list[str | None] = []

    def log(entry: replay.Entry) -> None:
        step = replay.apply(played, entry)
        entries.append(entry)
        hashes.append(step.state_hash if step else None)

    while played.state.phase in SETUP_PHASES:
        state = played.state
        for seat in list(state.order):
            text = render_orders(bots[seat].plan_setup(state, seat), board)
            log(replay.Entry("setup", seat, text, 0, "mail"))
    resigned = False
    while played.state.phase != "over":
        state = played.state
        if resign_at is not None and state.turn > resign_at and not resigned:
            leaver = len(players) - 1
            if leaver != state.current and state.players[leaver].alive:
                log(replay.Entry("command", leaver, "RESIGN", state.turn, "mail"))
            resigned = True
            continue
        actions = bots[state.current].plan_turn(state)
        if state.turn == quiet_turn:
            actions = [a for a in actions if isinstance(a, Trade | Place)]
        text = render_orders(actions, board)
        log(replay.Entry("turn", state.current, text, state.turn, "gm"))
    state = played.state
    return Record(
        game=game,
        map_name=map_name,
        map_text=map_text,
        options=options,
        players=players,
        commitment=commitment(secret),
        entries=entries,
        hashes=hashes,
        secret_hex=secret.hex() if revealed else None,
        result=state.players[state.winner].name,
        preset="classic",
    )


THREE = [("alice", "red"), ("bob", "blue"), ("carol", "yellow")]


@pytest.fixture(scope="module")
def classic() -> Record:
    return play_record("classic", CLASSIC, THREE, resign_at=8)


@pytest.fixture(scope="module")
def tiny() -> Record:
    return play_record("tiny", TINY, [("ann", "red"), ("bob", "blue")], game="tiny-1")


def entries_of(record: Record) -> list[tuple]:
    return [(e.kind, e.seat, e.text.rstrip("\n"), e.turn, e.source) for e in record.entries]


# --------------------------------------------------------------- round trips
@pytest.mark.parametrize("which", ["classic", "tiny"])
@pytest.mark.parametrize("revealed", [True, False])
def test_write_read_write_is_byte_identical(
    which: str, revealed: bool, request: pytest.FixtureRequest
) -> None:
    record: Record = request.getfixturevalue(which)
    if not revealed:
        record = dataclasses.replace(record, secret_hex=None)
    text = write_record(record)
    again = read_record(text)
    assert write_record(again) == text
    assert entries_of(again) == entries_of(record)
    assert again.hashes == record.hashes
    assert (again.game, again.map_name, again.map_text) == (
        record.game,
        record.map_name,
        record.map_text,
    )
    assert again.players == record.players
    assert again.options == record.options
    assert (again.commitment, again.secret_hex, again.result, again.preset) == (
        record.commitment,
        record.secret_hex,
        record.result,
        record.preset,
    )


def test_record_layout(classic: Record) -> None:
    text = write_record(classic)
    lines = text.split("\n")
    assert lines[:5] == [
        '[RecordFormat "2"]',
        '[Game "world-1"]',
        '[Map "classic"]',
        f'[MapSHA256 "{hashlib.sha256(CLASSIC.encode()).hexdigest()}"]',
        '[Preset "classic"]',
    ]
    assert lines[5].startswith('[Options "{') and '\\"rules_version\\": 3' in lines[5]
    assert lines[6:15] == [
        '[RulesVersion "3"]',
        '[Player "0 alice red"]',
        '[Player "1 bob blue"]',
        '[Player "2 carol yellow"]',
        '[DiceVersion "pbem-dice-v1"]',
        f'[Commitment "{hashlib.sha256(SECRET).hexdigest()}"]',
        f'[Secret "{SECRET.hex()}"]',
        f'[Result "{classic.result}"]',
        "",
    ]
    heads = [line for line in lines if line.startswith("=== ") and line != "=== map"]
    assert len(heads) == len(classic.entries)
    # a hash on the entry that completes each step, none on setup orders still waiting
    assert [("hash=" in h) for h in heads[:3]] == [False, False, True]
    assert all("hash=" in h for h in heads[3:])
    resign = next(h for h in heads if h.startswith("=== command "))
    assert resign.split()[1:5] == ["command", resign.split()[2], "carol", "mail"]
    # the map's text always ends the record, the shipped map's too (format 2)
    assert text.endswith("\n=== map\n" + CLASSIC)
    assert text.count("\n=== map\n") == 1


def test_record_with_a_resign_replays_and_verifies(classic: Record) -> None:
    kinds = [e.kind for e in classic.entries]
    assert kinds.count("command") == 1
    report = verify_record(read_record(write_record(classic)), SECRET.hex())
    steps = sum(1 for h in classic.hashes if h)
    assert (report.ok, report.steps, report.turn) == (True, steps, None)
    assert report.message == f"all {steps} steps verified; every roll matches the secret"


# -------------------------------------------------------------- custom maps
def test_custom_map_is_embedded_and_the_record_replays(tiny: Record, tmp_path: Path) -> None:
    text = write_record(tiny)
    head, embedded = text.split("\n=== map\n")
    assert embedded == TINY
    assert f'[MapSHA256 "{hashlib.sha256(TINY.encode()).hexdigest()}"]' in head
    again = read_record(text, "tiny.pgn")
    assert again.map_text == TINY
    assert verify_record(again, SECRET.hex()).ok
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine) as session:
        imported, _ = import_record(session, text, source="tiny.pgn")
        assert (imported.map_name, imported.map_text, imported.phase) == ("tiny", TINY, "over")
    with session_scope(engine, write=False) as session:
        game = find_game(session, "tiny-1")
        report = replay_game(session, game)
        assert (report.ok, report.steps) == (True, sum(1 for h in tiny.hashes if h))
        # an exported record that carries the secret also carries every draw
        tiny.draws = draws_of(tiny, SECRET)
        assert export_record(session, game) == write_record(tiny)


def test_shipped_map_that_was_changed_is_embedded(classic: Record) -> None:
    changed = CLASSIC.replace('title = "The classic world map"', 'title = "Our own world"')
    assert changed != CLASSIC
    record = dataclasses.replace(classic, map_text=changed)
    text = write_record(record)
    assert text.endswith("\n=== map\n" + changed)
    again = read_record(text)
    assert again.map_text == changed
    assert parse_map(again.map_text, "classic").title == "Our own world"
    assert verify_record(again, SECRET.hex()).ok  # the same board: the same game


def test_an_embedded_map_changed_after_the_game_is_refused(tiny: Record) -> None:
    text = write_record(tiny).replace("bonus = 2", "bonus = 5")
    with pytest.raises(RecordError) as refused:
        read_record(text, "tiny.pgn")
    assert (
        str(refused.value) == "tiny.pgn: the map 'tiny' differs from the one the game was played on"
    )


def test_a_custom_map_that_is_not_embedded_is_refused(tiny: Record) -> None:
    text = write_record(tiny).split("\n=== map\n")[0] + "\n"
    with pytest.raises(RecordError) as refused:
        read_record(text, "tiny.pgn")
    assert str(refused.value) == (
        f"tiny.pgn: the map 'tiny' (SHA-256 {hashlib.sha256(TINY.encode()).hexdigest()}) "
        "is not embedded in the record, and this pbem has no map of that name or hash: add "
        "a line '=== map' and the map's text at the end of the record"
    )
    # a record without the hash (hand-made) is read only on a shipped map of its name
    bare = "\n".join(x for x in text.split("\n") if not x.startswith("[MapSHA256 "))
    with pytest.raises(RecordError) as refused:
        read_record(bare, "tiny.pgn")
    assert str(refused.value) == (
        "tiny.pgn: map 'tiny' is neither embedded in the record nor shipped with this pbem: "
        "add a line '=== map' and the map's text at the end of the record"
    )


# ------------------------------------------------------- malformed records
def _replace_line(text: str, number: int, new: str | None) -> str:
    lines = text.split("\n")
    if new is None:
        del lines[number - 1]
    else:
        lines[number - 1] = new
    return "\n".join(lines)


def _line_of(text: str, prefix: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if line.startswith(prefix))


MALFORMED = {
    "not a header": (
        '[Game "world-1"]',
        "Game world-1",
        'line {n}: expected a header like [Game "name"]',
    ),
    "unquoted value": (
        '[Map "classic"]',
        "[Map classic]",
        "line {n}: header values are in double quotes",
    ),
    "player out of order": (
        '[Player "1 bob blue"]',
        '[Player "2 bob blue"]',
        "line {n}: Player must be 'SEAT NAME [COLOUR]' in seat order",
    ),
    "player without name": (
        '[Player "0 alice red"]',
        '[Player "0"]',
        "line {n}: Player must be 'SEAT NAME [COLOUR]' in seat order",
    ),
    "turn not a number": (
        "=== turn 5 ",
        "=== turn five bob gm",
        "line {n}: expected '=== KIND TURN PLAYER SOURCE'",
    ),
    "unknown kind": (
        "=== turn 5 ",
        "=== move 5 bob gm",
        "line {n}: expected '=== KIND TURN PLAYER SOURCE'",
    ),
    "short head": ("=== turn 5 ", "=== turn 5", "line {n}: expected '=== KIND TURN PLAYER SOURCE'"),
    "unknown player": ("=== turn 5 ", "=== turn 5 zed gm", "line {n}: no player 'zed'"),
    "unknown source": (
        "=== turn 5 ",
        "=== turn 5 {who} pigeon",
        "line {n}: unknown source 'pigeon' (mail, gm, default or bot)",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_record_names_the_line(classic: Record, case: str) -> None:
    prefix, new, message = MALFORMED[case]
    text = write_record(classic)
    n = _line_of(text, prefix)
    who = text.split("\n")[n - 1].split()[3] if prefix.startswith("===") else ""
    bad = _replace_line(text, n, new.format(who=who))
    with pytest.raises(RecordError) as refused:
        read_record(bad, "w.pgn")
    assert str(refused.value) == "w.pgn: " + message.format(n=n)


@pytest.mark.parametrize("header", ["Game", "Map", "Options", "Commitment"])
def test_record_without_a_required_header(classic: Record, header: str) -> None:
    text = write_record(classic)
    bad = _replace_line(text, _line_of(text, f"[{header} "), None)
    with pytest.raises(RecordError) as refused:
        read_record(bad, "w.pgn")
    assert str(refused.value) == f"w.pgn: missing header [{header} ...]"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("{not json", "w.pgn: Options: Expecting property name enclosed in double quotes"),
        ('{\\"colour_blind\\": true}', "w.pgn: Options: unknown option 'colour_blind'"),
    ],
)
def test_record_with_bad_options(classic: Record, options: str, message: str) -> None:
    text = write_record(classic)
    bad = _replace_line(text, _line_of(text, "[Options "), f'[Options "{options}"]')
    with pytest.raises(RecordError) as refused:
        read_record(bad, "w.pgn")
    assert str(refused.value).startswith(message)


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(RecordError) as refused:
        read_record("", "empty.pgn")
    assert str(refused.value) == "empty.pgn: missing header [Game ...]"


# ---------------------------------------------------------------- verifying
def test_verify_refuses_a_secret_that_is_not_hex(classic: Record) -> None:
    report = verify_record(classic, "not-hex")
    assert (report.ok, report.message) == (False, "the secret is not hexadecimal")


def test_verify_with_another_secret_and_its_commitment_names_the_setup(classic: Record) -> None:
    """Someone swaps secret and commitment both: another deal, so the setup orders
    place armies on territories that are not the player's."""
    other = bytes([10]) * 32
    forged = dataclasses.replace(classic, commitment=commitment(other))
    report = verify_record(read_record(write_record(forged)), other.hex())
    assert report.ok is False
    assert report.turn == 0
    assert report.message.startswith("the orders do not replay: setup: line 1: ")


def test_verify_names_a_changed_command(classic: Record) -> None:
    """A RESIGN moved to the player to move (a valid command, another game)."""
    index = next(i for i, e in enumerate(classic.entries) if e.kind == "command")
    resign = classic.entries[index]
    mover = classic.entries[index + 1].seat  # the next turn is the mover's
    entries = list(classic.entries)
    entries[index] = replay.Entry("command", mover, "RESIGN", resign.turn, resign.source)
    forged = dataclasses.replace(classic, entries=entries)
    report = verify_record(read_record(write_record(forged)), SECRET.hex())
    assert report.ok is False
    assert report.turn == resign.turn
    assert report.message.startswith(f"turn {resign.turn} differs: the record says ")
    # a player reading it learns the dice were fair and something else was changed
    assert report.message.endswith(
        "The secret matches the commitment, so the dice are the ones promised: an order, "
        "a hash, the options or the map of the record are not those of the game played "
        "(changed after it was written, or written by another program)."
    )


def test_verify_needs_a_hash_for_every_step(classic: Record) -> None:
    """A forger replays the game from turn 20 with other (valid) orders and leaves
    out the hashes from there on, since they cannot compute them without the
    secret: the record must not verify, and the report names turn 20."""
    other = play_record("classic", CLASSIC, THREE, resign_at=8, quiet_turn=20)
    index = next(i for i, e in enumerate(other.entries) if e.kind == "turn" and e.turn == 20)
    assert other.entries[:index] == classic.entries[:index]
    assert other.entries[index] != classic.entries[index]
    hashes = other.hashes[:index] + [None] * (len(other.hashes) - index)
    forged = dataclasses.replace(other, hashes=hashes)
    report = verify_record(read_record(write_record(forged)), SECRET.hex())
    assert report.ok is False
    assert report.turn == 20


def test_verify_checks_the_result_header(classic: Record) -> None:
    loser = next(name for name, _ in classic.players if name != classic.result)
    forged = dataclasses.replace(classic, result=loser)
    report = verify_record(read_record(write_record(forged)), SECRET.hex())
    assert report.ok is False
    assert loser in report.message and classic.result in report.message
