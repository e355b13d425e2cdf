"""The map picture: every territory at its position, coloured by owner, with its armies.

Drawn with Pillow on the map's own canvas (``Board.picture``), then a legend
strip below it.  An imported map with its own image is drawn on that image
instead (``image.render_on_image``; the package's ``map_picture`` chooses).
Maps without an image keep the graph. The PNG is saved with a fixed palette
(every colour drawn is in it exactly, plus the blends that anti-aliased
text needs), so it stays small (tens of KiB) and a pixel's colour can be
checked exactly. A map without
positions has no picture: ``map_picture`` returns None.

Every turn draws two pictures (the report's and the next player's notice),
so they are made of kept pieces: quantizing to a fixed palette
without dithering maps each pixel on its own, so the board's background is
quantized once, each disc is a quantized sprite per (colour, ring, number),
each legend entry a quantized tile, and a picture is their pastes. What a
piece cannot be exact for (a number spilling past its disc, legend entries
running into each other) is drawn in full colour and quantized in place. The
bytes are those of the picture drawn whole (``_render_whole``); the PNG's
zlib deflate is the same work either way (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageChops, ImageDraw, ImageFont

from pbem.report.picture.colours import (
    EDGE,
    INK,
    LABEL,
    LAND_TINTS,
    LEGEND_BG,
    NEUTRAL,
    PAPER,
    RGB,
    RING,
    SEA,
    Side,
    text_on,
)
from pbem.rules.board import Board

RADIUS = 12  # territory disc
RING_RADIUS = 17  # "changed hands" ring (outer radius)
LAND_RADIUS = 38  # the continent tint around each territory
LEGEND_ROW = 24
OPTIMIZE = False  # optimize=True: a little smaller, far slower (docs/PERFORMANCE.md)


@lru_cache(maxsize=16)
def draw_graph(
    board: Board,
    owner: tuple[int, ...],
    armies: tuple[int, ...],
    sides: tuple[Side, ...],
    changed: tuple[int, ...],
    caption: str,
) -> bytes:
    """The PNG, drawn in palette form on the board's quantized background.

    Quantizing to a fixed palette without dithering maps every pixel on its
    own, so only what a picture adds (the discs and the legend) is quantized
    here; the rest comes quantized from ``_quantized_background``. The bytes
    are those of ``_render_whole`` (tests/report/test_report_picture_regions.py).
    """
    assert board.picture is not None
    width, height = board.picture
    legend = legend_height(width, len(sides))
    key = _palette_key(board, sides)
    image = _quantized_background(board, legend, key).copy()
    _paste_discs(image, board, _discs(board, owner, armies, sides, changed), legend, key)
    image.paste(_legend_strip(width, sides, bool(changed), caption, key), (0, height))
    return _png(image)


def _render_whole(
    board: Board,
    owner: tuple[int, ...],
    armies: tuple[int, ...],
    sides: tuple[Side, ...],
    changed: tuple[int, ...],
    caption: str,
) -> bytes:
    """The PNG drawn in full colour and quantized whole: what ``draw_graph`` must equal."""
    assert board.picture is not None
    width, height = board.picture
    image = _background(board, legend_height(width, len(sides))).copy()
    _draw_discs(ImageDraw.Draw(image), board, owner, armies, sides, changed)
    draw_legend(ImageDraw.Draw(image), width, height, sides, bool(changed), caption)
    return _png(_quantize(image, _palette_key(board, sides)))


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", optimize=OPTIMIZE)
    return out.getvalue()


def _fill(sides: tuple[Side, ...], seat: int) -> RGB:
    return sides[seat].rgb if 0 <= seat < len(sides) else NEUTRAL


def _draw_discs(
    draw: ImageDraw.ImageDraw,
    board: Board,
    owner: tuple[int, ...],
    armies: tuple[int, ...],
    sides: tuple[Side, ...],
    changed: tuple[int, ...],
) -> None:
    """Each territory's disc in its owner's colour with its armies, ringed if it changed hands."""
    for disc in _discs(board, owner, armies, sides, changed):
        _draw_disc(draw, disc, 0, 0)


@dataclass(frozen=True)
class _Disc:
    """One territory's disc as drawn: where, in which colour, ringed or not, the number."""

    x: int
    y: int
    fill: RGB
    ringed: bool
    text: str


