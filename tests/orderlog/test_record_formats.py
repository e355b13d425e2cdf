"""Record formats (docs/RECORDS.md): what a record written today carries, and records
of format 1 (no [RecordFormat]) still read, verified and imported by this pbem.

A format-1 record on the classic map did not embed it: it names it by MapSHA256,
and the map archive (pbem/maps/archive.py) gives the text by that hash. The
format-1 records here are played on the classic map as pbem shipped it at 95b4065
(tests/data/maps/classic-95b4065.toml, `git show 95b4065:config/maps/classic.toml`)
under rules version 1, and written the way pbem wrote them then. The archive is
patched in these tests only: with the old text for the tests that need it found,
without it for the test of the refusal.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps import archive as map_archive
from pbem.orderlog.records import (
    RECORD_FORMAT_1,
    RECORD_FORMAT_2,
    MapNotFoundError,
    Record,
    RecordError,
    draws_of,
    read_record,
    verify_record,
    write_record,
)
from pbem.rules.dice import DICE_V2
from pbem.rules.options import QUIET_AT_DEFAULT, Options
from pbem.service.errors import ServiceError
from pbem.service.play.archive import export_record, import_record, replay_game
from pbem.service.play.games import find_game
from pbem.store import init_db, session_scope
from tests.orderlog.test_records import CLASSIC, SECRET, THREE, play_record

DATA = Path(__file__).parents[1] / "data"
VERIFY_DICE = Path(__file__).parents[2] / "scripts" / "verify_dice.py"
OLD = (DATA / "maps" / "classic-95b4065.toml").read_text(encoding="utf-8")
OLD_SHA = "9f2fe65d56caf08ddbede7a50592f2c251130049f0613b181ca89f8868a23506"
# [Options] as the pbem of 95b4065 wrote it for the classic preset
OLD_OPTIONS = (
    '[Options "{\\"capitals_to_win\\": false, \\"card_reroll\\": false, '
    '\\"card_values\\": \\"escalating\\", \\"claim\\": \\"deal\\", '
    '\\"commander\\": false, \\"forced_trade_at\\": 5, \\"fortify\\": \\"adjacent\\", '
    '\\"goal\\": \\"domination\\", \\"max_armies\\": 0, \\"max_players\\": 6, '
    '\\"max_trades\\": 2, \\"max_turns\\": 0, \\"min_players\\": 2, '
    '\\"move_in\\": \\"dice\\", \\"neutral\\": true, \\"placement\\": \\"blind\\", '
    '\\"territory_bonus\\": \\"once\\", \\"traded_cards\\": \\"bottom\\"}"]'
)
NOT_ARCHIVED = (
    "old.pgn: this record was made by a pbem whose map 'classic' (SHA-256 "
    f"{OLD_SHA}) is not in this pbem's archive: upgrade pbem, or add a line "
    "'=== map' and the map's text at the end of the record"
)


def as_format_1(text: str, draws: bool = False) -> str:
    """``text`` (a game of OLD_OPTIONS) as a pbem before format 2 wrote it: no
    [RecordFormat] nor [RulesVersion], [Options] of the options that pbem knew (no
    rules_version: read as version 1), no map section for a shipped map; draws
    sections only from 9315ab9 on."""
    body = text.split("\n=== map\n")[0]
    if not draws:
        body = body.split("\n=== draws ")[0]
    lines = [
        OLD_OPTIONS if line.startswith("[Options ") else line
        for line in body.split("\n")
        if not line.startswith(("[RecordFormat ", "[RulesVersion "))
    ]
    return "\n".join(lines) + "\n"


def patched_archive(monkeypatch: pytest.MonkeyPatch, old: str | None) -> None:
    """The archive of a pbem that has (``old``) or has not (None) the 95b4065 map."""
    real: Callable[[str], str | None] = map_archive.archived_map_text
    monkeypatch.setattr(
        map_archive, "archived_map_text", lambda sha: old if sha == OLD_SHA else real(sha)
    )


def _unquoted(header: str) -> str:
    return header.split(" ", 1)[1][1:-2].replace('\\"', '"')


@pytest.fixture(scope="module")
def old_game() -> Record:
    """A game played on the 95b4065 classic map under rules version 1."""
    options = Options.from_stored(json.loads(_unquoted(OLD_OPTIONS)))
    assert options.rules_version == 1
    record = play_record("classic", OLD, THREE, resign_at=8, options=options)
    record.draws = draws_of(record, SECRET)
    return record


@pytest.fixture(scope="module")
def old_text(old_game: Record) -> str:
    """That game's record as the pbem of 95b4065 wrote it (format 1, no draws)."""
    return as_format_1(write_record(old_game))


