"""The service's configuration: one TOML file, checked in full when it is loaded.

Where the file is found, first match wins:
  1. ``--config PATH`` (the ``path`` argument),
  2. the environment variable PBEM_CONFIG,
  3. ./pbem.toml,
  4. ~/.config/pbem/pbem.toml,
  5. none: the embedded defaults (SQLite file ./var/pbem.db, Maildir under ./var/mail).
Paths in a file are relative to the file's folder (so cron, which runs
elsewhere, finds the same database); the embedded defaults are relative to
the current folder. Secrets may come from the environment instead of the
file, and then win: PBEM_DATABASE_URL, PBEM_IMAP_PASSWORD, PBEM_SMTP_PASSWORD,
PBEM_OAUTH_CLIENT_SECRET. (An OAuth2 refresh token is never in the file:
``[mail.oauth2] token_file`` or ``token_env`` says where it is.)

A bad file fails here, at load, with a ConfigError naming the file and the
key, never later in the middle of a turn. config/pbem.example.toml lists
every key.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pbem.mail.errors import ENV_IMAP_PASSWORD, ENV_SMTP_PASSWORD, MailSettingsError
from pbem.mail.oauth import PROVIDER_NAMES, OAuthSettings
from pbem.mail.settings import (
    AUTH_KINDS,
    IMAP_PORTS,
    MAX_SMTP_CONNECTIONS,
    SMTP_PORTS,
    TRANSPORTS,
    ImapSettings,
    MailSettings,
    SmtpSettings,
)
from pbem.mail.transport import TLS_MODES

ENV_CONFIG = "PBEM_CONFIG"
ENV_DATABASE_URL = "PBEM_DATABASE_URL"
ENV_OAUTH_CLIENT_SECRET = "PBEM_OAUTH_CLIENT_SECRET"

ADJUDICATE_MODES = ("orders", "deadline")

T = TypeVar("T")

_ADDRESS = re.compile(r"^[^@\s<>\"]+@[^@\s<>\"]+$")


class ConfigError(ValueError):
    """A configuration that cannot be used; names the file (or variable) and the key."""

    def __init__(self, source: str, key: str, message: str) -> None:
        super().__init__(f"{source}: {key}: {message}" if key else f"{source}: {message}")
        self.source = source
        self.key = key
        self.message = message


@dataclass(frozen=True)
class GameDefaults:
    """The [defaults] table: settings a new game starts with unless the GM gives others.

    None where the file says nothing: the defaults themselves are defined once,
    in service/play/settings.py (``DEFAULTS``, merged by ``new_game_settings``).
    """

    preset: str = "classic"
    map: str = "classic"
    turn_hours: float | None = None
    grace_hours: float | None = None
    reminder_hours: tuple[float, ...] | None = None  # hours before the deadline
    adjudicate: str | None = None  # "orders": as soon as orders are in; "deadline": at the deadline


@dataclass(frozen=True)
class PollConfig:
    """How the poll retries, divides work among workers, keeps mail and raises alarms."""

    claim_lease_seconds: float = 600.0  # a dead worker's claims are free again after this
    max_attempts: int = 5  # failed tries of one mail before it is held for the GM
    retry_base_seconds: float = 60.0  # backoff doubles from here (mail in and out)
    outage_alert_minutes: float = 30.0  # a server out this long: the GM is told, once
    retention_days: float = 14.0  # sent mail is pruned to its headers after this
    worker_id: str = ""  # "" for host:pid
    # Where workers share the database's outage (it cannot live in the database):
    # "" for a folder of the system's temporary directory.
    outage_dir: str = ""


@dataclass(frozen=True)
class Config:
    database_url: str = field(repr=False)  # may hold a password
    state_dir: Path
    mail: MailSettings  # the [mail] table, in the mail layer's own type
    defaults: GameDefaults = field(default_factory=GameDefaults)
    poll: PollConfig = field(default_factory=PollConfig)
    path: Path | None = None  # the file read; None for the embedded defaults


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Find, read and check the configuration (see the module docstring for the order)."""
    env = os.environ if env is None else env
    file = find_config_file(path, env)
    if file is None:
        config = _build({}, Path.cwd(), "embedded defaults", None)
    else:
        config = _build(_read_toml(file), file.resolve().parent, str(file), file)
    return _apply_env(config, env)


