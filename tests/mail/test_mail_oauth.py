"""Issue 34, one layer: the OAuth2 pieces of pbem/mail without a mail server.

The refresh token's store (0600, others' eyes refused, an environment
variable), the XOAUTH2 string, the device flow's answers (RFC 8628:
authorization_pending, slow_down, access_denied, expired_token) and the
refresh against the token server on 127.0.0.1, and [mail.oauth2] checked at
load with the file and the key.
"""

from __future__ import annotations

import base64
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.config import ConfigError, load_config
from pbem.mail import devicelogin
from pbem.mail.errors import OAuthError, OAuthLoginNeeded
from pbem.mail.oauth import (
    PROVIDERS,
    OAuthSettings,
    RefreshTokenStore,
    TokenSource,
    xoauth2,
)
from pbem.testing.oauthserver import TokenServer


@pytest.fixture
def token_server() -> Iterator[TokenServer]:
    server = TokenServer("game@pbem.test")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def settings_for(server: TokenServer, tmp_path: Path) -> OAuthSettings:
    return OAuthSettings(
        provider="custom",
        client_id="pbem-test",
        token_endpoint=server.token_endpoint,
        device_endpoint=server.device_endpoint,
        scopes=("mail",),
        token_file=tmp_path / "token",
    )


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# --- the XOAUTH2 string -------------------------------------------------------


def test_the_xoauth2_initial_response_is_googles_format() -> None:
    encoded = xoauth2("someone@example.org", "ya29.token")
    assert (
        base64.b64decode(encoded) == b"user=someone@example.org\x01auth=Bearer ya29.token\x01\x01"
    )


# --- the store -----------------------------------------------------------------


def test_the_token_file_is_made_for_its_owner_only(tmp_path: Path) -> None:
    store = RefreshTokenStore(tmp_path / "secrets" / "token")
    store.write("rt-first")
    assert stat.S_IMODE((tmp_path / "secrets" / "token").stat().st_mode) == 0o600
    assert store.read() == "rt-first"
    store.write("rt-second")  # replaced whole, still the owner's only
    assert store.read() == "rt-second"
    assert stat.S_IMODE((tmp_path / "secrets" / "token").stat().st_mode) == 0o600


