"""A mail's orders are read once on their way in (issue 16): games.submit plays the
orders the caller has already parsed, and replay.apply the actions submit has just
validated; the log, the hashes and the rebuilt state stay what they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.log import replay
from pbem.orders import TextBot, parse_orders
from pbem.rules.bots import make_bot
from pbem.service import games
from pbem.service.games import (
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
