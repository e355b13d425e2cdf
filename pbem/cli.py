"""The `pbem` command: thin typer commands over the service layer.

Imports of the heavier layers happen inside each command, so quick commands
(`pbem odds`, `pbem maps`) start fast. Every user error prints one line to
stderr and exits 1.
"""

from __future__ import annotations

import json
import os
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


@app.callback()
def _everywhere(
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="Run on another time base: the time it is now, e.g. 2026-12-01T09:00Z "
            "(also $PBEM_NOW). For trying deadlines without waiting.",
        ),
    ] = None,
) -> None:
    """Options for every command."""
    if now is not None:
        from pbem.service.clock import ENV_NOW, ClockError, clock_from

        try:
            clock_from(now)
        except ClockError as exc:
            fail(str(exc))
        os.environ[ENV_NOW] = now  # every command below reads its clock from here


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
    except user_error_types() as exc:
        fail(str(exc))


def _emit(data: Any, as_json: bool, text: Callable[[], str]) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        typer.echo(text())


# ---------------------------------------------------------------- rules layer
@app.command()
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
    _emit(to_json(result), as_json, lambda: format_odds(result))


@app.command()
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
    workers: Annotated[int, typer.Option(help="With balance: processes.")] = 1,
    png: Annotated[
        Path | None, typer.Option("--png", help="With balance: write the chart there.")
    ] = None,
) -> None:
    """List the maps, show one, `maps import FILE`, `maps check FILE`, or
    `maps balance MAP --players N --games G [--png OUT]`."""
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
            from pbem.maps.balance import balance, chart_png
            from pbem.maps.presets import load_preset

            board = load_any(_need(file, "balance"))
            result = balance(board, load_preset(preset), players, games, seed, bot, workers)
            if png is not None:
                png.write_bytes(chart_png(result))
            _emit(result.to_json(), as_json, result.describe)
            if png is not None and not as_json:
                typer.echo(f"chart: {png}")
            return
        if name is None:
            names = map_names()
            _emit(names, as_json, lambda: "\n".join(names))
            return
        board = load_any(name)
    except (MapError, OptionsError, ValueError) as exc:
        fail(str(exc))
    from pbem.service.describe import describe_map, map_to_json

    _emit(map_to_json(board), as_json, lambda: describe_map(board))


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
    import os

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
        if detect(path) == "pbem":
            from pbem.maps import load_map

            board = load_map(path)
            typer.echo(
                f"{path} (pbem format): {board.title}\n  {len(board.territories)} territories, "
                f"{len(board.continents)} continents, {len(board.edges())} borders "
                f"({len(board.one_way)} one-way)\nOK: the map can be played"
            )
            return
        imported = import_file(path, cards, two_way=two_way)
    except MapError as exc:
        typer.echo(report(None, path, exc), nl=False)
        raise typer.Exit(1) from None
    typer.echo(report(imported, path), nl=False)


@app.command()
def simulate(
    players: Annotated[int, typer.Option(help="Players per game.")] = 4,
    games: Annotated[int, typer.Option(help="How many games.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the first game.")] = 1,
    bot: Annotated[str, typer.Option(help="random or greedy.")] = "random",
    preset: Annotated[str, typer.Option(help="Rules preset.")] = "classic",
    map_name: Annotated[
        str, typer.Option("--map", help="A built-in map's name, or a map file (any format).")
    ] = "classic",
    workers: Annotated[int, typer.Option(help="Processes to spread the games over.")] = 2,
    cap: Annotated[int, typer.Option(help="Safety cap on player-turns per game.")] = 3000,
    as_json: JsonOption = False,
) -> None:
    """Play whole games between bots and print how they went."""
    from pbem.maps.presets import load_preset
    from pbem.rules.errors import MapError, OptionsError, RulesError
    from pbem.service.errors import ServiceError
    from pbem.service.games import map_text_of
    from pbem.service.simulation import simulate_many

    try:
        options = load_preset(preset)
        options.check_players(players)
        board = map_text_of(map_name)[2]
        summary = simulate_many(board, options, players, games, seed, bot, workers, cap)
    except (OptionsError, ValueError, KeyError, ServiceError, MapError, RulesError) as exc:
        fail(str(exc))
    _emit(summary.to_json(), as_json, summary.describe)


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="A file of orders (a mail body), or - for stdin.")],
    map_name: Annotated[
        str, typer.Option("--map", help="Check syntax against this map (a name or a file).")
    ] = "classic",
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
            from pbem.maps import load_any
            from pbem.orders.check import check_text

            result = check_text(text, load_any(map_name))
    typer.echo(result.report)
    raise typer.Exit(0 if result.ok else 1)


