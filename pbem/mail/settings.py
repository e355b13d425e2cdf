"""The [mail] settings, one type, and the factories that open the configured transports.

``MailSettings`` holds the [mail] table of the TOML config with the same
names (``[mail.imap]`` and ``[mail.smtp]`` are ``imap`` and ``smtp``);
pbem/config.py reads the file into it, naming the file and the key of any
bad value, and tests build it directly. docs/MAIL.md lists every field.
A port of 0 means the standard port for the TLS mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pbem.mail.bounds import MAX_MAIL_BYTES
from pbem.mail.errors import MailSettingsError
from pbem.mail.guard import ReplyBudget
from pbem.mail.oauth import OAuthSettings, token_source
from pbem.mail.sandbox import DecodeBudget
from pbem.mail.transport import MAX_SMTP_CONNECTIONS, TLS_MODES, Inbox, Sender
from pbem.vocab import MailAuth

TRANSPORTS = ("maildir", "imap")
IMAP_PORTS = {"implicit": 993, "starttls": 143, "none": 143}
SMTP_PORTS = {"implicit": 465, "starttls": 587, "none": 25}
AUTH_KINDS = tuple(kind.value for kind in MailAuth)


@dataclass(frozen=True)
class ImapSettings:
    """[mail.imap]: where players' mail comes in (transport = "imap")."""

    host: str = "localhost"
    port: int = 0  # 0: the standard port of the TLS mode
    user: str = ""
    password: str = field(default="", repr=False)
    auth: MailAuth = MailAuth.PASSWORD  # OAUTH2: a token from [mail.oauth2] instead
    tls: str = "implicit"
    timeout: float = 30.0
    mailbox: str = "INBOX"
    processed_folder: str = "pbem-processed"
    rejected_folder: str = "pbem-rejected"
    held_folder: str = "pbem-held"

    def __post_init__(self) -> None:
        _check_server("mail.imap", self.tls, self.port, self.timeout, self.auth)
        object.__setattr__(self, "auth", MailAuth(self.auth))
        if not self.port:
            object.__setattr__(self, "port", IMAP_PORTS[self.tls])


@dataclass(frozen=True)
class SmtpSettings:
    """[mail.smtp]: where the game's mail goes out (transport = "imap")."""

    host: str = "localhost"
    port: int = 0  # 0: the standard port of the TLS mode
    user: str = ""
    password: str = field(default="", repr=False)
    auth: MailAuth = MailAuth.PASSWORD  # OAUTH2: a token from [mail.oauth2] instead
    tls: str = "starttls"
    timeout: float = 30.0
    # Connections a batch is shared over; a kill can cost one duplicate each.
    connections: int = 1

    def __post_init__(self) -> None:
        _check_server("mail.smtp", self.tls, self.port, self.timeout, self.auth)
        object.__setattr__(self, "auth", MailAuth(self.auth))
        if not 1 <= self.connections <= MAX_SMTP_CONNECTIONS:
            raise MailSettingsError(
                "mail.smtp.connections",
                f"must be 1..{MAX_SMTP_CONNECTIONS} (got {self.connections})",
            )
        if not self.port:
            object.__setattr__(self, "port", SMTP_PORTS[self.tls])


