"""What every command module shares: the --config and --json options, one-line
errors (exit 1), a session on the configured database, reading a file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Config file (else $PBEM_CONFIG, ./pbem.toml, defaults)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
SendOption = Annotated[
    bool, typer.Option("--send", help="Send the mails it queued now, not at the next poll.")
]


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the project's error types into a one-line message and exit code 1."""
    try:
        yield
    except user_error_types() as exc:
        fail(str(exc))


def user_error_types() -> tuple[type[BaseException], ...]:
    """The error types a user can cause; imported late so that quick commands
    do not load every layer."""
    from pbem.config import ConfigError
    from pbem.rules.errors import MapError, OptionsError, RulesError
    from pbem.service.clock import ClockError
    from pbem.service.errors import ServiceError
    from pbem.store.errors import DatabaseError

    return (
        ConfigError,
        MapError,
        OptionsError,
        RulesError,
        ServiceError,
        DatabaseError,
        ClockError,
    )


def emit(data: Any, as_json: bool, text: Callable[[], str]) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        typer.echo(text())


@contextmanager
def open_session(config: Path | None) -> Iterator[Any]:
    """One transaction on the configured database, user errors as one line."""
    from pbem.store import init_db, session_scope

    with user_errors():
        cfg = config_of(config)
        engine = init_db(cfg.database_url)
        with session_scope(engine) as session:
            yield session
        _tell(engine, cfg)


def _tell(engine: Any, cfg: Any) -> None:
    """Tell what the command decided, once committed (pbem/service/tell/telling.py);
    the report layer is imported only when there is something to tell."""
    from pbem.store import notices_pending

    if not notices_pending(engine):
        return
    from pbem.service.clock import clock_from
    from pbem.service.context import Context
    from pbem.service.tell.telling import tell

    tell(engine, Context(cfg, clock_from(None)))


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"{path}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        fail(f"{path}: not UTF-8 text")


def config_of(path: Path | None) -> Any:
    from pbem.config import load_config

    return load_config(path)


def parse_settings(items: list[str], known_only: bool = True) -> dict[str, Any]:
    """--setting K=V: V read as JSON when it is (numbers, lists, true/false), else text."""
    from pbem.service.play.gamesettings import DEFAULTS

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
