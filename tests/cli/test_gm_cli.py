"""The GM's command line, run in-process (typer's CliRunner) against real SQLite files.

One whole game is created with `pbem new` and played to the end with
`pbem adjudicate` (every order written by the TextBot to a file); it is then
exported, imported into a fresh database, replayed on both, and its record
verified with the revealed secret, then tampered with. The game's secret is
fixed (``new_secret`` patched) so that the game, its length and its hashes
are the same on every run. One test runs the installed `pbem` command in a
subprocess; every other test calls ``pbem.cli.app`` directly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select
from typer.testing import CliRunner, Result

from pbem.cli import app
from pbem.maps import builtin_map
from pbem.maps.presets import load_preset
from pbem.orderlog import replay
from pbem.orderlog.records import read_record
from pbem.orders import OrdersError, TextBot, parse_orders
from pbem.orders.errors import format_problems_for_gm
from pbem.rules.bots import make_bot
from pbem.rules.state import GameState
from pbem.service.play.games import find_game, load, log_of
from pbem.store import TurnResult, current_revision, head_revision, init_db, session_scope

SECRET = bytes([9]) * 32  # with these players and bots: a short game (35 turns when written)
GAME = "world-1"
PLAYERS = ["alice", "bob", "carol"]
PLAYER_OPTIONS = [x for name in PLAYERS for x in ("--player", f"{name}:{name}@example.org")]
runner = CliRunner()
QUEUED = re.compile(r"\d+ mails? queued: they go out at the next `pbem poll` .*")


def write_config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "pbem.toml"
    config.write_text(f'database_url = "sqlite:///{folder / "pbem.db"}"\n', encoding="utf-8")
    return config


def pbem(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def ok(*args: str | Path) -> Result:
    result = pbem(*args)
    assert result.exit_code == 0, (args, result.stdout, result.stderr, result.exception)
    return result


def state_of(config: Path) -> GameState:
    from pbem.config import load_config

    engine = init_db(load_config(config).database_url)
    with session_scope(engine, write=False) as session:
        return load(session, find_game(session, GAME)).state


def game_row(config: Path) -> Any:
    from pbem.config import load_config

    engine = init_db(load_config(config).database_url)
    with session_scope(engine, write=False) as session:
        return find_game(session, GAME)


def hash_chain(config: Path) -> list[tuple[int, int, int | None, str]]:
    """(log seq, turn, seat, state hash) of every stored step, in log order."""
    from pbem.config import load_config

    engine = init_db(load_config(config).database_url)
    with session_scope(engine, write=False) as session:
        game = find_game(session, GAME)
        rows = session.exec(
            select(TurnResult).where(TurnResult.game_id == game.id).order_by(TurnResult.seq)
        )
        return [(r.seq, r.turn, r.seat, r.state_hash) for r in rows]


def log_texts(config: Path) -> list[tuple[int, str, int | None, str]]:
    from pbem.config import load_config

    engine = init_db(load_config(config).database_url)
    with session_scope(engine, write=False) as session:
        return [(e.seq, e.kind, e.seat, e.text) for e in log_of(session, find_game(session, GAME))]


def new_game(config: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.setattr("pbem.service.play.games.new_secret", lambda: SECRET)
    # the reference game and its hashes were rolled with dice version 1
    return ok("new", GAME, *PLAYER_OPTIONS, "--dice", "v1", "--config", config)


def play_setup(config: Path, folder: Path, bots: list[TextBot]) -> list[Result]:
    state = state_of(config)
    results = []
    for seat in state.order:
        orders = folder / f"setup-{seat}.txt"
        orders.write_text(bots[seat].write_setup(state, seat), encoding="utf-8")
        results.append(
            ok("adjudicate", GAME, "--orders", orders, "--as", PLAYERS[seat], "--config", config)
        )
    return results


def make_bots() -> list[TextBot]:
    return [TextBot(make_bot("greedy", seat)) for seat in range(len(PLAYERS))]


# ------------------------------------------------------------ the whole game
@dataclass
class Reference:
    """The same game played by the replay module alone: no database, no command line."""

    hashes: list[str]  # state hash after each step: the setup, then every turn
    turns: int
    winner: str


@pytest.fixture(scope="module")
def reference() -> Reference:
    players = tuple(
        (name, colour) for name, colour in zip(PLAYERS, ("red", "blue", "yellow"), strict=True)
    )
    board = builtin_map("classic")
    definition = replay.GameDefinition(  # new games have keyed state hashes (issue 27)
        GAME, board, load_preset("classic"), players, SECRET, hash_version=replay.HASH_KEYED
    )
    game, _ = replay.start(definition)
    bots = make_bots()
    hashes = []
    for seat in list(game.state.order):
        step = replay.apply(
            game, replay.Entry("setup", seat, bots[seat].write_setup(game.state, seat))
        )
    hashes.append(step.state_hash)
    while game.state.phase != "over":
        state = game.state
        entry = replay.Entry(
            "turn", state.current, bots[state.current].write_turn(state), state.turn
        )
        hashes.append(replay.apply(game, entry).state_hash)
    state = game.state
    assert state.turn >= 20, "pick a SECRET that gives a longer game: the tests tamper with turn 17"
    return Reference(hashes, state.turn, PLAYERS[state.winner])


@dataclass
class Played:
    folder: Path
    config: Path
    record: Path
    turns: int
    new_output: str
    setup_outputs: list[str]
    setup_order: list[str]
    last_output: str
    midgame_json: dict
    midgame_state: GameState


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """A whole game played through `pbem adjudicate`, then exported."""
    folder = tmp_path_factory.mktemp("game")
    config = write_config(folder)
    bots = make_bots()
    with pytest.MonkeyPatch.context() as monkeypatch:
        created = new_game(config, monkeypatch)
    setup_order = [PLAYERS[seat] for seat in state_of(config).order]
    setup = play_setup(config, folder, bots)
    turns = 0
    midgame_json: dict = {}
    midgame_state = None
    last = setup[-1]
    while True:
        state = state_of(config)
        if state.phase == "over":
            break
        if state.turn == 10:
            midgame_json = json.loads(ok("show", GAME, "--json", "--config", config).stdout)
            midgame_state = state
        orders = folder / f"turn-{state.turn}.txt"
        orders.write_text(bots[state.current].write_turn(state), encoding="utf-8")
        last = ok("adjudicate", GAME, "--orders", orders, "--config", config)
        turns += 1
        assert turns < 500, "the game does not end"
    record = folder / "world-1.pgn"
    ok("export", GAME, "-o", record, "--config", config)
    assert midgame_state is not None
    return Played(
        folder,
        config,
        record,
        turns,
        created.stdout,
        [r.stdout for r in setup],
        setup_order,
        last.stdout,
        midgame_json,
        midgame_state,
    )


def test_new_prints_commitment_and_one_password_per_player(played: Played) -> None:
    lines = played.new_output.splitlines()
    assert lines[0] == f"game {GAME} created: 3 players, preset classic, map classic"
    assert lines[1] == f"dice commitment (pbem-dice-v1): {hashlib.sha256(SECRET).hexdigest()}"
    passwords = [
        re.fullmatch(r"  password of (\w+): ([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})", x)
        for x in lines[2:]
    ]
    assert [m.group(1) for m in passwords if m] == PLAYERS
    assert len(lines) == 5


def test_setup_waits_for_every_player(played: Played) -> None:
    """Each player's setup orders are echoed in canonical form; the last one plays the setup."""
    first, second, third = played.setup_order
    expected = [
        f"{first}: setup orders received; waiting for {second}, {third}",
        f"{second}: setup orders received; waiting for {third}",
        f"{third}: setup orders received; setup played",
    ]
    for name, output, message in zip(
        played.setup_order, played.setup_outputs, expected, strict=True
    ):
        mail = (played.folder / f"setup-{PLAYERS.index(name)}.txt").read_text(encoding="utf-8")
        assert mail.startswith(f"GAME {GAME}\nPLACE ")
        canonical = mail.split("\n", 1)[1].rstrip("\n")  # the bot writes canonical orders
        # (the command prints a blank line after the orders: canonical text ends in a newline)
        lines = [line for line in output.split("\n") if line]
        if name == third:  # the setup played: the mails it queued are said
            assert QUEUED.fullmatch(lines.pop()), output
        assert re.fullmatch(r"next: .*; deadline .* UTC", lines.pop()), output  # who, until when
        assert lines == [*canonical.split("\n"), message]


