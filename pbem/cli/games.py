"""Stored games: init the database, create a game, list, show, enter orders by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.common import (
    ConfigOption,
    JsonOption,
    SendOption,
    config_of,
    emit,
    fail,
    open_session,
    parse_settings,
    read_text,
    user_errors,
)
from pbem.vocab import GamePhase


def init(config: ConfigOption = None) -> None:
    """Create the database (or bring it to the latest schema), and with the
    local Maildir transport the game's inbox with its folders."""
    from pbem.store import current_revision, init_db, safe_url

    with user_errors():
        cfg = config_of(config)
        engine = init_db(cfg.database_url)
        typer.echo(f"database {safe_url(engine)} at revision {current_revision(engine)}")
        if cfg.mail.transport == "maildir":
            from pbem.mail.maildir import create_inbox

            path = create_inbox(cfg.mail.maildir_root, cfg.mail.game_address)
            typer.echo(f"inbox {path} (a Maildir: players' mail is dropped into {path}/new)")


TeamsOption = Annotated[
    str | None,
    typer.Option(
        help="With -o team_size=N: the GM's teams, e.g. 'alice,bob / carol,dave' "
        "(the players are seated team after team; with --open, the names to JOIN as)."
    ),
]


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
    teams: TeamsOption = None,
    config: ConfigOption = None,
) -> None:
    """Create a game (players seated, or --open for JOIN by mail); prints passwords once."""
    from pbem.service.play.games import create_game, parse_player
    from pbem.service.play.gamesettings import new_game_settings

    overrides = option_overrides(option or [])
    _check_new_game_flags(bool(player), open_, seats, adjudicate_at, dice)
    with open_session(config) as session:
        cfg = config_of(config)
        settings = new_game_settings(
            cfg.defaults, turn_hours=hours or None, adjudicate=adjudicate_at
        )
        settings.update(parse_settings(setting or []))
        specs = [parse_player(p) for p in player or []]
        if not open_:  # (an open game keeps the GM's teams: they are seated when it fills)
            specs = _seated_in_teams(specs, teams, preset, overrides)
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
            open_teams=(teams or "") if open_ else "",
        )
        row = created.game
        if open_:
            _announce_open(row, seats, cfg.mail.game_address)
            return
        _announce_start(session, cfg, row, created.passwords)
        typer.echo(
            f"game {row.name} created: {len(specs)} players, preset {preset}, map {map_name}"
        )
        _echo_lines(_created_settings(session, row))
        typer.echo(f"dice commitment ({row.dice_version}): {row.commitment}")
        for name, password in created.passwords.items():
            typer.echo(f"  password of {name}: {password}")


def option_overrides(options: list[str]) -> dict[str, str]:
    """--option K=V, each checked."""
    overrides = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--option {item!r}: expected K=V")
        overrides[key.strip()] = value
    return overrides


def _seated_in_teams(
    specs: list[Any], teams: str | None, preset: str, overrides: dict
) -> list[Any]:
    """The players in the seat order of the GM's --teams (teams by seat blocks)."""
    if teams is None:
        return specs
    from pbem.rules.errors import OptionsError
    from pbem.rules.teamrules import seats_in_teams
    from pbem.service.play.games import options_for

    try:
        size = options_for(preset, overrides).team_size
        order = seats_in_teams([s.name for s in specs], teams, size)
    except OptionsError as exc:
        fail(str(exc))
    return [specs[i] for i in order]


def _announce_open(row: Any, seats: int, address: str) -> None:
    typer.echo(
        f"game {row.name} open for {seats} players: they mail "
        f"'JOIN {row.name} AS NAME' to {address}"
    )
    from pbem.service.ops.describe import open_settings

    _echo_lines(open_settings(row))


def _echo_lines(lines: list[str]) -> None:
    for line in lines:
        typer.echo(f"  {line}")


def _created_settings(session: Any, row: Any) -> list[str]:
    """The online settings of a game just made, as `pbem show` says them: fog,
    the teams with their members, ..."""
    from pbem.service.ops.describe import online_settings
    from pbem.service.play.games import load

    return online_settings(load(session, row).state)


def _check_new_game_flags(
    players: bool, open_: bool, seats: int, adjudicate_at: str | None, dice: str
) -> None:
    if open_ and (players or seats < 2):
        fail("--open takes --seats N (2 or more) and no --player")
    if not open_ and not players:
        fail("name the players with --player NAME:ADDRESS (or --open --seats N)")
    if adjudicate_at not in (None, "orders", "deadline"):
        fail("--adjudicate must be 'orders' or 'deadline'")
    if dice not in ("v1", "v2"):
        fail(f"--dice {dice!r}: use v1 or v2")


