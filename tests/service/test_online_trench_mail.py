"""Trench warfare by mail: a game with ``trench = true`` says the rule in its
start mail, and an ATTACK from the territory an earlier ATTACK of the same
mail takes comes back to the player as one reply naming that line and the
rule; nothing is applied, and the corrected mail is played."""

from __future__ import annotations

from pathlib import Path

from pbem.rules.optionwords import WORDS
from pbem.rules.state import GameState
from tests.longgame_helpers import World, new_table

PLAYERS = ["alice", "bob", "carol"]


def chain(state: GameState) -> tuple[int, int, int]:
    """(source, first target, second target) for the player to move: the
    source theirs, the first target an enemy's next to it, the second an
    enemy's next to the first (the first in map order)."""
    me, owner = state.current, state.owner
    graph = [t.neighbours for t in state.board.territories]
    for source in range(len(owner)):
        if owner[source] != me:
            continue
        for first in graph[source]:
            if owner[first] == me:
                continue
            for second in graph[first]:
                if owner[second] != me and second != source:
                    return source, first, second
    raise AssertionError("no chain of two enemy territories")


def test_a_trench_refusal_reaches_the_player_naming_the_line(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = new_table(world, "g1", PLAYERS, overrides={"placement": "auto", "trench": "true"})
    table.silence()
    table.read_all()
    said = str(WORDS["trench"][True])  # type: ignore[index]
    for name in PLAYERS:
        (start,) = table.mails(name, "game_start")
        assert " ".join(said.split()) in start.flat
    state = world.state("g1")
    assert state.options.trench and world.game("g1").turn == 1
    mover = table[table.mover()]
    names = [t.name for t in state.board.territories]
    source, first, second = chain(state)
    body = (
        f"PLACE {state.reinforcements} {names[source]}\n"
        f"ATTACK {names[source]} -> {names[first]} MOVE ALL\n"
        f"ATTACK {names[first]} -> {names[second]}\n"
    )
    sent = mover.reply(mover.latest("your_turn"), body)
    world.poll()
    new = table.read_all()[mover.name]
    replies = [m for m in new if m.kind == "error_reply"]
    assert [str(m.msg["In-Reply-To"]) for m in replies] == [sent]
    (reply,) = replies
    message = (
        f"{names[first]} may not attack: an earlier ATTACK of these orders takes it, and "
        "under trench warfare (option trench) a territory taken this turn may not attack "
        "again until your next turn"
    )
    assert f"Line 3: ATTACK {names[first]} -> {names[second]} {message}" in reply.flat
    assert "Line 2" not in reply.flat and "Line 1" not in reply.flat
    assert world.game("g1").turn == 1 and world.state("g1").armies == state.armies  # unapplied
    # the two first lines alone are played
    fixed = "\n".join(body.splitlines()[:2]) + "\n"
    mover.reply(reply, fixed)
    world.poll()
    assert world.game("g1").turn == 2