def find_config_file(path: Path | None, env: Mapping[str, str]) -> Path | None:
    """The file to read, or None for the embedded defaults."""
    if path is not None:
        return _must_exist(Path(path), "given with --config")
    if env.get(ENV_CONFIG):
        return _must_exist(Path(env[ENV_CONFIG]), f"named by {ENV_CONFIG}")
    local = Path.cwd() / "pbem.toml"
    if local.is_file():
        return local
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    user = home / ".config" / "pbem" / "pbem.toml"
    if user.is_file():
        return user
    return None


def _must_exist(path: Path, how: str) -> Path:
    if not path.is_file():
        raise ConfigError(str(path), "", f"config file not found ({how})")
    return path


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        text = file.read_bytes().decode("utf-8")
    except OSError as err:
        raise ConfigError(str(file), "", f"cannot read: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise ConfigError(str(file), "", f"not UTF-8 text: {err}") from err
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:  # its message ends "(at line L, column C)"
        raise ConfigError(str(file), "", f"invalid TOML: {err}") from err


def _build(data: dict[str, Any], base: Path, source: str, file: Path | None) -> Config:
    top = _Table(data, "", source, base, ("database_url", "state_dir", "mail", "defaults", "poll"))
    state_dir = top.path("state_dir", Path("var"))
    database_url = top.database_url("database_url", f"sqlite:///{state_dir / 'pbem.db'}")
    return Config(
        database_url=database_url,
        state_dir=state_dir,
        mail=_mail(top.table("mail"), state_dir),
        defaults=_defaults(top.table("defaults")),
        poll=_poll(top.table("poll")),
        path=file,
    )


def _mail(t: _Table, state_dir: Path) -> MailSettings:
    t.known(
        "transport",
        "maildir_root",
        "game_address",
        "gm_address",
        "from_name",
        "max_mail_bytes",
        "reply_budget_per_hour",
        "alert_budget_per_hour",
        "stranger_budget_per_hour",
        "reply_to_unknown",
        "tls_ca_file",
        "decode_child_above_bytes",
        "decode_memory_mib",
        "decode_cpu_seconds",
        "decode_timeout_seconds",
        "imap",
        "smtp",
        "oauth2",
    )
    d = MailSettings(maildir_root=state_dir / "mail")
    return t.built(
        MailSettings,
        transport=t.choice("transport", TRANSPORTS, d.transport),
        maildir_root=t.path("maildir_root", d.maildir_root),
        game_address=t.address("game_address", d.game_address),
        gm_address=t.address("gm_address", d.gm_address),
        from_name=t.string("from_name", d.from_name),
        max_mail_bytes=t.integer("max_mail_bytes", d.max_mail_bytes, minimum=1024),
        reply_budget_per_hour=t.integer("reply_budget_per_hour", d.reply_budget_per_hour),
        alert_budget_per_hour=t.integer("alert_budget_per_hour", d.alert_budget_per_hour),
        stranger_budget_per_hour=t.integer("stranger_budget_per_hour", d.stranger_budget_per_hour),
        reply_to_unknown=t.boolean("reply_to_unknown", d.reply_to_unknown),
        tls_ca_file=t.string("tls_ca_file", d.tls_ca_file),
        decode_child_above_bytes=t.integer(
            "decode_child_above_bytes", d.decode_child_above_bytes, minimum=-1
        ),
        decode_memory_mib=t.integer("decode_memory_mib", d.decode_memory_mib, minimum=16),
        decode_cpu_seconds=t.number("decode_cpu_seconds", d.decode_cpu_seconds, positive=True),
        decode_timeout_seconds=t.number(
            "decode_timeout_seconds", d.decode_timeout_seconds, positive=True
        ),
        imap=_imap(t.table("imap")),
        smtp=_smtp(t.table("smtp")),
        oauth2=_oauth2(t.table("oauth2")),
    )


def _oauth2(t: _Table) -> OAuthSettings:
    t.known(
        "provider",
        "client_id",
        "client_secret",
        "tenant",
        "token_endpoint",
        "device_endpoint",
        "scopes",
        "token_file",
        "token_env",
    )
    d = OAuthSettings()
    token_file = t.string("token_file", "")
    scopes = t.data.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(s, str) and s for s in scopes):
        raise t.fail("scopes", f"expected an array of strings, got {_show(scopes)}")
    return OAuthSettings(
        provider=t.choice("provider", ("", *PROVIDER_NAMES), d.provider),
        client_id=t.string("client_id", d.client_id),
        client_secret=t.string("client_secret", d.client_secret),
        tenant=t.string("tenant", d.tenant, empty=False),
        token_endpoint=t.string("token_endpoint", d.token_endpoint),
        device_endpoint=t.string("device_endpoint", d.device_endpoint),
        scopes=tuple(scopes),
        token_file=t.base / Path(token_file).expanduser() if token_file else None,
        token_env=t.string("token_env", d.token_env),
    )


