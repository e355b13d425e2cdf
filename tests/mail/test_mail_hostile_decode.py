"""Hostile mails: identify and decode_mail stay linear, bounded and exact (issue 27).

Each attack is built here, in memory. The heavy ones run in a child Python
under RLIMIT_AS 1 GiB and RLIMIT_CPU 30 s (``test_heavy_attacks_finish_within_limits``):
before issue 27 each of them needed gigabytes or minutes; the child
finishing normally is the proof that every step is bounded, without a timed
assertion.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pbem.mail import bounds, sandbox
from pbem.mail.decode import (
    Attachment,
    DecodedMail,
    decode_in_process,
    decode_mail,
    html_to_text,
    strip_reply,
)
from pbem.mail.errors import (
    MailError,
    MailHeadersTooLarge,
    MailTooComplex,
    MailTooCostly,
    MailTooDeep,
    MailTooLarge,
)
from pbem.mail.identity import identify
from pbem.mail.sandbox import IN_PROCESS, DecodeBudget
from pbem.mail.settings import MailSettings

ROOT = Path(__file__).resolve().parents[2]
HEAD = "From: Alice <alice@x.example>\nTo: game@pbem.example\nMessage-ID: <m1@x.example>\n"


def mail(headers: str, body: str = "PLACE 3 Alaska\n", *, head: str = HEAD) -> bytes:
    return (head + headers + "\n" + body).encode("utf-8", "surrogateescape")


# --- the attacks ----------------------------------------------------------------


def nested_parentheses_from() -> bytes:
    return mail(
        "Subject: [world-1] x\n", head="From: " + "(" * 5000 + ")" * 5000 + " <a@x.example>\n"
    )


def blockquote_html() -> bytes:
    html = "<blockquote>" * 40_000 + "<br>" * 120_000  # 960 KB
    return mail("Subject: [world-1] x\nContent-Type: text/html\n", html)


def encoded_word_subject(words: int = 70_000) -> bytes:
    return mail("Subject: " + "=?utf-8?q?a?= " * words + "\n")


def continuation_lines(lines: int = 1_000_000) -> bytes:
    return mail("X-Long: a\n" + " b\n" * lines + "Subject: [world-1] x\n")


def tag_subject(tags: int = 340_000) -> bytes:
    return mail("Subject: " + "[x]" * tags + "\n")


def wrote_lines(lines: int = 110_000) -> bytes:
    return mail("Subject: [world-1] x\n", "a wrote:\n" * lines)


def nested_multiparts(depth: int = 1000) -> bytes:
    head = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(depth)
    )
    return mail("Subject: [world-1] x\nMIME-Version: 1.0\n" + head + "\nPLACE 3 Alaska\n", "")


def many_parts(parts: int = 5000, kind: str = "text/plain") -> bytes:
    first = "--b\nContent-Type: text/plain\n\nPLACE 3 Alaska\n"
    body = first + "".join(f"--b\nContent-Type: {kind}\n\npart {i}\n" for i in range(parts))
    body += "--b--\n"
    return mail(
        'Subject: [world-1] x\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n',
        body,
    )


def nul_everywhere() -> bytes:
    return (
        b"From: Ali\x00ce <alice@x.example>\nTo: game@pbem.example\n"
        b"Message-ID: <m\x001@x.example>\nSubject: [world-1]\x00 orders\x01\n\n"
        b"PLACE 3\x00 Alaska\nATTACK\x07 Alaska -> Kamchatka\n"
    )


def assert_clean(value: object) -> None:
    """No C0 control (but TAB/LF in text) and no surrogate in any string of a result."""
    if isinstance(value, str):
        assert not any(ord(c) < 32 and c not in "\t\n" or 0xD800 <= ord(c) <= 0xDFFF for c in value)
    elif isinstance(value, list | tuple):
        for item in value:
            assert_clean(item)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            assert_clean(getattr(value, name))


def decode_quietly(raw: bytes, *, max_bytes: int = 1_048_576) -> object:
    """decode_mail in this process: the DecodedMail, or the MailError it raised."""
    try:
        return decode_mail(raw, max_bytes=max_bytes, budget=IN_PROCESS)
    except MailError as exc:
        return exc


# --- identify: never raises, bounded, clean ----------------------------------------


def test_identify_reads_from_despite_nested_comments() -> None:
    raw = mail("Subject: s\n", head="From: alice@x.example " + "(" * 5000 + ")" * 5000 + "\n")
    assert identify(raw).sender == "alice@x.example"  # the plain scan, no RecursionError
    assert identify(nested_parentheses_from()).sender == ""  # the address is past the cut


def test_identify_scrubs_nul_and_controls() -> None:
    found = identify(nul_everywhere())
    assert found.message_id == "<m 1@x.example>"
    assert found.sender == "alice@x.example"
    assert found.subject == "[world-1]  orders "
    assert_clean(found)


def test_identify_bounds_every_value() -> None:
    raw = mail(
        "Subject: " + "é" * 5000 + "\n",
        head="From: " + "a" * 1000 + "@x.example\nMessage-ID: <" + "m" * 5000 + "@x>\n",
    )
    found = identify(raw)
    assert len(found.message_id) == bounds.MESSAGE_ID_CHARS
    assert found.sender == "a" * bounds.ADDRESS_CHARS
    assert found.subject == "é" * bounds.SUBJECT_CHARS
    long_address = mail("", head="From: " + "a" * 400 + "@x.example\n")
    assert len(identify(long_address).sender) == bounds.ADDRESS_CHARS


def test_identify_of_huge_headers_keeps_the_first_values() -> None:
    found = identify(continuation_lines())
    assert found.sender == "alice@x.example"
    assert found.message_id == "<m1@x.example>"
    assert found.subject == ""  # after 3 MB of header: not read
    # 4,000 characters are decoded: 285 whole encoded words
    assert identify(encoded_word_subject()).subject.startswith("a" * 285 + " =?utf-8?")
    assert identify(tag_subject()).subject == "[x]" * 166 + "[x"


def test_content_hash_is_unchanged_for_ordinary_mail() -> None:
    # the same bytes give the same hash as before issue 27 (rows depend on it)
    raw = b"Received: by x\r\nFrom: a@x.example\r\nSubject: s\r\n  folded \r\n\r\nbody\r\n"
    assert identify(raw).content_hash == (
        "ebb4c2427a895ae3a23d68f919f112623e5497a0a53a2471782fab38c7f9d02e"
    )


# --- decode_mail: limits before parsing, exact errors ---------------------------------


def test_too_many_continuation_lines_are_refused_before_parsing() -> None:
    raw = continuation_lines()
    assert isinstance(decode_quietly(raw), MailTooLarge)  # the size first
    error = decode_quietly(raw, max_bytes=4 << 20)
    assert isinstance(error, MailHeadersTooLarge)
    assert "header lines (From, To, Subject, ...) take more than 262,144 bytes" in str(error)


def test_one_long_header_is_refused() -> None:
    error = decode_quietly(encoded_word_subject())
    assert isinstance(error, MailHeadersTooLarge)
    error = decode_quietly(mail("Subject: " + "=?utf-8?q?a?= " * 5000 + "\n"))
    assert isinstance(error, MailHeadersTooLarge)
    assert "its Subject header is longer than 65,536 bytes" in str(error)


def test_too_many_header_fields_are_refused() -> None:
    error = decode_quietly(mail("X-A: b\n" * 1001))
    assert isinstance(error, MailHeadersTooLarge)
    assert "more than 1,000 header lines" in str(error)
    assert not isinstance(decode_quietly(mail("X-A: b\n" * 990)), MailError)


def test_tag_subject_is_refused_and_a_smaller_one_cut() -> None:
    assert isinstance(decode_quietly(tag_subject()), MailHeadersTooLarge)
    decoded = decode_quietly(tag_subject(20_000))  # 60 KB: within the header limit
    assert isinstance(decoded, DecodedMail)
    assert decoded.subject == "[x]" * 166 + "[x"


def test_encoded_words_within_the_limit_are_cut_before_decoding() -> None:
    decoded = decode_quietly(encoded_word_subject(4000))  # 56 KB of encoded words
    assert isinstance(decoded, DecodedMail)
    assert decoded.subject.startswith("a" * 285 + " =?utf-8?")
    assert len(decoded.subject) < bounds.SUBJECT_CHARS


def test_nested_comments_in_from_give_no_sender() -> None:
    decoded = decode_quietly(nested_parentheses_from())
    assert isinstance(decoded, DecodedMail)
    assert decoded.sender == "" and decoded.auto_submitted == "no sender address (or more than one)"
    decoded = decode_quietly(
        mail("", head="From: alice@x.example " + "(" * 5000 + ")" * 5000 + "\n")
    )
    assert isinstance(decoded, DecodedMail) and decoded.sender == "alice@x.example"


def test_nul_bytes_are_scrubbed_from_every_field() -> None:
    decoded = decode_quietly(nul_everywhere())
    assert isinstance(decoded, DecodedMail)
    assert decoded.message_id == identify(nul_everywhere()).message_id
    assert decoded.sender == "alice@x.example"
    assert decoded.sender_name == "Ali ce"
    assert decoded.subject == "[world-1] orders"
    assert decoded.text == "PLACE 3 Alaska\nATTACK Alaska -> Kamchatka"
    assert_clean(decoded)


def test_undecodable_bytes_give_no_surrogates() -> None:
    raw = b"From: \xff\xfe <alice@x.example>\nSubject: \xe9t\xe9\nMessage-ID: <\xff@x>\n\nhi\n"
    decoded = decode_quietly(raw)
    assert isinstance(decoded, DecodedMail)
    assert_clean(decoded)
    assert_clean(identify(raw))


def test_nested_blockquotes_give_bounded_text() -> None:
    html = "<blockquote>" * 40_000 + "x<br>" * 20_000
    text = html_to_text(html)
    assert set(text.split("\n")) == {">" * bounds.MAX_QUOTE_DEPTH + " x"}
    assert bounds.MAX_TEXT_CHARS <= len(text) + 1 < bounds.MAX_TEXT_CHARS + 23
    assert html_to_text("x<br>" * 30_000) == "\n".join(["x"] * bounds.MAX_TEXT_LINES)
    # the whole attack (960 KB): test_heavy_attacks_finish_within_limits


def test_html_parser_traps_are_text() -> None:
    assert html_to_text("<p>a</p>" + "<a" * 50_000) == "a\n" + "<a" * 50_000
    assert html_to_text("<!--" * 10 + "<p>b") == "<!--" * 10 + "\nb"
    assert html_to_text("<script>x" + "</p>" * 10) == ""
    assert html_to_text("a<style>p{}</STYLE >b<br/>c") == "ab\nc"


def test_wrote_lines_are_linear_and_bounded() -> None:
    # each "a wrote:" is followed by another: text, but the last (before a quote)
    text = strip_reply("a wrote:\n" * 30_000 + "> quoted\n")
    assert text == "\n".join(["a wrote:"] * 29_999)
    decoded = decode_quietly(wrote_lines(25_000))
    assert isinstance(decoded, DecodedMail)
    assert decoded.text == "\n".join(["a wrote:"] * bounds.MAX_TEXT_LINES)


def test_nested_multiparts_and_many_parts_are_refused() -> None:
    assert isinstance(decode_quietly(nested_multiparts()), MailTooDeep)  # before parsing
    assert isinstance(decode_quietly(nested_multiparts(40)), MailTooDeep)  # after
    error = decode_quietly(many_parts())
    assert isinstance(error, MailTooComplex)
    assert "more than 200 parts" in str(error)
    decoded = decode_quietly(many_parts(150, "application/octet-stream"))
    assert isinstance(decoded, DecodedMail)
    assert decoded.text == "PLACE 3 Alaska"
    assert len(decoded.attachments) == bounds.MAX_ATTACHMENTS


# --- the heavy attacks, proven bounded in a child under resource limits -------------

HEAVY = [
    "nested_parentheses_from",
    "blockquote_html",
    "encoded_word_subject",
    "continuation_lines",
    "tag_subject",
    "wrote_lines",
    "nested_multiparts",
    "many_parts",
    "nul_everywhere",
]


def _heavy_main() -> None:
    """In the child: every heavy attack through identify and decode (in process)."""
    gib = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (gib, gib))
    resource.setrlimit(resource.RLIMIT_CPU, (30, 31))
    outcomes = {}
    for name in HEAVY:
        raw = globals()[name]()
        found = identify(raw)
        decoded = decode_quietly(raw, max_bytes=4 << 20)
        text = f"{decoded.source}:{len(decoded.text)}" if isinstance(decoded, DecodedMail) else ""
        outcomes[name] = [found.sender, type(decoded).__name__, text]
    print(json.dumps(outcomes))


def test_heavy_attacks_finish_within_limits() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PBEM_NATIVE="0")
    code = "import tests.mail.test_mail_hostile_decode as t; t._heavy_main()"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = json.loads(done.stdout)
    assert outcomes == {
        "nested_parentheses_from": ["", "DecodedMail", "plain:14"],
        "blockquote_html": ["alice@x.example", "DecodedMail", "html:0"],  # all quoted
        "encoded_word_subject": ["alice@x.example", "MailHeadersTooLarge", ""],
        "continuation_lines": ["alice@x.example", "MailHeadersTooLarge", ""],
        "tag_subject": ["alice@x.example", "MailHeadersTooLarge", ""],
        "wrote_lines": ["alice@x.example", "DecodedMail", f"plain:{20_000 * 9 - 1}"],
        "nested_multiparts": ["alice@x.example", "MailTooDeep", ""],
        "many_parts": ["alice@x.example", "MailTooComplex", ""],
        "nul_everywhere": ["alice@x.example", "DecodedMail", "plain:41"],
    }


# --- the sandbox: a per-mail budget -----------------------------------------------------

TINY = DecodeBudget(child_above_bytes=0, memory_mib=64, cpu_seconds=1, timeout_seconds=30)


def _allocate(raw: bytes) -> bytes:
    return bytes(256 * 1024 * 1024) + raw


def _spin(raw: bytes) -> bytes:
    while True:
        raw = raw[1:] + raw[:1]


def _sleep(raw: bytes) -> bytes:
    time.sleep(60)
    return raw


def _crash(raw: bytes) -> bytes:
    os.kill(os.getpid(), signal.SIGSEGV)
    return raw


def _refuse(raw: bytes) -> bytes:
    raise MailTooDeep(7)


@pytest.mark.parametrize(
    ("work", "budget", "needs"),
    [
        (_allocate, TINY, "64 MiB of memory"),
        (_spin, TINY, "1 second of processor time"),
        (_sleep, DecodeBudget(timeout_seconds=0.5), "0.5 seconds"),
        (_crash, TINY, "what a reader may use (it stopped on signal 11)"),
    ],
    ids=["memory", "cpu", "wall-clock", "crash"],
)
def test_a_child_past_its_budget_gives_mail_too_costly(
    work: Callable[[bytes], bytes], budget: DecodeBudget, needs: str
) -> None:
    with pytest.raises(MailTooCostly) as caught:
        sandbox.run(work, b"mail", budget)
    assert caught.value.needs == needs
    assert f"This mail needs more than {needs} to read" in str(caught.value)
    assert sandbox.run(bytes, b"next mail", TINY) == b"next mail"  # the parent goes on


def test_a_mail_error_comes_back_from_the_child_whole() -> None:
    with pytest.raises(MailTooDeep) as caught:
        sandbox.run(_refuse, b"mail", TINY)
    assert caught.value.limit == 7
    assert "more than 7 parts inside one another" in caught.value.message


def test_a_big_mail_decodes_in_a_child_exactly_as_in_process() -> None:
    headers = (
        "Subject: [world-1] orders\nDate: Tue, 1 Dec 2026 10:00:00 +0100\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="b"\n'
    )
    body = (
        "--b\nContent-Type: text/plain\n\nPLACE 3 Alaska\n"
        + "> quoted line\n" * 5000
        + '--b\nContent-Type: application/pdf; name="map.pdf"\n\n'
        + "QUFB" * 5000
        + "\n--b--\n"
    )
    raw = mail(headers, body)
    assert len(raw) > DecodeBudget().child_above_bytes
    decoded = decode_mail(raw)
    assert decoded == decode_in_process(raw)
    assert decoded.text == "PLACE 3 Alaska"
    assert decoded.date is not None and decoded.date.isoformat() == "2026-12-01T10:00:00+01:00"
    assert decoded.attachments == [Attachment("map.pdf", "application/pdf")]


def test_decode_mail_past_its_budget_gives_mail_too_costly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    big = mail("Subject: s\n", "PLACE 3 Alaska\n" * 5000)
    budget = DecodeBudget(child_above_bytes=1024, memory_mib=64)
    with monkeypatch.context() as patched:
        patched.setattr("pbem.mail.decode.decode_in_process", _allocate)
        with pytest.raises(MailTooCostly) as caught:
            decode_mail(big, budget=budget)
    assert caught.value.needs == "64 MiB of memory"
    assert decode_mail(big, budget=budget).text.startswith("PLACE 3 Alaska\n")


# --- the budget in [mail] ------------------------------------------------------------


def test_the_budget_is_read_from_the_mail_table(tmp_path: Path) -> None:
    from pbem.config import ConfigError, load_config

    file = tmp_path / "pbem.toml"
    file.write_text(
        "[mail]\ndecode_child_above_bytes = 0\ndecode_memory_mib = 256\n"
        "decode_cpu_seconds = 2\ndecode_timeout_seconds = 4.5\n"
    )
    assert load_config(file, env={}).mail.decode_budget() == DecodeBudget(
        child_above_bytes=0, memory_mib=256, cpu_seconds=2.0, timeout_seconds=4.5
    )
    assert MailSettings().decode_budget() == DecodeBudget()
    file.write_text("[mail]\ndecode_cpu_seconds = 20\n")
    with pytest.raises(ConfigError, match="decode_timeout_seconds"):
        load_config(file, env={})


def test_bench_decode_runs() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PBEM_NATIVE="0")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench" / "decode.py"), "--runs", "3"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "decode, 200 KB, in a child" in done.stdout


def test_the_child_runs_no_atexit_handler_and_needs_no_lock_of_another_thread(
    tmp_path: Path,
) -> None:
    import atexit
    import threading

    marker = tmp_path / "atexit-ran"
    held = threading.Event()
    release = threading.Event()
    pool = threading.Lock()  # say, a connection pool's: the fork copies it held

    def busy_thread() -> None:  # any thread of the process, busy while the mail is read
        with pool:
            held.set()
            release.wait(30)

    def leave_a_mark() -> None:
        marker.write_text("ran")

    atexit.register(leave_a_mark)
    thread = threading.Thread(target=busy_thread)
    thread.start()
    try:
        held.wait(30)
        raw = mail("Subject: s\n", "PLACE 3 Alaska\n" + "> q\n" * 20_000)
        assert decode_mail(raw, budget=TINY).text == "PLACE 3 Alaska"
    finally:
        release.set()
        thread.join()
        atexit.unregister(leave_a_mark)
    assert not marker.exists()
