"""The two small interfaces every mail transport implements, and the data they pass.

An ``Inbox`` hands out new raw messages without marking them read and moves a
message away only when the caller says so (after its database commit). A
``Sender`` delivers a batch of outgoing messages (over one connection, or a
few: ``[mail.smtp] connections``) and says, per message, as soon as its
server answered, whether a failure is worth retrying.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from pbem.mail.errors import MailError, MessageGone, TlsUnavailable, TransportError

__all__ = [
    "PROCESSED",
    "REJECTED",
    "HELD",
    "FOLDER_ROLES",
    "Checkpoint",
    "FetchedMail",
    "Inbox",
    "MailError",
    "MessageGone",
    "OutgoingMail",
    "SendResult",
    "Sender",
    "TlsUnavailable",
    "TransportError",
]

# The two places a handled message goes. ``Inbox.move`` takes one of these
# roles; each transport maps it to a folder name (IMAP: from the settings).
PROCESSED = "processed"
REJECTED = "rejected"
HELD = "held"  # failed too often: waits for the GM

TLS_MODES = ("implicit", "starttls", "none")
MAX_SMTP_CONNECTIONS = 16  # a few: a kill can cost one duplicate per connection


def check_tls(tls: str) -> str:
    """The TLS mode itself, or a ValueError naming the three that exist."""
    if tls not in TLS_MODES:
        raise ValueError(f'tls must be "implicit", "starttls" or "none" (got {tls!r})')
    return tls


FOLDER_ROLES = (PROCESSED, REJECTED, HELD)


@dataclass(frozen=True)
class FetchedMail:
    """One raw message as the server stored it.

    ``key`` is what ``Inbox.move`` takes back; ``uid`` is the IMAP UID (None
    for a Maildir).
    """

    key: str
    raw: bytes
    mailbox: str
    uid: int | None


@dataclass(frozen=True)
class Checkpoint:
    """How far an IMAP mailbox has been read; the caller stores it with the raw mails."""

    mailbox: str
    uidvalidity: int
    last_uid: int


@dataclass(frozen=True)
class OutgoingMail:
    """A rendered message ready for the wire; ``key`` is the caller's outbox id."""

    key: str
    sender: str
    recipients: tuple[str, ...]
    raw: bytes

    def __post_init__(self) -> None:
        # Accept a list from callers but keep the dataclass hashable and frozen.
        object.__setattr__(self, "recipients", tuple(self.recipients))


@dataclass(frozen=True)
class SendResult:
    """What happened to one ``OutgoingMail``.

    ``ok`` means the server took responsibility for the message. A failure is
    ``permanent`` (5xx: do not retry, tell a person) or temporary (4xx, server
    down, timeout: retry later with backoff).
    """

    key: str
    ok: bool
    permanent: bool = False
    error: str = ""


@runtime_checkable
class Inbox(Protocol):
    """Where incoming mail waits until the caller has stored and handled it.

    ``source`` names the mailbox for good (server, user and folder), the key
    of its stored checkpoint; ``where`` says it to a person (with the
    setting that changes it).
    """

    source: str
    where: str

    def fetch_new(
        self, checkpoint: Checkpoint | None, limit: int | None = None
    ) -> tuple[list[FetchedMail], Checkpoint | None]:
        """Messages after ``checkpoint`` (oldest first, at most ``limit``), unread,
        and the checkpoint to store once they are recorded."""
        ...

    def move(self, key: str, folder: str, replacement: bytes | None = None) -> None:
        """Move one fetched message to ``PROCESSED``, ``REJECTED`` or ``HELD``.

        ``replacement``: the bytes the target folder gets instead of the
        message's own (its PASSWORD lines blanked): written into the folder
        first, the original removed after, so a crash in between leaves a
        second copy, never no copy."""
        ...

    def wait_for_mail(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True when new mail has arrived."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class Sender(Protocol):
    """Something that delivers outgoing mail."""

    def send(
        self,
        messages: list[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
    ) -> list[SendResult]:
        """One result per message, in the same order. ``on_result`` hears of
        each as soon as it is known (before the next message goes out), so
        the caller can record each acceptance at once."""
        ...


def check_folder_role(folder: str) -> str:
    """The role itself, or a ValueError naming the two that exist."""
    if folder not in FOLDER_ROLES:
        raise ValueError(
            f"unknown folder {folder!r}: move to {PROCESSED!r}, {REJECTED!r} or {HELD!r}"
        )
    return folder


def combine_recipient_failures(
    message: OutgoingMail, failures: list[tuple[str, bool, str]]
) -> SendResult:
    """One result from per-recipient failures.

    If any recipient got the message it counts as sent (retrying would send
    it twice to the others); the failures are still named in ``error``.
    """
    error = "; ".join(text for _, _, text in failures)
    if not message.recipients:
        return SendResult(message.key, ok=False, permanent=True, error="no recipients")
    if len(failures) < len(message.recipients):
        return SendResult(message.key, ok=True, permanent=False, error=error)
    permanent = all(permanent for _, permanent, _ in failures)
    return SendResult(message.key, ok=False, permanent=permanent, error=error)
