"""A mail is read once on its way in: games.submit plays the orders the caller has
already parsed, and replay.apply the actions submit has just validated; the log,
the hashes and the rebuilt state stay what they were. One order mail is identified
once, its game loaded once (one snapshot read) and its players read once; setup
orders in deadline mode are submitted once."""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from pbem.mail import identity
from pbem.orderlog import replay
from pbem.orders import TextBot, parse_orders
from pbem.rules.bots import make_bot
from pbem.service.intake import claims
from pbem.service.ops import poll
from pbem.service.ops.poll import PollReport
from pbem.service.play import games
from pbem.service.play.games import (
    PlayerSpec,
    create_game,
    definition_of,
    find_game,
    load,
    log_of,
    players_of,
    submit,
    to_entry,
)
from pbem.store import init_db, session_scope
from tests.longgame_helpers import World, new_table

SECRET = bytes(range(32))
NAMES = ["ann", "bob", "cat"]


def _play(tmp_path: Path, name: str, turns: int, read_once: bool) -> list[str]:
    """Set up and play ``turns`` turns of greedy TextBots; the state hashes stored."""
    engine = init_db(f"sqlite:///{tmp_path / (name + '.db')}")
    specs = [PlayerSpec(n, f"{n}@example.org") for n in NAMES]
    writers = [TextBot(make_bot("greedy", seat)) for seat in range(len(NAMES))]
    with session_scope(engine) as session:
        create_game(session, "g", specs, secret=SECRET, dice_version="v2")
    hashes = []
    for step in range(len(NAMES) + turns):
        with session_scope(engine) as session:
            game = find_game(session, "g")
            state = load(session, game).state
            seat = state.order[step] if step < len(NAMES) else state.current
            text = (
                writers[seat].write_setup(state, seat)
                if step < len(NAMES)
                else writers[seat].write_turn(state) + "SALT lucky socks\n"
            )
            parsed = parse_orders(text, state.board) if read_once else None
            outcome = submit(session, game, players_of(session, game)[seat], text, parsed=parsed)
            assert outcome.accepted, outcome.problems
            hashes += [s.state_hash for s in outcome.steps]
    with session_scope(engine, write=False) as session:
        game = find_game(session, "g")
        entries = [to_entry(e) for e in log_of(session, game)]
        definition = definition_of(session, game)
        rebuilt = definition.state_hash(replay.rebuild(definition, entries).state)  # keyed
        assert rebuilt == hashes[-1]  # the log, read again, gives the same game
    engine.dispose()
    return hashes


def test_orders_read_once_give_the_same_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = {"submit": 0, "replay": 0}
    real_parse, real_turn = games.parse_orders, replay.parse_turn

    def parse_in_submit(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        reads["submit"] += 1
        return real_parse(*args, **kwargs)

    def parse_in_replay(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        reads["replay"] += 1
        return real_turn(*args, **kwargs)

    monkeypatch.setattr(games, "parse_orders", parse_in_submit)
    monkeypatch.setattr(replay, "parse_turn", parse_in_replay)
    twice = _play(tmp_path, "twice", 6, read_once=False)
    before = dict(reads)
    once = _play(tmp_path, "once", 6, read_once=True)
    after = {k: reads[k] - before[k] for k in reads}
    assert once == twice and len(once) == 7  # the setup step, then 6 turns
    # read in submit: 3 setup mails + 6 turns, then none when the caller has read them
    assert (before["submit"], after["submit"]) == (9, 0)
    # replay.apply plays the actions submit validated, without reading the canonical
    # text again: the only reads are the rebuild's at the end (6 turns of the log)
    assert (before["replay"], after["replay"]) == (6, 6)


# ------------------------------------------------------- one mail, read once
def _counting(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> tuple[Counter[str], Callable[[], None]]:
    """Counters of what one poll's inbox stage does: identify and content_hash
    calls, games.load and games.submit calls, the reads of the latest snapshot
    and SELECTs of player; and the inbox stage to run."""
    seen: Counter[str] = Counter()
    on = [False]
    # What the poll imports on its first mail, imported before the patching:
    # a module first imported under the patch would keep the counting wrapper.
    for name in ("intake.mailflow", "play.turns", "tell.telling", "play.notify"):
        importlib.import_module(f"pbem.service.{name}")

    def counted(what: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[what] += on[0]
            return real(*args, **kwargs)

        return call

    for module in (poll, claims):
        monkeypatch.setattr(module, "identify", counted("identify", identity.identify))
    monkeypatch.setattr(identity, "content_hash", counted("hash", identity.content_hash))
    for name, what in (("load", "loads"), ("submit", "submits")):
        real = getattr(games, name)
        for key, module in list(sys.modules.items()):
            if key.startswith("pbem.service.") and vars(module).get(name) is real:
                monkeypatch.setattr(module, name, counted(what, real))

    @event.listens_for(world.engine, "before_cursor_execute")
    def _on_execute(_c: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("SELECT") and "FROM player " in statement + " ":
            seen["player"] += on[0]
        if "ORDER BY turn_result.id DESC" in statement:  # the latest snapshot (games.load)
            seen["snapshot"] += on[0]

    def inbox() -> None:
        on[0] = True
        try:
            assert (
                poll._inbox_stage(world.engine, world.ctx, world.config.mail, None, PollReport())
                is None
            )
        finally:
            on[0] = False

    return seen, inbox


def test_an_order_mail_is_identified_once_and_its_game_loaded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(tmp_path)
    table = new_table(world, "once", NAMES, dice_version="v2")
    seen, inbox = _counting(world, monkeypatch)
    for turn in range(4):
        seat = table[table.mover()]
        assert seat.bot is not None
        before = len(world.log("once"))
        seat.write(seat.bot.write_turn(world.state("once")))  # with its PASSWORD line
        inbox()
        assert len(world.log("once")) == before + 1, f"turn {turn} was not played"
    # per mail: one identity, one load of the game (its snapshot read once),
    # the orders submitted once; the players read once to decide and once more
    # by the telling stage after the commit (it renders from the store alone)
    assert dict(seen) == {
        "identify": 4,
        "hash": 4,
        "loads": 4,
        "snapshot": 4,
        "player": 8,
        "submits": 4,
    }


def test_setup_orders_in_deadline_mode_are_played_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(tmp_path)
    settings = {"adjudicate": "deadline"}
    table = new_table(world, "held", NAMES, settings=settings, overrides={}, dice_version="v2")
    seen, inbox = _counting(world, monkeypatch)
    table.read_all()
    for name in NAMES:
        assert table[name].answer() == 1
        inbox()
    assert seen["submits"] == 3 and seen["loads"] == 3 and seen["identify"] == 3
    world.flush()  # the receipts, as they were before: kept, then all played at once
    table.read_all()
    receipts = [m for n in NAMES for m in table.mails(n) if m.kind == "receipt"]
    assert [("waiting for" in m.text, "setup played" in m.text) for m in receipts] == [
        (True, False),
        (True, False),
        (False, True),
    ]
    assert [e.kind for e in world.log("held")] == ["setup"] * 3
