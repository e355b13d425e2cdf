"""Errors of the service layer: what a GM or player did that cannot be done."""

from __future__ import annotations


class ServiceError(Exception):
    """A request that cannot be carried out; the message says why, for people."""


class NoSuchGame(ServiceError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no game named {name!r} (see `pbem list`)")


class NoSuchPlayer(ServiceError):
    def __init__(self, game: str, name: str) -> None:
        super().__init__(f"game {game!r} has no player {name!r}")
