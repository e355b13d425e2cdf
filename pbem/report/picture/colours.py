"""The colours of the map pictures and of the reports' tables: a player's colour
by name, the ink that reads on it, and one owner as a picture shows it."""

from __future__ import annotations

from dataclasses import dataclass

from PIL import ImageColor

RGB = tuple[int, int, int]

# Player colours as drawn; other colour names go through Pillow's CSS names.
COLOURS: dict[str, RGB] = {
    "red": (204, 40, 40),
    "blue": (38, 84, 196),
    "yellow": (236, 196, 0),
    "green": (40, 150, 60),
    "black": (40, 40, 40),
    "purple": (128, 60, 170),
    "orange": (240, 130, 20),
    "pink": (230, 110, 170),
    "brown": (140, 90, 40),
    "cyan": (0, 170, 190),
    "grey": (120, 120, 120),
    "white": (245, 245, 245),
}
NEUTRAL: RGB = (170, 170, 170)
FALLBACK = (
    (204, 40, 40),
    (38, 84, 196),
    (236, 196, 0),
    (40, 150, 60),
    (40, 40, 40),
    (128, 60, 170),
)
SEA: RGB = (214, 230, 242)
LAND_TINTS: tuple[RGB, ...] = (
    (246, 226, 190),
    (212, 236, 196),
    (222, 222, 246),
    (242, 212, 194),
    (238, 220, 236),
    (204, 236, 230),
    (240, 240, 200),
    (230, 230, 230),
)
EDGE: RGB = (120, 132, 150)
RING: RGB = (255, 140, 0)
INK: RGB = (20, 20, 20)
PAPER: RGB = (255, 255, 255)
LABEL: RGB = (60, 60, 60)
LEGEND_BG: RGB = (248, 248, 248)


def colour_rgb(name: str, seat: int = 0) -> RGB:
    """The RGB of a player's colour name (a fixed shade for the usual ones)."""
    key = name.strip().lower()
    if key in COLOURS:
        return COLOURS[key]
    try:
        return ImageColor.getrgb(key.replace("-", ""))[:3]
    except ValueError:
        return FALLBACK[seat % len(FALLBACK)]


def text_on(fill: RGB) -> RGB:
    """Black or white, whichever reads better on ``fill``."""
    r, g, b = fill
    return INK if 0.299 * r + 0.587 * g + 0.114 * b > 150 else PAPER


def hex_colour(rgb: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


@dataclass(frozen=True)
class Side:
    """One owner as the picture shows it."""

    name: str
    rgb: RGB
    territories: int
    armies: int