def test_game_is_played_to_the_end(played: Played, reference: Reference) -> None:
    """Through the command line and the database: the very game the engine plays alone."""
    assert played.turns == reference.turns
    n, winner = reference.turns, reference.winner
    last = played.last_output.splitlines()
    assert f"{winner}: turn {n} played" in last
    assert last[last.index(f"{winner}: turn {n} played") + 1] == f"turn {n}:"  # its summary
    assert last[-2] == f"game over: {winner} wins"
    assert QUEUED.fullmatch(last[-1])
    state = state_of(played.config)
    assert (state.phase, state.turn, state.players[state.winner].name) == ("over", n, winner)
    assert [h for *_, h in hash_chain(played.config)] == reference.hashes
    listed = json.loads(ok("list", "--json", "--config", played.config).stdout)
    assert listed == [
        {
            "name": GAME,
            "phase": "over",
            "status": "finished",
            "turn": reference.turns,
            "map": "classic",
            "preset": "classic",
        }
    ]


def test_record_reveals_the_secret_once_the_game_is_over(
    played: Played, reference: Reference
) -> None:
    text = played.record.read_text(encoding="utf-8")
    assert text.count(f'[Secret "{SECRET.hex()}"]') == 1
    assert f'[Commitment "{hashlib.sha256(SECRET).hexdigest()}"]' in text
    assert f'[Result "{reference.winner}"]' in text
    record = read_record(text)
    assert [e.kind for e in record.entries] == ["setup"] * 3 + ["turn"] * reference.turns
    assert [h for h in record.hashes if h] == reference.hashes
    assert all(e.source == "gm" for e in record.entries[3:])


