"""A poll at 1,000 games does no work for games with nothing due (issue 16).

Every poll runs the deadlines and the digests over the running games. A
game whose next reminder is hours away, with no bot seat and no digest, is
neither locked nor loaded (four of its columns are read); the outage shift
reads no game when the last poll was minutes ago. Counted with the ORM's
load event and the calls of ``deadlines._game``, on three games whose
deadline is 48 hours ahead (the first reminder at 24 hours).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from pbem.config import load_config
from pbem.service.clock import ManualClock
from pbem.service.context import Context
from pbem.service.play import deadlines, digest, passwords, schedule
from pbem.service.play.games import PlayerSpec, create_game, load
from pbem.store import Game, ServiceState, init_db, session_scope

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
GAMES = 3


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Engine, Context]]:
    monkeypatch.setattr(passwords, "_N", 2**4)  # cheap hashes: the passwords are not tested
    (tmp_path / "pbem.toml").write_text(
        f'database_url = "sqlite:///{tmp_path / "pbem.db"}"\n', encoding="utf-8"
    )
    config = load_config(tmp_path / "pbem.toml", env={})
    ctx = Context(config, ManualClock(START), config.mail.own_addresses)
    engine = init_db(config.database_url)
    with session_scope(engine) as session:
        for g in range(GAMES):
            specs = [PlayerSpec(f"p{s}", f"g{g}-p{s}@players.test") for s in range(3)]
            created = create_game(
                session, f"g{g}", specs, overrides={"placement": "auto"},
                settings={"timezone": "UTC"},
            )  # fmt: skip
            schedule.start_period(session, ctx, created.game, load(session, created.game).state)
        before = (START - timedelta(minutes=5)).isoformat()
        session.add(ServiceState(key="last_poll", value=before))
        session.add(ServiceState(key="last_poll_real", value=before))
    yield engine, ctx
    engine.dispose()


@contextmanager
def game_loads() -> Iterator[list[Game]]:
    """Every Game row the ORM builds from the database meanwhile."""
    loaded: list[Game] = []

    def on_load(target: Game, _context: Any) -> None:
        loaded.append(target)

    event.listen(Game, "load", on_load)
    try:
        yield loaded
    finally:
        event.remove(Game, "load", on_load)


def test_nothing_due_nothing_locked_nothing_loaded_whole(
    world: tuple[Engine, Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, ctx = world
    handled: list[str] = []
    real = deadlines._game

    def spy(session: Any, ctx: Context, game: Game) -> list[str]:
        handled.append(game.name)
        return real(session, ctx, game)

    monkeypatch.setattr(deadlines, "_game", spy)
    with game_loads() as loaded:
        assert deadlines.run(engine, ctx) == []
        assert handled == []  # no game locked: the first reminder is 24 h away
        assert loaded == []  # four columns of each game read, no Game row built
        assert digest.run(engine, ctx) == []
        assert loaded == []  # no game asked for a digest: none read

        assert isinstance(ctx.clock, ManualClock)
        ctx.clock.advance(hours=25)  # the first reminder is due in every game
        assert len(deadlines.run(engine, ctx)) == GAMES
        assert sorted(handled) == ["g0", "g1", "g2"]
