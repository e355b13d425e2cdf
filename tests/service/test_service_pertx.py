"""A game's players and rerolls are read once per transaction (issue 16), and a
row added in the transaction, or by another one before it, is never missed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from pbem.service.play import passwords
from pbem.service.play.games import (
    PlayerSpec,
    add_reroll,
    create_game,
    find_game,
    players_of,
    rerolls_of,
    seat_player,
)
from pbem.store import init_db, session_scope


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setattr(passwords, "_N", 2**4)  # cheap hashes: the passwords are not tested
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine) as session:
        specs = [PlayerSpec(f"p{s}", f"p{s}@players.test") for s in range(3)]
        create_game(session, "g", specs, overrides={"placement": "auto"})
    yield engine
    engine.dispose()


def selects_of(engine: Engine, table: str) -> list[str]:
    seen: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _on_execute(_c: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("SELECT") and f"FROM {table}" in statement:
            seen.append(statement)

    return seen


def test_players_read_once_a_seat_added_is_seen(engine: Engine) -> None:
    reads = selects_of(engine, "player")
    with session_scope(engine) as session:
        game = find_game(session, "g")
        assert [p.name for p in players_of(session, game)] == ["p0", "p1", "p2"]
        players_of(session, game).pop()  # a caller's list is its own
        assert [p.name for p in players_of(session, game)] == ["p0", "p1", "p2"]
        assert len(reads) == 1
        seat_player(session, game, PlayerSpec("p3", "p3@players.test"))
        assert [p.name for p in players_of(session, game)] == ["p0", "p1", "p2", "p3"]
    with session_scope(engine) as session:  # a new transaction reads again
        assert len(players_of(session, find_game(session, "g"))) == 4
    assert len(reads) == 3


def test_rerolls_read_once_one_added_is_seen(engine: Engine) -> None:
    reads = selects_of(engine, "service_state")
    with session_scope(engine) as session:
        game = find_game(session, "g")
        assert rerolls_of(session, game) == []
        assert rerolls_of(session, game) == []
        assert len(reads) == 1
        made = add_reroll(session, game, 5, b"\x01" * 32)
        assert rerolls_of(session, game) == [(5, "01" * 32, made)]
    with session_scope(engine) as session:  # committed: read again, the same
        assert rerolls_of(session, find_game(session, "g")) == [(5, "01" * 32, made)]
