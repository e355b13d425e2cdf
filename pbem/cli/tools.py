"""Commands that need no database: odds, simulate, check, rules (of a preset or a game)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pbem.cli.common import (
    ConfigOption,
    JsonOption,
    config_of,
    emit,
    fail,
    open_session,
    read_text,
    user_errors,
)


def odds(
    attackers: Annotated[
        int, typer.Argument(help="Armies that may attack (the one left behind not counted).")
    ],
    defenders: Annotated[int, typer.Argument(help="Defending armies.")],
    as_json: JsonOption = False,
) -> None:
    """Exact odds of an attack carried on until one side is exhausted."""
    from pbem.rules.odds import battle, format_odds, to_json

    if attackers < 1 or defenders < 1:
        fail("attackers and defenders must be at least 1")
    result = battle(attackers, defenders)
    emit(to_json(result), as_json, lambda: format_odds(result))


def simulate(
    players: Annotated[int, typer.Option(help="Players per game.")] = 4,
    games: Annotated[int, typer.Option(help="How many games.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the first game.")] = 1,
    bot: Annotated[str, typer.Option(help="random or greedy.")] = "random",
    preset: Annotated[str, typer.Option(help="Rules preset.")] = "classic",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="K=V over the preset, as pbem new takes it."),
    ] = None,
    map_name: Annotated[
        str, typer.Option("--map", help="A built-in map's name, or a map file (any format).")
    ] = "classic",
    workers: Annotated[int, typer.Option(help="Processes to spread the games over.")] = 2,
    cap: Annotated[int, typer.Option(help="Safety cap on player-turns per game.")] = 3000,
    as_json: JsonOption = False,
) -> None:
    """Play whole games between bots and print how they went."""
    from pbem.cli.games import option_overrides
    from pbem.rules.errors import MapError, OptionsError, RulesError
    from pbem.service.errors import ServiceError
    from pbem.service.ops.simulation import simulate_many
    from pbem.service.play.games import map_text_of, options_for

    try:
        options = options_for(preset, option_overrides(option or []))
        options.check_players(players)
        board = map_text_of(map_name)[2]
        summary = simulate_many(board, options, players, games, seed, bot, workers, cap)
    except (OptionsError, ValueError, KeyError, ServiceError, MapError, RulesError) as exc:
        fail(str(exc))
    emit(summary.to_json(), as_json, summary.describe)


def check(
    file: Annotated[Path, typer.Argument(help="A file of orders (a mail body), or - for stdin.")],
    map_name: Annotated[
        str, typer.Option("--map", help="Check syntax against this map (a name or a file).")
    ] = "classic",
    game: Annotated[str | None, typer.Option(help="Check against this stored game.")] = None,
    player: Annotated[str | None, typer.Option("--as", help="With --game: the player.")] = None,
    config: ConfigOption = None,
) -> None:
    """Check orders: exit 0 when valid, 1 when not; every problem the mail's reply
    would list, in the GM's words."""
    text = sys.stdin.read() if str(file) == "-" else read_text(file)
    with user_errors():
        if game is not None:
            from pbem.service.play.games import check_against_game

            source = "stdin" if str(file) == "-" else str(file)
            result = check_against_game(config_of(config), game, text, player, source)
        else:
            from pbem.maps import load_any
            from pbem.orders.check import check_text

            where = "stdin" if str(file) == "-" else str(file)
            result = check_text(text, load_any(map_name), what=f"orders in {where}")
    typer.echo(result.report)
    raise typer.Exit(0 if result.ok else 1)


def rules(
    name: Annotated[str | None, typer.Argument(help="A preset or a stored game.")] = None,
    config: ConfigOption = None,
) -> None:
    """The rules in force, in words: of a preset, or of a stored game."""
    from pbem.maps.presets import load_preset, preset_description, preset_names
    from pbem.paths import presets_dir
    from pbem.rules.errors import OptionsError
    from pbem.service.ops.describe import describe_options

    presets = preset_names(presets_dir())
    if name is None:
        width = max(16, *(len(p) + 2 for p in presets))  # a long name keeps a gap
        for preset in presets:
            typer.echo(f"{preset:<{width}}{preset_description(preset)}")
        return
    if name in presets:
        try:
            options = load_preset(name)
        except OptionsError as exc:
            fail(str(exc))
        typer.echo(describe_options(options, f"{name}: {preset_description(name)}"))
        return
    from pbem.service.play.games import find_game, players_of
    from pbem.service.play.rulesupgrade import current_options

    with open_session(config) as session:
        row = find_game(session, name)
        options = current_options(session, row)  # after any `pbem upgrade-rules`
        seats = len(players_of(session, row)) or None  # an open game: not yet known
        typer.echo(describe_options(options, f"game {row.name} (preset {row.preset})", seats))