# ------------------------------------------------------------- stored games
@contextmanager
def _session(config: Path | None) -> Iterator[Any]:
    """One transaction on the configured database, user errors as one line."""
    from pbem.store import init_db, session_scope

    with user_errors():
        cfg = _config(config)
        engine = init_db(cfg.database_url)
        with session_scope(engine) as session:
            yield session


@app.command()
def init(config: ConfigOption = None) -> None:
    """Create the database (or bring it to the latest schema), and with the
    local Maildir transport the game's inbox with its folders."""
    from pbem.store import current_revision, init_db, safe_url

    with user_errors():
        cfg = _config(config)
        engine = init_db(cfg.database_url)
        typer.echo(f"database {safe_url(engine)} at revision {current_revision(engine)}")
        if cfg.mail.transport == "maildir":
            from pbem.mail.maildir import create_inbox

            path = create_inbox(cfg.mail.maildir_root, cfg.mail.game_address)
            typer.echo(f"inbox {path} (a Maildir: players' mail is dropped into {path}/new)")


@app.command()
def new(
    game: Annotated[str, typer.Argument(help="The game's name, e.g. world-1.")],
    player: Annotated[
        list[str] | None,
        typer.Option("--player", "-p", help="NAME:ADDRESS[:COLOUR], in seat order."),
    ] = None,
    preset: Annotated[str, typer.Option(help="Rules preset (see `pbem rules`).")] = "classic",
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="K=V over the preset.")
    ] = None,
    map_name: Annotated[
        str, typer.Option("--map", help="A built-in map's name, or a map file (any format).")
    ] = "classic",
    gm: Annotated[str | None, typer.Option(help="The GM's address (alerts).")] = None,
    open_: Annotated[
        bool, typer.Option("--open", help="Open for players to JOIN by mail.")
    ] = False,
    seats: Annotated[int, typer.Option(help="With --open: how many players.")] = 0,
    hours: Annotated[float | None, typer.Option("--turn-hours", help="Hours per turn.")] = None,
    adjudicate_at: Annotated[
        str | None, typer.Option("--adjudicate", help="'orders' (default) or 'deadline'.")
    ] = None,
    dice: Annotated[
        str,
        typer.Option("--dice", help="Dice version: v2 (default: players' orders mix in) or v1."),
    ] = "v2",
    setting: Annotated[
        list[str] | None,
        typer.Option(
            "--setting",
            "-s",
            help="K=V timing or policy setting (e.g. timezone=Europe/Paris, "
            "remove_after_misses=2, on_removal=bot, reminder_hours=[24,6]).",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Create a game (players seated, or --open for JOIN by mail); prints passwords once."""
    from pbem.service.games import create_game, parse_player

    overrides = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--option {item!r}: expected K=V")
        overrides[key.strip()] = value
    if open_ and (player or seats < 2):
        fail("--open takes --seats N (2 or more) and no --player")
    if not open_ and not player:
        fail("name the players with --player NAME:ADDRESS (or --open --seats N)")
    if adjudicate_at not in (None, "orders", "deadline"):
        fail("--adjudicate must be 'orders' or 'deadline'")
    if dice not in ("v1", "v2"):
        fail(f"--dice {dice!r}: use v1 or v2")
    with _session(config) as session:
        cfg = _config(config)
        settings = {
            "turn_hours": hours or cfg.defaults.turn_hours,
            "grace_hours": cfg.defaults.grace_hours,
            "reminder_hours": list(cfg.defaults.reminder_hours),
            "adjudicate": adjudicate_at or cfg.defaults.adjudicate,
        }
        settings.update(_settings(setting or []))
        specs = [parse_player(p) for p in player or []]
        created = create_game(
            session,
            game,
            specs,
            preset=preset,
            overrides=overrides,
            map_name=map_name,
            gm_address=gm,
            settings=settings,
            open_seats=seats if open_ else 0,
            dice_version=dice,
        )
        row = created.game
        if open_:
            typer.echo(
                f"game {row.name} open for {seats} players: they mail "
                f"'JOIN {row.name} AS NAME' to {cfg.mail.game_address}"
            )
            return
        _announce_start(session, cfg, row, created.passwords)
        typer.echo(
            f"game {row.name} created: {len(specs)} players, preset {preset}, map {map_name}"
        )
        typer.echo(f"dice commitment ({row.dice_version}): {row.commitment}")
        for name, password in created.passwords.items():
            typer.echo(f"  password of {name}: {password}")


def _settings(items: list[str], known_only: bool = True) -> dict[str, Any]:
    """--setting K=V: V read as JSON when it is (numbers, lists, true/false), else text."""
    from pbem.service.settings import DEFAULTS

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            fail(f"--setting {item!r}: expected K=V")
        if known_only and key not in DEFAULTS:
            fail(f"--setting {key}: no such setting (known: {', '.join(sorted(DEFAULTS))})")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _announce_start(session: Any, cfg: Any, row: Any, passwords: dict[str, str]) -> None:
    """Queue the game-start mails (the next poll sends them)."""
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.notify import game_start

    game_start(session, Context(cfg, clock_from(None)), row, passwords)


# --------------------------------------------------------------- GM commands
def _gm(config: Path | None, game: str, action: Callable[..., str], *args: Any) -> None:
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.games import find_game

    with _session(config) as session:
        row = find_game(session, game)
        typer.echo(action(session, Context(_config(config), clock_from(None)), row, *args))


@app.command("set")
def set_(
    game: str,
    items: Annotated[list[str], typer.Argument(help="KEY=VALUE, e.g. turn_hours=24.")],
    config: ConfigOption = None,
) -> None:
    """Change timing or policy settings of a running game (announced to the
    players); rule options cannot change once a game has begun."""
    from pbem.service import gm

    _gm(config, game, gm.change_settings, _settings(items, known_only=False))


@app.command()
def pause(game: str, config: ConfigOption = None) -> None:
    """Pause a game: deadlines stop until it resumes."""
    from pbem.service import gm

    _gm(config, game, gm.pause)


@app.command()
def resume(game: str, config: ConfigOption = None) -> None:
    """Resume a paused game; the deadline moves by the time it was paused."""
    from pbem.service import gm

    _gm(config, game, gm.resume)


@app.command()
def extend(game: str, hours: float, config: ConfigOption = None) -> None:
    """Push the current deadline back by HOURS."""
    from pbem.service import gm

    _gm(config, game, gm.extend, hours)


@app.command()
def kick(game: str, player: str, config: ConfigOption = None) -> None:
    """Remove a player now (territories neutral, or the seat to the bot by option)."""
    from pbem.service import gm

    _gm(config, game, gm.kick, player)


@app.command("replace")
def replace_(
    game: str,
    player: str,
    address: str,
    name: Annotated[str | None, typer.Option(help="The newcomer's name.")] = None,
    config: ConfigOption = None,
) -> None:
    """Give PLAYER's seat to a new ADDRESS (new password, extended first deadline)."""
    from pbem.service import gm

    _gm(config, game, gm.replace, player, address, name)


@app.command()
def rollback(
    game: str,
    turn: int,
    reroll: Annotated[
        bool, typer.Option(help="New dice from TURN on: a new secret, its commitment announced.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Undo every step from TURN on: truncate the log, replay, announce. The
    replayed turns roll the same dice unless --reroll."""
    from pbem.service import gm

    _gm(config, game, gm.rollback, turn, reroll)


@app.command()
def process(game: str, config: ConfigOption = None) -> None:
    """Play the current turn (or setup phase) now, defaults for the missing."""
    from pbem.service import gm

    _gm(config, game, gm.process)


@app.command("gm-password")
def gm_password(game: str, config: ConfigOption = None) -> None:
    """Set a new GM password for GAME: with it, mail from the GM's address runs
    PAUSE, RESUME, EXTEND hours, PROCESS, KICK player and STATUS."""
    from pbem.service import gmmail

    _gm(config, game, gmmail.set_gm_password)


@app.command("list")
def list_(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """The games in the database."""
    from pbem.service.games import list_games

    with _session(config) as session:
        games = list_games(session)
        data = [
            {
                "name": g.name,
                "phase": g.phase,
                "status": g.status,
                "turn": g.turn,
                "map": g.map_name,
                "preset": g.preset,
            }
            for g in games
        ]
    _emit(
        data,
        as_json,
        lambda: (
            "\n".join(
                f"{d['name']:<20}{d['status']:<10}{d['phase']:<9}"
                f"turn {d['turn']:<5}{d['preset']}/{d['map']}"
                for d in data
            )
            or "no games"
        ),
    )


@app.command()
def show(game: str, config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """A game's board by continent, players, card counts, whose turn, deadline."""
    from pbem.service.describe import describe_game, game_to_json
    from pbem.service.games import find_game, load
    from pbem.service.stats import response_stats, stats_lines

    with _session(config) as session:
        row = find_game(session, game)
        state = load(session, row).state
        info = {
            "name": row.name,
            "status": row.status,
            "map": row.map_name,
            "preset": row.preset,
            "commitment": row.commitment,
            "deadline": row.deadline.isoformat() if row.deadline else None,
        }
        data = game_to_json(state, info)
        if row.deadline is not None:  # readable, in the game's zone and UTC
            from pbem.report.textfmt import when
            from pbem.service.settings import settings

            info["deadline_text"] = when(row.deadline, str(settings(row)["timezone"]))
        text = describe_game(state, info)
        answers = response_stats(session, row)
        data["response_times"] = [
            {
                "player": s.name,
                "answered": s.answered,
                "median_seconds": s.median.total_seconds() if s.median else None,
                "worst_seconds": s.worst.total_seconds() if s.worst else None,
                "missed": s.missed,
            }
            for s in answers
        ]
        if answers:
            text = text.rstrip("\n") + "\n\n" + "\n".join(stats_lines(answers))
    _emit(data, as_json, lambda: text)


@app.command()
def adjudicate(
    game: str,
    orders: Annotated[Path, typer.Option("--orders", help="File with the orders (a mail body).")],
    player: Annotated[
        str | None, typer.Option("--as", help="Whose orders (default: whose turn it is).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate only; change nothing.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Enter a player's orders by hand, as the GM, and play them."""
    from pbem.orders.errors import format_problems
    from pbem.service.games import find_game, find_player, players_of, submit

    text = _read(orders)
    with _session(config) as session:
        row = find_game(session, game)
        if player is not None:
            who = find_player(session, row, player)
        elif row.current_seat is not None and row.phase == "playing":
            who = players_of(session, row)[row.current_seat]
        else:
            fail("the game is setting up: say whose orders these are with --as PLAYER")
        outcome = submit(session, row, who, text, source="gm", dry_run=dry_run)
        if not outcome.accepted:
            typer.echo(format_problems(outcome.problems, text), err=True)
            raise typer.Exit(1)
        typer.echo(outcome.canonical.rstrip("\n"))
        typer.echo(f"{who.name}: {outcome.message}")
        if row.phase == "over" and row.winner_seat is not None:
            typer.echo(f"game over: {players_of(session, row)[row.winner_seat].name} wins")


@app.command("replay")
def replay_cmd(
    game: str,
    verify: Annotated[
        bool, typer.Option("--verify", help="Compare every stored hash (always done).")
    ] = True,
    config: ConfigOption = None,
) -> None:
    """Rebuild a game from its order log and compare every turn's stored hash."""
    from pbem.service.archive import replay_game
    from pbem.service.games import find_game, log_of

    with _session(config) as session:
        row = find_game(session, game)
        total = len(log_of(session, row))
        with typer.progressbar(
            length=max(total, 1), label=f"replaying {game}", file=sys.stderr
        ) as bar:

            def progress(done: int, _total: int) -> None:
                bar.update(1)

            report = replay_game(session, row, progress)
    typer.echo(report.message)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def export(
    game: str,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")
    ] = None,
    with_secret: Annotated[
        bool, typer.Option("--with-secret", help="Include the secret (GM backups).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Write a game record: headers, then the canonical orders turn by turn."""
    from pbem.service.archive import export_record
    from pbem.service.games import find_game

    with _session(config) as session:
        text = export_record(session, find_game(session, game), with_secret)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


@app.command("import")
def import_(
    file: Path,
    secret: Annotated[
        str | None, typer.Option(help="The game's secret, if the record has none.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Store a game record in this database, replaying and checking every step."""
    from pbem.service.archive import import_record

    text = _read(file)
    with _session(config) as session:
        game, _ = import_record(session, text, secret, str(file))
        typer.echo(f"imported {game.name}: turn {game.turn}, {game.phase}")


@app.command()
def verify(
    file: Path,
    secret: Annotated[str, typer.Option(help="The revealed secret (hex).")],
) -> None:
    """Recompute every roll of a game record from the revealed secret."""
    from pbem.log.records import RecordError, read_record, verify_record

    text = _read(file)
    try:
        record = read_record(text, str(file))
        report = verify_record(record, secret)
    except RecordError as exc:
        fail(str(exc))
    typer.echo(report.message)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def reveal(
    game: str,
    force: Annotated[
        bool, typer.Option("--force", help="Publish it although the game is still running.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Publish a game's secret so that anyone can verify every roll (a running
    game's future rolls too: that needs --force)."""
    from pbem.service.archive import reveal as reveal_secret
    from pbem.service.games import find_game

    with _session(config) as session:
        row = find_game(session, game)
        secret = reveal_secret(session, row, force)
        typer.echo(f"secret of {row.name}: {secret}")
        typer.echo(
            f"check: pbem export {row.name} -o {row.name}.pgn && "
            f"pbem verify {row.name}.pgn --secret {secret}"
        )


@app.command()
def rules(
    name: Annotated[str | None, typer.Argument(help="A preset or a stored game.")] = None,
    config: ConfigOption = None,
) -> None:
    """The rules in force, in words: of a preset, or of a stored game."""
    from pbem.maps.presets import load_preset, preset_description, preset_names
    from pbem.paths import presets_dir
    from pbem.rules.errors import OptionsError
    from pbem.rules.options import Options
    from pbem.service.describe import describe_options

    presets = preset_names(presets_dir())
    if name is None:
        for preset in presets:
            typer.echo(f"{preset:<16}{preset_description(preset)}")
        return
    if name in presets:
        try:
            options = load_preset(name)
        except OptionsError as exc:
            fail(str(exc))
        typer.echo(describe_options(options, f"{name}: {preset_description(name)}"))
        return
    import json as _json

    from pbem.service.games import find_game

    with _session(config) as session:
        row = find_game(session, name)
        options = Options.from_dict(_json.loads(row.options_json))
        typer.echo(describe_options(options, f"game {row.name} (preset {row.preset})"))


# ------------------------------------------------------------------- mail
@app.command()
def poll(config: ConfigOption = None) -> None:
    """One cycle: fetch new mail, process it, run deadlines, send the outbox.

    Overlapping runs (cron) exit quietly; exit code 2 when a server or the
    database could not be used (each problem on one line; the other stages ran).
    """
    import logging

    from pbem.service.clock import clock_from
    from pbem.service.poll import PollBusy, database_unusable, poll_lock, run_cycle
    from pbem.store import init_db
    from pbem.store.errors import DatabaseError

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    for noisy in ("alembic", "imapclient"):  # their INFO lines are not the poll's log
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with user_errors():
        cfg = _config(config)
        try:
            with poll_lock(cfg.state_dir):
                try:
                    engine = init_db(cfg.database_url)
                except DatabaseError as exc:  # an outage like any other: recorded, exit 2
                    report = database_unusable(cfg, clock_from(None), exc)
                else:
                    report = run_cycle(engine, cfg, clock_from(None))
        except PollBusy:
            return
    for line in report.deadline_events:
        typer.echo(line)
    typer.echo(
        f"{len(report.mails)} mails; {report.sent} sent, {report.deferred} deferred, "
        f"{report.failed} failed"
        + (f"; {report.retrying} to try again" if report.retrying else "")
        + (f"; {report.held} held for the GM" if report.held else "")
    )
    for error in report.errors:
        typer.echo(f"error: {error}", err=True)
    if report.errors:
        raise typer.Exit(2)


@app.command()
def status(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Is the service healthy? Outages, mail held or failing, the outbox.

    Exit code 0 healthy, 1 warning, 2 critical (for a monitoring check).
    """
    from pbem.service.clock import clock_from
    from pbem.service.status import describe, read_status
    from pbem.store import make_engine

    with user_errors():
        cfg = _config(config)
        found = read_status(make_engine(cfg.database_url), cfg, clock_from(None))
    _emit(found.as_json(), as_json, lambda: describe(found))
    if found.level:
        raise typer.Exit(int(found.level))


@app.command()
def daemon(
    interval: Annotated[float, typer.Option(help="Seconds between cycles at most.")] = 60.0,
    cycles: Annotated[int, typer.Option(help="Stop after this many cycles (0: never).")] = 0,
    config: ConfigOption = None,
) -> None:
    """Poll in a loop (IMAP IDLE where the server has it); stops cleanly on SIGTERM."""
    import logging

    from pbem.service.clock import clock_from
    from pbem.service.daemon import open_database, run_daemon

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    for noisy in ("alembic", "imapclient"):  # their INFO lines are not the poll's log
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with user_errors():
        cfg = _config(config)
        clock = clock_from(None)
        engine = open_database(cfg, min(interval, 10.0), clock)
        if engine is not None:
            run_daemon(engine, cfg, clock, interval, cycles)


@app.command()
def outbox(
    retry: Annotated[bool, typer.Option("--retry", help="Send every pending mail now.")] = False,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the outbox (pending and failed mail); --retry sends the pending ones now."""
    from pbem.mail.settings import open_sender
    from pbem.service.clock import clock_from
    from pbem.service.outbox import unsent
    from pbem.service.poll import mail_settings, outbox_lease, send_outbox
    from pbem.store import init_db, session_scope

    with user_errors():
        cfg = _config(config)
        engine = init_db(cfg.database_url)
        if retry:
            settings = mail_settings(cfg)
            report = send_outbox(
                engine,
                open_sender(settings),
                clock_from(None),
                settings.from_address,
                retry_all=True,
                lease=outbox_lease(cfg),
            )
            typer.echo(f"{report.sent} sent, {report.deferred} deferred, {report.failed} failed")
        with session_scope(engine, write=False) as session:
            data = unsent(session)
    _emit(
        data,
        as_json,
        lambda: (
            "\n".join(
                f"{d['id']:>6} {d['status']:<8} {d['attempts']:>2} "
                f"{d['recipient']:<28} {d['subject']}"
                + (f"\n       last error: {d['last_error']}" if d["last_error"] else "")
                for d in data
            )
            or "the outbox is empty"
        ),
    )


@app.command()
def demo(
    directory: Annotated[
        Path, typer.Option("--dir", help="Where the demo keeps its files.")
    ] = Path("var/demo"),
    seed: Annotated[int, typer.Option(help="Seed of the bots' choices.")] = 7,
) -> None:
    """A game of four bots played by mail (SQLite, local Maildir) until someone wins."""
    from pbem.service.demo import run_demo

    with user_errors():
        result = run_demo(directory, seed=seed, say=typer.echo)
    if result.winner is None:
        raise typer.Exit(1)


@app.command()
def render(
    game: str,
    turn: Annotated[int | None, typer.Option(help="The turn (default: the latest).")] = None,
    player: Annotated[
        str | None, typer.Option("--as", help="Render for this player (default: the GM).")
    ] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write the HTML part here.")] = None,
    text: Annotated[
        bool, typer.Option("--text", help="Print the text part (the default).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Print or write a turn report of a stored game without sending anything."""
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.games import find_game, find_player
    from pbem.service.notify import render_turn

    with _session(config) as session:
        row = find_game(session, game)
        seat = find_player(session, row, player).seat if player else None
        rendered = render_turn(session, Context(_config(config), clock_from(None)), row, turn, seat)
    if html is not None:
        from pbem.report.mime import to_mime
        from pbem.service.demo import _standalone_html

        msg = to_mime(
            rendered,
            sender="pbem@localhost",
            recipient="you@localhost",
            message_id="<render@localhost>",
        )
        html.write_text(_standalone_html(msg), encoding="utf-8")
        typer.echo(f"wrote {html}")
    if html is None or text:
        typer.echo(f"Subject: {rendered.subject}\n")
        typer.echo(rendered.text)


@app.command()
def site(
    out: Annotated[Path, typer.Argument(help="The folder to write the site into.")],
    config: ConfigOption = None,
) -> None:
    """Write the static game site: every game's standings, maps, turns, public press,
    deadline (.ics) and, once over, its record. No private fact is written."""
    from pbem.service.clock import SystemClock
    from pbem.service.context import Context
    from pbem.site import build_site

    with _session(config) as session:
        written = build_site(session, Context(_config(config), SystemClock()), out)
    pages = sum(1 for p in written if p.suffix == ".html")
    typer.echo(f"wrote {pages} pages ({len(written)} files) to {out}")


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
