"""The mail service: one poll cycle, the daemon, its health, the outbox; and
`pbem mail login` / `pbem mail test` (the servers' login and settings)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pbem.cli.common import (
    ConfigOption,
    JsonOption,
    config_of,
    emit,
    fail,
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


# ------------------------------------------------------------ pbem mail ...
# Help texts are rich markup: a config table's name is written \\[mail.oauth2]
# (in a raw docstring \[mail.oauth2]), else rich takes it for a tag and drops it
# (tests/cli/test_help.py renders every command's help to check).
mail_app = typer.Typer(
    help="The mail servers: log in with OAuth2, test the settings.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@mail_app.command("login")
def mail_login(
    print_token: Annotated[
        bool,
        typer.Option(
            "--print",
            help="Print the refresh token instead of storing it (for \\[mail.oauth2] token_env).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    r"""Log in to the mail provider with OAuth2 (the device flow) and keep the refresh token.

    Prints a URL and a code: open the URL in any browser, enter the code and
    approve; pbem waits meanwhile. The refresh token goes where \[mail.oauth2]
    says (token_file, created readable by its owner only), never into the
    database or a log.
    """
    from pbem.mail import devicelogin
    from pbem.mail.errors import MailError
    from pbem.mail.oauth import forget_tokens

    with user_errors():
        settings = config_of(config).mail
    if not settings.uses_oauth2:
        fail('no mail server uses OAuth2: set auth = "oauth2" in [mail.imap] or [mail.smtp]')
    oauth = settings.oauth2
    store = oauth.store()
    if not print_token and not store.writable:
        fail(
            f"the refresh token lives in {store.where}, which pbem cannot write: "
            "run `pbem mail login --print` and put what it prints into that variable"
        )
    try:
        code = devicelogin.start(oauth)
        typer.echo(code.message or f"Open {code.verification_uri} and enter the code below.")
        typer.echo(f"URL:  {code.verification_uri}")
        typer.echo(f"Code: {code.user_code}")
        if code.verification_uri_complete:
            typer.echo(f"(or open {code.verification_uri_complete}, the code filled in)")
        typer.echo("Waiting for the login to be approved (Ctrl-C to give up) ...")
        result = devicelogin.wait_for_approval(oauth, code)
        if print_token:
            typer.echo("Logged in. The refresh token (a password: keep it secret):", err=True)
            typer.echo(result.refresh_token)
            return
        store.write(result.refresh_token)
        forget_tokens()
    except (MailError, OSError) as exc:
        fail(str(exc))
    typer.echo(f"Logged in. The refresh token is in {store.where}.")
    typer.echo("`pbem mail test` tries the servers with it.")


@mail_app.command("test")
def mail_test(
    send_to_gm: Annotated[
        bool, typer.Option("--send-to-gm", help="Also send a short mail to the GM's address.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Try the mail settings end to end: IMAP login and folders, SMTP login.

    Says in words what is wrong (the port, TLS, the password, an app password
    or OAuth2 needed, no OAuth2 login yet). Exit code 1 when a step failed.
    """
    from pbem.mail.checkup import Finding, checks

    with user_errors():
        settings = config_of(config).mail
    if settings.transport != "imap":
        typer.echo(f'transport = "{settings.transport}": no mail servers to test')
        return
    findings: list[Finding] = []
    for finding in checks(settings, send=send_to_gm):  # each printed as soon as found
        findings.append(finding)
        mark = "ok    " if finding.ok else "FAILED"
        typer.echo(f"{mark} {finding.step}: {finding.where}")
        if finding.ok:
            typer.echo(f"       {finding.text}")
        else:
            typer.echo(f"       {finding.headline}.")
            typer.echo(f"       {finding.text}")
    if not all(finding.ok for finding in findings):
        raise typer.Exit(1)
