"""The map picture on an imported map's own image (Domination, Conquest and Lux maps).

With a colour map (Domination's ``map`` image, whose pixel value v marks
territory v, 255 the sea) every territory is tinted in its owner's colour;
without one, the owner shows in the armies disc. The image has colours of its
own, so the picture is quantized to a palette made for it (median cut), not
to the fixed palette of ``graph.draw_graph``.
"""

from __future__ import annotations

import io
from functools import lru_cache

from PIL import Image, ImageDraw

from pbem.report.picture.colours import INK, NEUTRAL, RING, SEA, Side, text_on
from pbem.report.picture.graph import RING_RADIUS, box, draw_legend, legend_height, load_font
from pbem.rules.board import Board

DISC = 10  # radius of the armies disc: smaller than the graph's, the image is busy
TINT = 0.65  # how much of the owner's colour covers a territory's own pixels


def render_on_image(
    board: Board,
    owner: tuple[int, ...],
    armies: tuple[int, ...],
    sides: tuple[Side, ...],
    changed: tuple[int, ...],
    caption: str,
) -> bytes:
    """The PNG: the map's image (tinted by owner), armies discs, the legend."""
    assert board.picture is not None
    width, height = board.picture
    base = _base(board)
    if board.colour_map:
        base = _tinted(board, base, owner, sides)
    image = Image.new("RGB", (width, height + legend_height(width, len(sides))), SEA)
    image.paste(base, (0, 0))
    draw = ImageDraw.Draw(image)
    font = load_font(12)
    for t in board.territories:
        x, y = t.pos  # type: ignore[misc]
        seat = owner[t.index]
        fill = sides[seat].rgb if 0 <= seat < len(sides) else NEUTRAL
        if t.index in changed:
            draw.ellipse(box(x, y, RING_RADIUS - 3), fill=RING, outline=INK)
        draw.ellipse(box(x, y, DISC), fill=fill, outline=INK)
        if seat >= 0:
            draw.text((x, y), str(armies[t.index]), fill=text_on(fill), font=font, anchor="mm")
    draw_legend(draw, width, height, sides, bool(changed), caption)
    out = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, "PNG"
    )
    return out.getvalue()


@lru_cache(maxsize=4)
def _base(board: Board) -> Image.Image:
    """The map's image at the picture's size (white under a colour map alone)."""
    size = board.picture
    assert size is not None
    if not board.image:
        return Image.new("RGB", size, (250, 250, 246))
    with Image.open(board.image) as opened:
        picture = opened.convert("RGB")
    if picture.size != size:
        picture = picture.resize(size)
    return picture


@lru_cache(maxsize=4)
def _territory_values(board: Board) -> Image.Image:
    """The colour map as one byte per pixel: territory index + 1, 255 for none."""
    with Image.open(board.colour_map) as opened:
        values = opened.convert("L")
    if values.size != board.picture:
        values = values.resize(board.picture, Image.Resampling.NEAREST)  # type: ignore[arg-type]
    return values


def _tinted(
    board: Board, base: Image.Image, owner: tuple[int, ...], sides: tuple[Side, ...]
) -> Image.Image:
    """Each territory's pixels blended with its owner's colour, one pass per owner."""
    values = _territory_values(board)
    out = base.copy()
    owners = sorted(set(owner))
    for seat in owners:
        rgb = sides[seat].rgb if 0 <= seat < len(sides) else NEUTRAL
        held = {t + 1 for t, o in enumerate(owner) if o == seat}
        lut = [255 if v in held else 0 for v in range(256)]
        mask = values.point(lut)
        tint = Image.blend(base, Image.new("RGB", base.size, rgb), TINT)
        out.paste(tint, (0, 0), mask)
    return out
