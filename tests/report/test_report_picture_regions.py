"""The map picture drawn in pieces gives the same bytes as drawn whole (issue 16).

``draw_graph`` starts from the board's background already quantized and pastes
in only what a picture adds: the discs (ready quantized sprites, or a disc's
reach drawn again when its number spills past it) and the legend strip (ready
entry tiles, or the strip drawn whole). ``reference_render`` below is the
picture as it was drawn before: everything in full colour, then the whole
image quantized. Every PNG here must be byte for byte the same both ways.
"""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from pbem.maps import builtin_map
from pbem.report import views
from pbem.report.context import GameInfo
from pbem.report.picture import graph as picture
from pbem.report.picture.colours import (
    EDGE,
    INK,
    LABEL,
    LAND_TINTS,
    LEGEND_BG,
    NEUTRAL,
    PAPER,
    RING,
    SEA,
    Side,
    colour_rgb,
    text_on,
)
from pbem.report.picture.graph import (
    LEGEND_ROW,
    RADIUS,
    RING_RADIUS,
    _background,
    _blend,
    _legend_columns,
    box,
    legend_height,
    load_font,
)
from pbem.rules.board import Board
from pbem.rules.state import GameState
from pbem.testing.sample import play_sample

ROOT = Path(__file__).resolve().parents[2]
Args = tuple[Board, tuple[int, ...], tuple[int, ...], tuple[Side, ...], tuple[int, ...], str]


# -- the picture as drawn before issue 16 (the reference) ---------------------------------
def reference_render(
    board: Board,
    owner: tuple[int, ...],
    armies: tuple[int, ...],
    sides: tuple[Side, ...],
    changed: tuple[int, ...],
    caption: str,
) -> bytes:
    assert board.picture is not None
    width, height = board.picture
    image = _background(board, legend_height(width, len(sides))).copy()
    draw = ImageDraw.Draw(image)
    number_font = load_font(13)
    for t in board.territories:
        x, y = t.pos  # type: ignore[misc]
        seat = owner[t.index]
        fill = sides[seat].rgb if 0 <= seat < len(sides) else NEUTRAL
        if t.index in changed:
            draw.ellipse(box(x, y, RING_RADIUS), fill=RING, outline=INK)
        draw.ellipse(box(x, y, RADIUS), fill=fill, outline=INK)
        if seat >= 0:
            draw.text(
                (x, y), str(armies[t.index]), fill=text_on(fill), font=number_font, anchor="mm"
            )
    reference_legend(draw, width, height, sides, bool(changed), caption)
    out = io.BytesIO()
    image.quantize(palette=reference_palette(board, sides), dither=Image.Dither.NONE).save(
        out, "PNG", optimize=False
    )
    return out.getvalue()


