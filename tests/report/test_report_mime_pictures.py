"""A turn's picture part is written once for every mail that carries it, and the
writer's boundaries are the generator's: same bytes as the plain path."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email import policy
from email.generator import BytesGenerator
from email.parser import BytesParser

import pytest

from pbem.report import wire
from pbem.report.mime import RenderedMail, to_mime
from pbem.report.wire import draw_boundary, mail_bytes

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # 10 KiB: 140 lines of base64
DATE = datetime(2025, 1, 2, 3, 4, tzinfo=UTC)


def rendered(text: str, images: dict[str, bytes]) -> RenderedMail:
    html = "<p>" + "x" * 300 + "</p>\n<p>é</p>"  # a long line: quoted-printable
    return RenderedMail("Turn 3", text, html, images, "a@example.org", "turn_report", "g1")


def both(r: RenderedMail, seed: int) -> tuple[bytes, bytes]:
    """(the writer's bytes, bytes(to_mime(...))) with the same boundaries drawn."""
    kw = dict(sender="pbem@example.org", recipient="a@example.org", message_id="<m1@x>", date=DATE)
    random.seed(seed)
    ours = mail_bytes(r, **kw)  # type: ignore[arg-type]
    random.seed(seed)
    return ours, bytes(to_mime(r, **kw))  # type: ignore[arg-type]


def test_the_pictures_bytes_are_the_plain_paths() -> None:
    r = rendered("to a\nline two\n", {"map.g1.t5@pbem": PNG, "map.g1.t5b@pbem": PNG[:999]})
    for seed in range(2):  # once writing the picture parts, once reusing them
        ours, theirs = both(r, seed)
        assert ours == theirs
        assert ours.count(b"Content-Type: image/png") == 2
    parsed = BytesParser(policy=policy.default).parsebytes(ours)
    images = [p for p in parsed.walk() if p.get_content_type() == "image/png"]
    assert [p.get_content() for p in images] == [PNG, PNG[:999]]


def test_the_kept_pictures_are_bounded() -> None:
    for turn in range(wire.KEPT_PICTURES + 5):
        mail_bytes(
            rendered("t\n", {f"map.g2.t{turn}@pbem": PNG}),
            sender="pbem@x",
            recipient="a@x",
            message_id="<m@x>",
        )
    assert len(wire._pictures) == wire.KEPT_PICTURES


@pytest.mark.parametrize(
    "text",
    [
        b"no such line\n",
        b"x --BOUNDARY y\n",  # not a line of its own: kept
        b"x\n--BOUNDARY\ny",  # a line of the mail: ".0"
        b"x\n--BOUNDARY--\n--BOUNDARY.0\ny",  # and ".0" too: ".1"
    ],
)
def test_a_boundary_is_drawn_as_the_generator_draws_it(
    text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(random, "randrange", lambda _n: 7)
    boundary = "=" * 15 + f"{7:019d}" + "=="
    text = text.replace(b"BOUNDARY", boundary.encode())
    standard = BytesGenerator._make_boundary(text)  # type: ignore[attr-defined]
    assert draw_boundary(text) == standard
    assert standard.startswith(boundary)
