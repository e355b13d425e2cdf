"""The map picture: size, known pixels, and maps that have no positions."""

from __future__ import annotations

import email
import io
from dataclasses import replace
from email import policy

import pytest
from PIL import Image

from pbem.maps import builtin_map
from pbem.report import map_picture, render_status, render_turn_report, to_mime
from pbem.report.context import Status
from pbem.report.picture import picture_size
from pbem.report.picture.colours import (
    COLOURS,
    LAND_TINTS,
    LEGEND_BG,
    RING,
    SEA,
    Side,
    colour_rgb,
)
from pbem.report.templating import NO_PICTURE
from pbem.testing.sample import play_sample

ALASKA, KAMCHATKA, JAPAN = 0, 33, 32


def sides() -> list[Side]:
    return [
        Side("alice", colour_rgb("red"), 41, 80),
        Side("bob", colour_rgb("blue"), 1, 5),
        Side("carol", colour_rgb("yellow"), 0, 0),
        Side("dave", colour_rgb("green"), 0, 0),
    ]


def picture(changed: tuple[int, ...] = (KAMCHATKA,)) -> Image.Image:
    board = builtin_map("classic")
    owner = [0] * 42
    owner[KAMCHATKA] = 1
    armies = [2] * 42
    armies[KAMCHATKA] = 5
    png = map_picture(board, owner, armies, sides(), changed, "world-1 after turn 14")
    assert png is not None
    return Image.open(io.BytesIO(png))


def test_classic_picture_size_and_format() -> None:
    image = picture()
    assert image.format == "PNG"
    assert image.mode == "P"  # palette: small files
    assert image.size == (900, 580)  # the map's 900 x 500, and the legend strip
    assert picture_size(builtin_map("classic"), 4) == (900, 580)


def test_known_pixels_show_owners_rings_land_and_sea() -> None:
    board = builtin_map("classic")
    image = picture().convert("RGB")
    kx, ky = board.territories[KAMCHATKA].pos
    ax, ay = board.territories[ALASKA].pos
    jx, jy = board.territories[JAPAN].pos
    # inside each disc, above the army count: the owner's colour
    assert image.getpixel((kx, ky - 9)) == COLOURS["blue"] == (38, 84, 196)
    assert image.getpixel((ax, ay - 9)) == COLOURS["red"] == (204, 40, 40)
    assert image.getpixel((jx, jy - 9)) == COLOURS["red"]
    # Kamchatka changed hands: ringed; Alaska did not: land (North America's tint)
    assert image.getpixel((kx, ky - 15)) == RING
    assert image.getpixel((ax, ay - 15)) == LAND_TINTS[0]
    # open sea in the bottom-right corner, the legend strip under the map
    assert image.getpixel((899, 499)) == SEA
    assert image.getpixel((899, 579)) == LEGEND_BG


def test_no_ring_without_changes() -> None:
    board = builtin_map("classic")
    kx, ky = board.territories[KAMCHATKA].pos
    image = picture(changed=()).convert("RGB")
    assert image.getpixel((kx, ky - 15)) == LAND_TINTS[4]  # Asia


def test_the_bering_strait_is_drawn_off_both_edges() -> None:
    """Alaska - Kamchatka leaves the picture on the left and on the right."""
    image = picture(changed=()).convert("RGB")
    left = {image.getpixel((x, y)) for x in range(0, 3) for y in range(55, 95)}
    right = {image.getpixel((x, y)) for x in range(897, 900) for y in range(40, 80)}
    edge = (120, 132, 150)
    assert edge in left and edge in right


def test_picture_of_a_played_turn_marks_the_conquests() -> None:
    sample = play_sample(seed=7, turns=1)
    report = sample.reports[0]
    mail = render_turn_report(report, None)
    (png,) = mail.images.values()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert len(png) < 60_000
    board = report.after.board
    mover = report.game.player(report.seat)
    taken = [t for t in range(42) if report.before.owner[t] != report.after.owner[t]]
    assert taken
    for t in taken:
        x, y = board.territories[t].pos
        assert image.getpixel((x, y - 9)) == colour_rgb(mover.colour)
        assert image.getpixel((x, y - 15)) == RING


def no_positions(board):  # noqa: ANN001, ANN201
    return replace(
        board,
        picture=None,
        wrap_edges=(),
        territories=tuple(replace(t, pos=None) for t in board.territories),
    )


def test_map_without_positions_has_no_picture() -> None:
    board = no_positions(builtin_map("classic"))
    assert map_picture(board, [0] * 42, [1] * 42, sides()) is None
    assert picture_size(board, 4) is None


@pytest.mark.parametrize("viewer", [0, None])
def test_report_for_a_map_without_positions(viewer: int | None) -> None:
    sample = play_sample(seed=7, turns=2, board=no_positions(builtin_map("classic")))
    for mail in (
        render_turn_report(sample.reports[1], viewer),
        render_status(Status(sample.game, sample.final, None), viewer),
    ):
        assert mail.images == {}
        assert "cid:" not in mail.html
        assert NO_PICTURE in mail.text
        assert NO_PICTURE in mail.html
        msg = to_mime(
            mail, sender="pbem@x.example", recipient=mail.recipient, message_id="<a@x.example>"
        )
        parsed = email.message_from_bytes(msg.as_bytes(), policy=policy.default)
        assert parsed.defects == []
        assert [p.get_content_type() for p in parsed.iter_parts()] == ["text/plain", "text/html"]
