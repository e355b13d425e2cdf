"""Render once: the parts of a turn's mails that do not depend on who reads them.

A turn is mailed to every player and the GM, then the next player gets the
"your turn" notice of the same board. The board table, the players table
and their text forms are the same in all of them, so inside a
``render_once()`` scope (the service opens one around a turn's mail) each
is computed once and reused. Outside a scope nothing is kept: every call
computes afresh, so a state changed between two renders is never shown
stale. Inside one, the states rendered must not change (they do not: the
service renders the states of steps already played).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

# key -> (the arguments, kept so their ids stay theirs, and the result)
_memo: ContextVar[dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] | None] = ContextVar(
    "pbem_render_once", default=None
)


@contextmanager
def render_once() -> Iterator[None]:
    """A scope in which ``shared`` keeps what it computed; nested scopes share the outer one."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def _key_part(value: Any) -> Any:
    """Numbers, strings, None and tuples of them by value; anything else by identity."""
    if value is None or isinstance(value, int | str | float):
        return value
    if isinstance(value, tuple) and all(
        v is None or isinstance(v, int | str | float) for v in value
    ):
        return value
    return ("id", id(value))


def shared(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, computed once per scope for the same arguments."""
    return shared_as(function, function, *args)


def shared_as(name: Any, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, computed once per scope for ``name`` and the same arguments
    (for a function that is a new object each time, like a template's macro)."""
    memo = _memo.get()
    if memo is None:
        return function(*args)
    key = (name, *(_key_part(a) for a in args))
    found = memo.get(key)
    if found is not None:
        return found[1]  # type: ignore[no-any-return]
    result = function(*args)
    memo[key] = (args, result)
    return result


def active() -> bool:
    """Whether a render-once scope is open (for tests and benchmarks)."""
    return _memo.get() is not None
