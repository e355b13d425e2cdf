"""`pbem maps`: list, show, import, check and balance maps."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.common import (
    JsonOption,
    emit,
    fail,
)


def maps(
    name: Annotated[
        str | None,
        typer.Argument(help="A map name or file, or 'import', 'check' or 'balance'."),
    ] = None,
    file: Annotated[
        str | None,
        typer.Argument(help="The map file (import, check) or the map name or file (balance)."),
    ] = None,
    as_json: JsonOption = False,
    cards: Annotated[
        Path | None, typer.Option("--cards", help="With import: a Domination .cards file.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="With import: where to write.")
    ] = None,
    two_way: Annotated[
        bool, typer.Option("--two-way", help="With import: make one-way borders two-way.")
    ] = False,
    players: Annotated[int, typer.Option(help="With balance: players per game.")] = 4,
    games: Annotated[int, typer.Option(help="With balance: how many games.")] = 100,
    seed: Annotated[int, typer.Option(help="With balance: seed of the first game.")] = 1,
    bot: Annotated[str, typer.Option(help="With balance: random or greedy.")] = "greedy",
    preset: Annotated[str, typer.Option(help="With balance: rules preset.")] = "classic",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", help="With balance: K=V over the preset (e.g. team_size=2)."),
    ] = None,
    workers: Annotated[int, typer.Option(help="With balance: processes.")] = 1,
    png: Annotated[
        Path | None, typer.Option("--png", help="With balance: write the chart there.")
    ] = None,
) -> None:
    """List the maps, show one, or import, check or balance a map file.

    `pbem maps` lists the built-in maps, `pbem maps NAME|FILE` shows one,
    `pbem maps import FILE -o OUT` converts a Domination, Conquest or Lux map,
    `pbem maps check FILE` reports what is wrong with a map file, and
    `pbem maps balance MAP --players N --games G [--option K=V] [--png OUT]` plays
    bot games for the wins per seat (and per team with --option team_size=N)."""
    from pbem.maps import load_any, map_names
    from pbem.rules.errors import MapError, OptionsError

    try:
        if name == "import":
            _import_map(_need(file, "import"), cards, output, two_way)
            return
        if name == "check":
            _check_map(_need(file, "check"), cards, two_way)
            return
        if name == "balance":
            from pbem.cli.games import option_overrides
            from pbem.maps.balance import balance, chart_png
            from pbem.service.play.games import options_for

            board = load_any(_need(file, "balance"))
            options = options_for(preset, option_overrides(option or []))
            result = balance(board, options, players, games, seed, bot, workers)
            if png is not None:
                png.write_bytes(chart_png(result))
            emit(result.to_json(), as_json, result.describe)
            if png is not None and not as_json:
                typer.echo(f"chart: {png}")
            return
        if name is None:
            names = map_names()
            emit(names, as_json, lambda: "\n".join(names))
            return
        board = load_any(name)
    except (MapError, OptionsError, ValueError) as exc:
        fail(str(exc))
    from pbem.service.ops.describe import describe_map, map_to_json

    emit(map_to_json(board), as_json, lambda: describe_map(board))


def _need(file: str | None, what: str) -> str:
    if file is None:
        fail(f"maps {what} needs a map file")
    return file


def _import_map(file: str, cards: Path | None, output: Path | None, two_way: bool) -> None:
    from pbem.maps.formats import import_file

    path = Path(file)
    if not path.is_file():
        fail(f"{file}: no such file")
    imported = import_file(path, cards, two_way=two_way)
    text = imported.text
    for warning in imported.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if output is None:
        typer.echo(text, nl=False)
        return
    if imported.board.image or imported.board.colour_map:
        text = _images_relative_to(text, imported, output)
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}")


def _images_relative_to(text: str, imported: Any, output: Path) -> str:
    """The map's image paths written relative to the output file's folder."""

    for path in (imported.board.image, imported.board.colour_map):
        if path:
            relative = os.path.relpath(path, output.resolve().parent).replace(os.sep, "/")
            text = text.replace(json.dumps(path), json.dumps(relative))
    return text


def _check_map(file: str, cards: Path | None, two_way: bool) -> None:
    """Print the check report; exit 1 when the map cannot be played."""
    from pbem.maps.formats import detect, import_file
    from pbem.maps.model import report
    from pbem.rules.errors import MapError

    path = Path(file)
    if not path.is_file():
        fail(f"{file}: no such file")
    try:
        fmt = detect(path)
        if fmt.startswith("pbem"):
            from pbem.maps import load_map
            from pbem.maps.files import load_copy

            board = load_map(path) if fmt == "pbem" else load_copy(path)
            typer.echo(
                f"{path} ({fmt} format): {board.title}\n  {len(board.territories)} territories, "
                f"{len(board.continents)} continents, {len(board.edges())} borders "
                f"({len(board.one_way)} one-way)\nOK: the map can be played"
            )
            return
        imported = import_file(path, cards, two_way=two_way)
    except MapError as exc:
        typer.echo(report(None, path, exc), nl=False)
        raise typer.Exit(1) from None
    typer.echo(report(imported, path), nl=False)
