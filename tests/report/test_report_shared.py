"""render_once: what every reader of a turn shares is computed once per scope."""

from __future__ import annotations

import pytest

from pbem.report.shared import active, render_once, shared, shared_as


def test_outside_a_scope_nothing_is_kept() -> None:
    calls: list[tuple[int, ...]] = []

    def f(*args: int) -> int:
        calls.append(args)
        return sum(args)

    assert (shared(f, 1, 2), shared(f, 1, 2)) == (3, 3)
    assert len(calls) == 2
    assert not active()


def test_inside_a_scope_once_per_arguments_and_nested_scopes_share() -> None:
    calls: list[object] = []
    board = [1, 2, 3]  # an object: by identity
    same_content = [1, 2, 3]

    def f(rows: list[int], seat: int | None) -> str:
        calls.append((id(rows), seat))
        return f"{sum(rows)}:{seat}"

    with render_once():
        assert active()
        assert shared(f, board, 1) == "6:1"
        assert shared(f, board, 1) == "6:1"
        with render_once():
            assert shared(f, board, 1) == "6:1"
        assert shared(f, board, None) == "6:None"
        assert shared(f, same_content, 1) == "6:1"
        assert shared_as("a", f, board, 1) == "6:1"
        assert shared_as("a", lambda r, s: "other", board, 1) == "6:1"  # by name
    assert len(calls) == 4  # (board, 1), (board, None), (same_content, 1), "a"
    assert not active()
    shared(f, board, 1)
    assert len(calls) == 5


def test_the_service_tells_a_step_inside_one_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    """The telling stage renders the notices of one step (reports to all, then the
    next player's notice) inside render_once, so they share the players table."""
    from pbem.service.tell import telling
    from pbem.store import Notice

    seen: list[bool] = []
    monkeypatch.setattr(telling, "render_notice", lambda *args: seen.append(active()))
    notices = [Notice(kind="report", recipient=f"{n}@x.test", message_id=n) for n in "ab"]
    telling._render_group(None, None, notices)  # type: ignore[arg-type]
    assert seen == [True, True]
    assert not active()
