"""Benchmark of one SMTP batch: pbem's DATA of a mail prepared once against aiosmtplib's own.

    python scripts/bench/smtp.py                 # 300 mails of ~72 KB, 5 runs each way
    python scripts/bench/smtp.py --mails 50 --runs 2

A sink SMTP server (aiosmtpd, answers 250 to everything, offers SIZE) runs
in a child process on 127.0.0.1, so its work does not share this process's
interpreter. The mails are the sample game's turn reports as the outbox
stores them (``report.wire.mail_bytes``), sent in batches of 50 by
``SmtpSender`` over one connection:

- prepared: the sender as it is (``smtp.DataPath.PREPARED``);
- plain: the same sender with aiosmtplib's ``SMTP.data`` (``DataPath.PLAIN``).

Printed per way: the best run's wall-clock milliseconds per mail and this
process's CPU milliseconds per mail (the server's are not counted), runs
alternating between the two ways.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.mail import smtp  # noqa: E402
from pbem.mail.transport import OutgoingMail  # noqa: E402
from pbem.report import render  # noqa: E402
from pbem.report.mime import thread_root_id  # noqa: E402
from pbem.report.shared import render_once  # noqa: E402
from pbem.report.wire import mail_bytes  # noqa: E402
from pbem.testing.mailservers import HOST, free_port  # noqa: E402
from pbem.testing.sample import play_sample  # noqa: E402

BATCH = 50
SINK = """
import sys, time
from aiosmtpd.controller import Controller

class Sink:
    async def handle_DATA(self, server, session, envelope):
        return "250 OK"

controller = Controller(Sink(), hostname=sys.argv[1], port=int(sys.argv[2]),
                        data_size_limit=10_000_000, ready_timeout=10.0)
controller.start()
print("ready", flush=True)
sys.stdin.read()
controller.stop()
"""


def sample_raws(count: int) -> list[bytes]:
    """``count`` outbox mails: the sample game's reports, as many turns as it takes."""
    sample = play_sample(seed=7, players=4, turns=max(1, count // 5 + 1), bot="greedy")
    raws: list[bytes] = []
    for report in sample.reports:
        with render_once():
            for seat in (*range(4), None):
                rendered = render.render_turn_report(report, seat)
                raws.append(
                    mail_bytes(
                        rendered,
                        sender="Risk <pbem@pbem.example>",
                        recipient=rendered.recipient or "p@pbem.example",
                        message_id=f"<m{len(raws)}@pbem.example>",
                        references=[thread_root_id(rendered.game, seat, "pbem.example")],
                    )
                )
    return raws[:count]


def one_run(sender: smtp.SmtpSender, mails: list[OutgoingMail]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of sending every mail in the outbox's batches."""
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(mails), BATCH):
        results = sender.send(mails[start : start + BATCH])
        if not all(r.ok for r in results):
            raise SystemExit(f"a mail was refused: {[r.error for r in results if not r.ok]}")
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mails", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    raws = sample_raws(args.mails)
    mails = [OutgoingMail(str(i), "pbem@pbem.example", ("p@pbem.example",), r)
             for i, r in enumerate(raws)]  # fmt: skip
    size = sum(map(len, raws)) // len(raws)
    port = free_port()
    sink = subprocess.Popen(
        [sys.executable, "-c", SINK, HOST, str(port)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert sink.stdout is not None and sink.stdout.readline().strip() == "ready"
        ways = {path: smtp.SmtpSender(HOST, port, tls="none", data_path=path)
                for path in smtp.DataPath}  # fmt: skip
        figures: dict[smtp.DataPath, list[tuple[float, float]]] = {p: [] for p in ways}
        for _ in range(args.runs):
            for path, sender in ways.items():
                figures[path].append(one_run(sender, mails))
    finally:
        if sink.stdin is not None:
            sink.stdin.close()
        sink.wait(timeout=30)
    print(f"{len(mails)} mails of {size:,} bytes on average, batches of {BATCH}, one connection")
    for path, runs in figures.items():
        wall = min(w for w, _ in runs) * 1000 / len(mails)
        cpu = min(c for _, c in runs) * 1000 / len(mails)
        print(f"{path.value:9} {wall:.3f} ms wall per mail, {cpu:.3f} ms CPU (this process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
