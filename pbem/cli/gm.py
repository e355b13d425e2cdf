"""The GM's commands on a running game (each one a function of service/play/gm.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.common import (
    ConfigOption,
    SendOption,
    config_of,
    open_session,
    parse_settings,
    user_errors,
)


def _gm(config: Path | None, game: str, action: Callable[..., str], *args: Any) -> None:
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.play.games import find_game

    with open_session(config) as session:
        row = find_game(session, game)
        typer.echo(action(session, Context(config_of(config), clock_from(None)), row, *args))


def set_(
    game: str,
    items: Annotated[list[str], typer.Argument(help="KEY=VALUE, e.g. turn_hours=24.")],
    config: ConfigOption = None,
) -> None:
    """Change timing or policy settings of a running game (announced to the
    players); rule options cannot change once a game has begun."""
    from pbem.service.play import gm

    _gm(config, game, gm.change_settings, parse_settings(items, known_only=False))


def pause(game: str, config: ConfigOption = None) -> None:
    """Pause a game: deadlines stop until it resumes."""
    from pbem.service.play import gm

    _gm(config, game, gm.pause)


def resume(game: str, config: ConfigOption = None) -> None:
    """Resume a paused game; the deadline moves by the time it was paused."""
    from pbem.service.play import gm

    _gm(config, game, gm.resume)


def extend(game: str, hours: float, config: ConfigOption = None) -> None:
    """Push the current deadline back by HOURS."""
    from pbem.service.play import gm

    _gm(config, game, gm.extend, hours)


def kick(game: str, player: str, config: ConfigOption = None) -> None:
    """Remove a player now (territories neutral, or the seat to the bot by option)."""
    from pbem.service.play import gm

    _gm(config, game, gm.kick, player)


def replace_(
    game: str,
    player: str,
    address: str,
    name: Annotated[
        str | None, typer.Option(help="The newcomer's name (default: from the address).")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Give PLAYER's seat to a new ADDRESS (new password, extended first deadline)."""
    from pbem.service.play import gm

    _gm(config, game, gm.replace, player, address, name)


def rollback(
    game: str,
    turn: int,
    reroll: Annotated[
        bool, typer.Option(help="New dice from TURN on: a new secret, its commitment announced.")
    ] = False,
    message: Annotated[
        str | None, typer.Option("--message", help="Why: told to the players in the notice.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    config: ConfigOption = None,
) -> None:
    """Undo every step from TURN on: truncate the log, replay, announce. The
    replayed turns roll the same dice unless --reroll."""
    from pbem.service.play import gm
    from pbem.service.play.games import find_game
    from pbem.store import init_db, session_scope

    if not yes:  # asked outside any write transaction: the poll goes on meanwhile
        with user_errors():
            engine = init_db(config_of(config).database_url)
            with session_scope(engine, write=False) as session:
                question = gm.rollback_question(session, find_game(session, game), turn)
        if not typer.confirm(question, default=False):
            typer.echo("nothing changed")
            raise typer.Exit(1)
    _gm(config, game, gm.rollback, turn, reroll, message)


def upgrade_rules(
    game: str,
    to: Annotated[
        int | None,
        typer.Option("--to", help="The rules version to move to (default: the newest)."),
    ] = None,
    message: Annotated[
        str | None, typer.Option("--message", help="Why: told to the players in the notice.")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do it (without: print what would change).")
    ] = False,
    send: SendOption = False,
    config: ConfigOption = None,
) -> None:
    """Move a running game to newer rules from now on, announced to every
    player; without --yes, print what would change. A game keeps the rules it
    started with through every upgrade of pbem until its GM moves it."""
    from pbem.cli.games import mail_out
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.ops import gmsummary
    from pbem.service.play import rulesupgrade
    from pbem.service.play.games import find_game
    from pbem.store import init_db, session_scope

    with user_errors():
        cfg = config_of(config)
        engine = init_db(cfg.database_url)
        if not yes:  # read only: the poll goes on meanwhile
            with session_scope(engine, write=False) as session:
                typer.echo(rulesupgrade.upgrade_question(session, find_game(session, game), to))
            return
        clock = clock_from(None)
        before = gmsummary.mails_waiting(engine, clock.now())
    with open_session(config) as session:
        row = find_game(session, game)
        typer.echo(rulesupgrade.upgrade_rules(session, Context(cfg, clock), row, to, message))
    mail_out(cfg, clock, before, send)


def process(game: str, config: ConfigOption = None) -> None:
    """Play the current turn (or setup phase) now, defaults for the missing;
    then who the game waits for, and the mails it queued."""
    from pbem.cli.games import mail_out
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.ops import gmsummary
    from pbem.service.play import gm
    from pbem.service.play.games import find_game
    from pbem.store import init_db

    with user_errors():
        cfg = config_of(config)
        clock = clock_from(None)
        before = gmsummary.mails_waiting(init_db(cfg.database_url), clock.now())
    with open_session(config) as session:
        row = find_game(session, game)
        typer.echo(gm.process(session, Context(cfg, clock), row))
        upcoming = gmsummary.next_step(session, row)
        if upcoming:
            typer.echo(upcoming)
    mail_out(cfg, clock, before, False)


def gm_password(game: str, config: ConfigOption = None) -> None:
    """Set a new GM password for GAME: with it, mail from the GM's address runs
    PAUSE, RESUME, EXTEND hours, PROCESS, KICK player and STATUS."""
    from pbem.service.intake import gmmail

    _gm(config, game, gmmail.set_gm_password)


def new_password(game: str, player: str, config: ConfigOption = None) -> None:
    """Give PLAYER a new password (leaked or forgotten), mailed to the seat's
    address only and never printed; the old one stops working at once."""
    from pbem.service.intake import seatguard

    _gm(config, game, seatguard.reissue_password, player)
