"""OAuth2 access tokens for the mail servers: the providers, the refresh token, the refresh.

A mailbox that takes OAuth2 only (Microsoft 365, Outlook.com) is logged in
to with SASL XOAUTH2 and a short-lived access token. The GM logs in once
with `pbem mail login` (the device flow, pbem/mail/devicelogin.py), which
stores a long-lived refresh token; ``TokenSource`` trades it for access
tokens at the provider's token endpoint, before the one it holds expires,
and again (once) when a server refused it.

The refresh token is kept where ``[mail.oauth2]`` says: a file only its
owner may read (created 0600; a file others can read is refused), or an
environment variable (deployments whose secrets come from the
environment). Access tokens live in memory only. No token ever goes to the
database, a log or a mail: errors name the provider's error code, never a
token.

The protocol is two form POSTs answered with JSON (RFC 6749 section 6,
RFC 8628 section 3), done with urllib.request: the OAuth2 libraries that
would do it (requests-oauthlib, authlib, msal) bring an HTTP stack or a
provider's SDK for what is a few lines here (docs/MAIL.md, "OAuth2").
"""

from __future__ import annotations

import base64
import json
import os
import stat
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pbem.mail.errors import MailSettingsError, OAuthError, OAuthLoginNeeded, TransportError

LOGIN_COMMAND = "pbem mail login"
# An access token this close to its end is refreshed before use: a login
# takes a moment, and the clocks of pbem and the provider differ a little.
EXPIRY_MARGIN_SECONDS = 120.0
_HTTP_TIMEOUT = 30.0


@dataclass(frozen=True)
class OAuthProvider:
    """A provider's endpoints and the scopes that give IMAP and SMTP access.

    ``{tenant}`` in an endpoint is replaced by ``[mail.oauth2] tenant``."""

    token_endpoint: str
    device_endpoint: str
    scopes: tuple[str, ...]


PROVIDERS: dict[str, OAuthProvider] = {
    # Microsoft 365 and Outlook.com (Microsoft identity platform v2.0). The
    # tenant: "common" (work and personal accounts), "consumers"
    # (Outlook.com only), "organizations", or the organisation's tenant id.
    "microsoft": OAuthProvider(
        token_endpoint="https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
        device_endpoint="https://login.microsoftonline.com/{tenant}/oauth2/v2.0/devicecode",
        scopes=(
            "offline_access",
            "https://outlook.office.com/IMAP.AccessAsUser.All",
            "https://outlook.office.com/SMTP.Send",
        ),
    ),
    # Google: refresh works; its device flow does not grant the Gmail scope
    # (docs/GAME-MASTERS.md says to use an app password for Gmail).
    "google": OAuthProvider(
        token_endpoint="https://oauth2.googleapis.com/token",
        device_endpoint="https://oauth2.googleapis.com/device/code",
        scopes=("https://mail.google.com/",),
    ),
}
CUSTOM = "custom"
PROVIDER_NAMES = (*PROVIDERS, CUSTOM)


@dataclass(frozen=True)
class OAuthSettings:
    """[mail.oauth2]: the provider pbem gets tokens from, and where the refresh token lives."""

    provider: str = ""  # "microsoft", "google" or "custom"; "" while no server uses OAuth2
    client_id: str = ""
    client_secret: str = field(default="", repr=False)  # Google's clients have one
    tenant: str = "common"  # Microsoft only
    token_endpoint: str = ""  # "" for the provider's
    device_endpoint: str = ""  # "" for the provider's
    scopes: tuple[str, ...] = ()  # () for the provider's
    token_file: Path | None = None  # where `pbem mail login` keeps the refresh token
    token_env: str = ""  # or the environment variable that holds it

    def check(self) -> None:
        """Everything a server with ``auth = "oauth2"`` needs; MailSettingsError if not."""
        if self.provider not in PROVIDER_NAMES:
            names = ", ".join(f'"{n}"' for n in PROVIDER_NAMES)
            raise MailSettingsError(
                "mail.oauth2.provider", f"must be one of {names} when a server uses OAuth2"
            )
        if not self.client_id:
            raise MailSettingsError(
                "mail.oauth2.client_id", "required: the application (client) id registered "
                "with the provider (docs/GAME-MASTERS.md, \"Mail providers\")"
            )  # fmt: skip
        if self.provider == CUSTOM:
            for key in ("token_endpoint", "device_endpoint"):
                if not getattr(self, key):
                    raise MailSettingsError(f"mail.oauth2.{key}", 'required for provider "custom"')
            if not self.scopes:
                raise MailSettingsError("mail.oauth2.scopes", 'required for provider "custom"')
        for key in ("token_endpoint", "device_endpoint"):
            url = self.endpoint(key)
            if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
                raise MailSettingsError(
                    f"mail.oauth2.{key}", f"must be an https:// URL (got {url!r})"
                )
        if (self.token_file is None) == (not self.token_env):
            raise MailSettingsError(
                "mail.oauth2.token_file",
                "give exactly one of token_file (a file `pbem mail login` writes) "
                "and token_env (an environment variable that holds the refresh token)",
            )

    def endpoint(self, key: str) -> str:
        """The ``token_endpoint`` or ``device_endpoint``: the setting, else the provider's."""
        url: str = getattr(self, key)
        if not url and self.provider in PROVIDERS:
            url = getattr(PROVIDERS[self.provider], key)
        return url.replace("{tenant}", self.tenant)

    @property
    def scope_list(self) -> tuple[str, ...]:
        if self.scopes or self.provider not in PROVIDERS:
            return self.scopes
        return PROVIDERS[self.provider].scopes

    def store(self, env: Mapping[str, str] | None = None) -> RefreshTokenStore:
        return RefreshTokenStore(self.token_file, self.token_env, env)


