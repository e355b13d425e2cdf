"""A mail is prepared for the wire once: the bytes and the SIZE are exactly what
aiosmtplib's own ``sendmail`` would send (``DataPath.PLAIN``, which a real SMTP
server, aiosmtpd on 127.0.0.1, receives byte for byte as the prepared path
sends it), with or without SIZE."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiosmtplib.protocol import PERIOD_REGEX, normalize_message_line_endings
from hypothesis import given
from hypothesis import strategies as st

from pbem.mail.smtp import DataPath, SmtpSender, prepare
from pbem.mail.transport import OutgoingMail, SendResult
from pbem.testing.mailservers import HOST, free_port


def aiosmtplib_wire(raw: bytes) -> tuple[bytes, int]:
    """What aiosmtplib 5.1.3 sends after DATA, and the SIZE it announces."""
    normalized = normalize_message_line_endings(raw)
    return PERIOD_REGEX.sub(b"..", normalized) + b".\r\n", len(normalized)


ODD = [
    b"",
    b"x",
    b".",
    b"..",
    b".\r\n",
    b"\r",
    b"\n",
    b"\r\n",
    b"\r\r\n",
    b"\n\r",
    b"\r\n\r",
    b"a\rb\nc\r\nd",
    b"no final newline",
    b".leading dot\r\n..two\r\n.\r\nend",
    b"line\n.dot after LF\r.dot after CR\r\n.dot after CRLF",
    b"Subject: x\r\n\r\n.\r\n",
    b"\x00\xff\xe9 8-bit \r\n.",
]


@pytest.mark.parametrize("raw", ODD)
def test_the_wire_form_is_what_aiosmtplib_would_send(raw: bytes) -> None:
    prepared = prepare(raw)
    assert (prepared.data, prepared.size) == aiosmtplib_wire(raw)


def test_the_wire_form_of_odd_inputs_spelled_out() -> None:
    assert prepare(b"a\rb\nc\r\nd").data == b"a\r\nb\r\nc\r\nd\r\n.\r\n"
    assert prepare(b".x\n.\r..y").data == b"..x\r\n..\r\n...y\r\n.\r\n"
    assert prepare(b"\r\r\n").data == b"\r\n\r\n.\r\n"
    assert prepare(b"").data == b"\r\n.\r\n"
    assert prepare(b".x\n.\r..y").size == len(b".x\r\n.\r\n..y\r\n") == 12


@given(st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b".", b"..", b"a", b"\xe9"]), max_size=40))
def test_any_mix_of_line_ends_and_dots_matches_aiosmtplib(parts: list[bytes]) -> None:
    raw = b"".join(parts)
    prepared = prepare(raw)
    assert (prepared.data, prepared.size) == aiosmtplib_wire(raw)


# --- against a real server ----------------------------------------------------------


@dataclass
class Taken:
    mails: list[tuple[list[str], bytes]] = field(default_factory=list)  # (MAIL options, content)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.mails.append((list(envelope.mail_options), envelope.original_content))
        return "250 OK"


def server(size_limit: int | None) -> Iterator[tuple[Taken, SmtpSender]]:
    from aiosmtpd.controller import Controller

    taken = Taken()
    port = free_port()
    controller = Controller(
        taken, hostname=HOST, port=port, ready_timeout=10.0, data_size_limit=size_limit
    )
    controller.start()
    try:
        yield taken, SmtpSender(HOST, port, tls="none", timeout=10.0)
    finally:
        controller.stop()


@pytest.fixture
def sizing() -> Iterator[tuple[Taken, SmtpSender]]:
    yield from server(1_000_000)


@pytest.fixture
def no_size() -> Iterator[tuple[Taken, SmtpSender]]:
    yield from server(None)


def mails(raws: list[bytes]) -> list[OutgoingMail]:
    return [
        OutgoingMail(f"k{i}", "pbem@pbem.test", ("p@pbem.test",), r) for i, r in enumerate(raws)
    ]


RAWS = [
    b"Subject: a\n\n.leading dot\n..two\nlone\rCR\n",
    b"Subject: b\r\n\r\n.\r\nno final newline",
    b"Subject: c\r\n\r\n" + b"x" * 70 + b"\r\n" + b".y\r\n" * 1000,
]


def test_a_server_that_offers_size_gets_the_size_and_the_mail_as_it_was(
    sizing: tuple[Taken, SmtpSender],
) -> None:
    taken, sender = sizing
    assert sender.send(mails(RAWS)) == [SendResult(f"k{i}", ok=True) for i in range(3)]
    normalized = [normalize_message_line_endings(r) for r in RAWS]
    assert [content for _, content in taken.mails] == normalized
    assert [options for options, _ in taken.mails] == [[f"SIZE={len(n)}"] for n in normalized]
    assert [len(n) for n in normalized] == [45, 35, 4086]


def test_a_server_without_size_gets_no_size_option(no_size: tuple[Taken, SmtpSender]) -> None:
    taken, sender = no_size
    assert sender.send(mails(RAWS[:2])) == [SendResult("k0", ok=True), SendResult("k1", ok=True)]
    assert [options for options, _ in taken.mails] == [[], []]
    assert [content for _, content in taken.mails] == [
        normalize_message_line_endings(r) for r in RAWS[:2]
    ]


def test_a_mail_over_the_announced_limit_is_refused_for_good(
    sizing: tuple[Taken, SmtpSender],
) -> None:
    taken, sender = sizing
    big = b"Subject: big\r\n\r\n" + b"y" * 1_000_000
    ok = b"Subject: ok\r\n\r\nfine\r\n"
    results = sender.send(mails([big, ok]))
    assert [(r.ok, r.permanent) for r in results] == [(False, True), (True, False)]
    assert results[0].error.startswith("552 ")
    assert [content for _, content in taken.mails] == [ok]  # the connection went on


def test_a_non_ascii_address_fails_for_good_before_anything_is_sent(
    sizing: tuple[Taken, SmtpSender],
) -> None:
    taken, sender = sizing
    bad = OutgoingMail("bad", "pbem@pbem.test", ("josé@pbem.test",), b"Subject: x\r\n\r\nx\r\n")
    results = sender.send([bad, *mails([b"Subject: after\r\n\r\nx\r\n"])])
    assert results == [
        SendResult(
            "bad",
            ok=False,
            permanent=True,
            error="address 'josé@pbem.test' is not ASCII (pbem does not use SMTPUTF8)",
        ),
        SendResult("k0", ok=True),
    ]
    assert [content for _, content in taken.mails] == [b"Subject: after\r\n\r\nx\r\n"]


@pytest.mark.parametrize("limit", [1_000_000, None])
def test_the_plain_path_delivers_what_the_prepared_path_delivers(limit: int | None) -> None:
    big = b"Subject: big\r\n\r\n" + b"y" * 1_000_000  # over the limit when there is one
    raws = [*RAWS, *ODD[1:], big, b"Subject: after\r\n\r\nx\r\n"]
    seen = []
    for path in DataPath:
        for taken, sender in server(limit):
            sender.data_path = path
            results = sender.send(mails(raws))
            seen.append(([(r.ok, r.permanent, r.error[:4]) for r in results], taken.mails))
    assert seen[0] == seen[1]
    assert seen[0][0][-1] == (True, False, "")  # the connection went on
    assert len(seen[0][1]) >= len(raws) - 2
