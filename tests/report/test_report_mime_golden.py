"""Golden digests of whole rendered mails: every byte but the MIME boundaries.

The game: pbem.testing.sample (classic map, 4 greedy bots, seed 7), turns 1-4.
For each turn, the report to every seat and to the GM, and the "your turn"
notice to the next player, are rendered and built into MIME with fixed
headers (date, Message-ID, threading); their bytes, with the random MIME
boundaries replaced by fixed names, must hash to the digests recorded
before the render-once cache and the shared MIME parts (issue 16): the
speed-ups change no byte a player receives. Regenerate, and review why,
only when a mail is meant to change:

    PBEM_REGENERATE_GOLDEN=1 python -m pytest tests/report/test_report_mime_golden.py
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.report import render, views
from pbem.report.context import YourTurn
from pbem.report.mime import RenderedMail, thread_root_id, to_mime
from pbem.report.shared import render_once
from pbem.testing.sample import deadline, play_sample

DIGESTS = Path(__file__).parents[1] / "golden" / "mime-digests.json"
TURNS = 4
REGENERATE = os.environ.get("PBEM_REGENERATE_GOLDEN") == "1"
DATE = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)
_BOUNDARY = re.compile(rb'boundary="([^"]+)"')


def mime_bytes(rendered: RenderedMail, name: str, seat: int | None) -> bytes:
    """The mail as queued, its boundaries renamed b0, b1, ... in order of appearance."""
    msg = to_mime(
        rendered,
        sender="Risk <pbem@pbem.example>",
        recipient=rendered.recipient,
        message_id=f"<{name}@pbem.example>",
        in_reply_to="<orders-1@players.example>",
        references=[thread_root_id(rendered.game, seat, "pbem.example")],
        date=DATE,
    )
    raw = bytes(msg)
    for i, boundary in enumerate(_BOUNDARY.findall(raw)):
        raw = raw.replace(boundary, f"b{i}".encode())
    return raw


def sample_mails() -> dict[str, bytes]:
    sample = play_sample(seed=7, players=4, turns=TURNS, bot="greedy")
    mails: dict[str, bytes] = {}
    for report in sample.reports:
        for seat in (*range(4), None):
            name = f"turn{report.turn}-report-{'gm' if seat is None else seat}"
            mails[name] = mime_bytes(render.render_turn_report(report, seat), name, seat)
        if report.next_seat is not None:
            notice = YourTurn(
                report.game,
                report.after,
                report.next_seat,
                f"tok{report.turn}",
                deadline(report.turn + 1),
            )
            name = f"turn{report.turn}-your-turn"
            mails[name] = mime_bytes(render.render_your_turn(notice), name, report.next_seat)
    return mails


@pytest.fixture(scope="module")
def digests() -> dict[str, str]:
    return {name: hashlib.sha256(raw).hexdigest() for name, raw in sample_mails().items()}


def test_every_mail_is_byte_for_byte_as_recorded(digests: dict[str, str]) -> None:
    if REGENERATE:
        DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    recorded = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert len(recorded) == TURNS * 6
    changed = sorted(name for name in recorded if digests.get(name) != recorded[name])
    assert changed == []
    assert digests.keys() == recorded.keys()


def test_the_digests_see_every_part(digests: dict[str, str]) -> None:
    """The normalisation keeps what matters: the mails differ, and a picture is in each."""
    mails = sample_mails()
    assert len(set(digests.values())) == len(digests)
    for name, raw in mails.items():
        assert b"Content-Type: image/png" in raw, name
        assert b"Content-Type: text/html" in raw, name
        assert b"Date: Tue, 04 Mar 2025 09:30:00 +0000" in raw, name


def test_rendered_once_the_mails_are_the_same(
    digests: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a render_once scope (as the service mails a turn) every board table is
    computed once for all its readers, and every byte stays the same."""
    calls: list[int] = []
    board_blocks = views.board_blocks

    def counted(*args: object) -> object:
        calls.append(1)
        return board_blocks(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(views, "board_blocks", counted)
    with render_once():
        once = {name: hashlib.sha256(raw).hexdigest() for name, raw in sample_mails().items()}
    assert once == digests
    # per turn: one board after it (4 players and the GM), one before the next turn
    assert len(calls) == 2 * TURNS
    calls.clear()
    sample_mails()
    assert len(calls) == 6 * TURNS  # outside a scope nothing is kept
