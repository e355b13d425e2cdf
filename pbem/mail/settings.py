"""The [mail] settings and the factories that open the configured transports.

pbem/config.py builds ``MailSettings`` from the [mail] table of the TOML
config with these same field names (docs/MAIL.md lists them). Ports of 0
mean the standard port for the TLS mode.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from pbem.mail.errors import MailSettingsError
from pbem.mail.guard import ReplyBudget
from pbem.mail.transport import TLS_MODES, Inbox, Sender

TRANSPORTS = ("maildir", "imap")
_IMAP_PORTS = {"implicit": 993, "starttls": 143, "none": 143}
_SMTP_PORTS = {"implicit": 465, "starttls": 587, "none": 25}


@dataclass(frozen=True)
class MailSettings:
    """Everything the mail layer needs to know; validated on creation."""

    transport: str = "maildir"
    from_address: str = "pbem@localhost"
    max_mail_bytes: int = 256_000
    replies_per_hour: int = 20
    # maildir transport
    maildir_root: str = "var/mail"
    inbox_address: str = ""  # defaults to from_address
    # imap transport: IMAP in ...
    imap_host: str = ""
    imap_port: int = 0
    imap_user: str = ""
    imap_password: str = ""
    imap_tls: str = "implicit"
    imap_timeout: float = 30.0
    imap_inbox: str = "INBOX"
    imap_processed_folder: str = "processed"
    imap_rejected_folder: str = "rejected"
    imap_held_folder: str = "held"
    # ... and SMTP out
    smtp_host: str = ""
    smtp_port: int = 0
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_tls: str = "starttls"
    smtp_timeout: float = 30.0
    # a CA bundle to trust instead of the system's (a private or self-signed server)
    tls_ca_file: str = ""

    def __post_init__(self) -> None:
        _one_of("transport", self.transport, TRANSPORTS)
        _one_of("imap_tls", self.imap_tls, TLS_MODES)
        _one_of("smtp_tls", self.smtp_tls, TLS_MODES)
        if "@" not in self.from_address:
            raise MailSettingsError(
                f"mail.from_address must be a mail address (got {self.from_address!r})"
            )
        for name in ("imap_port", "smtp_port"):
            value = getattr(self, name)
            if not 0 <= value <= 65535:
                raise MailSettingsError(f"mail.{name} must be 0..65535 (got {value})")
        for name in ("imap_timeout", "smtp_timeout"):
            if getattr(self, name) <= 0:
                raise MailSettingsError(f"mail.{name} must be above 0 seconds")
        if self.max_mail_bytes < 1024:
            raise MailSettingsError("mail.max_mail_bytes must be at least 1024")
        if self.replies_per_hour < 0:
            raise MailSettingsError("mail.replies_per_hour cannot be negative")
        if self.transport == "imap":
            for name in ("imap_host", "imap_user", "smtp_host"):
                if not getattr(self, name):
                    raise MailSettingsError(f'mail.{name} is required when transport = "imap"')
        if self.tls_ca_file and not Path(self.tls_ca_file).is_file():
            raise MailSettingsError(f"mail.tls_ca_file: no such file {self.tls_ca_file!r}")

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @property
    def inbox(self) -> str:
        """The game's own address: where players send their orders."""
        return (self.inbox_address or self.from_address).lower()

    @property
    def own_addresses(self) -> set[str]:
        """Addresses whose mail is our own coming back (see guard.no_reply_reason)."""
        return {self.from_address.lower(), self.inbox}

    @property
    def imap_port_or_default(self) -> int:
        return self.imap_port or _IMAP_PORTS[self.imap_tls]

    @property
    def smtp_port_or_default(self) -> int:
        return self.smtp_port or _SMTP_PORTS[self.smtp_tls]

    def reply_budget(self) -> ReplyBudget:
        return ReplyBudget(per_hour=self.replies_per_hour)


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        choices = ", ".join(f'"{a}"' for a in allowed)
        raise MailSettingsError(f"mail.{name} must be one of {choices} (got {value!r})")


def open_inbox(settings: MailSettings) -> Inbox:
    """The configured inbox; use it as a context manager so it gets closed."""
    if settings.transport == "maildir":
        from pbem.mail.maildir import MaildirInbox, spool_path

        return MaildirInbox(spool_path(settings.maildir_root, settings.inbox))
    from pbem.mail.imap import ImapInbox

    return ImapInbox(
        host=settings.imap_host,
        port=settings.imap_port_or_default,
        user=settings.imap_user,
        password=settings.imap_password,
        tls=settings.imap_tls,
        timeout=settings.imap_timeout,
        inbox=settings.imap_inbox,
        processed_folder=settings.imap_processed_folder,
        rejected_folder=settings.imap_rejected_folder,
        held_folder=settings.imap_held_folder,
        ca_file=settings.tls_ca_file or None,
    )


def open_sender(settings: MailSettings) -> Sender:
    """The configured sender (SMTP for the imap transport, local Maildirs otherwise)."""
    if settings.transport == "maildir":
        from pbem.mail.maildir import MaildirSender

        return MaildirSender(settings.maildir_root)
    from pbem.mail.smtp import SmtpSender

    return SmtpSender(
        host=settings.smtp_host,
        port=settings.smtp_port_or_default,
        user=settings.smtp_user,
        password=settings.smtp_password,
        tls=settings.smtp_tls,
        timeout=settings.smtp_timeout,
        ca_file=settings.tls_ca_file or None,
    )
