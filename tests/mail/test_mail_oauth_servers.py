"""Issue 34: mailboxes that take OAuth2 only, against real servers on 127.0.0.1.

Dovecot's only passdb is oauth2 (tokens checked at a token server's
introspection URL), the SMTP relay offers AUTH XOAUTH2 only, and the token
server (pbem/testing/oauthserver.py) runs the device flow and the refresh.
The GM logs in with `pbem mail login`; then the poll logs in with access
tokens, refreshes one that expires before it is refused, refreshes once a
token the server refused, and a revoked login is one outage alert for the GM.
"""

from __future__ import annotations

import logging
import os
import stat
from datetime import UTC, datetime

import pytest
from imapclient import IMAPClient
from sqlmodel import col, select
from typer.testing import CliRunner

from pbem.cli import app
from pbem.mail.oauth import token_source
from pbem.service.clock import ManualClock
from pbem.service.ops.poll import run_cycle
from pbem.store import Outbox, init_db, session_scope
from pbem.testing.mailservers import HOST
from tests.fixtures_oauth import OAuthWorld, write_oauth_config

pytestmark = pytest.mark.integration

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
PLAYER_MAIL = (
    b"From: someone@pbem.test\r\nTo: game\r\nSubject: hello\r\n"
    b"Message-ID: <hello-%d@pbem.test>\r\n\r\nJOIN\r\n"
)


def login(world: OAuthWorld) -> str:
    """`pbem mail login`; the token server approves on the second poll."""
    result = CliRunner().invoke(app, ["mail", "login", "--config", str(world.config_file)])
    assert result.exit_code == 0, result.output
    return result.output


def read_inbox(world: OAuthWorld, address: str) -> list[bytes]:
    """Every mail in ``address``'s INBOX, read over IMAP with a token of its own."""
    access, _ = world.servers.tokens.issue(address)
    client = IMAPClient(HOST, world.servers.dovecot.imap_port, ssl=False, timeout=10)
    try:
        client.oauth2_login(address, access)
        client.select_folder("INBOX", readonly=True)
        uids = sorted(client.search(["ALL"]))
        found = client.fetch(uids, ["BODY.PEEK[]"]) if uids else {}
        return [found[uid][b"BODY[]"] for uid in uids]
    finally:
        client.logout()