def _discs(
    board: Board,
    owner: tuple[int, ...],
    armies: tuple[int, ...],
    sides: tuple[Side, ...],
    changed: tuple[int, ...],
) -> list[_Disc]:
    out = []
    for t in board.territories:
        x, y = t.pos  # type: ignore[misc]
        seat = owner[t.index]
        text = str(armies[t.index]) if seat >= 0 else ""
        out.append(_Disc(x, y, _fill(sides, seat), t.index in changed, text))
    return out


def _draw_disc(draw: ImageDraw.ImageDraw, disc: _Disc, dx: int, dy: int) -> None:
    """The disc, moved by (dx, dy): drawn on a canvas that is a piece of the picture."""
    x, y = disc.x + dx, disc.y + dy
    if disc.ringed:
        draw.ellipse(box(x, y, RING_RADIUS), fill=RING, outline=INK)
    draw.ellipse(box(x, y, RADIUS), fill=disc.fill, outline=INK)
    if disc.text:
        draw.text((x, y), disc.text, fill=text_on(disc.fill), font=load_font(13), anchor="mm")


def _paste_discs(
    image: Image.Image, board: Board, discs: list[_Disc], legend: int, key: PaletteKey
) -> None:
    """Put the discs, in drawing order, into the quantized picture.

    Most discs are pasted as ready sprites. A number whose anti-aliased edge
    reaches past its disc blends with what is under it, so that disc's reach
    is drawn again in full colour (the background and every disc before it
    that overlaps, then it), quantized and pasted.
    """
    for i, disc in enumerate(discs):
        sprite = None
        if type(disc.x) is int and type(disc.y) is int:
            sprite = _sprite(disc.fill, disc.ringed, disc.text, key)
        if sprite is not None:
            picture, mask, r = sprite
            image.paste(picture, (disc.x - r, disc.y - r), mask)
            continue
        box = _reach(disc)
        canvas = _background(board, legend).crop(box)
        draw = ImageDraw.Draw(canvas)
        for other in discs[: i + 1]:
            if _overlap(_reach(other), box):
                _draw_disc(draw, other, -box[0], -box[1])
        image.paste(_quantize(canvas, key), box[:2])


Box = tuple[int, int, int, int]


def _reach(disc: _Disc) -> Box:
    """Every pixel the disc can change, as (left, top, right, bottom), the end excluded."""
    r = RING_RADIUS if disc.ringed else RADIUS
    left, top, right, bottom = -r, -r, r + 1, r + 1
    if disc.text:
        ink = _ink(disc.text)
        if ink is not None:
            box = ink[1]
            left, top = min(left, box[0]), min(top, box[1])
            right, bottom = max(right, box[2]), max(bottom, box[3])
    x, y = math.floor(disc.x), math.floor(disc.y)
    return x + left - 1, y + top - 1, x + right + 1, y + bottom + 1


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@lru_cache(maxsize=2048)
def _ink(text: str) -> tuple[Image.Image, Box] | None:
    """Where an army number leaves ink: the ink (L) and its box around the number's
    centre (None: nowhere)."""
    margin = 16 + 16 * len(text)  # wider than any font-13 line of that many characters
    ink = Image.new("L", (2 * margin, 2 * margin), 0)
    ImageDraw.Draw(ink).text((margin, margin), text, fill=255, font=load_font(13), anchor="mm")
    found = ink.getbbox()
    if found is None:
        return None
    box = (found[0] - margin, found[1] - margin, found[2] - margin, found[3] - margin)
    return ink.crop(found), box


@lru_cache(maxsize=8)
def load_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=4)
def _background(board: Board, legend: int) -> Image.Image:
    """What every picture of a board shares: sea, land, borders and names (never changed)."""
    width, height = board.picture  # type: ignore[misc]
    image = Image.new("RGB", (width, height + legend), SEA)
    draw = ImageDraw.Draw(image)
    _land(draw, board)
    _edges(draw, board)
    label_font = load_font(10)
    for t in board.territories:
        x, y = t.pos  # type: ignore[misc]
        draw.text(
            (x, y + RADIUS + 2),
            _short_name(t.name, t.aliases),
            fill=LABEL,
            font=label_font,
            anchor="mt",
            stroke_width=1,
            stroke_fill=LAND_TINTS[t.continent % len(LAND_TINTS)],
        )
    return image


