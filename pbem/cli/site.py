"""What a game looks like: the demo game, a turn report rendered, the static site."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pbem.cli.common import (
    ConfigOption,
    config_of,
    open_session,
    user_errors,
)


def demo(
    directory: Annotated[
        Path, typer.Option("--dir", help="Where the demo keeps its files.")
    ] = Path("var/demo"),
    seed: Annotated[int, typer.Option(help="Seed of the bots' choices.")] = 7,
) -> None:
    """A game of four bots played by mail (SQLite, local Maildir) until someone wins."""
    from pbem.service.ops.demo import run_demo

    with user_errors():
        result = run_demo(directory, seed=seed, say=typer.echo)
    if result.winner is None:
        raise typer.Exit(1)


def render(
    game: str,
    turn: Annotated[int | None, typer.Option(help="The turn (default: the latest).")] = None,
    player: Annotated[
        str | None,
        typer.Option("--as", help="Render for this player, without their token (default: the GM)."),
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
    from pbem.service.play.games import find_game, find_player
    from pbem.service.play.history import render_turn

    with open_session(config) as session:
        row = find_game(session, game)
        seat = find_player(session, row, player).seat if player else None
        context = Context(config_of(config), clock_from(None))
        rendered = render_turn(session, context, row, turn, seat)
    if html is not None:
        from pbem.report.mime import to_mime
        from pbem.service.ops.demo import standalone_html

        msg = to_mime(
            rendered,
            sender="pbem@localhost",
            recipient="you@localhost",
            message_id="<render@localhost>",
        )
        html.write_text(standalone_html(msg), encoding="utf-8")
        typer.echo(f"wrote {html}")
    if html is None or text:
        typer.echo(f"Subject: {rendered.subject}\n")
        typer.echo(rendered.text)


def site(
    out: Annotated[Path, typer.Argument(help="The folder to write the site into.")],
    config: ConfigOption = None,
) -> None:
    """Write the static game site: every game's standings, maps, turns, public press,
    deadline (.ics) and, once over, its record.

    Turn pages are named by turn number (turn-1.html is turn 1); the game's page
    shows the board now and at the start. No private fact is written."""
    from pbem.service.clock import SystemClock
    from pbem.service.context import Context
    from pbem.site import build_site

    with open_session(config) as session:
        written = build_site(session, Context(config_of(config), SystemClock()), out)
    pages = sum(1 for p in written if p.suffix == ".html")
    typer.echo(f"wrote {pages} pages ({len(written)} files) to {out}")