class RefreshTokenStore:
    """The refresh token: a file only its owner may read, or an environment variable."""

    def __init__(
        self, file: Path | None, env_name: str = "", env: Mapping[str, str] | None = None
    ) -> None:
        self.file = file
        self.env_name = env_name
        self._env = env

    @property
    def where(self) -> str:
        if self.file is not None:
            return f"the file {self.file} (mail.oauth2.token_file)"
        return f"the environment variable {self.env_name} (mail.oauth2.token_env)"

    def read(self) -> str:
        """The stored refresh token; OAuthLoginNeeded when there is none."""
        if self.file is None:
            token = (os.environ if self._env is None else self._env).get(self.env_name, "")
            if not token.strip():
                raise OAuthLoginNeeded(
                    f"no OAuth2 refresh token in {self.where}: run `{LOGIN_COMMAND} --print` "
                    "and put what it prints into that variable"
                )
            return token.strip()
        try:
            fd = os.open(self.file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise OAuthLoginNeeded(
                f"no OAuth2 login yet ({self.where} does not exist): run `{LOGIN_COMMAND}`"
            ) from None
        except OSError as exc:
            raise OAuthLoginNeeded(f"cannot read {self.where}: {exc.strerror}") from exc
        with os.fdopen(fd, encoding="utf-8") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise OAuthLoginNeeded(
                    f"{self.where} may be read by others (mode {stat.S_IMODE(mode):04o}); a "
                    f"refresh token is a password: `chmod 600 {self.file}`, or log in again "
                    f"with `{LOGIN_COMMAND}` (it writes the file for its owner only)"
                )
            token = handle.read().strip()
        if not token:
            raise OAuthLoginNeeded(f"{self.where} is empty: run `{LOGIN_COMMAND}`")
        return token

    def write(self, token: str) -> None:
        """Replace the stored token: a new file made for its owner only (0600), then
        renamed over the old one, so no reader ever sees half a token. Missing
        folders on the way are made for the owner only too (0700)."""
        if self.file is None:
            raise OAuthError(
                f"the refresh token lives in {self.where}, which pbem cannot write; "
                f"run `{LOGIN_COMMAND} --print` and put what it prints into that variable"
            )
        _make_private_folders(self.file.parent)
        partial = self.file.with_name(f".{self.file.name}.{os.getpid()}.new")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(token + "\n")
            partial.replace(self.file)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    @property
    def writable(self) -> bool:
        return self.file is not None


def _make_private_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each 0700 (``Path.mkdir``
    gives the parents the default mode); folders already there are left alone."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:  # made meanwhile by another process: it is there
            continue


def post_form(url: str, form: Mapping[str, str], timeout: float = _HTTP_TIMEOUT) -> dict[str, Any]:
    """POST a form and read the JSON answer, an error answer (4xx) included.

    TransportError when the server cannot be reached or answers no JSON."""
    data = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Accept": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            body = response.read()
    except urllib.error.HTTPError as exc:  # 400 carries the OAuth2 error as JSON
        body = exc.read()
        if not body:
            raise TransportError(f"the OAuth2 server {_host(url)} answered {exc.code}") from exc
    except (OSError, urllib.error.URLError) as exc:
        raise TransportError(f"cannot reach the OAuth2 server {_host(url)}: {exc}") from exc
    try:
        answer = json.loads(body)
    except ValueError as exc:
        raise TransportError(f"the OAuth2 server {_host(url)} answered no JSON") from exc
    if not isinstance(answer, dict):
        raise TransportError(f"the OAuth2 server {_host(url)} answered no JSON object")
    return answer


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url


def client_form(settings: OAuthSettings) -> dict[str, str]:
    """The client's credentials as the token endpoint takes them (in the form body)."""
    form = {"client_id": settings.client_id}
    if settings.client_secret:
        form["client_secret"] = settings.client_secret
    return form


def describe_error(answer: Mapping[str, Any]) -> str:
    """The provider's error code and its own description (never a token)."""
    code = str(answer.get("error", "no error code"))
    text = str(answer.get("error_description", "")).splitlines()
    return f"{code}: {text[0]}" if text and text[0] else code


@dataclass
class AccessToken:
    value: str = field(repr=False)
    expires_at: float  # on the TokenSource's clock


class TokenSource:
    """Access tokens for one account, refreshed before they expire and on refusal.

    Thread-safe: the IMAP and SMTP connections of a process share one.
    ``clock`` is monotonic seconds (a test passes its own)."""

    def __init__(
        self,
        settings: OAuthSettings,
        store: RefreshTokenStore | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.store = store or settings.store()
        self.clock = clock
        self.refreshes = 0
        self._token: AccessToken | None = None
        self._lock = threading.Lock()

    def access_token(self) -> str:
        """A token that will last a while yet: the one held, or a fresh one."""
        with self._lock:
            token = self._token
            if token is None or token.expires_at - self.clock() < EXPIRY_MARGIN_SECONDS:
                token = self._refresh()
            return token.value

    def refused(self, value: str) -> None:
        """A server refused this token: the next ``access_token`` gets a fresh one."""
        with self._lock:
            if self._token is not None and self._token.value == value:
                self._token = None

    def _refresh(self) -> AccessToken:
        refresh_token = self.store.read()
        settings = self.settings
        url = settings.endpoint("token_endpoint")
        form = {
            **client_form(settings),
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
        }
        if settings.scope_list:
            form["scope"] = " ".join(settings.scope_list)
        answer = post_form(url, form)
        if "access_token" not in answer:
            if answer.get("error") in ("invalid_grant", "invalid_client", "unauthorized_client"):
                raise OAuthLoginNeeded(
                    f"the OAuth2 provider ({_host(url)}) refused pbem's stored login "
                    f"({describe_error(answer)}): it was revoked or has expired. "
                    f"Run `{LOGIN_COMMAND}` to log in again."
                )
            raise TransportError(
                f"the OAuth2 provider ({_host(url)}) gave no access token "
                f"({describe_error(answer)})"
            )
        self.refreshes += 1
        rotated = answer.get("refresh_token")
        if isinstance(rotated, str) and rotated and rotated != refresh_token:
            if self.store.writable:  # a variable cannot be written: the old one stays valid
                self.store.write(rotated)
        lifetime = float(answer.get("expires_in") or 3600)
        self._token = AccessToken(str(answer["access_token"]), self.clock() + lifetime)
        return self._token


def xoauth2(user: str, access_token: str) -> str:
    """The SASL XOAUTH2 initial response, base64 (as IMAP AUTHENTICATE and SMTP AUTH send it)."""
    raw = f"user={user}\x01auth=Bearer {access_token}\x01\x01"
    return base64.b64encode(raw.encode()).decode("ascii")


_SOURCES: dict[tuple[str, str, str, str], TokenSource] = {}
_SOURCES_LOCK = threading.Lock()


def token_source(settings: OAuthSettings) -> TokenSource:
    """The process's one TokenSource for this account, so a daemon's cycles and
    the IMAP and SMTP connections share an access token until it expires."""
    key = (
        settings.endpoint("token_endpoint"),
        settings.client_id,
        str(settings.token_file or ""),
        settings.token_env,
    )
    with _SOURCES_LOCK:
        source = _SOURCES.get(key)
        if source is None:
            source = _SOURCES[key] = TokenSource(settings)
        return source


def forget_tokens() -> None:
    """Drop every access token this process holds (as a new process starts);
    the next login refreshes. For tests, and after `pbem mail login`."""
    with _SOURCES_LOCK:
        _SOURCES.clear()