def test_the_token_files_missing_folders_are_made_for_the_owner_only(tmp_path: Path) -> None:
    """Finding 21: token_file = "secrets/oauth/token" needs no folder made first."""
    (tmp_path / "shared").mkdir(mode=0o755)
    store = RefreshTokenStore(tmp_path / "shared" / "secrets" / "oauth" / "token")
    store.write("rt-first")
    for folder in ("shared/secrets", "shared/secrets/oauth"):
        assert stat.S_IMODE((tmp_path / folder).stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o755  # left alone
    assert store.read() == "rt-first"


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("rt-secret\n")
    path.chmod(0o644)
    with pytest.raises(OAuthLoginNeeded, match="may be read by others.*chmod 600") as caught:
        RefreshTokenStore(path).read()
    assert "rt-secret" not in str(caught.value)


def test_no_token_yet_says_to_log_in(tmp_path: Path) -> None:
    with pytest.raises(OAuthLoginNeeded, match="does not exist.*pbem mail login"):
        RefreshTokenStore(tmp_path / "token").read()
    with pytest.raises(OAuthLoginNeeded, match="PBEM_TOKEN.*--print"):
        RefreshTokenStore(None, "PBEM_TOKEN", {}).read()


def test_the_token_may_come_from_the_environment_and_is_never_written_there() -> None:
    store = RefreshTokenStore(None, "PBEM_TOKEN", {"PBEM_TOKEN": " rt-env \n"})
    assert store.read() == "rt-env"
    assert not store.writable
    with pytest.raises(OAuthError, match="cannot write"):
        store.write("rt-new")


# --- the device flow ---------------------------------------------------------------


def test_the_device_flow_waits_slows_down_and_gets_the_tokens(
    token_server: TokenServer, tmp_path: Path
) -> None:
    settings = settings_for(token_server, tmp_path)
    token_server.interval = 2
    token_server.slow_down_once = True
    code = devicelogin.start(settings)
    assert (code.user_code, code.interval) == ("WDJB-MJHT", 2)
    assert code.verification_uri.startswith("http://127.0.0.1:")
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 3:  # the GM approves while pbem waits the third time
            token_server.approve()

    result = devicelogin.wait_for_approval(settings, code, sleep=sleep)
    # slow_down, then pending, then the tokens: 5 seconds more after slow_down
    assert waits == [2, 7, 7]
    assert result.refresh_token in token_server.state.refresh
    assert result.polls == 3


@pytest.mark.parametrize(
    ("act", "words"),
    [
        ("deny", "declined in the browser"),
        ("expire_device", "code expired.*pbem mail login"),
    ],
)
def test_the_device_flow_ends_when_denied_or_expired(
    token_server: TokenServer, tmp_path: Path, act: str, words: str
) -> None:
    settings = settings_for(token_server, tmp_path)
    code = devicelogin.start(settings)
    getattr(token_server, act)()
    with pytest.raises(OAuthError, match=words):
        devicelogin.wait_for_approval(settings, code, sleep=lambda _s: None)


def test_the_device_flow_gives_up_when_the_code_runs_out(
    token_server: TokenServer, tmp_path: Path
) -> None:
    settings = settings_for(token_server, tmp_path)
    code = devicelogin.start(settings)
    clock = Clock()

    def sleep(seconds: float) -> None:
        clock.now += 300

    with pytest.raises(OAuthError, match="code expired"):
        devicelogin.wait_for_approval(settings, code, sleep=sleep, clock=clock)
    assert token_server.state.device_polls == 3  # 900 s at 300 s a wait


# --- the refresh ---------------------------------------------------------------------


def test_an_access_token_is_kept_until_near_its_end_then_refreshed(
    token_server: TokenServer, tmp_path: Path
) -> None:
    settings = settings_for(token_server, tmp_path)
    _, refresh = token_server.issue("game@pbem.test")
    settings.store().write(refresh)
    clock = Clock()
    source = TokenSource(settings, clock=clock)
    first = source.access_token()
    clock.now += 3000
    assert source.access_token() == first  # 600 s left: kept
    clock.now += 500
    second = source.access_token()  # 100 s left: refreshed first
    assert second != first and source.refreshes == 2
    # the provider rotated the refresh token: the new one is stored
    assert settings.store().read() in token_server.state.refresh
    source.refused(second)
    assert source.access_token() != second and source.refreshes == 3


def test_a_revoked_refresh_token_says_to_log_in_again(
    token_server: TokenServer, tmp_path: Path
) -> None:
    settings = settings_for(token_server, tmp_path)
    _, refresh = token_server.issue("game@pbem.test")
    settings.store().write(refresh)
    token_server.revoke()
    with pytest.raises(OAuthLoginNeeded, match="invalid_grant.*Run `pbem mail login`") as caught:
        TokenSource(settings).access_token()
    assert refresh not in str(caught.value)


def test_an_unreachable_token_endpoint_is_a_transport_error_not_a_login(tmp_path: Path) -> None:
    from pbem.mail.errors import TransportError
    from pbem.testing.mailservers import free_port

    settings = OAuthSettings(
        provider="custom",
        client_id="c",
        token_endpoint=f"http://127.0.0.1:{free_port()}/token",
        device_endpoint="http://127.0.0.1:1/device",
        scopes=("mail",),
        token_file=tmp_path / "token",
    )
    settings.store().write("rt-x")
    with pytest.raises(TransportError, match="cannot reach the OAuth2 server") as caught:
        TokenSource(settings).access_token()
    assert not isinstance(caught.value, OAuthLoginNeeded)


# --- [mail.oauth2] in the config ---------------------------------------------------------


BASE = """
[mail]
transport = "imap"
[mail.imap]
host = "imap.example.org"
user = "game@example.org"
auth = "oauth2"
[mail.smtp]
host = "smtp.example.org"
"""


@pytest.mark.parametrize(
    ("oauth2", "key", "words"),
    [
        ("", "mail.oauth2.provider", "must be one of"),
        ('provider = "microsoft"', "mail.oauth2.client_id", "required"),
        ('provider = "microsoft"\nclient_id = "x"', "mail.oauth2.token_file", "exactly one"),
        (
            'provider = "custom"\nclient_id = "x"\ntoken_file = "t"',
            "mail.oauth2.token_endpoint",
            "required",
        ),
        (
            'provider = "microsoft"\nclient_id = "x"\ntoken_file = "t"\n'
            'token_endpoint = "http://tokens.example.org/"',
            "mail.oauth2.token_endpoint",
            "https://",
        ),
        ('provider = "yahoo"', "mail.oauth2.provider", "must be one of"),
        ('scopes = "mail"', "mail.oauth2.scopes", "array of strings"),
    ],
)
def test_a_bad_oauth2_table_fails_at_load_naming_the_key(
    tmp_path: Path, oauth2: str, key: str, words: str
) -> None:
    path = tmp_path / "pbem.toml"
    path.write_text(BASE + "[mail.oauth2]\n" + oauth2 + "\n")
    with pytest.raises(ConfigError, match=words) as caught:
        load_config(path, env={})
    assert caught.value.key == key and caught.value.source == str(path)


def test_a_bad_auth_kind_fails_at_load(tmp_path: Path) -> None:
    path = tmp_path / "pbem.toml"
    path.write_text(BASE.replace('auth = "oauth2"', 'auth = "token"'))
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert caught.value.key == "mail.imap.auth"


def test_microsofts_endpoints_are_built_in(tmp_path: Path) -> None:
    path = tmp_path / "pbem.toml"
    path.write_text(
        BASE + '[mail.oauth2]\nprovider = "microsoft"\nclient_id = "x"\n'
        'tenant = "consumers"\ntoken_file = "secrets/token"\n'
    )
    config = load_config(path, env={"PBEM_OAUTH_CLIENT_SECRET": "s3"})
    oauth2 = config.mail.oauth2
    assert oauth2.endpoint("token_endpoint") == (
        "https://login.microsoftonline.com/consumers/oauth2/v2.0/token"
    )
    assert oauth2.scope_list == PROVIDERS["microsoft"].scopes
    assert oauth2.token_file == tmp_path / "secrets" / "token"
    assert oauth2.client_secret == "s3" and "s3" not in repr(oauth2)


def _provider_blocks() -> dict[str, str]:
    """Each provider's TOML block of docs/GAME-MASTERS.md, "Mail providers"."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "GAME-MASTERS.md").read_text()
    section = page.split("## Mail providers\n", 1)[1].split("\n## ", 1)[0]
    blocks = {}
    for part in section.split("\n### ")[1:]:
        title = part.split("\n", 1)[0]
        found = re.findall(r"```toml\n(.*?)```", part, flags=re.DOTALL)
        assert len(found) == 1, title
        blocks[title] = found[0]
    return blocks


def test_every_providers_snippet_is_a_whole_mail_block_that_loads(tmp_path: Path) -> None:
    """Finding 21: a GM pastes a provider's block as it is, and it loads."""
    blocks = _provider_blocks()
    assert len(blocks) == 4
    for title, block in blocks.items():
        path = tmp_path / "pbem.toml"
        path.write_text(f'state_dir = "."\n{block}')
        mail = load_config(path, env={}).mail
        assert mail.transport == "imap", title
        assert mail.game_address != "pbem@localhost" and mail.gm_address != "gm@localhost"
        assert mail.imap.user and mail.imap.host != "localhost", title
    page = (Path(__file__).resolve().parents[2] / "docs" / "GAME-MASTERS.md").read_text()
    for scope in PROVIDERS["microsoft"].scopes:  # the scopes the page names are pbem's
        assert f"`{scope}`" in page