def _imap(t: _Table) -> ImapSettings:
    t.known(
        "host",
        "port",
        "user",
        "password",
        "auth",
        "tls",
        "timeout",
        "mailbox",
        "processed_folder",
        "rejected_folder",
        "held_folder",
    )
    d = ImapSettings()
    tls = t.choice("tls", TLS_MODES, d.tls)
    return t.built(
        ImapSettings,
        host=t.string("host", d.host, empty=False),
        port=t.integer("port", IMAP_PORTS[tls], minimum=1, maximum=65535),
        user=t.string("user", d.user),
        password=t.string("password", d.password),
        auth=t.choice("auth", AUTH_KINDS, d.auth),
        tls=tls,
        timeout=t.number("timeout", d.timeout, positive=True),
        mailbox=t.string("mailbox", d.mailbox, empty=False),
        processed_folder=t.string("processed_folder", d.processed_folder, empty=False),
        rejected_folder=t.string("rejected_folder", d.rejected_folder, empty=False),
        held_folder=t.string("held_folder", d.held_folder, empty=False),
    )


def _smtp(t: _Table) -> SmtpSettings:
    t.known("host", "port", "user", "password", "auth", "tls", "timeout", "connections")
    d = SmtpSettings()
    tls = t.choice("tls", TLS_MODES, d.tls)
    return t.built(
        SmtpSettings,
        host=t.string("host", d.host, empty=False),
        port=t.integer("port", SMTP_PORTS[tls], minimum=1, maximum=65535),
        user=t.string("user", d.user),
        password=t.string("password", d.password),
        auth=t.choice("auth", AUTH_KINDS, d.auth),
        tls=tls,
        timeout=t.number("timeout", d.timeout, positive=True),
        connections=t.integer(
            "connections", d.connections, minimum=1, maximum=MAX_SMTP_CONNECTIONS
        ),
    )


def _poll(t: _Table) -> PollConfig:
    t.known(
        "claim_lease_seconds",
        "max_attempts",
        "retry_base_seconds",
        "outage_alert_minutes",
        "retention_days",
        "worker_id",
        "outage_dir",
    )
    d = PollConfig()
    outage_dir = t.string("outage_dir", d.outage_dir)
    return PollConfig(
        claim_lease_seconds=t.number("claim_lease_seconds", d.claim_lease_seconds, positive=True),
        max_attempts=t.integer("max_attempts", d.max_attempts, minimum=1),
        retry_base_seconds=t.number("retry_base_seconds", d.retry_base_seconds),
        outage_alert_minutes=t.number("outage_alert_minutes", d.outage_alert_minutes),
        retention_days=t.number("retention_days", d.retention_days, positive=True),
        worker_id=t.string("worker_id", d.worker_id),
        outage_dir=str(t.base / Path(outage_dir).expanduser()) if outage_dir else "",
    )


def _defaults(t: _Table) -> GameDefaults:
    t.known("preset", "map", "turn_hours", "grace_hours", "reminder_hours", "adjudicate")
    d = GameDefaults()
    given = t.data.__contains__
    return GameDefaults(
        preset=t.string("preset", d.preset, empty=False),
        map=t.string("map", d.map, empty=False),
        turn_hours=t.number("turn_hours", 0, positive=True) if given("turn_hours") else None,
        grace_hours=t.number("grace_hours", 0) if given("grace_hours") else None,
        reminder_hours=t.numbers("reminder_hours", ()) if given("reminder_hours") else None,
        adjudicate=(t.choice("adjudicate", ADJUDICATE_MODES, "") if given("adjudicate") else None),
    )


def _apply_env(config: Config, env: Mapping[str, str]) -> Config:
    if env.get(ENV_DATABASE_URL):
        url = env[ENV_DATABASE_URL]
        _check_database_url(url, f"environment variable {ENV_DATABASE_URL}", "")
        config = replace(config, database_url=_resolve_sqlite(url, Path.cwd()))
    mail = config.mail
    if env.get(ENV_IMAP_PASSWORD):
        mail = replace(mail, imap=replace(mail.imap, password=env[ENV_IMAP_PASSWORD]))
    if env.get(ENV_SMTP_PASSWORD):
        mail = replace(mail, smtp=replace(mail.smtp, password=env[ENV_SMTP_PASSWORD]))
    if env.get(ENV_OAUTH_CLIENT_SECRET):
        oauth2 = replace(mail.oauth2, client_secret=env[ENV_OAUTH_CLIENT_SECRET])
        mail = replace(mail, oauth2=oauth2)
    return replace(config, mail=mail)