def test_import_into_fresh_database_gives_the_same_hash_chain(
    played: Played, reference: Reference, tmp_path: Path
) -> None:
    config2 = write_config(tmp_path / "second")
    ok("init", "--config", config2)
    result = ok("import", played.record, "--config", config2)
    assert result.stdout == (
        f"imported {GAME}: turn {reference.turns}, over "
        "(every turn replayed, every state hash matches the record)\n"
    )
    first, second = hash_chain(played.config), hash_chain(config2)
    assert len(first) == 1 + reference.turns  # the setup, then every turn
    assert second == first
    assert [x[:3] for x in log_texts(config2)] == [x[:3] for x in log_texts(played.config)]
    for config in (played.config, config2):
        replayed = ok("replay", GAME, "--verify", "--config", config)
        steps = len(reference.hashes)
        assert replayed.stdout == f"{steps} steps replayed, every hash matches\n"
    # importing the same game twice is refused
    again = pbem("import", played.record, "--config", config2)
    assert again.exit_code == 1
    assert again.stderr == f"error: a game named {GAME!r} exists already\n"


def test_verify_passes_with_the_revealed_secret(played: Played, reference: Reference) -> None:
    result = ok("verify", played.record, "--secret", SECRET.hex())
    steps = len(reference.hashes)
    assert result.stdout == f"all {steps} steps verified; every roll matches the secret\n"


def _turn_blocks(lines: list[str]) -> dict[int, int]:
    """Turn number -> index of its '=== turn' line."""
    return {int(line.split()[2]): i for i, line in enumerate(lines) if line.startswith("=== turn ")}


def _state_before(played: Played, turn: int) -> GameState:
    record = read_record(played.record.read_text(encoding="utf-8"))
    from pbem.orderlog.records import definition_of

    game, _ = replay.start(definition_of(record, SECRET))
    for entry in record.entries:
        if entry.kind == "turn" and entry.turn == turn:
            return game.state
        replay.apply(game, entry)
    raise AssertionError(f"no turn {turn}")


def _tampered(played: Played, turn: int, new_place: str) -> Path:
    lines = played.record.read_text(encoding="utf-8").split("\n")
    head = _turn_blocks(lines)[turn]
    place = next(i for i in range(head + 1, len(lines)) if lines[i].startswith("PLACE "))
    assert place < _turn_blocks(lines)[turn + 1]
    lines[place] = new_place
    path = played.folder / f"tampered-{turn}.pgn"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_verify_names_the_turn_whose_order_was_changed(played: Played) -> None:
    """A PLACE moved to another territory of the same player: valid orders, other dice."""
    turn = 17
    state = _state_before(played, turn)
    lines = played.record.read_text(encoding="utf-8").split("\n")
    head = _turn_blocks(lines)[turn]
    place = next(x for x in lines[head + 1 :] if x.startswith("PLACE "))
    amount, where = place.split(" ", 2)[1:]
    board = state.board
    own = [t.name for t in board.territories if state.owner[t.index] == state.current]
    # another territory of the player's, one that no order of this turn names
    block = "\n".join(lines[head + 1 : _turn_blocks(lines)[turn + 1]])
    other = next(t for t in sorted(own) if t != where and t not in block)
    changed = f"PLACE {amount} {other}"
    game = replay.Game(replay.GameDefinition(GAME, board, state.options, (), SECRET), state.copy())
    replay.parse_turn(game, state.current, block.replace(place, changed))  # still valid orders
    result = pbem("verify", _tampered(played, turn, changed), "--secret", SECRET.hex())
    assert result.exit_code == 1
    assert result.stdout.startswith(f"turn {turn} differs: the record says ")


