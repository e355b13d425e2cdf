"""Benchmark a mail's bytes: the EmailMessage path against the direct writer (issue 16).

    python scripts/bench_mime.py                  # 12 turns of the sample game, 7 runs
    python scripts/bench_mime.py --turns 4 --runs 3

The sample game (pbem.testing.sample: classic map, 4 greedy bots, seed 7):
each turn's report to the 4 players and the GM and the next player's "your
turn" notice, rendered once before timing. Then, per mail, in wall-clock
time (``perf_counter``, the best of the runs):

- stdlib: ``bytes(to_mime(...))``, as ``outmail.queue`` did before;
- writer: ``report.wire.mail_bytes(...)``, as it does now;
- and the stdlib path's two halves (building the EmailMessage, then its bytes).

Every run gives each mail a new Message-ID and In-Reply-To, as a poll does,
so no header is served from a cache it would not hit in a poll. Both ways
must give the same bytes (the same boundaries drawn from a seeded
``random``), or the script exits 1.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem.report import render  # noqa: E402
from pbem.report.context import YourTurn  # noqa: E402
from pbem.report.mime import RenderedMail, thread_root_id, to_mime  # noqa: E402
from pbem.report.shared import render_once  # noqa: E402
from pbem.report.wire import mail_bytes  # noqa: E402
from pbem.testing.sample import deadline, play_sample  # noqa: E402

DATE = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)


def turn_mails(turns: int) -> list[tuple[RenderedMail, int | None]]:
    sample = play_sample(seed=7, players=4, turns=turns, bot="greedy")
    mails: list[tuple[RenderedMail, int | None]] = []
    for report in sample.reports:
        with render_once():
            for seat in (*range(4), None):
                mails.append((render.render_turn_report(report, seat), seat))
            if report.next_seat is not None:
                notice = YourTurn(
                    report.game, report.after, report.next_seat, "tok", deadline(report.turn + 1)
                )
                mails.append((render.render_your_turn(notice), report.next_seat))
    return mails


def headers(rendered: RenderedMail, seat: int | None, run: int, n: int) -> dict[str, Any]:
    return dict(
        sender="Risk <pbem@pbem.example>",
        recipient=rendered.recipient,
        message_id=f"<r{run}m{n}@pbem.example>",
        in_reply_to=f"<orders-r{run}-{n // 6}@players.example>",
        references=[thread_root_id(rendered.game, seat, "pbem.example")],
        date=DATE,
    )


def best(runs: int, mails: list[Any], one: Callable[[Any, int, int], object]) -> float:
    """The best run's milliseconds per mail."""
    times = []
    for run in range(runs):
        start = time.perf_counter()
        for n, mail in enumerate(mails):
            one(mail, run, n)
        times.append(time.perf_counter() - start)
    return min(times) * 1000 / len(mails)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    mails = turn_mails(args.turns)
    size = sum(len(bytes(to_mime(r, **headers(r, s, -1, 0)))) for r, s in mails) // len(mails)
    print(f"{len(mails)} mails of {args.turns} turns, {size:,} bytes each on average")

    for n, (r, s) in enumerate(mails):
        random.seed(n)
        ours = mail_bytes(r, **headers(r, s, -2, n))
        random.seed(n)
        if ours != bytes(to_mime(r, **headers(r, s, -2, n))):
            print(f"mail {n} ({r.kind}, seat {s}): the writer's bytes differ", file=sys.stderr)
            return 1

    def stdlib(mail: Any, run: int, n: int) -> object:
        return bytes(to_mime(mail[0], **headers(mail[0], mail[1], run, n)))

    def writer(mail: Any, run: int, n: int) -> object:
        return mail_bytes(mail[0], **headers(mail[0], mail[1], run + 1000, n))

    built = [to_mime(r, **headers(r, s, 2000, n)) for n, (r, s) in enumerate(mails)]

    def build(mail: Any, run: int, n: int) -> object:
        return to_mime(mail[0], **headers(mail[0], mail[1], run + 3000, n))

    old = best(args.runs, mails, stdlib)
    new = best(args.runs, mails, writer)
    print(f"stdlib bytes(to_mime(...))  {old:.3f} ms per mail")
    print(f"  of which to_mime          {best(args.runs, mails, build):.3f} ms")
    print(f"  of which bytes(msg)       {best(1, built, lambda m, _r, _n: bytes(m)):.3f} ms")
    print(f"writer mail_bytes(...)      {new:.3f} ms per mail ({old / new:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