def _check_database_url(url: str, source: str, key: str) -> None:
    scheme = url.split(":", 1)[0] if ":" in url else ""
    if scheme not in ("sqlite", "postgresql", "postgresql+psycopg", "postgres"):
        raise ConfigError(
            source,
            key,
            f"must be a sqlite:///path or postgresql://user@host/dbname URL, got {_show(url)}",
        )


def _resolve_sqlite(url: str, base: Path) -> str:
    """sqlite:///relative.db -> sqlite:////<base>/relative.db; anything else unchanged."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return url
    database, sep, query = url[len(prefix) :].partition("?")
    if not database or database == ":memory:" or Path(database).is_absolute():
        return url
    return f"{prefix}{base / database}{sep}{query}"


def _show(value: Any) -> str:
    """A value as it would look in TOML, with its kind, for messages."""
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {value}"
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"{type(value).__name__} {value}"


class _Table:
    """One TOML table being read: each getter checks one key and names it on error."""

    def __init__(
        self,
        data: dict[str, Any],
        prefix: str,
        source: str,
        base: Path,
        known: tuple[str, ...] = (),
    ) -> None:
        self.data = data
        self.prefix = prefix
        self.source = source
        self.base = base
        if known:
            self.known(*known)

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def fail(self, name: str, message: str) -> ConfigError:
        return ConfigError(self.source, self.key(name), message)

    def known(self, *names: str) -> None:
        for name in sorted(self.data):
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f" (did you mean {self.key(close[0])}?)" if close else ""
                raise self.fail(name, f"unknown key{hint}")

    def table(self, name: str) -> _Table:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.fail(name, f"expected a table [{self.key(name)}], got {_show(value)}")
        return _Table(value, f"{self.key(name)}.", self.source, self.base)

    def built(self, kind: Callable[..., T], **values: Any) -> T:
        """``kind(**values)``, its own checks' errors naming this file and the key."""
        try:
            return kind(**values)
        except MailSettingsError as err:
            raise ConfigError(self.source, err.key, err.reason) from err

    def string(self, name: str, default: str, *, empty: bool = True) -> str:
        value = self.data.get(name, default)
        if not isinstance(value, str):
            raise self.fail(name, f"expected a string, got {_show(value)}")
        if not empty and not value.strip():
            raise self.fail(name, "must not be empty")
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.string(name, default)
        if value not in choices:
            listed = ", ".join(json.dumps(c) for c in choices)
            raise self.fail(name, f"must be one of {listed}; got {json.dumps(value)}")
        return value

    def address(self, name: str, default: str) -> str:
        value = self.string(name, default)
        if not _ADDRESS.match(value):
            raise self.fail(name, f"expected a mail address like name@example.org, got {value!r}")
        return value

    def path(self, name: str, default: Path) -> Path:
        value = self.string(name, str(default), empty=False)
        return self.base / Path(value).expanduser()

    def database_url(self, name: str, default: str) -> str:
        value = self.string(name, default, empty=False)
        _check_database_url(value, self.source, self.key(name))
        return _resolve_sqlite(value, self.base)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            raise self.fail(name, f"expected true or false, got {_show(value)}")
        return value

    def integer(
        self, name: str, default: int, *, minimum: int = 0, maximum: int | None = None
    ) -> int:
        value = self.data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"expected an integer, got {_show(value)}")
        if value < minimum:
            raise self.fail(name, f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise self.fail(name, f"must be at most {maximum}, got {value}")
        return value

    def number(self, name: str, default: float, *, positive: bool = False) -> float:
        return self._number(self.key(name), self.data.get(name, default), positive)

    def numbers(self, name: str, default: tuple[float, ...]) -> tuple[float, ...]:
        value = self.data.get(name, list(default))
        if not isinstance(value, list):
            raise self.fail(name, f"expected an array of numbers, got {_show(value)}")
        return tuple(
            self._number(f"{self.key(name)}[{i}]", item, True) for i, item in enumerate(value)
        )

    def _number(self, shown: str, value: Any, positive: bool) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(self.source, shown, f"expected a number, got {_show(value)}")
        if not math.isfinite(value):
            raise ConfigError(self.source, shown, f"must be a finite number, got {value}")
        if positive and not value > 0:
            raise ConfigError(self.source, shown, f"must be more than 0, got {value}")
        if not positive and value < 0:
            raise ConfigError(self.source, shown, f"must not be negative, got {value}")
        return float(value)
