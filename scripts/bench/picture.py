"""Benchmark the map picture: drawn in pieces now, drawn whole before (issue 16).

    python scripts/bench/picture.py                  # 12 turns of the sample game, 5 runs
    python scripts/bench/picture.py --turns 2 --runs 1

The sample game (pbem.testing.sample: classic map, 4 greedy bots, seed 7): for
each turn, the two pictures a poll draws, the report's (after the turn, the
conquests ringed) and the next player's notice (before the next turn). Timed
in CPU seconds, the best of the runs, per picture and per turn:

- now: ``draw_graph`` without its cache: the board's quantized background, the
  discs pasted as ready sprites, the legend from ready entry tiles;
- the baseline, in the same run: ``_render_whole``, the picture drawn in full
  colour and quantized whole, as before issue 16.

Both are timed warm (the background, sprites and tiles made by a first
pass, as in a poll after its first picture), and the first picture of a fresh
process is shown apart. The PNG encoding (zlib level 6 on the palette
indices) is the same work both ways and is shown on its own, next to the
bare zlib deflate of the same rows: Pillow adds nothing to it worth saving.
Both ways must give the same bytes, or the script exits 1.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.report import views  # noqa: E402
from pbem.report.picture import graph as picture  # noqa: E402
from pbem.report.picture.colours import Side  # noqa: E402
from pbem.rules.board import Board  # noqa: E402
from pbem.testing.sample import play_sample  # noqa: E402

Args = tuple[Board, tuple[int, ...], tuple[int, ...], tuple[Side, ...], tuple[int, ...], str]


def turn_pictures(turns: int) -> list[tuple[Args, Args]]:
    """Each turn's (report picture, notice picture) arguments, as the poll gives them."""
    sample = play_sample(seed=7, players=4, turns=turns, bot="greedy")
    out: list[tuple[Args, Args]] = []
    for report in sample.reports:
        after = report.after
        owner, armies = tuple(after.owner), tuple(after.armies)
        sides = tuple(views.sides(sample.game, after))
        changed = tuple(t for t in range(len(owner)) if owner[t] != report.before.owner[t])
        board, name = after.board, sample.game.name
        after_turn = f"{name}: the board after turn {report.turn}"
        before_next = f"{name}: the board before turn {report.turn + 1}"
        out.append(
            (
                (board, owner, armies, sides, changed, after_turn),
                (board, owner, armies, sides, (), before_next),
            )
        )
    return out


def cpu(function: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    turns = turn_pictures(options.turns)
    pictures = [args for pair in turns for args in pair]
    now = picture.draw_graph.__wrapped__
    whole = picture._render_whole

    for _ in range(2):  # the second time: Pillow's own first-use costs paid by then
        cold_whole, first_whole = _cold(whole, pictures[0])
        cold_now, first_now = _cold(now, pictures[0])
    same = first_now == first_whole and all(now(*args) == whole(*args) for args in pictures)
    print(f"the same bytes both ways: {len(pictures)} pictures" if same else "FAIL: bytes differ")

    n = len(pictures)

    def baseline() -> None:
        for args in pictures:
            picture._palette_image.cache_clear()  # as before: the palette made per picture
            whole(*args)

    def fresh() -> None:
        _clear(keep=("load_font", "_background"))  # the background: drawn and kept either way
        for args in pictures:
            now(*args)

    t_whole = cpu(baseline, options.runs) / n * 1000
    t_fresh = cpu(fresh, options.runs) / n * 1000
    t_now = cpu(lambda: [now(*args) for args in pictures], options.runs) / n * 1000
    images = [Image.open(io.BytesIO(now(*args))) for args in pictures]
    for image in images:
        image.load()
    t_png = cpu(lambda: [_png(image) for image in images], options.runs) / n
    rows = [
        b"".join(b"\0" + raw[y * image.width : (y + 1) * image.width] for y in range(image.height))
        for image in images
        for raw in [image.tobytes()]
    ]
    t_zlib = cpu(lambda: [_deflate(r) for r in rows], options.runs) / n
    in_png = all(_deflate(r) in now(*args) for r, args in zip(rows, pictures, strict=True))

    print(
        f"turns {len(turns)}, pictures {n} (the report's and the notice's), best of {options.runs}"
    )
    print(f"baseline (drawn whole)   {t_whole:6.2f} ms per picture  {2 * t_whole:6.2f} ms per turn")
    print(
        f"now, pieces made anew    {t_fresh:6.2f} ms per picture  {2 * t_fresh:6.2f} ms per turn"
        " (the caches emptied, then the turns in order)"
    )
    print(
        f"now, every piece ready   {t_now:6.2f} ms per picture  {2 * t_now:6.2f} ms per turn"
        " (the same pictures again)"
    )
    print(
        f"ratio now / baseline     {t_fresh / t_whole:6.2f} made anew, {t_now / t_whole:.2f} ready"
    )
    print(f"of which the PNG save    {t_png * 1000:6.2f} ms per picture (the same both ways)")
    print(
        f"bare zlib deflate        {t_zlib * 1000:6.2f} ms per picture"
        f" ({'the same IDAT bytes' if in_png else 'other bytes'}: no slack in Pillow's save)"
    )
    print(
        f"first picture of a process {cold_whole * 1000:6.2f} ms drawn whole,"
        f" {cold_now * 1000:6.2f} ms in pieces (the background and the pieces made)"
    )
    return 0 if same else 1


def _cold(render: Callable[..., bytes], args: Args) -> tuple[float, bytes]:
    """The time of a first picture, every cache of the picture module emptied."""
    _clear(keep=("load_font",))  # the fonts: loaded at start-up
    start = time.process_time()
    png = render(*args)
    return time.process_time() - start, png


def _clear(keep: tuple[str, ...]) -> None:
    for name in dir(picture):
        cache_clear = getattr(getattr(picture, name), "cache_clear", None)
        if cache_clear is not None and name not in keep:
            cache_clear()


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _deflate(rows: bytes) -> bytes:
    """The rows as Pillow's PNG encoder compresses them (level 6, memory level 9)."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 15, 9)
    return compressor.compress(rows) + compressor.flush()


if __name__ == "__main__":
    sys.exit(main())
