"""The `pbem` command: thin typer commands over the service layer.

Imports of the heavier layers happen inside each command, so quick commands
(`pbem odds`, `pbem maps`) start fast. Every user error prints one line to
stderr and exits 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

app = typer.Typer(
    help="pbem: a play-by-email adjudicator for Risk.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Config file (else $PBEM_CONFIG, ./pbem.toml, defaults)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the project's error types into a one-line message and exit code 1."""
    from pbem.errors import user_error_types

    try:
        yield
    except user_error_types() as exc:  # type: ignore[misc]
        fail(str(exc))


def _emit(data: Any, as_json: bool, text: Callable[[], str]) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        typer.echo(text())


# ---------------------------------------------------------------- rules layer
@app.command()
def odds(
    attackers: Annotated[int, typer.Argument(help="Armies that may attack (the one left behind not counted).")],
    defenders: Annotated[int, typer.Argument(help="Defending armies.")],
    as_json: JsonOption = False,
) -> None:
    """Exact odds of an attack carried on until one side is exhausted."""
    from pbem.rules.odds import battle, format_odds, to_json

    if attackers < 1 or defenders < 1:
        fail("attackers and defenders must be at least 1")
    result = battle(attackers, defenders)
    _emit(to_json(result), as_json, lambda: format_odds(result))


@app.command()
def maps(
    name: Annotated[str | None, typer.Argument(help="A map name, or 'import'.")] = None,
    file: Annotated[Path | None, typer.Argument(help="With 'import': the Domination .map file.")] = None,
    as_json: JsonOption = False,
    cards: Annotated[Path | None, typer.Option("--cards", help="With import: the .cards file.")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="With import: where to write.")] = None,
    refuse_one_way: Annotated[
        bool, typer.Option("--refuse-one-way", help="With import: refuse one-way borders.")
    ] = False,
) -> None:
    """List the maps, show one (territories, continents, edges), or `maps import FILE.map`."""
    from pbem.rules.errors import MapError
    from pbem.rules.maps import builtin_map, load_map, map_names

    try:
        if name == "import":
            _import_map(file, cards, output, refuse_one_way)
            return
        if name is None:
            names = map_names()
            _emit(names, as_json, lambda: "\n".join(names))
            return
        board = load_map(Path(name)) if name.endswith(".toml") else builtin_map(name)
    except MapError as exc:
        fail(str(exc))
    except KeyError:
        fail(f"no map {name!r} (known: {', '.join(map_names())})")
    from pbem.service.describe import describe_map, map_to_json

    _emit(map_to_json(board), as_json, lambda: describe_map(board))


def _import_map(file: Path | None, cards: Path | None, output: Path | None, refuse: bool) -> None:
    from pbem.rules.domination import import_domination

    if file is None:
        fail("maps import needs the .map file")
    if not file.is_file():
        fail(f"{file}: no such file")
    text, warnings = import_domination(file, cards, fix_one_way=not refuse)
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


@app.command()
def simulate(
    players: Annotated[int, typer.Option(help="Players per game.")] = 4,
    games: Annotated[int, typer.Option(help="How many games.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the first game.")] = 1,
    bot: Annotated[str, typer.Option(help="random or greedy.")] = "random",
    preset: Annotated[str, typer.Option(help="Rules preset.")] = "classic",
    map_name: Annotated[str, typer.Option("--map", help="Map name.")] = "classic",
    workers: Annotated[int, typer.Option(help="Processes to spread the games over.")] = 2,
    cap: Annotated[int, typer.Option(help="Safety cap on player-turns per game.")] = 3000,
    as_json: JsonOption = False,
) -> None:
    """Play whole games between bots and print how they went."""
    from pbem.rules.errors import OptionsError
    from pbem.rules.maps import builtin_map
    from pbem.rules.options import load_preset
    from pbem.rules.simulate import simulate_many

    try:
        options = load_preset(preset)
        options.check_players(players)
        board = builtin_map(map_name)
        summary = simulate_many(board, options, players, games, seed, bot, workers, cap)
    except (OptionsError, ValueError, KeyError) as exc:
        fail(str(exc))
    _emit(summary.to_json(), as_json, summary.describe)


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="A file of orders (a mail body), or - for stdin.")],
    map_name: Annotated[str, typer.Option("--map", help="Check syntax against this map.")] = "classic",
    game: Annotated[str | None, typer.Option(help="Check against this stored game.")] = None,
    player: Annotated[str | None, typer.Option("--as", help="With --game: the player.")] = None,
    config: ConfigOption = None,
) -> None:
    """Check orders: exit 0 when valid, 1 when not, errors as the mail reply prints them."""
    text = sys.stdin.read() if str(file) == "-" else _read(file)
    with user_errors():
        if game is not None:
            from pbem.service.games import check_against_game

            result = check_against_game(_config(config), game, text, player)
        else:
            from pbem.orders.check import check_text
            from pbem.rules.maps import builtin_map

            result = check_text(text, builtin_map(map_name))
    typer.echo(result.report)
    raise typer.Exit(0 if result.ok else 1)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"{path}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        fail(f"{path}: not UTF-8 text")


def _config(path: Path | None) -> Any:
    from pbem.config import load_config

    return load_config(path)


def main() -> None:  # pragma: no cover - console entry point
    app()