def test_verify_names_the_turn_whose_orders_no_longer_replay(played: Played) -> None:
    """A PLACE of more armies than the player has: refused on replay, turn named."""
    turn = 12
    lines = played.record.read_text(encoding="utf-8").split("\n")
    head = _turn_blocks(lines)[turn]
    place = next(x for x in lines[head + 1 :] if x.startswith("PLACE "))
    where = place.removeprefix("PLACE ").split(",")[0].split(" ", 1)[1]
    result = pbem("verify", _tampered(played, turn, f"PLACE 99 {where}"), "--secret", SECRET.hex())
    assert result.exit_code == 1
    assert result.stdout.startswith(f"the orders do not replay: turn {turn}: line ")
    assert "99" in result.stdout


def test_verify_fails_when_one_byte_of_the_secret_changes(played: Played, tmp_path: Path) -> None:
    text = played.record.read_text(encoding="utf-8")
    assert f'[Secret "{SECRET.hex()}"]\n' in text
    bare = tmp_path / "no-secret.pgn"  # a record without [Secret]: --secret alone decides
    bare.write_text(text.replace(f'[Secret "{SECRET.hex()}"]\n', ""), encoding="utf-8")
    for position in (0, 17, 31):
        wrong = bytearray(SECRET)
        wrong[position] ^= 0x01
        result = pbem("verify", bare, "--secret", bytes(wrong).hex())
        assert result.exit_code == 1
        assert result.stdout == (
            "the secret does not match the commitment published at the start\n"
        )
    # With the record's own [Secret], a different --secret is refused, both named.
    wrong = bytearray(SECRET)
    wrong[0] ^= 0x01
    differs = pbem("verify", played.record, "--secret", bytes(wrong).hex())
    assert (differs.exit_code, differs.stdout) == (1, "")
    assert differs.stderr == (
        f"error: --secret {bytes(wrong).hex()} differs from the [Secret] of {played.record} "
        f"({SECRET.hex()}); leave --secret out to verify with the record's\n"
    )
    # and without --secret, the record's own is used
    own = ok("verify", played.record)
    assert own.stdout.endswith("steps verified; every roll matches the secret\n")


def test_show_json_has_board_players_and_whose_turn(played: Played) -> None:
    data = played.midgame_json
    state = played.midgame_state
    assert data["turn"] == 10
    assert data["phase"] == state.phase
    assert data["to_move"] == PLAYERS[state.current]
    assert data["name"] == GAME
    assert data["commitment"] == hashlib.sha256(SECRET).hexdigest()
    assert data["dice"] == "pbem-dice-v1"  # the game was made with --dice v1
    assert data["winner"] is None
    assert [p["name"] for p in data["players"]] == PLAYERS
    for seat, p in enumerate(data["players"]):
        assert p["territories"] == state.territory_count(seat)
        assert p["armies"] == state.army_count(seat)
        assert p["cards"] == len(state.players[seat].cards)
    board = builtin_map("classic")
    assert data["board"] == {
        t.name: {"owner": PLAYERS[state.owner[t.index]], "armies": state.armies[t.index]}
        for t in board.territories
    }


def test_show_text_lists_the_board_by_continent(played: Played, reference: Reference) -> None:
    text = ok("show", GAME, "--config", played.config).stdout
    assert text.startswith(f"Game {GAME} on The classic world map: finished, phase over\n")
    assert f"\nWon by {reference.winner} (domination)\n" in text
    for continent in builtin_map("classic").continents:
        assert f"\n{continent.name} (+{continent.bonus})\n" in text


def test_rules_of_a_game_and_of_a_preset(played: Played) -> None:
    of_game = ok("rules", GAME, "--config", played.config).stdout.splitlines()
    of_preset = ok("rules", "classic").stdout.splitlines()
    assert of_game[0] == "game world-1 (preset classic)"
    assert of_preset[0].startswith("classic: ")
    # a game states the rules that apply to its players; a preset, those of any count
    counts = ["- At least 2 players.", "- At most 6 players."]
    neutral = next(line for line in of_preset if line.startswith("- A two-player game adds"))
    assert counts[0] in of_preset and counts[1] in of_preset
    assert of_game[1:] == [line for line in of_preset[1:] if line not in [*counts, neutral]]
    assert "- Win by eliminating every other player." in of_preset
    listing = ok("rules").stdout.splitlines()
    assert [line.split()[0] for line in listing] == sorted(line.split()[0] for line in listing)
    assert "classic" in [line.split()[0] for line in listing]


