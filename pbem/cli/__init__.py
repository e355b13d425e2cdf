"""The `pbem` command: the typer app, assembled from thin command modules.

Each module of this package holds one group of commands (tools, maps, games,
gm, records, mail, site) as plain functions over the service layer; this file
registers them, in the order `pbem --help` lists them. Imports of the heavier
layers happen inside each command, so quick commands (`pbem odds`,
`pbem maps`) start fast. Every user error prints one line to stderr and exits 1.

Typer reads the signature of every registered command each time the app runs
(type hints evaluated, click parameters built), so `pbem.entry` runs
`app_for(argv)`: an app holding only the command named, when one is; `app`,
the whole app, is for `pbem --help`, anything else, and the tests.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated

import typer

from pbem.cli.common import fail

# (command, module of pbem.cli, function), in the order of `pbem --help`
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("odds", "tools", "odds"),
    ("maps", "maps", "maps"),
    ("simulate", "tools", "simulate"),
    ("check", "tools", "check"),
    ("init", "games", "init"),
    ("new", "games", "new"),
    ("set", "gm", "set_"),
    ("pause", "gm", "pause"),
    ("resume", "gm", "resume"),
    ("extend", "gm", "extend"),
    ("kick", "gm", "kick"),
    ("replace", "gm", "replace_"),
    ("rollback", "gm", "rollback"),
    ("process", "gm", "process"),
    ("gm-password", "gm", "gm_password"),
    ("new-password", "gm", "new_password"),
    ("list", "games", "list_"),
    ("show", "games", "show"),
    ("adjudicate", "games", "adjudicate"),
    ("replay", "records", "replay_cmd"),
    ("export", "records", "export"),
    ("import", "records", "import_"),
    ("verify", "records", "verify"),
    ("reveal", "records", "reveal"),
    ("rules", "tools", "rules"),
    ("poll", "mail", "poll"),
    ("status", "mail", "status"),
    ("daemon", "mail", "daemon"),
    ("outbox", "mail", "outbox"),
    ("mail", "mail", "mail_app"),  # a group: `pbem mail login`, `pbem mail test`
    ("demo", "site", "demo"),
    ("render", "site", "render"),
    ("site", "site", "site"),
)


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


def build(only: str | None = None) -> typer.Typer:
    """The app with every command, or with the one named ``only``."""
    built = typer.Typer(
        help="pbem: a play-by-email adjudicator for Risk.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    built.callback()(_everywhere)
    for name, module, function in COMMANDS:
        if only is None or name == only:
            command = getattr(importlib.import_module(f"pbem.cli.{module}"), function)
            if isinstance(command, typer.Typer):
                built.add_typer(command, name=name)
            else:
                built.command(name)(command)
    return built


def command_of(args: list[str]) -> str | None:
    """The command named by a command line (after the options for every
    command), None for none, `--help` first, or an unknown name."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        if rest[0] == "--now":
            rest = rest[2:]
        elif rest[0].startswith("--now="):
            rest = rest[1:]
        else:
            return None  # --help, or an option typer will refuse
    if rest and any(rest[0] == name for name, _, _ in COMMANDS):
        return rest[0]
    return None


def app_for(args: list[str]) -> typer.Typer:
    """The app that answers this command line as `app` would."""
    name = command_of(args)
    return app if name is None else build(name)


app = build()


def main() -> None:  # pragma: no cover - console entry point
    app_for(sys.argv[1:])()
