"""Game records: replay the order log, export, import, verify the dice, reveal the secret."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pbem.cli.common import (
    ConfigOption,
    fail,
    open_session,
    read_text,
)


def replay_cmd(
    game: str,
    verify: Annotated[
        bool, typer.Option("--verify", help="Compare every stored hash (always done).")
    ] = True,
    config: ConfigOption = None,
) -> None:
    """Rebuild a game from its order log and compare every turn's stored hash."""
    from pbem.service.play.archive import replay_game
    from pbem.service.play.games import find_game, log_of

    with open_session(config) as session:
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


def export(
    game: str,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")
    ] = None,
    with_secret: Annotated[
        bool, typer.Option("--with-secret", help="Include the secret (GM backups).")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --with-secret: write it although the game runs."),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Write a game record: headers, then the canonical orders turn by turn."""
    from pbem.service.play.archive import export_record
    from pbem.service.play.games import find_game

    with open_session(config) as session:
        text = export_record(session, find_game(session, game), with_secret, force)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


def import_(
    file: Path,
    secret: Annotated[
        str | None, typer.Option(help="The game's secret, if the record has none.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Store a game record in this database, replaying and checking every step."""
    from pbem.service.play.archive import import_record

    text = read_text(file)
    with open_session(config) as session:
        game, _ = import_record(session, text, secret, str(file))
        typer.echo(
            f"imported {game.name}: turn {game.turn}, {game.phase} "
            "(every turn replayed, every state hash matches the record)"
        )


def verify(
    file: Path,
    secret: Annotated[
        str | None,
        typer.Option(help="The revealed secret (hex); by default the record's [Secret]."),
    ] = None,
) -> None:
    """Recompute every roll of a game record from the revealed secret (the
    record's own [Secret] when it has one)."""
    from pbem.orderlog.records import RecordError, read_record, secret_to_verify, verify_record

    text = read_text(file)
    try:
        record = read_record(text, str(file))
        report = verify_record(record, secret_to_verify(record, secret, str(file)))
    except RecordError as exc:
        fail(str(exc))
    typer.echo(report.message)
    raise typer.Exit(0 if report.ok else 1)


def reveal(
    game: str,
    force: Annotated[
        bool, typer.Option("--force", help="Publish it although the game is still running.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Publish a game's secret so that anyone can verify every roll (a running
    game's future rolls too: that needs --force)."""
    from pbem.service.play.archive import reveal as reveal_secret
    from pbem.service.play.games import find_game, rerolls_of

    with open_session(config) as session:
        row = find_game(session, game)
        secret = reveal_secret(session, row, force)
        typer.echo(f"secret of {row.name}: {secret}")
        for first, rerolled, made in rerolls_of(session, row):  # `pbem rollback --reroll`
            typer.echo(f"new dice from turn {first} on: {rerolled} (commitment {made})")
        typer.echo(
            f"check: pbem export {row.name} -o {row.name}.pgn && "
            f"pbem verify {row.name}.pgn --secret {secret}"
        )