class _Clock:
    """A monotonic clock a test moves (for the TokenSource)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def logged_in(oauth_world: OAuthWorld) -> OAuthWorld:
    oauth_world.servers.tokens.auto_approve = True
    try:
        output = login(oauth_world)
    finally:
        oauth_world.servers.tokens.auto_approve = False
    assert "URL:" in output and "Code: WDJB-MJHT" in output
    return oauth_world


def test_the_device_flow_stores_the_refresh_token_for_its_owner_only(
    logged_in: OAuthWorld,
) -> None:
    token_file = logged_in.token_file
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    assert token.startswith("rt-") and token in logged_in.servers.tokens.state.refresh
    assert not list(token_file.parent.glob(".*.new"))  # no partial file left over


def test_a_declined_login_stores_nothing_and_says_so(oauth_world: OAuthWorld) -> None:
    oauth_world.servers.tokens.auto_deny = True
    try:
        result = CliRunner().invoke(
            app, ["mail", "login", "--config", str(oauth_world.config_file)]
        )
    finally:
        oauth_world.servers.tokens.auto_deny = False
    assert result.exit_code == 1
    assert "declined in the browser; nothing was stored" in result.output
    assert not oauth_world.token_file.exists()


def test_the_env_variable_store_prints_the_token_once(oauth_world: OAuthWorld) -> None:
    text = oauth_world.config_file.read_text()
    oauth_world.config_file.write_text(
        text.replace('token_file = "secrets/oauth-refresh-token"', 'token_env = "PBEM_RT"')
    )
    refused = CliRunner().invoke(app, ["mail", "login", "--config", str(oauth_world.config_file)])
    assert refused.exit_code == 1 and "--print" in refused.output
    oauth_world.servers.tokens.auto_approve = True
    try:
        printed = CliRunner().invoke(
            app, ["mail", "login", "--print", "--config", str(oauth_world.config_file)]
        )
    finally:
        oauth_world.servers.tokens.auto_approve = False
    assert printed.exit_code == 0, printed.output
    token = printed.output.strip().splitlines()[-1]
    assert token in oauth_world.servers.tokens.state.refresh
    assert not oauth_world.token_file.exists()


def test_a_poll_logs_in_to_imap_and_smtp_with_a_token(logged_in: OAuthWorld) -> None:
    world = logged_in
    world.servers.dovecot.lmtp_deliver("someone@pbem.test", world.game, PLAYER_MAIL % 1)
    engine = init_db(world.config().database_url)
    report = run_cycle(engine, world.config(), ManualClock(START))
    assert report.errors == []
    assert len(report.mails) == 1
    assert world.servers.tokens.state.refused_introspections == 0

    result = CliRunner().invoke(
        app, ["mail", "test", "--send-to-gm", "--config", str(world.config_file)]
    )
    assert result.exit_code == 0, result.output
    assert "ok     IMAP" in result.output and "ok     SMTP" in result.output
    assert "ok     mail to the GM" in result.output
    assert world.servers.smtp.xoauth2_refused == 0
    assert "rt-" not in result.output and "at-" not in result.output  # no token shown


def test_an_expiring_access_token_is_refreshed_before_a_login_fails(
    logged_in: OAuthWorld,
) -> None:
    world = logged_in
    config = world.config()
    clock = _Clock()
    source = token_source(config.mail.oauth2)
    source.clock = clock
    engine = init_db(config.database_url)
    assert run_cycle(engine, config, ManualClock(START)).errors == []
    refreshes = world.servers.tokens.state.refreshes

    world.servers.tokens.expire_access_tokens()  # the hour is over on the provider's side
    clock.now += 3600  # ... and on pbem's
    world.servers.dovecot.lmtp_deliver("someone@pbem.test", world.game, PLAYER_MAIL % 2)
    report = run_cycle(engine, config, ManualClock(START))
    assert report.errors == [] and len(report.mails) == 1
    assert world.servers.tokens.state.refreshes == refreshes + 1
    assert world.servers.tokens.state.refused_introspections == 0  # no login was refused
    assert world.servers.smtp.xoauth2_refused == 0


def test_a_token_the_server_refuses_is_refreshed_once(logged_in: OAuthWorld) -> None:
    world = logged_in
    config = world.config()
    engine = init_db(config.database_url)
    assert run_cycle(engine, config, ManualClock(START)).errors == []
    refreshes = world.servers.tokens.state.refreshes

    world.servers.tokens.expire_access_tokens()  # early: pbem still thinks it good
    report = run_cycle(engine, config, ManualClock(START))
    assert report.errors == []
    assert world.servers.tokens.state.refused_introspections == 1
    assert world.servers.tokens.state.refreshes == refreshes + 1


def test_a_revoked_login_is_one_outage_alert_with_the_command_to_log_in(
    logged_in: OAuthWorld, caplog: pytest.LogCaptureFixture
) -> None:
    """IMAP with OAuth2, SMTP without a login (so the alert can go out)."""
    world = logged_in
    write_oauth_config(
        world.config_file,
        world.servers,
        world.game,
        world.gm,
        smtp_user="",
        extra_poll="outage_alert_minutes = 0",
    )
    config = world.config()
    engine = init_db(config.database_url)
    world.servers.tokens.revoke()
    caplog.set_level(logging.INFO)
    reports = [run_cycle(engine, config, ManualClock(START)) for _ in range(3)]
    for report in reports:
        assert len(report.errors) == 1
        assert "`pbem mail login`" in report.errors[0]
        assert "rt-" not in report.errors[0]  # the token itself is never said
    with session_scope(engine, write=False) as session:
        alerts = session.exec(select(Outbox).where(col(Outbox.subject).contains("Outage"))).all()
    assert [(a.recipient, a.status) for a in alerts] == [(world.gm, "sent")]
    gm_mail = read_inbox(world, world.gm)
    assert len(gm_mail) == 1 and b"Outage: reading the game's inbox" in gm_mail[0]
    assert b"pbem mail login" in gm_mail[0] and b"rt-" not in gm_mail[0]
    assert sum("ALERT" in r.message for r in caplog.records) == 1
    assert not any("rt-" in r.getMessage() for r in caplog.records)
    assert os.environ.get("PBEM_OAUTH_CLIENT_SECRET") is None
