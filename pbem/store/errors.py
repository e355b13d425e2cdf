"""Errors of the storage layer, each written for the person who will read it."""

from __future__ import annotations


class DatabaseError(Exception):
    """The database cannot be used: unreachable, busy, malformed URL, unknown schema."""


class DatabaseUnavailable(DatabaseError):
    """The database cannot be reached or is busy now: trying again later may work."""


class ConcurrentUpdateError(DatabaseError):
    """Another process changed the same game between our read and our write."""


class GameNotFoundError(DatabaseError, LookupError):
    """No game has the id asked for."""

    def __init__(self, game_id: int) -> None:
        super().__init__(f"there is no game with id {game_id}")
        self.game_id = game_id