# ------------------------------------------------------- a game being set up
@pytest.fixture
def started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A new game with its setup played: alice, bob and carol, turn 1."""
    config = write_config(tmp_path)
    new_game(config, monkeypatch)
    play_setup(config, tmp_path, make_bots())
    return config


def test_dry_run_changes_nothing(started: Path, tmp_path: Path) -> None:
    state = state_of(started)
    before = (hash_chain(started), log_texts(started), state.state_hash())
    queued = len(unsent_mail(started))
    orders = tmp_path / "turn.txt"
    orders.write_text(make_bots()[state.current].write_turn(state), encoding="utf-8")
    result = ok("adjudicate", GAME, "--orders", orders, "--dry-run", "--config", started)
    name = PLAYERS[state.current]
    assert result.stdout.startswith(f"{name}'s orders in {orders} valid, checked against game ")
    assert "\n  PLACE " in result.stdout
    assert (hash_chain(started), log_texts(started), state_of(started).state_hash()) == before
    assert len(unsent_mail(started)) == queued
    # the same orders for real: one more log entry and one more stored step, and
    # the mail a turn by mail would bring: the report to every player, the notice
    ok("adjudicate", GAME, "--orders", orders, "--config", started)
    assert len(log_texts(started)) == len(before[1]) + 1
    assert len(hash_chain(started)) == len(before[0]) + 1
    new = unsent_mail(started)[queued:]
    reports = [m for m in new if f"Turn {state.turn}" in str(m["subject"])]
    assert sorted(str(m["recipient"]) for m in reports) == sorted(
        [f"{p}@example.org" for p in PLAYERS] + ["gm@localhost"]
    )
    following = PLAYERS[state_of(started).current]
    assert any(
        m["recipient"] == f"{following}@example.org" and "your turn" in str(m["subject"]).lower()
        for m in new
    )


def unsent_mail(config: Path) -> list[dict[str, object]]:
    """The outbox as `pbem outbox --json` lists it: what waits to be sent."""
    return json.loads(ok("outbox", "--json", "--config", config).stdout)


@pytest.mark.parametrize("content", ["", "# only a comment\n\n", "PASSWORD x\n"])
def test_a_file_without_orders_is_a_clear_error_and_changes_nothing(
    started: Path, tmp_path: Path, content: str
) -> None:
    state = state_of(started)
    before = (hash_chain(started), log_texts(started))
    empty = tmp_path / "empty.txt"
    empty.write_text(content, encoding="utf-8")
    name = PLAYERS[state.current]
    for args in (
        ("check", empty, "--game", GAME, "--as", name),
        ("adjudicate", GAME, "--orders", empty, "--as", name),
    ):
        result = pbem(*args, "--config", started)
        assert result.exit_code == 1, (args, result.stdout, result.stderr)
        assert "There are no orders here: nothing was applied." in result.stdout + result.stderr
        assert "Traceback" not in result.stdout + result.stderr
    assert (hash_chain(started), log_texts(started)) == before


def test_reveal_prints_the_secret_and_export_then_carries_it(started: Path, tmp_path: Path) -> None:
    hidden = ok("export", GAME, "--config", started).stdout
    assert "[Secret " not in hidden
    assert SECRET.hex() not in hidden
    refused = pbem("reveal", GAME, "--config", started)  # the game is running (issue 13)
    assert refused.exit_code == 1
    assert "publishing it now would let anyone compute the future dice" in refused.stderr
    assert "[Secret " not in ok("export", GAME, "--config", started).stdout
    result = ok("reveal", GAME, "--force", "--config", started)
    assert result.stdout.splitlines()[0] == f"secret of {GAME}: {SECRET.hex()}"
    shown = ok("export", GAME, "--config", started).stdout
    assert f'[Secret "{SECRET.hex()}"]' in shown
    record = tmp_path / "r.pgn"
    record.write_text(shown, encoding="utf-8")
    assert ok("verify", record, "--secret", SECRET.hex()).stdout == (
        "all 1 steps verified; every roll matches the secret\n"
    )


def test_list_shows_each_game(started: Path) -> None:
    ok("new", "world-2", *PLAYER_OPTIONS, "--preset", "european", "--config", started)
    text = ok("list", "--config", started).stdout.splitlines()
    assert [line.split() for line in text] == [
        ["world-1", "running", "playing", "turn", "1", "classic/classic"],
        ["world-2", "running", "setup", "turn", "0", "european/classic"],
    ]


def test_invalid_orders_print_the_problems_and_change_nothing(
    started: Path, tmp_path: Path
) -> None:
    state = state_of(started)
    before = (hash_chain(started), log_texts(started))
    text = f"GAME {GAME}\nPLACE 3 Atlantis\n"
    orders = tmp_path / "bad.txt"
    orders.write_text(text, encoding="utf-8")
    result = pbem("adjudicate", GAME, "--orders", orders, "--config", started)
    assert result.exit_code == 1
    with pytest.raises(OrdersError) as refused:
        parse_orders(text, state.board)
    name = PLAYERS[state.current]
    what = f"{name}'s orders in {orders}"
    assert result.stderr == format_problems_for_gm(refused.value.problems, text, what)
    assert result.stderr.startswith(f"{what} refused (1 problem); nothing was applied:\n")
    assert "line 2: PLACE 3 Atlantis" in result.stderr
    assert result.stdout == ""
    assert (hash_chain(started), log_texts(started)) == before


def test_orders_of_a_player_whose_turn_it_is_not(started: Path, tmp_path: Path) -> None:
    state = state_of(started)
    other = PLAYERS[(state.current + 1) % 3]
    orders = tmp_path / "t.txt"
    orders.write_text(make_bots()[state.current].write_turn(state), encoding="utf-8")
    result = pbem("adjudicate", GAME, "--orders", orders, "--as", other, "--config", started)
    assert result.exit_code == 1
    assert f"it is not your turn: {PLAYERS[state.current]} is to move" in result.stderr


def test_init_creates_the_database_at_the_latest_revision(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    database = tmp_path / "pbem.db"
    result = ok("init", "--config", config)
    inbox = tmp_path / "var/mail/pbem@localhost"
    assert result.stdout == (
        f"database sqlite:///{database} at revision {head_revision()}\n"
        f"inbox {inbox} (a Maildir: players' mail is dropped into {inbox}/new)\n"
    )
    for folder in ("new", ".processed", ".rejected", ".held"):
        assert (inbox / folder).is_dir()
    assert current_revision(init_db(f"sqlite:///{database}")) == head_revision()
    assert ok("init", "--config", config).stdout == result.stdout  # again: nothing to do


# ------------------------------------------------------------- user errors
def one_line_error(result: Result, message: str) -> None:
    assert result.exit_code != 0
    assert result.stderr == f"error: {message}\n"
    assert result.stdout == ""


def test_unknown_game(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    for command in ("show", "reveal", "export", "replay", "rules"):
        one_line_error(
            pbem(command, "nope", "--config", config), "no game named 'nope' (see `pbem list`)"
        )
    orders = tmp_path / "o.txt"
    orders.write_text("PLACE 1 Alaska\n", encoding="utf-8")
    one_line_error(
        pbem("adjudicate", "nope", "--orders", orders, "--config", config),
        "no game named 'nope' (see `pbem list`)",
    )


def test_duplicate_game_name(started: Path) -> None:
    result = pbem("new", GAME, *PLAYER_OPTIONS, "--config", started)
    one_line_error(result, f"a game named {GAME!r} exists already")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-o", "nosuch=1"], "unknown option 'nosuch'"),
        (
            ["-o", "fortify=sideways"],
            "option fortify must be one of adjacent, chained, unlimited, none, parachute, "
            "not 'sideways'",
        ),
        (["-o", "max_armies=lots"], "option max_armies must be a whole number, not 'lots'"),
        (["-o", "badform"], "--option 'badform': expected K=V"),
        (["--preset", "capital"], "these rules need 3 to 6 players, not 2"),
        (["--preset", "nosuch"], None),
        (["--map", "mars"], "no map 'mars' (known: classic, fantasy)"),
        (["--dice", "v3"], "--dice 'v3': use v1 or v2"),
    ],
)
def test_bad_new_game(tmp_path: Path, options: list[str], message: str | None) -> None:
    config = write_config(tmp_path)
    two = ["-p", "ann:ann@example.org", "-p", "ben:ben@example.org"]
    result = pbem("new", "g", *two, *options, "--config", config)
    if message is None:
        assert result.stderr.startswith("error: no rules preset 'nosuch' (known: ")
        assert "classic" in result.stderr and result.stderr.count("\n") == 1
        assert result.exit_code == 1
    else:
        one_line_error(result, message)
    ok("init", "--config", config)
    assert ok("list", "--config", config).stdout == "no games\n"  # nothing was created


def test_new_games_roll_dice_version_2_unless_told(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    two = ["-p", "ann:ann@example.org", "-p", "ben:ben@example.org"]
    assert "dice commitment (pbem-dice-v2): " in ok("new", "g", *two, "--config", config).stdout
    old = ok("new", "h", *two, "--dice", "v1", "--config", config).stdout
    assert "dice commitment (pbem-dice-v1): " in old


def test_too_many_players_for_the_preset(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    seven = [x for i in range(7) for x in ("-p", f"p{i}:p{i}@example.org")]
    one_line_error(
        pbem("new", "g", *seven, "--config", config), "these rules need 2 to 6 players, not 7"
    )
    five = [x for i in range(5) for x in ("-p", f"p{i}:p{i}@example.org")]
    ok("new", "g", *five, "--preset", "2016", "--config", config)
    six = [x for i in range(6) for x in ("-p", f"p{i}:p{i}@example.org")]
    one_line_error(
        pbem("new", "h", *six, "--preset", "2016", "--config", config),
        "these rules need 2 to 5 players, not 6",
    )


@pytest.mark.parametrize(
    ("player", "message"),
    [
        (
            "aliceATexample.org",
            "--player 'aliceATexample.org': expected NAME:ADDRESS (e.g. alice:alice@example.org)",
        ),
        (
            ":a@example.org",
            "--player ':a@example.org': expected NAME:ADDRESS (e.g. alice:alice@example.org)",
        ),
        ("a:b:c:d@x", "--player 'a:b:c:d@x': expected NAME:ADDRESS (e.g. alice:alice@example.org)"),
        ("al ice:a@example.org", "player name 'al ice': use letters, digits, - and _ only"),
    ],
)
def test_bad_player_syntax(tmp_path: Path, player: str, message: str) -> None:
    config = write_config(tmp_path)
    result = pbem("new", "g", "-p", player, "-p", "ben:ben@example.org", "--config", config)
    one_line_error(result, message)


def test_orders_file_missing(started: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    one_line_error(
        pbem("adjudicate", GAME, "--orders", missing, "--config", started),
        f"{missing}: No such file or directory",
    )


def test_setup_orders_need_as(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_config(tmp_path)
    new_game(config, monkeypatch)
    orders = tmp_path / "o.txt"
    orders.write_text("PLACE 1 Alaska\n", encoding="utf-8")
    one_line_error(
        pbem("adjudicate", GAME, "--orders", orders, "--config", config),
        "the game is setting up: say whose orders these are with --as PLAYER",
    )
    one_line_error(
        pbem("adjudicate", GAME, "--orders", orders, "--as", "zed", "--config", config),
        f"game {GAME!r} has no player 'zed'",
    )


def test_verify_and_import_of_a_bad_record_file(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    bad = tmp_path / "bad.pgn"
    bad.write_text('[Game "g"]\nGame g\n', encoding="utf-8")
    message = f'{bad}: line 2: expected a header like [Game "name"]'
    one_line_error(pbem("verify", bad, "--secret", "00"), message)
    one_line_error(pbem("import", bad, "--config", config), message)
    missing = tmp_path / "none.pgn"
    one_line_error(
        pbem("verify", missing, "--secret", "00"), f"{missing}: No such file or directory"
    )


def test_import_of_a_secret_of_the_wrong_size_names_the_size_and_dice_version(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    text = (Path(__file__).parents[1] / "data" / "records" / "greedy-seed5-v2.pgn").read_text()
    bare = tmp_path / "g2.pgn"
    bare.write_text(re.sub(r'\[Secret "[0-9a-f]+"\]\n', "", text), encoding="utf-8")
    one_line_error(
        pbem("import", bare, "--secret", "00", "--config", config),
        "the secret is 1 bytes (2 hex digits); a pbem-dice-v2 secret is exactly 32 bytes "
        "(64 hex digits)",
    )
    assert "sim-5" not in pbem("list", "--config", config).stdout


def test_rules_of_neither_a_preset_nor_a_game(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    one_line_error(
        pbem("rules", "nosuch", "--config", config), "no game named 'nosuch' (see `pbem list`)"
    )


def test_missing_config_file() -> None:
    one_line_error(
        pbem("list", "--config", "/nonexistent/pbem.toml"),
        "/nonexistent/pbem.toml: config file not found (given with --config)",
    )


def test_every_command_has_help() -> None:
    listing = ok("--help").stdout
    commands = ["init", "new", "list", "show", "adjudicate", "replay", "export", "import"]
    commands += ["verify", "reveal", "rules"]
    for command in commands:
        assert re.search(rf"│ {command}\s", listing), command
        assert ok(command, "--help").stdout.lstrip().startswith("Usage: ")


# ------------------------------------------------------------ real process
def test_installed_pbem_command_verifies_a_record(played: Played, reference: Reference) -> None:
    exe = shutil.which("pbem")
    assert exe is not None, "the pbem console script is not installed (pip install -e .)"
    good = subprocess.run(
        [exe, "verify", str(played.record), "--secret", SECRET.hex()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (good.returncode, good.stdout, good.stderr) == (
        0,
        f"all {len(reference.hashes)} steps verified; every roll matches the secret\n",
        "",
    )
    shown = subprocess.run(
        [exe, "show", GAME, "--json", "--config", str(played.config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["winner"] == reference.winner
    missing = subprocess.run(
        [exe, "show", "nope", "--config", str(played.config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        1,
        "",
        "error: no game named 'nope' (see `pbem list`)\n",
    )


def test_now_runs_a_command_on_another_time_base(
    started: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: a GM tries deadlines without waiting (--now, or $PBEM_NOW)."""
    # --now sets $PBEM_NOW for the rest of the process: this test's only
    monkeypatch.setenv("PBEM_NOW", "")
    monkeypatch.delenv("PBEM_NOW")
    before = state_of(started)
    deadline = game_row(started).deadline
    assert deadline is not None
    late = (deadline + timedelta(days=3)).isoformat()
    result = ok("--now", late, "poll", "--config", started)
    assert f"{GAME}: turn {before.turn} missed by {PLAYERS[before.current]}" in result.stdout
    assert state_of(started).turn == before.turn + 1
    os.environ.pop("PBEM_NOW", None)  # the option set it for this process
    bad = pbem("--now", "next tuesday", "status", "--config", started)
    assert bad.exit_code == 1
    assert "--now: 'next tuesday' is not a time; write it as 2026-12-01T09:00Z" in bad.stderr


