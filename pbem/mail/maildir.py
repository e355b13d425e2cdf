"""The embedded transport: Maildir folders on disk, no server needed.

Used by default, by the demo and by local players (bots): the game's inbox
is the Maildir ``<root>/<inbox address>/``, and every outgoing mail is
dropped into ``<root>/<recipient address>/``. Handled messages move to the
Maildir++ sub-folders "processed" and "rejected" of the inbox, which an IMAP
server such as Dovecot would show as folders of the same name.
"""

from __future__ import annotations

import mailbox
import re
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from pbem.mail.errors import MessageGone, TransportError
from pbem.mail.transport import (
    FOLDER_ROLES,
    Checkpoint,
    FetchedMail,
    OutgoingMail,
    SendResult,
    check_folder_role,
    combine_recipient_failures,
)

_ADDRESS = re.compile(r"^[^/\\\s\x00@.][^/\\\s\x00@]*@[^/\\\s\x00@]+$")
_KEY_TIME = re.compile(r"^(\d+)\.(?:[^.]*?M(\d+))?(?:[^.]*?Q(\d+))?")
_POLL_SECONDS = 0.2


def spool_path(root: str | Path, address: str) -> Path:
    """``<root>/<address>``; a ValueError for anything that is not a plain name@domain."""
    address = address.strip().lower()
    if not _ADDRESS.match(address) or ".." in address:
        raise ValueError(f"{address!r} cannot be a local mailbox: it must look like name@domain")
    return Path(root) / address


def spool_mailbox(root: str | Path, address: str) -> mailbox.Maildir:
    """The Maildir that holds mail for ``address`` under ``root`` (created,
    with every folder above it, if missing)."""
    return _maildir(spool_path(root, address))


def _maildir(path: Path) -> mailbox.Maildir:
    # mailbox.Maildir makes only the last folder of the path; a fresh
    # ./var/mail has none of them yet.
    path.parent.mkdir(parents=True, exist_ok=True)
    return mailbox.Maildir(path, factory=None, create=True)


def create_inbox(root: str | Path, address: str) -> Path:
    """The game's inbox Maildir with its processed, rejected and held folders."""
    path = spool_path(root, address)
    MaildirInbox(path).close()
    return path


def _delivery_order(key: str) -> tuple[int, int, int, str]:
    """Oldest first: Maildir keys start with the delivery time, "<seconds>.M<microseconds>",
    and Python's add a per-process counter "Q<n>" (neither is zero-padded)."""
    found = _KEY_TIME.match(key)
    if found is None:
        return (0, 0, 0, key)
    seconds, micros, counter = (int(group or 0) for group in found.groups())
    return (seconds, micros, counter, key)


class MaildirInbox:
    """An ``Inbox`` over one Maildir; every message still in it counts as new."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.source = f"maildir://{self.path.resolve()}"
        self.where = f"Maildir {self.path} (mail.maildir_root, mail.game_address)"
        try:
            self._box = _maildir(self.path)
            for folder in FOLDER_ROLES:
                self._folder(folder)
        except OSError as exc:
            raise TransportError(f"cannot open the inbox {self.where}: {exc}") from exc
        self._fetched: set[str] = set()

    def fetch_new(
        self, checkpoint: Checkpoint | None = None, limit: int | None = None
    ) -> tuple[list[FetchedMail], Checkpoint | None]:
        """All messages not moved yet, oldest first; a Maildir needs no checkpoint."""
        keys = sorted(self._box.keys(), key=_delivery_order)
        if limit is not None:
            keys = keys[:limit]
        mails: list[FetchedMail] = []
        for key in keys:
            try:
                raw = self._box.get_bytes(key)
            except (KeyError, FileNotFoundError):
                continue  # moved away by someone else since the listing
            mails.append(FetchedMail(key=key, raw=raw, mailbox="INBOX", uid=None))
            self._fetched.add(key)
        return mails, None

    def move(self, key: str, folder: str, replacement: bytes | None = None) -> None:
        """Copy the exact bytes (or ``replacement``) into the sub-folder, then
        remove the original.

        A crash in between leaves the message in both places; the caller's
        Message-ID check makes the second sight a no-op, so nothing is lost.
        """
        check_folder_role(folder)
        try:
            raw = self._box.get_bytes(key)
        except (KeyError, FileNotFoundError) as exc:
            raise MessageGone(f"message {key} is no longer in {self.path}") from exc
        self._folder(folder).add(raw if replacement is None else replacement)
        try:
            self._box.remove(key)
        except (KeyError, FileNotFoundError):
            pass  # someone removed it meanwhile: the copy is where it belongs
        self._fetched.discard(key)

    def wait_for_mail(self, timeout: float) -> bool:
        """Poll the directory until a message not fetched before shows up."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            if any(key not in self._fetched for key in self._box.keys()):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(_POLL_SECONDS, remaining))

    def folder_keys(self, folder: str) -> list[str]:
        """Keys of the messages in a sub-folder (for tests and the GM's tools)."""
        return sorted(self._folder(check_folder_role(folder)).keys(), key=_delivery_order)

    def folder_bytes(self, folder: str) -> list[bytes]:
        box = self._folder(check_folder_role(folder))
        return [box.get_bytes(key) for key in sorted(box.keys(), key=_delivery_order)]

    def _folder(self, name: str) -> mailbox.Maildir:
        if name in self._box.list_folders():
            return self._box.get_folder(name)
        return self._box.add_folder(name)

    def close(self) -> None:
        self._box.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class MaildirSender:
    """A ``Sender`` that drops each message into ``<root>/<recipient>/``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def send(
        self,
        messages: list[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
    ) -> list[SendResult]:
        results = []
        for message in messages:
            results.append(self._send_one(message))
            if on_result is not None:
                on_result(results[-1])
        return results

    def _send_one(self, message: OutgoingMail) -> SendResult:
        failures: list[tuple[str, bool, str]] = []  # (recipient, permanent, error)
        for recipient in message.recipients:
            try:
                spool_mailbox(self.root, recipient).add(message.raw)
            except ValueError as exc:
                failures.append((recipient, True, str(exc)))
            except OSError as exc:
                failures.append((recipient, False, f"{recipient}: {exc}"))
        return combine_recipient_failures(message, failures)