def _announce_start(session: Any, cfg: Any, row: Any, passwords: dict[str, str]) -> None:
    """Queue the game-start mails (the next poll sends them)."""
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.play.notify import game_start

    game_start(session, Context(cfg, clock_from(None)), row, passwords)


def list_(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """The games in the database."""
    from pbem.service.ops.overview import games_table

    with open_session(config) as session:
        data, text = games_table(session)
    emit(data, as_json, lambda: text)


def show(game: str, config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """A game's board by continent, players, card counts, whose turn, deadline."""
    from pbem.service.clock import clock_from
    from pbem.service.ops.overview import game_overview

    with open_session(config) as session:
        data, text = game_overview(session, game, clock_from(None).now())
    emit(data, as_json, lambda: text)


def adjudicate(
    game: str,
    orders: Annotated[Path, typer.Option("--orders", help="File with the orders (a mail body).")],
    player: Annotated[
        str | None, typer.Option("--as", help="Whose orders (default: whose turn it is).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate only; change nothing.")
    ] = False,
    send: SendOption = False,
    config: ConfigOption = None,
) -> None:
    """Enter a player's orders by hand, as the GM, and play them."""
    from pbem.orders.errors import format_problems_for_gm
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.ops import gmsummary
    from pbem.service.play import gm
    from pbem.service.play.games import author_of, find_game, players_of
    from pbem.store import init_db

    text = read_text(orders)
    with user_errors():
        cfg = config_of(config)
        clock = clock_from(None)
        before = gmsummary.mails_waiting(init_db(cfg.database_url), clock.now())
    with open_session(config) as session:
        row = find_game(session, game)
        who = author_of(session, row, player)
        ctx = Context(cfg, clock)
        outcome = gm.adjudicate(session, ctx, row, who, text, dry_run)
        if not outcome.accepted:
            what = f"{who.name}'s orders in {orders}"
            typer.echo(format_problems_for_gm(outcome.problems, text, what), err=True, nl=False)
            raise typer.Exit(1)
        if dry_run:
            typer.echo(
                f"{who.name}'s orders in {orders} valid, checked against game {row.name}, "
                f"turn {row.turn}; nothing was applied (--dry-run):\n"
            )
            typer.echo("Orders, as they would be recorded:")
            typer.echo(_indented(outcome.canonical))
            odds = gmsummary.forecast_of(session, row, who, text)
            for line in [""] + odds if odds else []:
                typer.echo(line)
            return
        typer.echo(outcome.canonical.rstrip("\n"))
        typer.echo(f"{who.name}: {outcome.message}")
        for line in gmsummary.turn_summary(session, ctx, row, outcome.steps):
            typer.echo(line)
        if row.phase == GamePhase.OVER and row.winner_seat is not None:
            typer.echo(f"game over: {players_of(session, row)[row.winner_seat].name} wins")
        upcoming = gmsummary.next_step(session, row)
        if upcoming:
            typer.echo(upcoming)
    mail_out(cfg, clock, before, send)


def _indented(text: str) -> str:
    return "\n".join("  " + line for line in text.rstrip("\n").splitlines())


def mail_out(cfg: Any, clock: Any, before: int, send: bool) -> None:
    """Say how many mails the command queued, and with ``send`` send the whole
    outbox now (as `pbem poll` sends it): these mails and any waiting from
    before (``before`` of them), which it says."""
    from pbem.mail.settings import open_sender
    from pbem.service.ops import gmsummary
    from pbem.service.ops.poll import outbox_lease, send_outbox
    from pbem.store import init_db

    with user_errors():
        engine = init_db(cfg.database_url)
        queued = max(gmsummary.mails_waiting(engine, clock.now()) - before, 0)
        if not send:
            if not queued:
                return  # nothing to say: nothing waits because of this command
            typer.echo(
                f"{_mails(queued)} queued: they go out at the next `pbem poll` "
                "(or now: `pbem outbox --retry`)"
            )
            return
        report = send_outbox(
            engine, open_sender(cfg.mail), clock, cfg.mail.game_address, lease=outbox_lease(cfg)
        )
    whole = f"these {queued} and {before} waiting from before" if before else f"these {queued}"
    typer.echo(
        f"{_mails(queued)} queued; the outbox sent now ({whole}): {report.sent} sent, "
        f"{report.deferred} deferred, {report.failed} failed"
    )
    for error in report.errors:
        typer.echo(f"error: {error}", err=True)


def _mails(count: int) -> str:
    return f"{count} mail" if count == 1 else f"{count} mails"