def test_set_changes_timing_and_refuses_rules(started: Path) -> None:
    """Issue 13: settings can change after creation; rules cannot."""
    result = ok("set", GAME, "turn_hours=24", "grace_hours=0", "--config", started)
    assert result.stdout == f"{GAME}: grace_hours: 24.0 -> 0; turn_hours: 48.0 -> 24\n"
    settings = json.loads(game_row(started).settings_json)
    assert (settings["turn_hours"], settings["grace_hours"]) == (24, 0)
    assert ok("set", GAME, "turn_hours=24", "--config", started).stdout == (
        f"{GAME}: nothing changed\n"
    )
    rule = pbem("set", GAME, "card_values=fixed", "--config", started)
    assert rule.exit_code == 1
    assert "card_values is a rule option: the rules of a game cannot change" in rule.stderr
    bad = pbem("set", GAME, "turn_hours=-3", "--config", started)
    assert bad.exit_code == 1 and "turn_hours" in bad.stderr
    unknown = pbem("set", GAME, "turn_hour=3", "--config", started)
    assert unknown.exit_code == 1 and "turn_hour: no such setting" in unknown.stderr


def test_show_gives_the_gm_hands_and_missions(tmp_path: Path) -> None:
    """Issue 13: `pbem show` is the GM's view: every hand and every mission."""
    config = write_config(tmp_path)
    ok("new", "sm", *PLAYER_OPTIONS, "--preset", "secret-mission", "--config", config)
    text = ok("show", "sm", "--config", config).stdout
    assert "Hands and missions (the GM's view: private to each player)" in text
    data = json.loads(ok("show", "sm", "--json", "--config", config).stdout)
    missions = [p["mission"] for p in data["players"] if not p["neutral"]]
    assert len(missions) == 3 and all(missions)
    for mission in missions:
        assert f"mission: {mission}" in text
    assert [p["hand"] for p in data["players"]] == [[], [], []]


