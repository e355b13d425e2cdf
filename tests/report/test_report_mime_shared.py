"""The picture's MIME part is built once and shared, and changes no byte (issue 16)."""

from __future__ import annotations

from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from pbem.report import mime
from pbem.report.mime import RenderedMail, to_mime

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # 10 KiB: 140 lines of base64


def rendered(text: str, images: dict[str, bytes]) -> RenderedMail:
    html = "<p>" + "x" * 300 + "</p>\n<p>é</p>"  # a long line: quoted-printable
    return RenderedMail("Turn 3", text, html, images, "a@example.org", "turn_report", "g1")


def build(r: RenderedMail, to: str) -> EmailMessage:
    return to_mime(
        r,
        sender="pbem@example.org",
        recipient=to,
        message_id="<m1@example.org>",
        date=datetime(2025, 1, 2, 3, 4, tzinfo=UTC),
    )


def test_two_mails_with_one_picture_share_its_part() -> None:
    first = build(rendered("to a\n", {"map.g1.t3@pbem": PNG}), "a@example.org")
    second = build(rendered("to b\n", {"map.g1.t3@pbem": PNG}), "b@example.org")
    other = build(rendered("to a\n", {"map.g1.t4@pbem": PNG}), "a@example.org")
    picture = [m.get_payload()[1].get_payload()[1] for m in (first, second, other)]
    assert picture[0] is picture[1]
    assert picture[2] is not picture[0]
    assert picture[0]["Content-ID"] == "<map.g1.t3@pbem>"
    assert picture[2]["Content-ID"] == "<map.g1.t4@pbem>"


def test_bytes_are_the_standard_generators_bytes() -> None:
    r = rendered("to a\nline two\n", {"map.g1.t5@pbem": PNG, "map.g1.t5b@pbem": PNG[:999]})
    for _ in range(2):  # once building the shared parts' bytes, once reusing them
        msg = build(r, "a@example.org")
        ours = bytes(msg)  # sets the boundaries; the standard generator reuses them
        assert ours == EmailMessage.as_bytes(msg)
        assert ours.count(b"Content-Type: image/png") == 2
        assert msg.as_bytes(policy=policy.SMTP) == EmailMessage.as_bytes(msg, policy=policy.SMTP)
        assert b"\r\n" in msg.as_bytes(policy=policy.SMTP)
    parsed = BytesParser(policy=policy.default).parsebytes(ours)
    images = [p for p in parsed.walk() if p.get_content_type() == "image/png"]
    assert [p.get_content() for p in images] == [PNG, PNG[:999]]


def test_an_attachment_to_one_mail_leaves_the_other_alone() -> None:
    r = rendered("to a\n", {"map.g1.t6@pbem": PNG})
    plain = build(r, "a@example.org")
    before = bytes(plain)
    with_record = build(r, "b@example.org")
    with_record.add_attachment("the record", subtype="plain", filename="g1.pgn")
    assert b"g1.pgn" in bytes(with_record)
    assert bytes(plain) == before
    assert bytes(plain).count(b"Content-Type: image/png") == 1


def test_the_shared_parts_are_bounded() -> None:
    for turn in range(mime.SHARED_PARTS + 5):
        build(rendered("t\n", {f"map.g2.t{turn}@pbem": PNG}), "a@example.org")
    assert len(mime._parts) == mime.SHARED_PARTS
    assert len(mime._written) == mime.SHARED_PARTS


def test_a_boundary_found_in_the_mail_is_changed_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    import email.generator

    monkeypatch.setattr(email.generator.random, "randrange", lambda _n: 7)
    boundary = "=" * 15 + f"{7:019d}" + "=="
    generator = mime._SharedPartsGenerator
    assert generator._make_boundary(b"no such line\n") == boundary
    assert generator._make_boundary(b"x\n--" + boundary.encode() + b"\ny") == boundary + ".0"
    assert generator._make_boundary(b"x --" + boundary.encode() + b" y") == boundary