def test_the_old_map_is_the_one_named_by_its_hash() -> None:
    assert hashlib.sha256(OLD.encode("utf-8")).hexdigest() == OLD_SHA
    assert OLD != CLASSIC  # the reason format 1 records on it were refused


# ----------------------------------------------------------- format 2, today
def test_a_record_written_today_carries_everything_needed_to_verify_it() -> None:
    record = play_record("classic", CLASSIC, THREE, resign_at=8)
    record.dice_version = DICE_V2
    record.hashes = [None] * len(record.entries)  # (v1 hashes: not replayed here)
    text = write_record(record)
    head = text.split("\n\n")[0].split("\n")
    assert head[0] == '[RecordFormat "2"]'
    assert '[RulesVersion "3"]' in head and f'[DiceVersion "{DICE_V2}"]' in head
    options = next(line for line in head if line.startswith("[Options "))
    assert '\\"rules_version\\": 3' in options and '\\"mission_win\\": ' in options
    written = json.loads(_unquoted(options))
    # every option but the online settings at their defaults (Options.to_dict)
    named = [f.name for f in dataclasses.fields(Options) if f.name not in QUIET_AT_DEFAULT]
    assert sorted(written) == sorted(named)
    assert text.endswith("\n=== map\n" + CLASSIC)  # the shipped map too
    again = read_record(text)
    assert (again.record_format, again.options, again.dice_version) == (
        RECORD_FORMAT_2,
        record.options,
        DICE_V2,
    )
    assert again.map_text == CLASSIC
    assert write_record(again) == text


def test_a_map_without_a_final_newline_round_trips_exactly() -> None:
    record = play_record("classic", CLASSIC, THREE)
    bare = dataclasses.replace(record, map_text=CLASSIC.rstrip("\n"))
    text = write_record(bare)
    assert not text.endswith("\n")
    again = read_record(text)
    assert again.map_text == bare.map_text
    assert write_record(again) == text
    # a record that gained a blank line at its end (a mailer) still reads, as format 1 did
    assert read_record(write_record(record) + "\n\n").map_text == CLASSIC


def test_a_newer_format_and_a_contradicting_rules_version_are_refused() -> None:
    text = write_record(play_record("classic", CLASSIC, THREE))
    with pytest.raises(RecordError) as refused:
        read_record(text.replace('[RecordFormat "2"]', '[RecordFormat "3"]'), "new.pgn")
    assert str(refused.value) == (
        "new.pgn: record format '3' is newer than this pbem, which reads formats 1, 2: upgrade pbem"
    )
    with pytest.raises(RecordError) as refused:
        read_record(text.replace('[RulesVersion "3"]', '[RulesVersion "1"]'), "edited.pgn")
    assert str(refused.value) == (
        "edited.pgn: [RulesVersion '1'] contradicts the rules_version 3 of [Options]; "
        "the record was edited by hand"
    )