def test_show_gives_the_deadline_in_readable_form(tmp_path: Path) -> None:
    """Issue 13: `pbem show` writes the deadline as people read it (JSON: ISO)."""
    config = write_config(tmp_path)
    ok("new", "dl", *PLAYER_OPTIONS, "--config", config)
    data = json.loads(ok("show", "dl", "--json", "--config", config).stdout)
    due = datetime.fromisoformat(data["deadline"])
    text = ok("show", "dl", "--config", config).stdout
    readable = f"deadline {due:%a} {due.day} {due:%b %Y %H:%M} UTC"
    assert readable in text.splitlines()[1], text.splitlines()[:3]


def test_simulate_takes_a_map_file(tmp_path: Path) -> None:
    """Issue 15: every command that takes a map takes a built-in name or a file."""
    tiny = Path(__file__).parents[1] / "data" / "maps" / "tiny.toml"
    result = ok("simulate", "--map", str(tiny), "--players", "2", "--games", "2", "--workers", "1")
    assert result.stdout.startswith("2 games of 2 random bots")
    assert "winners:" in result.stdout
    missing = pbem("simulate", "--map", str(tmp_path / "nowhere.toml"), "--games", "1")
    assert missing.exit_code == 1 and "nowhere.toml: no such map file" in missing.stderr
