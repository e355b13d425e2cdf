"""The map pictures; here: which picture a board gets, the graph or the map's own image.

The one entry point (``map_picture``, ``picture_size``): ``graph.py`` draws
the graph (the classic map and every map with positions), ``image.py`` draws
on an imported map's own image with the graph's legend, and ``colours.py``
holds the colours both use (and the reports' tables).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from PIL import UnidentifiedImageError

from pbem.report.picture.colours import Side
from pbem.report.picture.graph import draw_graph, legend_height
from pbem.report.picture.image import render_on_image
from pbem.rules.board import Board


def map_picture(
    board: Board,
    owner: Sequence[int],
    armies: Sequence[int],
    sides: Sequence[Side],
    changed: Iterable[int] = (),
    caption: str = "",
) -> bytes | None:
    """The PNG of the board, or None when the map has no positions.

    ``sides`` is indexed by seat (the owner numbers); ``changed`` are the
    territories that changed hands (ringed).
    """
    if board.picture is None:
        return None
    args = (board, tuple(owner), tuple(armies), tuple(sides), tuple(sorted(set(changed))), caption)
    if board.image or board.colour_map:
        try:
            return render_on_image(*args)
        except (OSError, UnidentifiedImageError, ValueError):
            pass  # the image has gone or is broken since the game began: draw the graph
    return draw_graph(*args)


def picture_size(board: Board, sides: int) -> tuple[int, int] | None:
    """Width and height of the picture for ``sides`` owners (None without positions)."""
    if board.picture is None:
        return None
    width, height = board.picture
    return width, height + legend_height(width, sides)
