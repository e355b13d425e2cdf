"""Benchmark the mail of a turn: render to every reader, then MIME bytes.

    python scripts/bench/render.py                 # 6 turns of the sample game, 5 runs
    python scripts/bench/render.py --turns 4 --runs 1

The sample game (pbem.testing.sample: classic map, 4 greedy bots, seed 7): for
each turn, the report to the 4 players and the GM and the next player's
"your turn" notice, as the service mails a turn. Timed in CPU seconds (other
load on the machine does not change them), per mail:

- now: inside ``render_once()`` (the board rendered once for every reader)
  and the bytes as the outbox writes them (``report.wire.mail_bytes``);
- the baseline, in the same run: no render-once scope and the standard
  library's bytes (``bytes(to_mime(...))``): every mail rendered and
  serialised on its own.

The map pictures are drawn before timing (they are cached per board and
caption either way), so the figures are the templates and MIME. Both ways
must give the same bytes, boundaries aside, or the script exits 1.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.report import render  # noqa: E402
from pbem.report.context import YourTurn  # noqa: E402
from pbem.report.mime import RenderedMail, to_mime  # noqa: E402
from pbem.report.shared import render_once  # noqa: E402
from pbem.report.wire import mail_bytes  # noqa: E402
from pbem.testing.sample import SampleGame, deadline, play_sample  # noqa: E402

DATE = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)
_BOUNDARY = re.compile(rb'boundary="([^"]+)"')


def turn_mails(sample: SampleGame, shared: bool) -> list[RenderedMail]:
    mails = []
    for report in sample.reports:
        with render_once() if shared else nullcontext():
            for seat in (*range(4), None):
                mails.append(render.render_turn_report(report, seat))
            if report.next_seat is not None:
                notice = YourTurn(
                    report.game, report.after, report.next_seat, "token", deadline(report.turn + 1)
                )
                mails.append(render.render_your_turn(notice))
    return mails


def mime(mails: list[RenderedMail], shared: bool) -> list[bytes]:
    """Each mail's bytes: now as the outbox writes them (``wire.mail_bytes``), the
    baseline the standard library's (``bytes(to_mime(...))``)."""
    out = []
    for i, rendered in enumerate(mails):
        headers: dict[str, Any] = dict(
            sender="pbem@pbem.example",
            recipient=rendered.recipient,
            message_id=f"<m{i}@pbem.example>",
            date=DATE,
        )
        out.append(
            mail_bytes(rendered, **headers) if shared else bytes(to_mime(rendered, **headers))
        )
    return out


def normalised(raw: bytes) -> bytes:
    for i, boundary in enumerate(_BOUNDARY.findall(raw)):
        raw = raw.replace(boundary, f"b{i}".encode())
    return raw


def timed(sample: SampleGame, shared: bool) -> tuple[float, float, list[bytes]]:
    """CPU seconds of rendering and of the MIME bytes, and the bytes."""
    t0 = time.process_time()
    mails = turn_mails(sample, shared)
    t1 = time.process_time()
    raw = mime(mails, shared)
    t2 = time.process_time()
    return t1 - t0, t2 - t1, raw


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6)  # 12 pictures: all in the cache
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sample = play_sample(seed=7, players=4, turns=args.turns, bot="greedy")
    timed(sample, True)  # warm-up: templates compiled, pictures drawn
    figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    outputs: dict[bool, list[bytes]] = {}
    for _ in range(args.runs):
        for shared in (False, True):  # alternate, so drifting load hits both alike
            rendering, building, raw = timed(sample, shared)
            figures[shared].append((rendering, building))
            outputs[shared] = [normalised(r) for r in raw]
    count = len(outputs[True])
    print(f"{len(sample.reports)} turns, {count} mails (5 reports and a notice a turn)")
    medians = {}
    for shared, label in ((False, "baseline (each mail on its own)"), (True, "now (render once)")):
        rendering = statistics.median(f[0] for f in figures[shared]) * 1000 / count
        building = statistics.median(f[1] for f in figures[shared]) * 1000 / count
        medians[shared] = (rendering, building)
        print(
            f"{label:<32} render {rendering:5.2f} ms, MIME {building:5.2f} ms, "
            f"total {rendering + building:5.2f} ms CPU per mail"
        )
    now, base = sum(medians[True]), sum(medians[False])
    print(
        f"ratio now / baseline: render {medians[True][0] / medians[False][0]:.2f}x, "
        f"MIME {medians[True][1] / medians[False][1]:.2f}x, total {now / base:.2f}x"
    )
    if outputs[True] != outputs[False]:
        print("FAIL: the mails differ between the two ways")
        return 1
    print("the same bytes both ways (boundaries aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
