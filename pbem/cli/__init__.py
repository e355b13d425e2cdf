"""The `pbem` command: the typer app, assembled from thin command modules.

Each module of this package holds one group of commands (tools, maps, games,
gm, records, mail, site) as plain functions over the service layer; this file
registers them in panels by what a GM does (set up, run, intervene, records,
maps, tools), in the order `pbem --help` lists them. Imports of the heavier
layers happen inside each command, so quick commands (`pbem odds`,
`pbem maps`) start fast. Every user error prints one line to stderr and exits 1.

Typer reads the signature of every registered command each time the app runs
(type hints evaluated, click parameters built), so `pbem.entry` runs
`app_for(argv)`: an app holding only the command named, when one is; `app`,
the whole app, is for `pbem --help`, anything else, and the tests.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Annotated

import typer

from pbem.cli.common import fail

# What a GM does, in the order of `pbem --help`: each panel's title, then its
# commands as (command, module of pbem.cli, function).
PANELS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "Set up a game",
        (
            ("init", "games", "init"),
            ("new", "games", "new"),
            ("rules", "tools", "rules"),
            ("gm-password", "gm", "gm_password"),
        ),
    ),
    (
        "Run and watch games",
        (
            ("poll", "mail", "poll"),
            ("daemon", "mail", "daemon"),
            ("status", "mail", "status"),
            ("outbox", "mail", "outbox"),
            ("list", "games", "list_"),
            ("show", "games", "show"),
            ("render", "site", "render"),
            ("mail", "mail", "mail_app"),  # a group (`pbem mail login`, `pbem mail test`): last
        ),
    ),
    (
        "Intervene in a game",
        (
            ("process", "gm", "process"),
            ("adjudicate", "games", "adjudicate"),
            ("pause", "gm", "pause"),
            ("resume", "gm", "resume"),
            ("extend", "gm", "extend"),
            ("set", "gm", "set_"),
            ("kick", "gm", "kick"),
            ("replace", "gm", "replace_"),
            ("new-password", "gm", "new_password"),
            ("rollback", "gm", "rollback"),
            ("upgrade-rules", "gm", "upgrade_rules"),
        ),
    ),
    (
        "Records and the site",
        (
            ("export", "records", "export"),
            ("import", "records", "import_"),
            ("replay", "records", "replay_cmd"),
            ("reveal", "records", "reveal"),
            ("verify", "records", "verify"),
            ("site", "site", "site"),
        ),
    ),
    ("Maps", (("maps", "maps", "maps"),)),
    (
        "Tools",
        (
            ("check", "tools", "check"),
            ("odds", "tools", "odds"),
            ("simulate", "tools", "simulate"),
            ("demo", "site", "demo"),
        ),
    ),
)
# every command, in the order of `pbem --help`
COMMANDS: tuple[tuple[str, str, str], ...] = tuple(c for _, group in PANELS for c in group)


def _version(value: bool) -> None:
    if value:
        from pbem import __version__, native

        typer.echo(f"pbem {__version__}; {native.state().describe()}")
        raise typer.Exit()


def _everywhere(
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            help="Run on another time base: the time it is now, e.g. 2026-12-01T09:00Z "
            "(also $PBEM_NOW). For trying deadlines without waiting.",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print pbem's version and which rules engine runs (compiled or pure "
            "Python), then exit.",
            callback=_version,
            is_eager=True,
        ),
    ] = False,
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
    for panel, group in PANELS:
        for name, module, function in group:
            if only is None or name == only:
                command = getattr(importlib.import_module(f"pbem.cli.{module}"), function)
                if isinstance(command, typer.Typer):
                    built.add_typer(command, name=name, rich_help_panel=panel)
                    continue
                text = help_text(command.__doc__ or "")
                built.command(
                    name,
                    help=text,
                    short_help=text.split("\n\n")[0],
                    rich_help_panel=panel,
                )(command)
    return built


def help_text(doc: str) -> str:
    """A command's docstring as its help: each paragraph one line, for the help
    to wrap whole sentences at the terminal's width (typer's rich help keeps a
    docstring's line breaks where they fell in the source)."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


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