def box(x: int, y: int, r: int) -> tuple[int, int, int, int]:
    return (x - r, y - r, x + r, y + r)


def _short_name(name: str, aliases: tuple[str, ...]) -> str:
    """The name, or its longest alias of 12 characters or fewer when the name is long."""
    if len(name) <= 12:
        return name
    fitting = [a for a in aliases if len(a) <= 12]
    return max(fitting, key=len) if fitting else name


def _land(draw: ImageDraw.ImageDraw, board: Board) -> None:
    """Each continent as the union of soft discs around its territories."""
    for t in board.territories:
        x, y = t.pos  # type: ignore[misc]
        tint = LAND_TINTS[t.continent % len(LAND_TINTS)]
        draw.ellipse(box(x, y, LAND_RADIUS), fill=tint)


def _edges(draw: ImageDraw.ImageDraw, board: Board) -> None:
    width = board.picture[0]  # type: ignore[index]
    wrapped = {tuple(sorted(pair)) for pair in board.wrap_edges}
    pos = [t.pos for t in board.territories]
    for a, b in board.edges():
        (ax, ay), (bx, by) = pos[a], pos[b]  # type: ignore[misc]
        if (a, b) in wrapped:
            # Across the picture's edge: draw towards the copy of each end
            # one picture-width away, so each half leaves its own side.
            if ax > bx:
                (ax, ay), (bx, by) = (bx, by), (ax, ay)
            _dashed(draw, (ax, ay), (bx - width, by))
            _dashed(draw, (bx, by), (ax + width, ay))
        else:
            draw.line([(ax, ay), (bx, by)], fill=EDGE, width=2)


def _dashed(draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int]) -> None:
    (x0, y0), (x1, y1) = start, end
    length = max(1.0, ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5)
    dash, step = 7.0, 11.0
    at = 0.0
    while at < length:
        f0, f1 = at / length, min(at + dash, length) / length
        draw.line(
            [
                (x0 + (x1 - x0) * f0, y0 + (y1 - y0) * f0),
                (x0 + (x1 - x0) * f1, y0 + (y1 - y0) * f1),
            ],
            fill=EDGE,
            width=2,
        )
        at += step