@dataclass(frozen=True)
class MailSettings:
    """Everything the mail layer and the service need to know of mail; checked on creation."""

    transport: str = "maildir"
    maildir_root: Path = Path("var/mail")
    game_address: str = "pbem@localhost"  # the game's own address: players send orders here
    gm_address: str = "gm@localhost"
    from_name: str = "pbem"
    max_mail_bytes: int = MAX_MAIL_BYTES
    reply_budget_per_hour: int = 20
    alert_budget_per_hour: int = 5
    # answers per hour to all non-player addresses together (open-game answers,
    # refusals, the unknown-sender answer): a forger can use many addresses
    stranger_budget_per_hour: int = 100
    reply_to_unknown: bool = False
    tls_ca_file: str = ""  # a CA bundle to trust for IMAP and SMTP TLS (else the system's)
    # The per-mail budget (pbem/mail/sandbox.py): mails above the size are
    # decoded in a child process with this much memory and time; -1: never.
    decode_child_above_bytes: int = DecodeBudget.child_above_bytes
    decode_memory_mib: int = DecodeBudget.memory_mib
    decode_cpu_seconds: float = DecodeBudget.cpu_seconds
    decode_timeout_seconds: float = DecodeBudget.timeout_seconds
    imap: ImapSettings = field(default_factory=ImapSettings)
    smtp: SmtpSettings = field(default_factory=SmtpSettings)
    oauth2: OAuthSettings = field(default_factory=OAuthSettings)

    def __post_init__(self) -> None:
        _one_of("mail.transport", self.transport, TRANSPORTS)
        for name in ("game_address", "gm_address"):
            if "@" not in getattr(self, name):
                raise MailSettingsError(
                    f"mail.{name}", f"must be a mail address (got {getattr(self, name)!r})"
                )
        if self.max_mail_bytes < 1024:
            raise MailSettingsError("mail.max_mail_bytes", "must be at least 1024")
        for name in ("reply_budget_per_hour", "alert_budget_per_hour", "stranger_budget_per_hour"):
            if getattr(self, name) < 0:
                raise MailSettingsError(f"mail.{name}", "cannot be negative")
        if self.transport == "imap":
            for key, value in (("imap.user", self.imap.user), ("imap.host", self.imap.host)):
                if not value:
                    raise MailSettingsError(f"mail.{key}", 'required when transport = "imap"')
            if not self.smtp.host:
                raise MailSettingsError("mail.smtp.host", 'required when transport = "imap"')
            if self.smtp.auth == MailAuth.OAUTH2 and not self.smtp.user:
                raise MailSettingsError("mail.smtp.user", 'required when auth = "oauth2"')
        if self.uses_oauth2:
            self.oauth2.check()
        self._check_decode_budget()
        if self.tls_ca_file and not Path(self.tls_ca_file).is_file():
            raise MailSettingsError("mail.tls_ca_file", f"no such file {self.tls_ca_file!r}")

    @property
    def uses_oauth2(self) -> bool:
        """True when a server of the imap transport logs in with OAuth2."""
        return self.transport == "imap" and MailAuth.OAUTH2 in (self.imap.auth, self.smtp.auth)

    @property
    def inbox(self) -> str:
        """The game's own address, lower case: where players send their orders."""
        return self.game_address.lower()

    @property
    def own_addresses(self) -> set[str]:
        """Addresses whose mail is our own coming back (see guard.no_reply_reason)."""
        return {self.inbox}

    def reply_budget(self) -> ReplyBudget:
        return ReplyBudget(per_hour=self.reply_budget_per_hour)

    def decode_budget(self) -> DecodeBudget:
        """What one incoming mail may cost to read (pass it to decode_mail)."""
        return DecodeBudget(
            child_above_bytes=self.decode_child_above_bytes,
            memory_mib=self.decode_memory_mib,
            cpu_seconds=self.decode_cpu_seconds,
            timeout_seconds=self.decode_timeout_seconds,
        )

    def _check_decode_budget(self) -> None:
        if self.decode_child_above_bytes < -1:
            raise MailSettingsError(
                "mail.decode_child_above_bytes", "must be -1 (never), 0 (always) or a size"
            )
        if self.decode_memory_mib < 16:
            raise MailSettingsError("mail.decode_memory_mib", "must be at least 16 (MiB)")
        if self.decode_cpu_seconds <= 0:
            raise MailSettingsError("mail.decode_cpu_seconds", "must be above 0 seconds")
        if self.decode_timeout_seconds < self.decode_cpu_seconds:
            raise MailSettingsError(
                "mail.decode_timeout_seconds",
                f"must be at least decode_cpu_seconds ({self.decode_cpu_seconds:g})",
            )


def _check_server(table: str, tls: str, port: int, timeout: float, auth: str) -> None:
    _one_of(f"{table}.tls", tls, TLS_MODES)
    _one_of(f"{table}.auth", auth, AUTH_KINDS)
    if not 0 <= port <= 65535:
        raise MailSettingsError(f"{table}.port", f"must be 0..65535 (got {port})")
    if timeout <= 0:
        raise MailSettingsError(f"{table}.timeout", "must be above 0 seconds")


def _one_of(key: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        choices = ", ".join(f'"{a}"' for a in allowed)
        raise MailSettingsError(key, f"must be one of {choices} (got {value!r})")


def open_inbox(settings: MailSettings) -> Inbox:
    """The configured inbox; use it as a context manager so it gets closed."""
    if settings.transport == "maildir":
        from pbem.mail.maildir import MaildirInbox, spool_path

        return MaildirInbox(spool_path(settings.maildir_root, settings.inbox))
    from pbem.mail.imap import ImapInbox

    imap = settings.imap
    return ImapInbox(
        host=imap.host,
        port=imap.port,
        user=imap.user,
        password=imap.password,
        tls=imap.tls,
        timeout=imap.timeout,
        inbox=imap.mailbox,
        processed_folder=imap.processed_folder,
        rejected_folder=imap.rejected_folder,
        held_folder=imap.held_folder,
        ca_file=settings.tls_ca_file or None,
        tokens=token_source(settings.oauth2) if imap.auth == MailAuth.OAUTH2 else None,
    )


def open_sender(settings: MailSettings) -> Sender:
    """The configured sender (SMTP for the imap transport, local Maildirs otherwise)."""
    if settings.transport == "maildir":
        from pbem.mail.maildir import MaildirSender

        return MaildirSender(settings.maildir_root)
    from pbem.mail.smtp import SmtpSender

    smtp = settings.smtp
    return SmtpSender(
        host=smtp.host,
        port=smtp.port,
        user=smtp.user,
        password=smtp.password,
        tls=smtp.tls,
        timeout=smtp.timeout,
        ca_file=settings.tls_ca_file or None,
        connections=smtp.connections,
        tokens=token_source(settings.oauth2) if smtp.auth == MailAuth.OAUTH2 else None,
    )