# ------------------------------------------------- format 1, an old map
def test_a_format_1_record_on_an_archived_old_map_verifies(
    old_game: Record, old_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "[RecordFormat " not in old_text and "=== map" not in old_text
    assert f'[MapSHA256 "{OLD_SHA}"]' in old_text
    patched_archive(monkeypatch, OLD)
    record = read_record(old_text, "old.pgn")
    assert (record.record_format, record.options.rules_version) == (RECORD_FORMAT_1, 1)
    assert record.map_text == OLD  # the archived text, not today's classic.toml
    steps = sum(1 for h in old_game.hashes if h)
    report = verify_record(record, SECRET.hex())
    assert (report.ok, report.steps) == (True, steps), report.message
    # written again it is format 2 and carries the old map: it reads without the archive
    again = write_record(record)
    assert again.startswith('[RecordFormat "2"]\n') and again.endswith("\n=== map\n" + OLD)
    patched_archive(monkeypatch, None)
    assert verify_record(read_record(again), SECRET.hex()).ok


def test_format_1_records_with_draws_or_an_embedded_map_verify(
    old_game: Record, monkeypatch: pytest.MonkeyPatch
) -> None:
    patched_archive(monkeypatch, OLD)
    with_draws = read_record(as_format_1(write_record(old_game), draws=True), "draws.pgn")
    assert with_draws.record_format == RECORD_FORMAT_1 and with_draws.draws == old_game.draws
    assert verify_record(with_draws, SECRET.hex()).ok
    # a format-1 record on a map of one's own embedded it (format 1 ended it with one
    # newline): no archive needed
    patched_archive(monkeypatch, None)
    embedded = as_format_1(write_record(old_game)) + "=== map\n" + OLD
    record = read_record(embedded, "embedded.pgn")
    assert (record.record_format, record.map_text) == (RECORD_FORMAT_1, OLD)
    assert verify_record(record, SECRET.hex()).ok


def test_pbem_verify_reads_the_secret_of_a_format_1_record(
    old_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.pgn"
    path.write_text(old_text, encoding="utf-8")
    patched_archive(monkeypatch, OLD)
    done = CliRunner().invoke(app, ["verify", str(path)])
    assert done.exit_code == 0, done.output
    assert done.stdout.endswith("steps verified; every roll matches the secret\n")


def test_an_imported_format_1_game_keeps_the_map_it_was_played_on(
    old_game: Record, old_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patched_archive(monkeypatch, OLD)
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine) as session:
        game, _ = import_record(session, old_text, source="old.pgn")
        assert (game.map_name, game.map_text) == ("classic", OLD)
    patched_archive(monkeypatch, None)  # the stored game needs no archive from now on
    with session_scope(engine, write=False) as session:
        game = find_game(session, "world-1")
        report = replay_game(session, game)
        assert report.ok, report.message
        exported = export_record(session, game)
    assert exported == write_record(old_game)  # format 2: the old map, the draws


def test_a_record_whose_map_is_in_no_archive_says_what_to_do(
    old_text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patched_archive(monkeypatch, None)  # a pbem whose archive lacks the 95b4065 map
    with pytest.raises(MapNotFoundError) as refused:
        read_record(old_text, "old.pgn")
    assert str(refused.value) == NOT_ARCHIVED
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine) as session, pytest.raises(ServiceError) as not_imported:
        import_record(session, old_text, source="old.pgn")
    assert str(not_imported.value) == NOT_ARCHIVED
    path = tmp_path / "old.pgn"
    path.write_text(old_text, encoding="utf-8")
    done = CliRunner().invoke(app, ["verify", str(path)])
    assert (done.exit_code, done.stderr) == (
        1,
        f"error: {NOT_ARCHIVED.replace('old.pgn', str(path), 1)}\n",
    )
    # the way out the message names: the map's text at the end of the record
    patched = old_text + "=== map\n" + OLD
    assert verify_record(read_record(patched), SECRET.hex()).ok


# --------------------------------------------------- scripts/verify_dice.py
def verify_dice(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The independent verifier, which knows nothing of pbem's code."""
    return subprocess.run(
        [sys.executable, "-I", str(VERIFY_DICE), str(path), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_verify_dice_says_what_it_could_not_check_in_a_record_without_draws(
    old_game: Record, old_text: str, tmp_path: Path
) -> None:
    path = tmp_path / "old.pgn"
    path.write_text(old_text, encoding="utf-8")
    done = verify_dice(path)
    assert (done.returncode, done.stderr) == (3, "")
    assert done.stdout == (
        "checked: the secret matches the commitment published at the start\n"
        "not checked: the draws: the record has no '=== draws' sections (it was written "
        "before pbem wrote them, or exported without the secret); use `pbem verify FILE`, "
        "which replays the orders with the rules engine\n"
    )
    wrong = verify_dice(path, "--secret", "ab" * 32)
    assert (wrong.returncode, wrong.stdout) == (
        1,
        "FAILED: the secret does not match the commitment\n",
    )
    # without the secret there is nothing it can check
    unrevealed = tmp_path / "unrevealed.pgn"
    unrevealed.write_text(
        "".join(x for x in old_text.splitlines(True) if not x.startswith("[Secret ")),
        encoding="utf-8",
    )
    done = verify_dice(unrevealed)
    assert (done.returncode, done.stdout) == (
        3,
        "not checked: the secret and every draw: the record has no [Secret] (the game's "
        "secret is not revealed yet); give it with --secret HEX once it is\n",
    )
    # a format-1 record with draws sections (9315ab9 to a4bcc7c): every draw checked
    with_draws = tmp_path / "draws.pgn"
    with_draws.write_text(as_format_1(write_record(old_game), draws=True), encoding="utf-8")
    done = verify_dice(with_draws)
    total = sum(len(s.draws) for s in old_game.draws)
    assert (done.returncode, done.stdout) == (
        0,
        f"ok: {len(old_game.draws)} streams, {total} draws, every one as pbem-dice-v1 gives it\n",
    )
    assert verify_dice(tmp_path / "missing.pgn").returncode == 2
