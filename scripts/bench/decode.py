"""What the bounds of issue 27 cost ordinary mail: decoding before and after, and in a child.

    python scripts/bench/decode.py              # 300 runs each
    python scripts/bench/decode.py --runs 20 --before e6c51c4

Prints, per case, the median wall time of one call:

- a typical 2 KB order mail (a Gmail reply quoting the turn report), through
  ``identify`` and ``decode_mail`` as they are now and as they were at the
  ``--before`` commit (loaded from git; skipped when git cannot show it);
- a 200 KB mail (orders and a long quoted report), decoded in process and
  in a forked child under the default budget (pbem/mail/sandbox.py): the
  difference is the price of the child;
- the dearest small mail found for the in-process path: 64 KiB of headers
  built to be slow for the standard library's header parser (every
  value at its parse limit, see pbem/mail/bounds.py).

A benchmark, not a test: no figure is compared with anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pbem.mail import bounds  # noqa: E402
from pbem.mail.decode import _PARSED, decode_mail  # noqa: E402
from pbem.mail.identity import identify  # noqa: E402
from pbem.mail.sandbox import IN_PROCESS, DecodeBudget  # noqa: E402

BEFORE = "e6c51c4"  # the last commit before issue 27's mail bounds


def order_mail(quoted_lines: int = 30) -> bytes:
    head = (
        "Return-Path: <alice.player@gmail.example>\r\n"
        "Received: from mail.gmail.example by mx.pbem.example; Tue, 1 Dec 2026 10:00:00 +0000\r\n"
        "From: Alice Player <alice.player@gmail.example>\r\n"
        "To: game@pbem.example\r\n"
        "Subject: Re: [world-1] Turn 3: your move\r\n"
        "Message-ID: <CAF1xq+b7Yd8Wc0m=Qk1ZpA@mail.gmail.example>\r\n"
        "In-Reply-To: <turn-3.world-1@pbem.example>\r\n"
        "References: <turn-2.world-1@pbem.example> <turn-3.world-1@pbem.example>\r\n"
        "Date: Tue, 1 Dec 2026 10:00:00 +0000\r\n"
        "MIME-Version: 1.0\r\n"
        'Content-Type: text/plain; charset="UTF-8"\r\n'
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
    )
    orders = "PLACE 3 Alaska\r\nATTACK Alaska -> Kamchatka 3 3\r\nFORTIFY 2 Ontario -> Quebec\r\n"
    quote = "On Tue, 1 Dec 2026 at 09:00, pbem <game@pbem.example> wrote:\r\n" + "".join(
        f"> Alaska: alice, {n} armies; Kamchatka: bob, {n + 1} armies\r\n"
        for n in range(quoted_lines)
    )
    return (head + orders + "\r\n" + quote).encode()


def dear_small_mail() -> bytes:
    """~64 KiB: address, content and subject headers each at its parse limit,
    filled with what the header parser is slowest on."""
    value = '"' * bounds.PARSE_CHARS_DEFAULT
    headers = "".join(f"{name}: {value}\r\n" for name in ("From", "To", "Cc", "Reply-To"))
    headers += f"Subject: {'=?utf-8?q?a?= ' * 280}\r\n"
    parts = "".join(
        f'--b\r\nContent-Type: text/plain; name="{"x" * 900}"\r\n\r\np\r\n' for n in range(55)
    )
    return (
        headers + 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n'
        f"{parts}--b--\r\n"
    ).encode()


def old_module(rev: str, path: str, name: str) -> ModuleType | None:
    """A module as it was at ``rev`` (its imports resolve to today's pbem)."""
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102
    return module


def median_ms(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and processor time (of this process only) of one call, in ms."""
    times, cpu = [], []
    for _ in range(runs):
        _PARSED.clear()  # each mail is new: no header parsed by an earlier run
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times) * 1000, statistics.median(cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--before", default=BEFORE, help="git revision to compare with")
    args = parser.parse_args()
    small, big = order_mail(), order_mail(3300)
    assert decode_mail(small).text.startswith("PLACE 3 Alaska")
    assert len(big) > DecodeBudget().child_above_bytes
    rows: list[tuple[str, int, tuple[float, float]]] = []
    rows.append(
        ("identify, 2 KB order mail", len(small), median_ms(lambda: identify(small), args.runs))
    )
    rows.append(
        ("decode, 2 KB order mail", len(small), median_ms(lambda: decode_mail(small), args.runs))
    )
    old_identity = old_module(args.before, "pbem/mail/identity.py", "bench_old_identity")
    old_decode = old_module(args.before, "pbem/mail/decode.py", "bench_old_decode")
    if old_identity is not None and old_decode is not None:
        assert old_decode.decode_mail(small).text == decode_mail(small).text
        rows.append(
            (
                f"identify @{args.before}",
                len(small),
                median_ms(lambda: old_identity.identify(small), args.runs),
            )
        )
        rows.append(
            (
                f"decode @{args.before}",
                len(small),
                median_ms(lambda: old_decode.decode_mail(small), args.runs),
            )
        )
    few = max(3, args.runs // 10)
    rows.append(
        (
            "decode, 200 KB, in process",
            len(big),
            median_ms(lambda: decode_mail(big, budget=IN_PROCESS), few),
        )
    )
    rows.append(("decode, 200 KB, in a child", len(big), median_ms(lambda: decode_mail(big), few)))
    dear = dear_small_mail()
    rows.append(("decode, dearest small mail", len(dear), median_ms(lambda: _quiet(dear), few)))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times)")
    print(f"{'case':32} {'bytes':>8} {'wall ms':>9} {'cpu ms':>9}  (cpu: this process only)")
    for case, size, (wall, cpu) in rows:
        print(f"{case:32} {size:8,} {wall:9.2f} {cpu:9.2f}")


def _quiet(raw: bytes) -> object:
    try:
        return decode_mail(raw, budget=IN_PROCESS)
    except Exception as exc:  # noqa: BLE001 - the figure is the time, not the outcome
        return exc


if __name__ == "__main__":
    main()
