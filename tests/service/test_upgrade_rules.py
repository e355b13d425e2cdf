"""`pbem upgrade-rules` (issue 31): a GM moves a running game from the rules
version it started with to newer rules, as a logged command (RULES n) that a
replay and a record's verification play again, announced to every player."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import select
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.presets import load_preset
from pbem.orderlog import replay
from pbem.orderlog.records import read_record, verify_record
from pbem.rules.events import RulesChanged
from pbem.rules.options import Options
from pbem.rules.ruleversions import RULES_CHANGES, RULES_VERSION, rules_changes
from pbem.rules.state import GameState
from pbem.service.errors import ServiceError
from pbem.service.play import rulesupgrade
from pbem.service.play.archive import export_record, import_record
from pbem.service.play.games import definition_of, find_game, to_entry
from pbem.store import TurnResult
from pbem.vocab import GamePhase, GameStatus
from tests.longgame_helpers import SECRET, Table, World, new_table
from tests.rules.support import classic

PLAYERS = ["ann", "bob", "cat"]
WHY = "pbem was upgraded; from now on we play the rulebook's rules."
NEW = RULES_VERSION  # the newest rules: where `pbem upgrade-rules` moves a game by default
# the lines of every version after 1 (RULES_CHANGES), as the notice wraps them ("- " first)
# what the move changes for the test's game: classic rules, 3 players (no missions,
# re-rolls, commander, cap or neutral: those lines are left out)
CHANGED_LINES = rules_changes(1, NEW, load_preset("classic"), 3)
CHANGED = [f"- {line}" for line in CHANGED_LINES]


def _old_game(tmp_path: Path, **overrides: str) -> tuple[World, Table]:
    """A game that plays rules version 1 (as one made by an older pbem), at turn 3."""
    world = World(tmp_path)
    table = new_table(
        world, "up", PLAYERS, overrides={"placement": "auto", "rules_version": "1", **overrides}
    )
    table.run(lambda: world.game("up").turn >= 3)
    table.clear()
    return world, table


def _events(world: World, seq: int) -> list[dict[str, object]]:
    with world.session(write=False) as session:
        game = find_game(session, "up")
        row = session.exec(
            select(TurnResult).where(TurnResult.game_id == game.id, TurnResult.seq == seq)
        ).one()
        return list(json.loads(row.events_json))


def _replayed_hashes(world: World) -> list[tuple[int, str]]:
    """(turn, hash) of every step, replayed from the stored log alone (the deal,
    stored at entry 0, is no step of the log)."""
    with world.session(write=False) as session:
        game = find_game(session, "up")
        definition = definition_of(session, game)
    entries = [to_entry(r) for r in world.log("up")]
    return [(s.turn, s.state_hash) for s in replay.replay(definition, entries)]


def test_a_version_1_game_moves_to_the_newest_logged_announced_and_replayed(tmp_path: Path) -> None:
    world, table = _old_game(tmp_path)
    assert world.state("up").options.rules_version == 1
    before = world.chain("up")
    turn = world.game("up").turn

    line = world.gm(rulesupgrade.upgrade_rules, "up", None, WHY)

    seq = len(world.log("up"))
    assert line == (
        f"up: rules version 1 -> {NEW} from turn {turn} on (order log entry {seq}); "
        "3 players and the GM told"
    )
    last = world.log("up")[-1]
    assert (last.kind, last.seat, last.text, last.source, last.turn) == (
        "command", None, f"RULES {NEW}", "gm", turn
    )  # fmt: skip
    # the stored options keep the version the game started with; the state has the new one
    assert json.loads(world.game("up").options_json)["rules_version"] == 1
    state = world.state("up")  # read back from the step's snapshot
    assert state.options.rules_version == NEW and state.rules_upgraded_to == NEW
    # a step of its own, no seat, its event; the past unchanged, the hash moved on
    chain = world.chain("up")
    assert chain[:-1] == before
    assert chain[-1][:3] == (seq, turn, None) and chain[-1][3] != before[-1][3]
    assert _events(world, seq) == [{"kind": "rules_changed", "old": 1, "new": NEW}]

    table.read_all()
    for name in PLAYERS:
        news = [m for m in table.mails(name) if m.kind == "rules_changed"]
        assert [m.untokened for m in news] == [f"[up] Rules version {NEW} from turn {turn} on"]
        text = news[0].flat
        assert (
            f"The GM moves up from rules version 1 to rules version {NEW}, from turn {turn} on. "
            "Every turn from now on is played by the new rules; the turns already played "
            "keep the rules they were played by." in text
        )
        for changed in CHANGED:
            assert changed in text
        assert f"The GM says ----------- {WHY}" in text
    assert [m.untokened for m in table.gm if m.kind == "rules_changed"] == [
        f"[up] Rules version {NEW} from turn {turn} on"
    ]

    # the game plays on by the new version; the next players' catch-up says so once
    table.clear()
    table.run(lambda: world.game("up").turn >= turn + 3)
    table.read_all()
    said = [
        m.subject
        for name in PLAYERS
        for m in table.mails(name, "your_turn")
        if f"The GM moved the game from rules version 1 to {NEW}" in m.flat
    ]
    assert len(said) == 2, said  # the two others, before their first turn after it
    assert world.state("up").options.rules_version == NEW
    # a replay from the log alone gives every stored hash, before and after the move
    assert _replayed_hashes(world) == [(t, h) for q, t, _, h in world.chain("up") if q > 0]
    text = world.replayed_record("up")
    record = read_record(text)
    assert record.options.rules_version == 1  # the record's [Options]: as the game started
    assert [e.text for e in record.entries if e.kind == "command"] == [f"RULES {NEW}"]
    report = verify_record(record, SECRET.hex())
    assert report.ok, report.message
    # imported elsewhere (`pbem import`), the game plays on by the rules it was moved to
    elsewhere = World(tmp_path / "elsewhere")
    with elsewhere.session() as session:
        import_record(session, text, SECRET.hex())
    assert elsewhere.state("up").options.rules_version == NEW
    assert json.loads(elsewhere.game("up").options_json)["rules_version"] == 1


def test_the_welcome_of_a_new_player_tells_the_rules_in_force_now(tmp_path: Path) -> None:
    """The game-start mail's "Rules in force" (here of `pbem replace`) reads the
    rules after the move, not the options the game started with."""
    from pbem.service.play import gm

    world, _ = _old_game(tmp_path)
    world.gm(gm.replace, "up", "cat", "erin@players.test", "erin")
    world.gm(rulesupgrade.upgrade_rules, "up", None, "")
    world.gm(gm.replace, "up", "bob", "dave@players.test", "dave")
    before = [m for m in world.take("erin@players.test") if m.kind == "game_start"]
    after = [m for m in world.take("dave@players.test") if m.kind == "game_start"]
    assert len(before) == len(after) == 1
    old_rules = "The game plays pbem's rules version 1, kept from its start"
    assert "Rules in force" in before[0].flat and old_rules in before[0].flat
    assert "Rules in force" in after[0].flat and "rules version" not in after[0].flat


def test_a_move_in_the_setup_plays_the_setup_by_the_new_rules(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = new_table(world, "up", PLAYERS, overrides={"rules_version": "1"})  # blind placement
    assert world.game("up").phase == GamePhase.SETUP
    line = world.gm(rulesupgrade.upgrade_rules, "up", 2, "")
    assert line.startswith("up: rules version 1 -> 2 from the setup on (order log entry ")
    assert world.chain("up") == []  # the setup keeps no snapshot: the log has the move
    assert world.state("up").options.rules_version == 2
    table.read_all()
    assert [m.untokened for m in table.mails("ann") if m.kind == "rules_changed"] == [
        "[up] Rules version 2 from the setup on"
    ]
    assert "The GM says" not in table.mails("ann", "rules_changed")[0].text
    table.run(lambda: world.game("up").turn >= 2)
    assert world.state("up").options.rules_version == 2
    # the move is the log's first step (not stored: a setup step); then the stored ones
    replayed = _replayed_hashes(world)
    assert replayed[1:] == [(t, h) for _, t, _, h in world.chain("up")]
    assert [e.text for e in world.log("up")][0] == "RULES 2"
    with world.session() as session:
        text = export_record(session, find_game(session, "up"), with_secret=True, force=True)
    report = verify_record(read_record(text), SECRET.hex())
    assert report.ok, report.message


def test_the_changes_told_are_those_that_concern_the_game() -> None:
    classic = load_preset("classic")
    told = rules_changes(1, 3, classic, 3)
    assert told[0].startswith("Version 2 (pbem of 22 November 2026)")
    assert any(line.startswith("Version 3 (pbem of 28 November 2026)") for line in told)
    assert not any("REROLL" in line or "destroy mission" in line for line in told)
    assert not any("With two players" in line or "commander" in line for line in told)
    assert any("DEFEND WITH 1" in line for line in told)  # every game
    expert = rules_changes(2, 3, load_preset("expert"), 4)
    assert any("REROLL" in line for line in expert) and any("COMMANDER" in line for line in expert)
    assert any("Army cap (max_armies)" in line for line in expert)
    assert len(rules_changes(1, 3)) == sum(len(v) for v in RULES_CHANGES.values())


def test_show_offers_no_move_for_a_finished_game(tmp_path: Path) -> None:
    from pbem.service.ops.overview import rules_version_line

    assert rules_version_line("g", 1, 1, finished=True) == (
        "Rules version 1, as the game was played."
    )
    assert rules_version_line("g", 1, 1, finished=False).startswith(
        "Rules version 1, kept from its start; this pbem's newest is"
    )


def test_refusals_say_why_and_change_nothing(tmp_path: Path) -> None:
    world, _ = _old_game(tmp_path)
    with world.session() as session:
        game = find_game(session, "up")
        with pytest.raises(ServiceError) as unknown:
            rulesupgrade.upgrade_rules(session, world.ctx, game, 7)
    assert str(unknown.value) == (
        f"rules version 7 is unknown to this pbem (it knows versions 1, 2, 3; the newest is "
        f"{RULES_VERSION})"
    )
    world.gm(rulesupgrade.upgrade_rules, "up", None, None)
    entries = len(world.log("up"))
    refusals = {
        None: f"game up plays rules version {NEW} already (the newest this pbem knows)",
        NEW: f"game up plays rules version {NEW} already (the newest this pbem knows)",
        1: f"game up plays rules version {NEW}: a game moves only to newer rules, never back "
        "to version 1",
    }
    for to, message in refusals.items():
        with world.session() as session:
            game = find_game(session, "up")
            with pytest.raises(ServiceError) as refused:
                rulesupgrade.upgrade_question(session, game, to)
            assert str(refused.value) == message
            with pytest.raises(ServiceError) as refused:
                rulesupgrade.upgrade_rules(session, world.ctx, game, to)
            assert str(refused.value) == message
    with world.session() as session:
        game = find_game(session, "up")
        game.status, game.phase = GameStatus.FINISHED, GamePhase.OVER
        session.add(game)
    with world.session() as session, pytest.raises(ServiceError) as over:
        rulesupgrade.upgrade_rules(session, world.ctx, find_game(session, "up"), None)
    assert str(over.value) == (
        "game up is over: it keeps the rules it was played by (its record replays by them)"
    )
    assert len(world.log("up")) == entries


def test_pbem_set_points_to_upgrade_rules(tmp_path: Path) -> None:
    from pbem.service.play import gm

    world, _ = _old_game(tmp_path)
    with world.session() as session, pytest.raises(ServiceError) as refused:
        gm.change_settings(session, world.ctx, find_game(session, "up"), {"rules_version": 2})
    assert str(refused.value) == (
        "rules_version moves by `pbem upgrade-rules up` (it says what would change, and "
        "tells the players), not by `pbem set`"
    )


def test_the_log_refuses_a_rules_command_backwards_or_unknown(tmp_path: Path) -> None:
    world, _ = _old_game(tmp_path)
    with world.session(write=False) as session:
        game = find_game(session, "up")
        definition = definition_of(session, game)
    entries = [to_entry(r) for r in world.log("up")]
    for text, why in (
        ("RULES 1", "RULES 1: the game plays rules version 1 already"),
        ("RULES 4", "RULES 4: this pbem knows rules versions 1, 2, 3 only"),
        ("RULES two", "not a rules command: RULES two"),
    ):
        game_now = replay.rebuild(definition, entries)
        with pytest.raises(replay.ReplayError) as refused:
            replay.apply(game_now, replay.Entry("command", None, text, 3, "gm"))
        assert str(refused.value) == f"turn 3: {why}"
    game_now = replay.rebuild(definition, entries)
    step = replay.apply(game_now, replay.rules_entry(2, 3))
    assert step is not None and step.events == [RulesChanged(1, 2)]
    with pytest.raises(replay.ReplayError) as again:
        replay.apply(game_now, replay.rules_entry(2, 3))  # no second move to the same version
    assert str(again.value) == "turn 3: RULES 2: the game plays rules version 2 already"
    with pytest.raises(replay.ReplayError) as back:
        replay.apply(game_now, replay.rules_entry(1, 3))
    assert str(back.value) == "turn 3: RULES 1: rules never move back (the game plays version 2)"


def test_the_state_carries_the_move_only_when_made() -> None:
    """A snapshot read back plays by the version moved to; a state never moved
    serialises (and so hashes) as before issue 31."""
    board = classic()
    state = GameState(board=board, options=Options(rules_version=1), game="g", players=[])
    assert "rules_upgraded_to" not in state.to_dict()
    plain = state.canonical_json()
    state.rules_upgraded_to = 2
    assert state.canonical_json() == state.canonical_json_reference()
    assert state.canonical_json() != plain and '"rules_upgraded_to":2,' in state.canonical_json()
    back = GameState.from_dict(state.to_dict(), board, Options(rules_version=1))
    assert back.options.rules_version == 2 and back.rules_upgraded_to == 2


def _pbem(world: World, *args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, [*args, "--config", str(world.config_path)])
    return done.exit_code, done.output


def test_cli_prints_what_would_change_then_moves_with_yes(tmp_path: Path) -> None:
    world, _ = _old_game(tmp_path)
    turn = world.game("up").turn
    code, shown = _pbem(world, "show", "up")
    assert code == 0, shown
    assert (
        f"Rules version 1, kept from its start; this pbem's newest is {NEW}: `pbem upgrade-rules "
        "up` shows what would change and moves it." in shown
    )
    code, rules = _pbem(world, "rules", "up")
    assert "The game plays pbem's rules version 1, kept from its start" in rules

    code, out = _pbem(world, "upgrade-rules", "up")
    assert code == 0, out
    assert out.splitlines() == [
        f"Game up plays rules version 1. Moving it to version {NEW} (the newest) from turn "
        f"{turn} on changes:",
        *(f"  - {line}" for line in CHANGED_LINES),
        "The turns already played keep the rules they were played by; the move is kept in "
        "the game's order log (and so in its record). Every player gets a notice saying so, "
        "with your --message if you give one.",
        f"Nothing changed yet: run `pbem upgrade-rules up --to {NEW} --yes` to do it.",
    ]
    assert world.log("up")[-1].kind != "command"

    code, out = _pbem(world, "upgrade-rules", "up", "--to", str(NEW), "--yes", "--message", WHY)
    assert code == 0, out
    seq = len(world.log("up"))
    assert out.splitlines() == [
        f"up: rules version 1 -> {NEW} from turn {turn} on (order log entry {seq}); "
        "3 players and the GM told",
        "4 mails queued: they go out at the next `pbem poll` (or now: `pbem outbox --retry`)",
    ]
    code, out = _pbem(world, "upgrade-rules", "up", "--yes")
    assert code == 1
    assert f"game up plays rules version {NEW} already (the newest this pbem knows)" in out
    code, shown = _pbem(world, "show", "up")
    assert (
        f"Rules version {NEW}, moved from version 1 by the GM (the newest this pbem knows)."
        in shown
    )
    code, shown = _pbem(world, "show", "up", "--json")
    assert json.loads(shown)["rules_version"] == NEW
    assert json.loads(shown)["rules_version_at_start"] == 1
    code, rules = _pbem(world, "rules", "up")
    assert code == 0 and "rules version" not in rules


def test_a_rollback_past_the_move_undoes_it_and_says_so(tmp_path: Path) -> None:
    from pbem.service.play import gm

    world, table = _old_game(tmp_path)
    world.gm(rulesupgrade.upgrade_rules, "up", None, "")
    table.run(lambda: world.game("up").turn >= 4)
    with world.session(write=False) as session:
        question = gm.rollback_question(session, find_game(session, "up"), 3)
    undone = (
        f"The GM's move to rules version {NEW} is undone too: the game plays rules version 1 again."
    )
    assert question.endswith(f"and tell every player? {undone}")
    table.clear()
    line = world.gm(gm.rollback, "up", 3)
    assert line.endswith("; rules version 1 again")
    assert world.state("up").options.rules_version == 1
    table.read_all()
    news = [m for m in table.mails("ann") if "Rolled back to turn 3" in m.subject]
    assert len(news) == 1 and undone in news[0].flat
    # and the GM may move it again
    world.gm(rulesupgrade.upgrade_rules, "up", None, "")
    assert world.state("up").options.rules_version == NEW
