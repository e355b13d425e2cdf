"""The mail service: one poll cycle, the daemon, its health, the outbox."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pbem.cli.common import (
    ConfigOption,
    JsonOption,
    config_of,
    emit,
    user_errors,
)


def poll(config: ConfigOption = None) -> None:
    """One cycle: fetch new mail, process it, run deadlines, send the outbox.

    Overlapping runs (cron) exit quietly; exit code 2 when a server or the
    database could not be used (each problem on one line; the other stages ran).
    """
    import logging

    from pbem.service.clock import clock_from
    from pbem.service.ops.poll import PollBusy, database_unusable, poll_lock, run_cycle
    from pbem.store import init_db
    from pbem.store.errors import DatabaseError

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    for noisy in ("alembic", "imapclient"):  # their INFO lines are not the poll's log
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with user_errors():
        cfg = config_of(config)
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


def status(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Is the service healthy? Outages, mail held or failing, the outbox.

    Exit code 0 healthy, 1 warning, 2 critical (for a monitoring check).
    """
    from pbem.service.clock import clock_from
    from pbem.service.ops.status import describe, read_status
    from pbem.store import make_engine

    with user_errors():
        cfg = config_of(config)
        found = read_status(make_engine(cfg.database_url), cfg, clock_from(None))
    emit(found.as_json(), as_json, lambda: describe(found))
    if found.level:
        raise typer.Exit(int(found.level))


def daemon(
    interval: Annotated[float, typer.Option(help="Seconds between cycles at most.")] = 60.0,
    cycles: Annotated[int, typer.Option(help="Stop after this many cycles (0: never).")] = 0,
    config: ConfigOption = None,
) -> None:
    """Poll in a loop (IMAP IDLE where the server has it); stops cleanly on SIGTERM."""
    import logging

    from pbem.service.clock import clock_from
    from pbem.service.ops.daemon import open_database, run_daemon

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    for noisy in ("alembic", "imapclient"):  # their INFO lines are not the poll's log
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with user_errors():
        cfg = config_of(config)
        clock = clock_from(None)
        engine = open_database(cfg, min(interval, 10.0), clock)
        if engine is not None:
            run_daemon(engine, cfg, clock, interval, cycles)


def outbox(
    retry: Annotated[bool, typer.Option("--retry", help="Send every pending mail now.")] = False,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the outbox (pending and failed mail); --retry sends the pending ones now."""
    from pbem.mail.settings import open_sender
    from pbem.service.clock import clock_from
    from pbem.service.ops.poll import outbox_lease, send_outbox
    from pbem.service.tell.outbox import unsent
    from pbem.store import init_db, session_scope

    with user_errors():
        cfg = config_of(config)
        engine = init_db(cfg.database_url)
        if retry:
            settings = cfg.mail
            report = send_outbox(
                engine,
                open_sender(settings),
                clock_from(None),
                settings.game_address,
                retry_all=True,
                lease=outbox_lease(cfg),
            )
            typer.echo(f"{report.sent} sent, {report.deferred} deferred, {report.failed} failed")
        with session_scope(engine, write=False) as session:
            data = unsent(session, clock_from(None).now())
    emit(
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
