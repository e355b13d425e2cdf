"""The GM's commands in a freestyle game: `pbem show` says who is still to move
in the round, `pbem adjudicate` needs --as (nobody is "the player to move"),
and played with it the next player's turn follows in the same round;
`pbem process` closes the round; `pbem rules` states the play order."""

from __future__ import annotations

from pathlib import Path

from pbem.rules import engine
from pbem.rules.state import ROUND
from tests.cli.test_gm_cli import pbem, state_of, write_config

THREE = [x for n in ("alice", "bob", "carol") for x in ("-p", f"{n}:{n}@example.org")]


def test_the_gm_runs_a_freestyle_round(tmp_path: Path) -> None:
    config = write_config(tmp_path / "g")
    made = pbem(
        "new", "world-1", *THREE, "--preset", "freestyle", "-o", "placement=auto",
        "--config", config,
    )  # fmt: skip
    assert made.exit_code == 0, made.output + made.stderr
    state = state_of(config)
    assert state.phase == ROUND and state.round == 1
    shown = pbem("show", "world-1", "--config", config)
    names = [state.players[s].name for s in state.order]  # the turn order drawn
    everyone = f"{names[0]}, {names[1]} and {names[2]}"
    assert f"Turn 0: round 1: {everyone} to move" in shown.output, shown.output
    assert "Online settings: freestyle (each round every player moves once" in shown.output
    orders = tmp_path / "orders.txt"
    seat = next(i for i, p in enumerate(state.players) if p.name == "bob")
    where = state.board.territories[state.territories_of(seat)[0]].name
    due = engine.turn_of(state, seat).reinforcements  # (the deal is the game's own)
    orders.write_text(f"PLACE {due} {where}\n", encoding="utf-8")
    refused = pbem("adjudicate", "world-1", "--orders", orders, "--config", config)
    assert refused.exit_code != 0
    assert (
        "freestyle: any player still to move this round may play next; say whose orders "
        "these are with --as PLAYER" in refused.output + refused.stderr
    )
    played = pbem("adjudicate", "world-1", "--orders", orders, "--as", "bob", "--config", config)
    assert played.exit_code == 0, played.output + played.stderr
    state = state_of(config)
    assert state.moved == [seat] and state.turn == 1
    again = pbem("adjudicate", "world-1", "--orders", orders, "--as", "bob", "--config", config)
    assert "you have moved in round 1 already" in again.output + again.stderr
    shown = pbem("show", "world-1", "--config", config)
    others = [n for n in names if n != "bob"]
    assert f"Turn 1: round 1: {others[0]} and {others[1]} to move" in shown.output
    closed = pbem("process", "world-1", "--config", config)
    assert closed.exit_code == 0, closed.output + closed.stderr
    assert f"next: round 2: {everyone} to move; deadline" in closed.output, closed.output
    state = state_of(config)
    assert (state.round, state.moved, state.turn) == (2, [], 3)
    rules = pbem("rules", "world-1", "--config", config)
    assert "Freestyle: each round, every player moves once" in " ".join(rules.output.split())


def test_freestyle_refuses_orders_held_for_the_deadline(tmp_path: Path) -> None:
    config = write_config(tmp_path / "g")
    made = pbem(
        "new", "world-1", *THREE, "--preset", "freestyle", "--adjudicate", "deadline",
        "--config", config,
    )  # fmt: skip
    assert made.exit_code != 0
    assert "cannot hold them for the deadline (adjudicate = deadline)" in (
        made.output + made.stderr
    )