def _legend_columns(width: int) -> int:
    return max(1, width // 220)


def legend_height(width: int, sides: int) -> int:
    rows = -(-(sides + 1) // _legend_columns(width))  # the sides and the "changed" key
    return 8 + LEGEND_ROW * (rows + 1)  # plus the caption row


def draw_legend(
    draw: ImageDraw.ImageDraw,
    width: int,
    top: int,
    sides: tuple[Side, ...],
    rings: bool,
    caption: str,
) -> None:
    draw.rectangle((0, top, width, top + legend_height(width, len(sides))), fill=LEGEND_BG)
    draw.line([(0, top), (width, top)], fill=EDGE, width=1)
    for entry in _legend_entries(width, sides, rings, caption):
        _draw_entry(draw, entry, 0, top)


def _legend_strip(
    width: int, sides: tuple[Side, ...], rings: bool, caption: str, key: PaletteKey
) -> Image.Image:
    """The legend strip, quantized: each entry's ready tile pasted on the bare strip.

    An entry's text is anti-aliased on the legend's ground, so its tile is the
    same wherever it stands, as long as no other entry's ink (a long name
    running into the next column) or the strip's top line is under it;
    otherwise the strip is drawn whole.
    """
    height = legend_height(width, len(sides))
    entries = _legend_entries(width, sides, rings, caption)
    pieces: list[tuple[Image.Image, Box]] = []
    for entry in entries:
        tile = _entry_tile(entry.key, entry.rgb, entry.text, key)
        if tile is None:
            return _legend_whole(width, sides, rings, caption, key)
        picture, (left, top, right, bottom) = tile
        if picture is None:
            continue
        box = (entry.x + left, entry.y + top, entry.x + right, entry.y + bottom)
        if box[1] < 1 or any(_overlap(box, other) for _, other in pieces):
            return _legend_whole(width, sides, rings, caption, key)
        pieces.append((picture, box))
    strip = _bare_strip(width, height, key).copy()
    for picture, box in pieces:
        strip.paste(picture, box[:2])
    return strip


def _legend_whole(
    width: int, sides: tuple[Side, ...], rings: bool, caption: str, key: PaletteKey
) -> Image.Image:
    strip = Image.new("RGB", (width, legend_height(width, len(sides))), LEGEND_BG)
    draw_legend(ImageDraw.Draw(strip), width, 0, sides, rings, caption)
    return _quantize(strip, key)


@lru_cache(maxsize=8)
def _bare_strip(width: int, height: int, key: PaletteKey) -> Image.Image:
    """The legend strip with its ground and top line only, quantized."""
    strip = Image.new("RGB", (width, height), LEGEND_BG)
    draw = ImageDraw.Draw(strip)
    draw.rectangle((0, 0, width, height), fill=LEGEND_BG)
    draw.line([(0, 0), (width, 0)], fill=EDGE, width=1)
    return _quantize(strip, key)


@lru_cache(maxsize=256)
def _entry_tile(
    kind: str, rgb: RGB, text: str, key: PaletteKey
) -> tuple[Image.Image | None, Box] | None:
    """The entry drawn alone on the legend's ground, quantized and cut to its ink,
    with the ink's box from the entry's corner; (None, box) when it leaves no ink,
    None when its ink may reach past the canvas."""
    margin = 16
    size = (48 + int(load_font(13).getlength(text)) + 2 * margin, LEGEND_ROW + 2 * margin)
    canvas = Image.new("RGB", size, LEGEND_BG)
    _draw_entry(ImageDraw.Draw(canvas), _Entry(margin, margin, kind, rgb, text), 0, 0)
    ink = ImageChops.difference(canvas, Image.new("RGB", size, LEGEND_BG)).getbbox()
    if ink is None:
        return None, (0, 0, 0, 0)
    if ink[0] == 0 or ink[1] == 0 or ink[2] == size[0] or ink[3] == size[1]:
        return None
    box = (ink[0] - margin, ink[1] - margin, ink[2] - margin, ink[3] - margin)
    return _quantize(canvas.crop(ink), key), box


@dataclass(frozen=True)
class _Entry:
    """One thing the legend writes: the caption, or a key with its line of text."""

    x: int
    y: int  # from the top of the legend strip
    key: str  # "caption", "fill", "out" or "ring"
    rgb: RGB
    text: str


def _legend_entries(width: int, sides: tuple[Side, ...], rings: bool, caption: str) -> list[_Entry]:
    columns = _legend_columns(width)
    cell = width // columns
    y = 6
    out = [_Entry(10, y, "caption", INK, caption)]
    entries: list[tuple[str, RGB, str]] = [
        ("fill", s.rgb, f"{s.name}: {s.territories} terr., {s.armies} armies")
        if s.armies >= 0
        else ("fill", s.rgb, s.name)  # counts hidden by the fog of war
        for s in sides
        if s.territories
    ]
    if any(s.territories for s in sides):  # once the territories are dealt
        entries += [("out", LEGEND_BG, s.name + ": out") for s in sides if not s.territories]
    else:
        entries = [("fill", s.rgb, s.name) for s in sides]
    if rings:
        entries.append(("ring", RING, "changed hands this turn"))
    for i, (key, rgb, text) in enumerate(entries):
        cx = 10 + (i % columns) * cell
        cy = y + LEGEND_ROW * (1 + i // columns)
        out.append(_Entry(cx, cy, key, rgb, text))
    return out


def _draw_entry(draw: ImageDraw.ImageDraw, entry: _Entry, dx: int, dy: int) -> None:
    """The entry, moved by (dx, dy) from its place in the legend strip."""
    cx, cy = entry.x + dx, entry.y + dy
    font = load_font(13)
    if entry.key == "caption":
        draw.text((cx, cy + 2), entry.text, fill=INK, font=font)
        return
    if entry.key == "ring":
        draw.ellipse((cx, cy + 1, cx + 16, cy + 17), fill=RING, outline=INK)
        draw.ellipse((cx + 4, cy + 5, cx + 12, cy + 13), fill=LEGEND_BG, outline=INK)
    elif entry.key == "fill":
        draw.rectangle((cx, cy + 2, cx + 16, cy + 16), fill=entry.rgb, outline=INK)
    else:
        draw.rectangle((cx, cy + 2, cx + 16, cy + 16), fill=LEGEND_BG, outline=EDGE)
    draw.text((cx + 24, cy + 2), entry.text, fill=INK, font=font)


PaletteKey = tuple[int, tuple[RGB, ...]]  # the continents drawn, the owners' fills


def _palette_key(board: Board, sides: tuple[Side, ...]) -> PaletteKey:
    return len(board.continents), tuple(s.rgb for s in sides)


@lru_cache(maxsize=16)
def _palette_image(key: PaletteKey) -> Image.Image:
    continents, side_fills = key
    fills = list(side_fills) + [NEUTRAL]
    grounds = [SEA, LEGEND_BG, RING] + list(LAND_TINTS[:continents])
    colours: list[RGB] = [SEA, EDGE, RING, INK, PAPER, LABEL, LEGEND_BG, NEUTRAL]
    colours += fills + grounds
    pairs = [(f, text_on(f)) for f in fills] + [(g, c) for g in grounds for c in (LABEL, INK)]
    pairs += [(EDGE, LABEL), (EDGE, INK)]
    for ground, ink in pairs:
        for share in (0.2, 0.4, 0.6, 0.8):
            colours.append(_blend(ground, ink, share))
    unique = list(dict.fromkeys(colours))[:256]
    flat = [v for rgb in unique for v in rgb]
    flat += flat[:3] * (256 - len(unique))  # pad with a colour already in use
    palette = Image.new("P", (1, 1))
    palette.putpalette(flat)
    return palette


def _quantize(image: Image.Image, key: PaletteKey) -> Image.Image:
    """Each pixel to its nearest palette colour (no dithering: pixel by pixel)."""
    return image.quantize(palette=_palette_image(key), dither=Image.Dither.NONE)


@lru_cache(maxsize=8)
def _quantized_background(board: Board, legend: int, key: PaletteKey) -> Image.Image:
    """``_background`` in palette form: what every picture with this palette starts from."""
    return _quantize(_background(board, legend), key)


@lru_cache(maxsize=2048)
def _sprite(
    fill: RGB, ringed: bool, text: str, key: PaletteKey
) -> tuple[Image.Image, Image.Image, int] | None:
    """A disc (ringed or not) with its number, quantized, its mask and its radius.

    The disc and ring are solid (not anti-aliased), so inside their mask the
    pixels are the same on any background; the number's anti-aliased edge
    blends with what is under it, so the sprite holds only while every pixel
    the number touches is inside the mask (None otherwise).
    """
    if text and not _fits(text, ringed):
        return None
    r = RING_RADIUS if ringed else RADIUS
    picture = Image.new("RGB", (2 * r + 1, 2 * r + 1), SEA)
    draw = ImageDraw.Draw(picture)
    if ringed:
        draw.ellipse(box(r, r, RING_RADIUS), fill=RING, outline=INK)
    draw.ellipse(box(r, r, RADIUS), fill=fill, outline=INK)
    if text:
        draw.text((r, r), text, fill=text_on(fill), font=load_font(13), anchor="mm")
    return _quantize(picture, key), _disc_mask(ringed), r


@lru_cache(maxsize=2)
def _disc_mask(ringed: bool) -> Image.Image:
    """The pixels a disc (and its ring) covers, as drawn around the centre (r, r)."""
    r = RING_RADIUS if ringed else RADIUS
    mask = Image.new("1", (2 * r + 1, 2 * r + 1), 0)
    shape = ImageDraw.Draw(mask)
    if ringed:
        shape.ellipse(box(r, r, RING_RADIUS), fill=1, outline=1)
    shape.ellipse(box(r, r, RADIUS), fill=1, outline=1)
    return mask


def _fits(text: str, ringed: bool) -> bool:
    """Whether every pixel the number leaves ink on is inside its disc's mask."""
    r = RING_RADIUS if ringed else RADIUS
    found = _ink(text)
    if found is None:
        return True
    ink, (left, top, right, bottom) = found
    if left < -r or top < -r or right > r + 1 or bottom > r + 1:
        return False
    inside = _disc_mask(ringed).convert("L").crop((left + r, top + r, right + r, bottom + r))
    return ImageChops.subtract(ink, inside).getbbox() is None


def _blend(a: RGB, b: RGB, share: float) -> RGB:
    return tuple(round(x + (y - x) * share) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]
