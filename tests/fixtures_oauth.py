"""OAuth2 mail servers on 127.0.0.1 (issue 34; see pbem/testing/oauthserver.py).

``oauth_servers`` (session): a TokenServer, a Dovecot whose only passdb is
oauth2 (XOAUTH2 and OAUTHBEARER, tokens checked at the TokenServer's
introspection URL), and an SMTP relay into it that offers AUTH XOAUTH2 only.
``oauth_config`` (function) writes a pbem.toml for them and a fresh game
mailbox, and hands back what a test needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem.config import Config, load_config
from pbem.mail.oauth import forget_tokens
from pbem.testing.mailservers import HOST, DovecotServer, ServerUnavailable, SmtpRelay
from pbem.testing.oauthserver import TokenServer
from tests.fixtures_mail import _ensure_dovecot


@dataclass
class OAuthServers:
    tokens: TokenServer
    dovecot: DovecotServer
    smtp: SmtpRelay
    counter: int = 0

    def new_user(self, name: str) -> str:
        self.counter += 1
        address = f"{name}-{self.counter}@pbem.test"
        self.dovecot.add_user(address)
        return address


@pytest.fixture(scope="session")
def oauth_servers() -> Iterator[OAuthServers]:
    _ensure_dovecot()
    tokens = TokenServer()
    tokens.start()
    dovecot = DovecotServer(oauth2_introspection_url=tokens.introspection_url)
    try:
        dovecot.start()
        smtp = SmtpRelay(dovecot, xoauth2=tokens.token_valid)
        smtp.start()
    except ServerUnavailable as exc:
        dovecot.stop()
        tokens.stop()
        pytest.skip(str(exc))
    try:
        yield OAuthServers(tokens, dovecot, smtp)
    finally:
        smtp.stop()
        dovecot.stop()
        tokens.stop()


@dataclass
class OAuthWorld:
    servers: OAuthServers
    directory: Path
    config_file: Path
    game: str
    gm: str

    @property
    def token_file(self) -> Path:
        return self.directory / "secrets" / "oauth-refresh-token"

    def config(self) -> Config:
        return load_config(self.config_file, env={})


def write_oauth_config(
    path: Path,
    servers: OAuthServers,
    game: str,
    gm: str,
    *,
    imap_auth: str = "oauth2",
    smtp_user: str | None = None,
    extra_poll: str = "",
) -> Path:
    """A pbem.toml for the OAuth2 servers: IMAP and SMTP with XOAUTH2, the
    refresh token in secrets/oauth-refresh-token next to it."""
    smtp_login = f'user = "{smtp_user if smtp_user is not None else game}"\nauth = "oauth2"'
    if smtp_user == "":
        smtp_login = ""
    path.write_text(
        f"""
state_dir = "."
database_url = "sqlite:///pbem.db"

[poll]
{extra_poll}

[mail]
transport = "imap"
game_address = "{game}"
gm_address = "{gm}"

[mail.imap]
host = "{HOST}"
port = {servers.dovecot.imap_port}
user = "{game}"
auth = "{imap_auth}"
tls = "none"
timeout = 10

[mail.smtp]
host = "{HOST}"
port = {servers.smtp.port}
tls = "none"
timeout = 10
{smtp_login}

[mail.oauth2]
provider = "custom"
client_id = "pbem-test"
token_endpoint = "{servers.tokens.token_endpoint}"
device_endpoint = "{servers.tokens.device_endpoint}"
scopes = ["mail"]
token_file = "secrets/oauth-refresh-token"
"""
    )
    return path


@pytest.fixture
def oauth_world(oauth_servers: OAuthServers, tmp_path: Path) -> Iterator[OAuthWorld]:
    game, gm = oauth_servers.new_user("game"), oauth_servers.new_user("gm")
    config_file = write_oauth_config(tmp_path / "pbem.toml", oauth_servers, game, gm)
    oauth_servers.tokens.user = game
    forget_tokens()  # each test starts as a new process would
    try:
        yield OAuthWorld(oauth_servers, tmp_path, config_file, game, gm)
    finally:
        forget_tokens()