def reference_legend(
    draw: ImageDraw.ImageDraw,
    width: int,
    top: int,
    sides: tuple[Side, ...],
    rings: bool,
    caption: str,
) -> None:
    draw.rectangle((0, top, width, top + legend_height(width, len(sides))), fill=LEGEND_BG)
    draw.line([(0, top), (width, top)], fill=EDGE, width=1)
    font = load_font(13)
    columns = _legend_columns(width)
    cell = width // columns
    y = top + 6
    draw.text((10, y + 2), caption, fill=INK, font=font)
    entries: list[tuple[tuple[int, int, int] | None, str]] = [
        (s.rgb, f"{s.name}: {s.territories} terr., {s.armies} armies")
        for s in sides
        if s.territories
    ]
    if any(s.territories for s in sides):
        entries += [(None, s.name + ": out") for s in sides if not s.territories]
    else:
        entries = [(s.rgb, s.name) for s in sides]
    if rings:
        entries.append((RING, "changed hands this turn"))
    for i, (rgb, text) in enumerate(entries):
        cx = 10 + (i % columns) * cell
        cy = y + LEGEND_ROW * (1 + i // columns)
        if rgb is RING:
            draw.ellipse((cx, cy + 1, cx + 16, cy + 17), fill=RING, outline=INK)
            draw.ellipse((cx + 4, cy + 5, cx + 12, cy + 13), fill=LEGEND_BG, outline=INK)
        elif rgb is not None:
            draw.rectangle((cx, cy + 2, cx + 16, cy + 16), fill=rgb, outline=INK)
        else:
            draw.rectangle((cx, cy + 2, cx + 16, cy + 16), fill=LEGEND_BG, outline=EDGE)
        draw.text((cx + 24, cy + 2), text, fill=INK, font=font)


def reference_palette(board: Board, sides: tuple[Side, ...]) -> Image.Image:
    fills = [s.rgb for s in sides] + [NEUTRAL]
    grounds = [SEA, LEGEND_BG, RING] + list(LAND_TINTS[: len(board.continents)])
    colours = [SEA, EDGE, RING, INK, PAPER, LABEL, LEGEND_BG, NEUTRAL]
    colours += fills + grounds
    pairs = [(f, text_on(f)) for f in fills] + [(g, c) for g in grounds for c in (LABEL, INK)]
    pairs += [(EDGE, LABEL), (EDGE, INK)]
    for ground, ink in pairs:
        for share in (0.2, 0.4, 0.6, 0.8):
            colours.append(_blend(ground, ink, share))
    unique = list(dict.fromkeys(colours))[:256]
    flat = [v for rgb in unique for v in rgb]
    flat += flat[:3] * (256 - len(unique))
    palette = Image.new("P", (1, 1))
    palette.putpalette(flat)
    return palette


# -- helpers ------------------------------------------------------------------------------
class Paths:
    """How often each slow path ran: a test that means to cover one checks it did."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.redrawn = 0
        self.whole_legends = 0
        reach, whole = picture._reach, picture._legend_whole

        def counted_reach(disc: picture._Disc) -> picture.Box:
            self.redrawn += 1
            return reach(disc)

        def counted_whole(*args: object) -> Image.Image:
            self.whole_legends += 1
            return whole(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(picture, "_reach", counted_reach)
        monkeypatch.setattr(picture, "_legend_whole", counted_whole)


def new_render(*args: object) -> bytes:
    """The picture as ``draw_graph`` draws it now, not from its cache."""
    return picture.draw_graph.__wrapped__(*args)  # type: ignore[no-any-return]


def assert_same(args: Args, whole: bool = False) -> None:
    new, old = new_render(*args), reference_render(*args)
    assert new == old, f"the picture differs for caption {args[5]!r}"
    if whole:  # the module's own drawing in full colour, for the benchmark's baseline
        assert picture._render_whole(*args) == old


def sample_pictures(seed: int, players: int, turns: int | None) -> Iterator[Args]:
    """Each turn's two pictures, as a poll draws them: the report's and the notice's."""
    sample = play_sample(seed=seed, players=players, turns=turns, bot="greedy")
    yield sample.start.board, *state_args(sample.game, sample.start), (), "the start"
    for report in sample.reports:
        after = report.after
        changed = tuple(
            t for t in range(len(after.owner)) if after.owner[t] != report.before.owner[t]
        )
        board, owner, armies, sides = after.board, *state_args(sample.game, after)
        yield board, owner, armies, sides, changed, f"world: after turn {report.turn}"
        yield board, owner, armies, sides, (), f"world: before turn {report.turn + 1}"


def state_args(
    game: GameInfo, state: GameState
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[Side, ...]]:
    return tuple(state.owner), tuple(state.armies), tuple(views.sides(game, state))


def four_sides(names: tuple[str, ...] = ("alice", "bob", "carol", "dave")) -> tuple[Side, ...]:
    colours = ("red", "blue", "yellow", "green", "black", "purple")
    return tuple(
        Side(name, colour_rgb(colours[i]), 10 + i, 20 + 3 * i) for i, name in enumerate(names)
    )


# -- the tests ----------------------------------------------------------------------------
def test_quantizing_to_the_palette_is_pixel_by_pixel() -> None:
    """Why pieces can be quantized apart: any image, quantized whole or in tiles."""
    rng = random.Random(16)
    board = builtin_map("classic")
    key = picture._palette_key(board, four_sides())
    noise = Image.frombytes("RGB", (97, 61), bytes(rng.randrange(256) for _ in range(97 * 61 * 3)))
    whole = picture._quantize(noise, key)
    tiled = Image.new("P", noise.size)
    for left in range(0, 97, 13):
        for top in range(0, 61, 11):
            box = (left, top, min(97, left + 13), min(61, top + 11))
            tiled.paste(picture._quantize(noise.crop(box), key), box[:2])
    assert whole.tobytes() == tiled.tobytes()
    assert len(set(whole.tobytes())) > 50  # the noise did reach many palette colours


@pytest.mark.parametrize(("seed", "players"), [(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (7, 4)])
def test_sample_games_give_the_same_bytes(seed: int, players: int) -> None:
    pictures = list(sample_pictures(seed, players, turns=12))
    assert len(pictures) == 25
    assert any(args[4] for args in pictures)  # some with rings
    for i, args in enumerate(pictures):
        assert_same(args, whole=i % 5 == 0)


def test_a_whole_game_to_its_end_gives_the_same_bytes() -> None:
    pictures = list(sample_pictures(11, 3, turns=None))
    assert len(pictures) > 60
    for args in pictures[::3] + pictures[-2:]:
        assert_same(args)


@pytest.mark.parametrize("sides", [2, 3, 4, 5, 6])
def test_every_army_count_to_999_with_and_without_rings(
    sides: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some three-digit numbers reach past an unringed disc: those discs are redrawn."""
    paths = Paths(monkeypatch)
    board = builtin_map("classic")
    n = len(board.territories)
    players = four_sides(("a", "b", "c", "d", "e", "f")[:sides])
    for k in range(24):  # 24 x 42 numbers: every count from 1 to 999
        owner = tuple((t * 7 + k) % (sides + 1) - 1 for t in range(n))  # -1: nobody's
        armies = tuple(1 + (k * n + t + 300 * sides) % 999 for t in range(n))
        changed = tuple(t for t in range(n) if (t + k) % 3 == 0) if k % 2 else ()
        assert_same((board, owner, armies, players, changed, f"counts from {armies[0]}"))
    assert paths.redrawn > 0


def test_the_two_player_neutral_and_out_players() -> None:
    sample = play_sample(seed=3, players=2, turns=6)
    state = sample.final
    sides = tuple(views.sides(sample.game, state))
    assert NEUTRAL in [s.rgb for s in sides]  # the neutral side of a two-player game
    owner, armies = tuple(state.owner), tuple(state.armies)
    assert_same((state.board, owner, armies, sides, (0, 5, 9), "two and the neutral"))
    out = tuple(replace(s, territories=0, armies=0) if i == 1 else s for i, s in enumerate(sides))
    assert_same((state.board, owner, armies, out, (), "one is out"))
    undealt = tuple(replace(s, territories=0, armies=0) for s in sides)
    assert_same((state.board, tuple([-1] * 42), tuple([0] * 42), undealt, (), "not dealt"))


def test_long_names_and_captions_draw_the_legend_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = Paths(monkeypatch)
    board = builtin_map("classic")
    owner = tuple(t % 4 for t in range(42))
    armies = tuple(1 + t % 30 for t in range(42))
    long = four_sides(("Maximilian-Alexander von Hohenzollern-Sigmaringen", "bo", "c", "d" * 40))
    assert_same((board, owner, armies, long, (1, 2), "x" * 300))
    assert paths.whole_legends == 1
    short = four_sides()
    assert_same((board, owner, armies, short, (1, 2), ""))  # no caption: no ink
    assert_same((board, owner, armies, short, (), "Ünïcödé ÄÖ gjpqy — the board"))
    assert paths.whole_legends == 1


def crowded(board: Board) -> Board:
    """The board with discs on the picture's corners, over the legend and on each other."""
    width, height = board.picture  # type: ignore[misc]
    moved = {
        0: (0, 0),
        1: (width - 1, height - 1),
        2: (3, height - 2),
        3: (width // 2, height + 4),  # below the map: under the legend strip
        4: (100, 100),
        5: (108, 104),  # on top of 4
        6: (112, 100),
        7: (-5, 40),  # partly off the picture
    }
    territories = tuple(replace(t, pos=moved.get(t.index, t.pos)) for t in board.territories)
    return replace(board, territories=territories)


@pytest.mark.parametrize("name", ["classic", "fantasy"])
def test_crowded_discs_and_wrapped_edges(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = Paths(monkeypatch)
    for board in (builtin_map(name), crowded(builtin_map(name))):
        assert board.wrap_edges  # edges drawn across the picture's edge
        n = len(board.territories)
        for k, armies_at in enumerate((3, 250, 777)):
            owner = tuple((t + k) % 5 - 1 for t in range(n))
            armies = tuple(armies_at + t for t in range(n))
            changed = tuple(t for t in range(n) if t % (k + 2) == 0)
            assert_same((board, owner, armies, four_sides(), changed, f"{name} {k}"))
    assert paths.redrawn > 0


def test_sprites_and_tiles_are_reused_across_a_turn() -> None:
    """The notice's picture after the report's: only the discs that lose their ring
    and the caption are new; the background and the sides' entries are ready."""
    pictures = list(sample_pictures(7, 4, turns=3))
    report, notice = pictures[-2], pictures[-1]
    changed = report[4]
    assert changed
    for cached in (picture._sprite, picture._entry_tile, picture._quantized_background):
        cached.cache_clear()
    new_render(*report)
    sprites, tiles = picture._sprite.cache_info(), picture._entry_tile.cache_info()
    assert picture._quantized_background.cache_info().misses == 1
    assert tiles.misses == 1 + 4 + 1  # the caption, four sides, the ring's key
    new_render(*notice)
    assert picture._quantized_background.cache_info().misses == 1
    assert picture._entry_tile.cache_info().misses == tiles.misses + 1  # its caption
    assert picture._sprite.cache_info().hits + picture._sprite.cache_info().misses == 84
    assert picture._sprite.cache_info().misses - sprites.misses <= len(changed)


def test_the_benchmark_script_runs() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "bench" / "picture.py"),
            "--turns",
            "2",
            "--runs",
            "1",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the same bytes both ways: 4 pictures" in done.stdout
    assert "ms per picture" in done.stdout and "ms per turn" in done.stdout
