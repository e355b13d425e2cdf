"""The `pbem` command: the typer app, assembled from thin command modules.

Each module of this package holds one group of commands (tools, maps, games,
gm, records, mail, site) as plain functions over the service layer; this file
registers them, in the order `pbem --help` lists them. Imports of the heavier
layers happen inside each command, so quick commands (`pbem odds`,
`pbem maps`) start fast. Every user error prints one line to stderr and exits 1.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from pbem.cli import games, gm, mail, maps, records, site, tools
from pbem.cli.common import fail

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


# in the order of `pbem --help`
app.command()(tools.odds)
app.command()(maps.maps)
app.command()(tools.simulate)
app.command()(tools.check)
app.command()(games.init)
app.command()(games.new)
app.command("set")(gm.set_)
app.command()(gm.pause)
app.command()(gm.resume)
app.command()(gm.extend)
app.command()(gm.kick)
app.command("replace")(gm.replace_)
app.command()(gm.rollback)
app.command()(gm.process)
app.command("gm-password")(gm.gm_password)
app.command("new-password")(gm.new_password)
app.command("list")(games.list_)
app.command()(games.show)
app.command()(games.adjudicate)
app.command("replay")(records.replay_cmd)
app.command()(records.export)
app.command("import")(records.import_)
app.command()(records.verify)
app.command()(records.reveal)
app.command()(tools.rules)
app.command()(mail.poll)
app.command()(mail.status)
app.command()(mail.daemon)
app.command()(mail.outbox)
app.command()(site.demo)
app.command()(site.render)
app.command()(site.site)


def main() -> None:  # pragma: no cover - console entry point
    app()
