"""Benchmark a mail's bytes: the EmailMessage path against the direct writer.

    python scripts/bench/mime.py                  # 12 turns of the sample game, 7 runs
    python scripts/bench/mime.py --turns 4 --runs 3

The sample game (pbem.testing.sample: classic map, 4 greedy bots, seed 7):
each turn's report to the 4 players and the GM and the next player's "your
turn" notice with its deadline as an .ics attachment (as the service sends
it when the game has deadlines), rendered once before timing. Then, per mail, in wall-clock
time (``perf_counter``, the best of the runs):

- stdlib: ``bytes(to_mime(...))``, as ``outmail.queue`` did before;
- writer: ``report.wire.mail_bytes(...)``, as it does now; and again with
  the lines and headers it keeps forgotten before each run (a poll's first
  game: within the run, mails share most lines);
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.report import (  # noqa: E402
    ics,
    render,
    wire,  # noqa: E402
)
from pbem.report.context import YourTurn  # noqa: E402
from pbem.report.mime import RenderedMail, thread_root_id, to_mime  # noqa: E402
from pbem.report.shared import render_once  # noqa: E402
from pbem.report.wire import mail_bytes  # noqa: E402
from pbem.testing.sample import deadline, play_sample  # noqa: E402

DATE = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)


Mail = tuple[RenderedMail, int | None, tuple[str, str] | None]  # the mail, its seat, attachment


def turn_mails(turns: int) -> list[Mail]:
    sample = play_sample(seed=7, players=4, turns=turns, bot="greedy")
    mails: list[Mail] = []
    for report in sample.reports:
        with render_once():
            for seat in (*range(4), None):
                mails.append((render.render_turn_report(report, seat), seat, None))
            if report.next_seat is not None:
                notice = YourTurn(
                    report.game, report.after, report.next_seat, "tok", deadline(report.turn + 1)
                )
                due = ics.Deadline(
                    report.game.name, report.turn + 1, "p", deadline(report.turn + 1), 0
                )
                calendar = (f"sim-turn{report.turn + 1}.ics", ics.calendar([due], "x", DATE))
                mails.append((render.render_your_turn(notice), report.next_seat, calendar))
    return mails


def headers(mail: Mail, run: int, n: int) -> dict[str, Any]:
    rendered, seat, _ = mail
    return dict(
        sender="Risk <pbem@pbem.example>",
        recipient=rendered.recipient,
        message_id=f"<r{run}m{n}@pbem.example>",
        in_reply_to=f"<orders-r{run}-{n // 6}@players.example>",
        references=[thread_root_id(rendered.game, seat, "pbem.example")],
        date=DATE,
    )


def best(
    runs: int,
    mails: list[Any],
    one: Callable[[Any, int, int], object],
    before: Callable[[], object] = lambda: None,
) -> float:
    """The best run's milliseconds per mail (``before`` runs untimed before each run)."""
    times = []
    for run in range(runs):
        before()
        start = time.perf_counter()
        for n, mail in enumerate(mails):
            one(mail, run, n)
        times.append(time.perf_counter() - start)
    return min(times) * 1000 / len(mails)


def forget() -> None:
    """The writer's kept quoted-printable lines and folded headers, dropped."""
    wire._qp_kept.clear()
    wire._folds.clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    mails = turn_mails(args.turns)

    def stdlib(mail: Mail, run: int, n: int) -> bytes:
        msg = to_mime(mail[0], **headers(mail, run, n))
        if mail[2] is not None:
            msg.add_attachment(mail[2][1], subtype="calendar", filename=mail[2][0])
        return bytes(msg)

    def writer(mail: Mail, run: int, n: int) -> bytes:
        return mail_bytes(
            mail[0], **headers(mail, run + 1000, n), attachment=mail[2], attachment_type="calendar"
        )

    size = sum(len(stdlib(m, -1, 0)) for m in mails) // len(mails)
    print(f"{len(mails)} mails of {args.turns} turns, {size:,} bytes each on average")
    for n, mail in enumerate(mails):
        random.seed(n)
        ours = writer(mail, -1002, n)  # the same headers as stdlib's run -2
        random.seed(n)
        if ours != stdlib(mail, -2, n):
            print(
                f"mail {n} ({mail[0].kind}, seat {mail[1]}): the writer's bytes differ",
                file=sys.stderr,
            )
            return 1

    built = [to_mime(m[0], **headers(m, 2000, n)) for n, m in enumerate(mails)]

    def build(mail: Mail, run: int, n: int) -> object:
        return to_mime(mail[0], **headers(mail, run + 3000, n))

    old = best(args.runs, mails, stdlib)
    new = best(args.runs, mails, writer)
    print(f"stdlib bytes(to_mime(...))  {old:.3f} ms per mail")
    print(f"  of which to_mime          {best(args.runs, mails, build):.3f} ms (no attachment)")
    print(f"  of which bytes(msg)       {best(1, built, lambda m, _r, _n: bytes(m)):.3f} ms (idem)")
    print(f"writer mail_bytes(...)      {new:.3f} ms per mail ({old / new:.1f}x)")
    cold = best(args.runs, mails, writer, forget)
    print(f"  its kept lines and headers forgotten before each run: {cold:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
