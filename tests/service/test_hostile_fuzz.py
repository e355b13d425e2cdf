"""A fuzzer over the header and MIME layers (issue 27).

A seeded generator takes a few well-formed mails (plain orders, HTML,
multipart with attachments, encoded words, quoted-printable, base64) and
mutates each with one to three operators: deep nesting, odd and unknown
charsets, broken transfer encodings, huge and duplicated headers, bad MIME
boundaries, NUL bytes, byte flips, truncation, line-end mixes, hostile
From fields and reference chains. Each mutated mail goes through
``identify`` and ``decode_mail`` and through the mail handler
(``process_mail``) of a game on the Maildir transport, in a child process
under a 2 GiB address-space limit and a CPU budget (the slowest mails are
reported with the failures):

- ``identify`` never raises; ``decode_mail`` raises nothing but MailError;
- ``process_mail`` raises nothing, and every mail ends processed, rejected
  (or held, or a duplicate of one before it).

The child prints a JSON summary; the test reports every mail that failed
with its seed, index and mutations, so each can be replayed:
``python -m tests.service.test_hostile_fuzz DIR SEED COUNT``.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import random
import resource
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.hostile_helpers import MEMORY_LIMIT, REPO

SEED = 2027
COUNT = 200
CPU_SECONDS = 300  # the whole run's budget: about 45 s of CPU on the code of issue 27
PLAYERS = ("alice", "bob")
GAME_ADDRESS = "pbem@fuzz.localhost"

Mutation = Callable[[random.Random, bytes], bytes]


# --------------------------------------------------------------- the mails
def _base_mails(password: str) -> list[bytes]:
    """Well-formed mails the mutations start from (LF line ends, as on disk)."""
    head = (
        "From: Alice <alice@fuzz.example>\nTo: pbem@fuzz.localhost\n"
        "Subject: [g1] my claims\nMessage-ID: <{n}@fuzz.example>\n"
        "Date: Sat, 28 Nov 2026 03:00:00 +0000\nMIME-Version: 1.0\n"
    )
    orders = f"PASSWORD {password}\nCLAIM Alaska, Ontario\n"
    plain = head + "Content-Type: text/plain; charset=utf-8\n\n" + orders
    html = (
        head
        + "Content-Type: text/html; charset=utf-8\n\n<p>"
        + orders.replace("\n", "<br>")
        + "</p><blockquote>bob wrote:<br>old</blockquote>\n"
    )
    alternative = (
        head + 'Content-Type: multipart/alternative; boundary="alt"\n\n'
        "--alt\nContent-Type: text/plain; charset=iso-8859-1\n"
        "Content-Transfer-Encoding: quoted-printable\n\n"
        + orders.replace("Ontario", "Ontar=\nio")
        + "caf=E9\n--alt\nContent-Type: text/html\n\n<b>"
        + orders
        + "</b>\n--alt--\n"
    )
    attachment = base64.encodebytes(bytes(range(256)) * 4).decode()
    mixed = (
        head + 'Content-Type: multipart/mixed; boundary="mix"\n\n'
        "--mix\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n"
        + base64.encodebytes(orders.encode()).decode()
        + "--mix\nContent-Type: application/octet-stream; name=a.bin\n"
        "Content-Disposition: attachment; filename=a.bin\n"
        "Content-Transfer-Encoding: base64\n\n" + attachment + "--mix\n"
        "Content-Type: message/rfc822\n\n" + plain.replace("{n}", "inner") + "\n--mix--\n"
    )
    words = (
        "From: =?utf-8?q?Al=C3=AFce?= <alice@fuzz.example>\nTo: pbem@fuzz.localhost\n"
        "Subject: =?utf-8?b?W2cxXSBtZWluZSBDbGFpbXMg4pyT?= =?iso-8859-1?q?caf=E9?=\n"
        "Message-ID: <{n}@fuzz.example>\nIn-Reply-To: <start@fuzz.localhost>\n"
        "Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes\n\n"
        + orders
        + "> quoted old orders\n"
    )
    stranger = plain.replace("Alice <alice@fuzz.example>", "mallory@evil.example")
    return [m.encode() for m in (plain, html, alternative, mixed, words, stranger)]


def _pick_header(rng: random.Random, raw: bytes) -> tuple[int, int]:
    """The byte span of one header line of ``raw`` (or the start)."""
    head = raw.split(b"\n\n", 1)[0]
    starts = [0] + [i + 1 for i, c in enumerate(head) if c == 0x0A]
    start = rng.choice(starts)
    end = head.find(b"\n", start)
    return start, len(head) if end < 0 else end


def nest(rng: random.Random, raw: bytes) -> bytes:
    depth = rng.choice([10, 100, 1000, 3000])
    kind = rng.choice([b"multipart/mixed", b"message/rfc822", b"multipart/alternative"])
    head, _, body = raw.partition(b"\n\n")
    if kind == b"message/rfc822":
        inner = b"Content-Type: message/rfc822\n\n" * depth
        return head + b"\nContent-Type: message/rfc822\n\n" + inner + body
    opening = b"".join(
        b'--n%d\nContent-Type: %s; boundary="n%d"\n\n' % (i, kind, i + 1) for i in range(depth)
    )
    closing = b"".join(b"--n%d--\n" % i for i in reversed(range(depth + 1)))
    return (
        head
        + b'\nContent-Type: %s; boundary="n0"\n\n' % kind
        + opening
        + b"--n%d\n\n" % depth
        + body
        + closing
    )


def charset(rng: random.Random, raw: bytes) -> bytes:
    odd = rng.choice(
        [b"utf-7", b"x-unknown", b"utf-16", b"iso-2022-jp", b"", b"utf-8\x00", b'"', b"cp1252",
         b"utf-32-be", b"..", b"a" * 5000, b"unicode-escape", b"rot13", b"base64", b"idna"]
    )  # fmt: skip
    if b"charset=" in raw:
        return raw.replace(b"charset=utf-8", b"charset=" + odd).replace(
            b"charset=iso-8859-1", b"charset=" + odd
        )
    return raw.replace(b"\n\n", b"\nContent-Type: text/plain; charset=" + odd + b"\n\n", 1)


def broken_encoding(rng: random.Random, raw: bytes) -> bytes:
    cte = rng.choice([b"base64", b"quoted-printable", b"x-uuencode", b"8bit", b"binary", b"bogus"])
    head, _, body = raw.partition(b"\n\n")
    garbage = rng.choice([b"!!!===", b"=ZZ=\n=", b"begin 644 x\n`\nend\n", b"\xff\xfe" * 50, b"="])
    return head + b"\nContent-Transfer-Encoding: " + cte + b"\n\n" + body + garbage


def encoded_words(rng: random.Random, raw: bytes) -> bytes:
    word = rng.choice(
        [b"=?bogus?Q?=FF?=", b"=?utf-8?b?!!!?=", b"=?utf-8?q?=?=", b"=?utf-8*en?Q?a?=",
         b"=?utf-8?q?a?=" * rng.choice([10, 1000, 20000]), b"=?=?=?", b"=?utf-7?q?+AGE-?="]
    )  # fmt: skip
    name = rng.choice([b"Subject", b"From", b"To", b"Content-Type"])
    return raw.replace(b"\n\n", b"\n" + name + b": " + word + b"\n\n", 1)


def huge_header(rng: random.Random, raw: bytes) -> bytes:
    size = rng.choice([1000, 50_000, 300_000])
    name = rng.choice([b"Subject", b"X-Long", b"References", b"Message-ID", b"From"])
    folded = rng.random() < 0.5
    value = (b"a\n " * (size // 4)) if folded else b"a" * size
    return raw.replace(b"\n\n", b"\n" + name + b": " + value + b"\n\n", 1)


def duplicated_headers(rng: random.Random, raw: bytes) -> bytes:
    start, end = _pick_header(rng, raw)
    line = raw[start:end] + b"\n"
    times = rng.choice([2, 50, 1000, 20_000])
    return raw[:start] + line * times + raw[start:]


def bad_boundary(rng: random.Random, raw: bytes) -> bytes:
    for boundary in (b"alt", b"mix"):
        if b'boundary="' + boundary + b'"' in raw:
            new = rng.choice([b"", b'"', b"x" * 200, b"other", b"--", b"mix alt"])
            return raw.replace(b'boundary="' + boundary + b'"', b'boundary="' + new + b'"')
    return raw.replace(b"\n\n", b'\nContent-Type: multipart/mixed; boundary=""\n\n', 1)


def nuls(rng: random.Random, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 20)):
        data.insert(rng.randrange(len(data) + 1), 0)
    return bytes(data)


def flips(rng: random.Random, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 30)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def truncate(rng: random.Random, raw: bytes) -> bytes:
    return raw[: rng.randrange(len(raw))]


def line_ends(rng: random.Random, raw: bytes) -> bytes:
    end = rng.choice([b"\r\n", b"\r", b"\n\r", b"\r\r\n"])
    return raw.replace(b"\n", end)


def hostile_from(rng: random.Random, raw: bytes) -> bytes:
    depth = rng.choice([10, 500, 3000])
    value = rng.choice(
        [b"(" * depth + b")" * depth + b" alice@fuzz.example",
         b"\xe9 <alice@fuzz.example>", b"group: a@b, c@d;", b"<>", b"@",
         b", ".join(b"x%d@evil.example" % i for i in range(depth)),
         b'"' + b"\\" * depth + b'" <alice@fuzz.example>', b"alice@fuzz.example\x00"]
    )  # fmt: skip
    start, end = _pick_header(rng, raw)
    return raw.replace(b"From: ", b"From: " + value + b" ", 1) if start >= 0 else raw


def references(rng: random.Random, raw: bytes) -> bytes:
    count = rng.choice([10, 1000, 30_000])
    chain = b" ".join(b"<r%d@x>" % i for i in range(count))
    return raw.replace(
        b"\n\n", b"\nReferences: " + chain + b"\nIn-Reply-To: " + chain[:900] + b"\n\n", 1
    )


MUTATIONS: list[Mutation] = [
    nest, charset, broken_encoding, encoded_words, huge_header, duplicated_headers,
    bad_boundary, nuls, flips, truncate, line_ends, hostile_from, references,
]  # fmt: skip


def mutated_mails(seed: int, count: int, password: str) -> Iterator[tuple[str, bytes]]:
    """``count`` mutated mails: (the mutations applied, the bytes), the same for a seed."""
    rng = random.Random(seed)
    bases = _base_mails(password)
    for n in range(count):
        raw = rng.choice(bases).replace(b"{n}", b"fuzz-%d-%d" % (seed, n))
        applied = rng.sample(MUTATIONS, rng.randint(1, 3))
        for mutation in applied:
            raw = mutation(rng, raw)
        yield "+".join(m.__name__ for m in applied), raw


# --------------------------------------------------------------- the child
def fuzz(directory: Path, seed: int, count: int) -> dict[str, object]:
    """Every mutated mail through identify, decode and the mail handler, in process."""
    from dataclasses import replace

    from pbem.mail.decode import decode_mail
    from pbem.mail.errors import MailError
    from pbem.mail.identity import identify
    from pbem.mail.maildir import create_inbox
    from pbem.mail.transport import FetchedMail
    from pbem.service.clock import SystemClock
    from pbem.service.context import Context
    from pbem.service.intake.mailflow import process_mail
    from pbem.service.ops.demo import demo_config
    from pbem.service.play.games import PlayerSpec, create_game
    from pbem.store import init_db, session_scope

    logging.disable(logging.CRITICAL)  # the handler's own log lines are not the result
    config = demo_config(directory)
    config = replace(
        config, mail=replace(config.mail, game_address=GAME_ADDRESS, reply_budget_per_hour=20)
    )
    create_inbox(config.mail.maildir_root, GAME_ADDRESS)
    engine = init_db(config.database_url)
    with session_scope(engine) as session:
        created = create_game(
            session,
            "g1",
            [PlayerSpec(name, f"{name}@fuzz.example") for name in PLAYERS],
            overrides={"claim": "draft"},
            gm_address=config.mail.gm_address,
        )
        password = created.passwords["alice"]
    ctx = Context(config, SystemClock(), config.mail.own_addresses)
    failures: list[dict[str, object]] = []
    outcomes: Counter[str] = Counter()
    slowest: list[tuple[float, int, str]] = []  # CPU seconds, index, mutations
    for n, (applied, raw) in enumerate(mutated_mails(seed, count, password)):
        where = {"index": n, "mutations": applied, "bytes": len(raw)}
        started = time.process_time()
        try:
            identify(raw)
        except Exception as exc:  # noqa: BLE001 - the finding
            failures.append({**where, "step": "identify", "error": _error(exc)})
        try:
            decode_mail(raw, max_bytes=config.mail.max_mail_bytes)
        except MailError:
            pass  # refused, as it may be
        except Exception as exc:  # noqa: BLE001 - the finding
            failures.append({**where, "step": "decode_mail", "error": _error(exc)})
        try:
            outcome = process_mail(engine, ctx, FetchedMail(f"fuzz-{n}", raw, "INBOX", None))
            outcomes[str(outcome.status)] += 1
        except Exception as exc:  # noqa: BLE001 - the finding
            failures.append({**where, "step": "process_mail", "error": _error(exc)})
            outcomes["raised"] += 1
        slowest = sorted([*slowest, (time.process_time() - started, n, applied)])[-5:]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "failures": failures,
        "outcomes": dict(outcomes),
        "cpu": usage.ru_utime + usage.ru_stime,
        "max_rss_kb": usage.ru_maxrss,
        "slowest": slowest[::-1],
    }


def _error(exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:]
    at = f" at {Path(last[0].filename).name}:{last[0].lineno}" if last else ""
    return f"{type(exc).__name__}: {str(exc)[:200]}{at}"


def main(argv: list[str]) -> None:
    directory, seed, count = Path(argv[0]), int(argv[1]), int(argv[2])
    print(json.dumps(fuzz(directory, seed, count)))


# ---------------------------------------------------------------- the tests
def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))


def test_the_generator_is_seeded_and_mutates() -> None:
    first = list(mutated_mails(SEED, 40, "pw"))
    assert first == list(mutated_mails(SEED, 40, "pw"))
    assert first != list(mutated_mails(SEED + 1, 40, "pw"))
    names = {name for applied, _ in first for name in applied.split("+")}
    assert len(names) >= 10  # most operators show up in a few dozen mails
    assert all(len(raw) < 2_000_000 for _, raw in first)


@pytest.mark.slow  # about 45 s of CPU in its child
def test_no_mutated_mail_escapes_the_mail_handler(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update({"PYTHONPATH": str(REPO), "PBEM_NATIVE": os.environ.get("PBEM_NATIVE", "0")})
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "tests.service.test_hostile_fuzz"]
        + [str(tmp_path), str(SEED), str(COUNT)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=CPU_SECONDS * 4,
        preexec_fn=_limits,
    )
    assert done.returncode == 0, (
        f"the fuzzing child died ({done.returncode}):\n{done.stderr[-3000:]}"
    )
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    failures = summary["failures"]
    figures = f"{summary['cpu']:.1f} s CPU, slowest mails {summary['slowest']}"
    assert failures == [], f"{len(failures)} failures (seed {SEED}, {figures}):\n" + "\n".join(
        json.dumps(f) for f in failures[:40]
    )
    outcomes = summary["outcomes"]
    assert sum(outcomes.values()) == COUNT
    assert set(outcomes) <= {"processed", "rejected", "held", "duplicate"}, outcomes


if __name__ == "__main__":
    main(sys.argv[1:])
