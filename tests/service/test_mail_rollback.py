"""`pbem rollback --reroll` (issue 13): new dice for the undone turns, the new
commitment announced by mail, the old secret kept so the past still verifies."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.orderlog.records import read_record, verify_record, write_record
from pbem.orderlog.replay import turn_stream
from pbem.rules.dice import commitment
from pbem.service.play import gm
from pbem.service.play.archive import export_record, replay_game
from pbem.service.play.games import definition_of, find_game, rerolls_of
from pbem.site.build import build_site
from tests.longgame_helpers import SECRET, World, new_table

PLAYERS = ["ann", "bob", "cat"]
VERIFY_DICE = Path(__file__).parents[2] / "scripts" / "verify_dice.py"


def verify_dice(path: Path) -> subprocess.CompletedProcess[str]:
    """The independent verifier, which knows nothing of pbem's code."""
    return subprocess.run(
        [sys.executable, "-I", str(VERIFY_DICE), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("dice_version", ["v1", "v2"])
def test_rollback_with_reroll_announces_new_dice_and_the_past_still_verifies(
    tmp_path: Path, dice_version: str
) -> None:
    world = World(tmp_path)
    table = new_table(world, "rr", PLAYERS, dice_version=dice_version)
    table.run(lambda: world.game("rr").turn >= 6)
    original = world.chain("rr")
    table.clear()

    line = world.gm(gm.rollback, "rr", 4, True)
    with world.session(write=False) as session:
        game = find_game(session, "rr")
        rerolls = rerolls_of(session, game)
        definition = definition_of(session, game)
    assert len(rerolls) == 1
    first, secret_hex, made = rerolls[0]
    assert first == 4 and made == commitment(bytes.fromhex(secret_hex))
    assert secret_hex != SECRET.hex()
    assert line == (
        f"rr rolled back to turn 4 (turns 4 to 5 undone, 2 log entries); new dice from turn "
        f"4 on (commitment {made})"
    )
    # the game's own secret and commitment stay: they still give turns 1 to 3
    assert world.game("rr").secret == SECRET.hex()
    assert world.game("rr").commitment == commitment(SECRET)
    assert definition.secret_of_turn(3) == SECRET
    assert definition.secret_of_turn(4) == bytes.fromhex(secret_hex)
    # the streams the games really play with: turn 3 as before, turn 4 from the new secret
    unrolled = replace(definition, rerolls=())
    assert turn_stream(definition, 3).roll(20) == turn_stream(unrolled, 3).roll(20)
    assert turn_stream(definition, 4).roll(20) != turn_stream(unrolled, 4).roll(20)

    table.read_all()
    for name in PLAYERS:
        news = [m for m in table.mails(name) if "Rolled back to turn 4" in m.subject]
        assert [m.untokened for m in news] == ["[rr] Rolled back to turn 4: new dice from here on"]
        text = news[0].flat
        assert (
            "The dice from turn 4 on come from a new secret, drawn now; its SHA-256, "
            f"the new commitment, is {made}" in text
        )
        assert "the game's first secret still gives every turn before 4" in text
        assert secret_hex not in news[0].text  # the new secret itself stays with the GM
        # the footer quotes the commitment of the dice in force, not the first secret's
        assert f"the SHA-256 of the secret drawn at the last rollback: {made}" in text
        assert commitment(SECRET) not in text

    # the game plays on with the new dice; the stored chain replays, the past unchanged
    table.clear()
    table.run(lambda: world.game("rr").turn >= 6)
    table.read_all()
    later = [m for name in PLAYERS for m in table.mails(name)]
    assert later and all(
        f"Dice commitment ({world.game('rr').dice_version})" in m.text for m in later
    )
    assert all(made in m.text and commitment(SECRET) not in m.text for m in later), later
    assert world.chain("rr")[:4] == original[:4]
    with world.session() as session:
        game = find_game(session, "rr")
        assert replay_game(session, game).ok
        text = export_record(session, game, with_secret=True, force=True)
        build_site(session, world.ctx, tmp_path / "site")
    # the site shows the first commitment and the one of the new dice
    page = (tmp_path / "site" / "rr" / "index.html").read_text(encoding="utf-8")
    assert f"<code>{commitment(SECRET)}</code>" in page
    assert (
        f"New dice from turn 4 on (a rollback drew a new secret), commitment: <code>{made}" in page
    )
    record = read_record(text)
    assert record.rerolls == [(4, made, secret_hex)]
    # `pbem reveal` publishes every secret the game's dice came from
    shown = CliRunner().invoke(app, ["reveal", "rr", "--force", "--config", str(world.config_path)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[:2] == [
        f"secret of rr: {SECRET.hex()}",
        f"new dice from turn 4 on: {secret_hex} (commitment {made})",
    ]
    report = verify_record(record, SECRET.hex())
    assert report.ok, report.message
    # the independent verifier takes each turn's dice from the secret in force then
    path = tmp_path / "rr.pgn"
    path.write_text(text, encoding="utf-8")
    checked = verify_dice(path)
    assert checked.returncode == 0, checked.stdout
    path.write_text(text.replace(f"4:{made}:{secret_hex}", f"4:{made}:{SECRET.hex()}"))
    checked = verify_dice(path)
    assert checked.returncode == 1
    assert "rerolled from turn 4 is missing or wrong" in checked.stdout
    # without the rerolled secret the record cannot be checked, and says why
    record.rerolls = [(4, made, None)]
    assert verify_record(read_record(write_record(record)), SECRET.hex()).message == (
        "the secret of the dice rerolled from turn 4 is not in the record"
    )
    record.rerolls = [(4, made, SECRET.hex())]
    assert verify_record(record, SECRET.hex()).message == (
        "the secret of the dice rerolled from turn 4 does not match the commitment "
        "announced at the rollback"
    )
