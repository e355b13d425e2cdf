"""The game's inbox on an IMAP server (imapclient).

Messages are read with BODY.PEEK[] so they stay unread for a person looking
at the same mailbox, and only UIDs above the stored checkpoint are fetched.
A handled message is moved to the processed or rejected folder, created on
first connect. TLS is exactly what the settings say: "implicit" (port 993),
"starttls" (fails if the server does not offer it), or "none" (only when
configured so, for a server on a trusted network).
"""

from __future__ import annotations

import imaplib
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Self

from imapclient import DELETED, IMAPClient
from imapclient.exceptions import LoginError
from imapclient.imapclient import SocketTimeout

from pbem.mail.errors import (
    NO_ANSWER_CAUSES,
    ConnectFailed,
    LoginRefused,
    MailError,
    MessageGone,
    TlsFailed,
    TlsUnavailable,
    TransportError,
    password_missing,
    password_refusal,
    wrong_protocol,
)
from pbem.mail.oauth import TokenSource
from pbem.mail.transport import (
    HELD,
    PROCESSED,
    REJECTED,
    Checkpoint,
    FetchedMail,
    check_folder_role,
    check_tls,
)

_FETCH_BATCH = 50
_UNEXPECTED = "unexpected response:"  # imaplib's words for a greeting that is no IMAP


class ImapInbox:
    """An ``Inbox`` on one IMAP mailbox; connects on first use (or on ``with``).

    ``use_move=False`` forces the COPY + \\Deleted + EXPUNGE path even when the
    server offers MOVE (for servers whose MOVE misbehaves, and for tests).
    ``idling`` is True while the connection waits in IDLE.
    """

    def __init__(
        self,
        host: str,
        port: int = 993,
        user: str = "",
        password: str = "",
        *,
        tls: str = "implicit",
        timeout: float = 30.0,
        inbox: str = "INBOX",
        processed_folder: str = "processed",
        rejected_folder: str = "rejected",
        held_folder: str = "held",
        ca_file: str | None = None,
        use_move: bool = True,
        tokens: TokenSource | None = None,
    ) -> None:
        check_tls(tls)
        self.host = host
        self.port = port
        self.user = user
        self._password = password
        self.tls = tls
        self.timeout = timeout
        self.inbox = inbox
        self.folders = {
            PROCESSED: processed_folder,
            REJECTED: rejected_folder,
            HELD: held_folder,
        }
        self.source = f"imap://{user}@{host}:{port}/{inbox}"
        self.where = f"IMAP server {host}:{port} (mail.imap.host, mail.imap.port)"
        self.ca_file = ca_file
        self.use_move = use_move
        self.tokens = tokens  # OAuth2 (XOAUTH2) instead of the password
        self.idling = False
        self._client: IMAPClient | None = None
        self._capabilities: frozenset[bytes] = frozenset()
        self._uidvalidity: int | None = None
        self._high_uid: int | None = None  # highest UID handed out under _uidvalidity

    # --- connection ---------------------------------------------------------

    def connect(self) -> None:
        """Connect, secure, log in and create the folders; a no-op when connected."""
        self._connection()

    def _connection(self) -> IMAPClient:
        if self._client is not None:
            return self._client
        where = f"IMAP server {self.host}:{self.port}"
        if self.tokens is None and not self._password:
            raise password_missing("imap", self.user)
        # Loading the system's CA bundle is dear (docs/PERFORMANCE.md): only for TLS.
        context = None if self.tls == "none" else ssl.create_default_context(cafile=self.ca_file)
        try:
            client = IMAPClient(
                self.host,
                self.port,
                ssl=self.tls == "implicit",
                ssl_context=context if self.tls == "implicit" else None,
                timeout=SocketTimeout(connect=self.timeout, read=self.timeout),
            )
        except ssl.SSLError as exc:
            raise _tls_error(where, exc) from exc
        except imaplib.IMAP4.error as exc:
            text = str(exc)
            if text.startswith(_UNEXPECTED):  # something answered, not in IMAP
                greeting = text.removeprefix(_UNEXPECTED)
                raise wrong_protocol(f"{where} (mail.imap.port)", "IMAP", greeting) from exc
            raise ConnectFailed(f"cannot connect to {where}: {_describe(exc)}") from exc
        except OSError as exc:
            raise ConnectFailed(f"cannot connect to {where}: {_describe(exc)}") from exc
        try:
            if self.tls == "starttls":
                if b"STARTTLS" not in client.capabilities():
                    raise TlsUnavailable(
                        f'{where} does not offer STARTTLS, but mail.imap.tls = "starttls". '
                        'Use "implicit" (usually port 993) or, only on a trusted network, "none".'
                    )
                client.starttls(context)
            self._login(client, where)
            self._capabilities = frozenset(client.capabilities())
            for folder in self.folders.values():
                _make_folder(client, folder)
        except MailError:
            _shutdown(client)
            raise
        except ssl.SSLError as exc:
            _shutdown(client)
            raise _tls_error(where, exc) from exc
        except (OSError, imaplib.IMAP4.error) as exc:
            _shutdown(client)
            raise TransportError(f"{where}: {_describe(exc)}") from exc
        self._client = client
        return client

    def _login(self, client: IMAPClient, where: str) -> None:
        """LOGIN with the password, or AUTHENTICATE XOAUTH2 with an access token
        (a refused token is replaced by a fresh one, once)."""
        if self.tokens is None:
            try:
                client.login(self.user, self._password)
            except LoginError as exc:
                raise _password_refused(where, self.user, _reply(exc), client) from exc
            return
        token = self.tokens.access_token()
        try:
            client.oauth2_login(self.user, token)
        except LoginError:
            self.tokens.refused(token)
            try:
                client.oauth2_login(self.user, self.tokens.access_token())
            except LoginError as exc:
                raise LoginRefused(
                    f"{where} refused the OAuth2 login of {self.user!r} even with a fresh "
                    f"access token ({_reply(exc)}): is mail.imap.user the account that logged in "
                    "with `pbem mail login`, and does the login's scope include IMAP?"
                ) from exc

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn socket and protocol errors into TransportError; reconnect next time."""
        try:
            yield
        except MailError:
            raise
        except (OSError, imaplib.IMAP4.error) as exc:
            self._drop()
            raise TransportError(f"IMAP {action} on {self.host}:{self.port} failed: {exc}") from exc

    def _drop(self) -> None:
        if self._client is not None:
            _shutdown(self._client)
        self._client = None
        self.idling = False

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.logout()
            except (OSError, imaplib.IMAP4.error):
                pass
        self._drop()

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def folder_names(self) -> list[str]:
        """Every folder of the mailbox, as the server names them (`pbem mail test`)."""
        with self._errors("list"):
            return [name for _flags, _delimiter, name in self._connection().list_folders()]

    # --- Inbox --------------------------------------------------------------

    def fetch_new(
        self, checkpoint: Checkpoint | None, limit: int | None = None
    ) -> tuple[list[FetchedMail], Checkpoint | None]:
        """Messages with a UID above the checkpoint, oldest first, left unread.

        A checkpoint of another mailbox or UIDVALIDITY counts as none: the
        mailbox is read from the start and the caller drops what it has seen
        (by Message-ID).
        """
        with self._errors("fetch"):
            client = self._connection()
            uidvalidity = _uidvalidity(client.select_folder(self.inbox))
            start = 0
            if checkpoint and (checkpoint.mailbox, checkpoint.uidvalidity) == (
                self.source,
                uidvalidity,
            ):
                start = checkpoint.last_uid
            # "n:*" also matches the last message when n is above every UID.
            uids = sorted(uid for uid in client.search(["UID", f"{start + 1}:*"]) if uid > start)
            if limit is not None:
                uids = uids[:limit]
            mails: list[FetchedMail] = []
            for index in range(0, len(uids), _FETCH_BATCH):
                batch = uids[index : index + _FETCH_BATCH]
                response = client.fetch(batch, ["BODY.PEEK[]"])
                for uid in batch:
                    # Moved away by another worker since the search: left out of
                    # the answer, or (Dovecot, before this session has heard
                    # of the expunge) answered with a NIL body.
                    raw = response.get(uid, {}).get(b"BODY[]")
                    if raw is not None:
                        mails.append(FetchedMail(f"{uidvalidity}:{uid}", raw, self.inbox, uid))
        last_uid = max(uids, default=start)
        if self._uidvalidity != uidvalidity:
            self._uidvalidity, self._high_uid = uidvalidity, None
        self._high_uid = max(self._high_uid or 0, last_uid)
        return mails, Checkpoint(self.source, uidvalidity, last_uid)

    def move(self, key: str, folder: str, replacement: bytes | None = None) -> None:
        """Move one message (MOVE, else COPY + \\Deleted + (UID) EXPUNGE).

        With ``replacement``, the target gets those bytes instead (APPEND,
        with the original's flags and INTERNALDATE), then the original is
        removed (\\Deleted + UID EXPUNGE): a crash in between leaves a
        second copy, never none."""
        target = self.folders[check_folder_role(folder)]
        uidvalidity, uid = _parse_key(key)
        with self._errors("move"):
            client = self._connection()
            if _uidvalidity(client.select_folder(self.inbox)) != uidvalidity:
                raise MessageGone(f"{self.inbox} was recreated since message {key} was fetched")
            if not client.search(["UID", str(uid)]):
                raise MessageGone(f"message {key} is no longer in {self.inbox}")
            if replacement is not None:
                self._append_copy(client, key, uid, target, replacement)
            elif self.use_move and b"MOVE" in self._capabilities:
                try:
                    client.move([uid], target)
                except imaplib.IMAP4.error as exc:
                    if _expunged_meanwhile(exc):  # another worker moved it just now
                        raise MessageGone(f"message {key} is no longer in {self.inbox}") from exc
                    raise
                return
            else:
                try:
                    client.copy([uid], target)
                except imaplib.IMAP4.error as exc:
                    if _expunged_meanwhile(exc):
                        raise MessageGone(f"message {key} is no longer in {self.inbox}") from exc
                    raise
            client.add_flags([uid], [DELETED], silent=True)
            if b"UIDPLUS" in self._capabilities:
                client.uid_expunge([uid])
            else:
                client.expunge()  # also removes others' \Deleted messages: RFC 3501 has no better

    def _append_copy(
        self, client: IMAPClient, key: str, uid: int, target: str, replacement: bytes
    ) -> None:
        """APPEND ``replacement`` to ``target`` as the copy of message ``uid``."""
        found = client.fetch([uid], ["FLAGS", "INTERNALDATE"]).get(uid)
        if not found or b"INTERNALDATE" not in found:
            raise MessageGone(f"message {key} is no longer in {self.inbox}")
        flags = [f for f in found.get(b"FLAGS", ()) if f.lower() != b"\\recent"]
        client.append(target, replacement, flags=flags, msg_time=found[b"INTERNALDATE"])

    def wait_for_mail(self, timeout: float) -> bool:
        """Wait in IDLE until the server reports new mail (True) or ``timeout`` passes.

        Mail that arrived after the last fetch counts at once. Without IDLE
        on the server this just sleeps and returns False.
        """
        with self._errors("idle"):
            client = self._connection()
            if b"IDLE" not in self._capabilities:
                time.sleep(timeout)
                return False
            info = client.select_folder(self.inbox)
            uidnext = int(info.get(b"UIDNEXT", 0))
            if (
                self._high_uid is not None
                and self._uidvalidity == _uidvalidity(info)
                and uidnext - 1 > self._high_uid
            ):
                return True
            if timeout <= 0:
                return False
            deadline = time.monotonic() + timeout
            client.idle()
            self.idling = True
            try:
                while (remaining := deadline - time.monotonic()) > 0:
                    responses = client.idle_check(timeout=remaining)
                    if any(len(r) > 1 and r[1] == b"EXISTS" for r in responses):
                        return True
                return False
            finally:
                self.idling = False
                client.idle_done()


def _expunged_meanwhile(exc: Exception) -> bool:
    """RFC 5530's EXPUNGEISSUED: the message was removed (by another client)
    between our search and our command."""
    text = str(exc)
    return "EXPUNGEISSUED" in text or "no longer exist" in text


def _uidvalidity(select_info: dict[bytes, object]) -> int:
    return int(select_info[b"UIDVALIDITY"])  # type: ignore[call-overload]


def _parse_key(key: str) -> tuple[int, int]:
    try:
        uidvalidity, uid = key.split(":")
        return int(uidvalidity), int(uid)
    except ValueError:
        raise ValueError(f"{key!r} is not a key of this IMAP inbox (UIDVALIDITY:UID)") from None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer in time ({exc or 'timed out'}): {NO_ANSWER_CAUSES}"
    return str(exc) or type(exc).__name__


def _reply(exc: BaseException) -> str:
    """A server's reply as imapclient words it, without Python's b'...'."""
    text = str(exc)
    if len(text) > 2 and text[0] == "b" and text[1] in "'\"" and text.endswith(text[1]):
        return text[2:-1]
    return text


def _tls_error(where: str, exc: ssl.SSLError) -> TlsFailed:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return TlsFailed(
            f"{where}: its TLS certificate was refused ({exc.verify_message}); "
            "for a private CA set mail.tls_ca_file"
        )
    return TlsFailed(
        f"{where}: the TLS handshake failed ({exc.reason or exc}). With "
        'mail.imap.tls = "implicit" the port must speak TLS at once (usually 993); '
        'a port that starts in plain text (143) wants tls = "starttls"'
    )


def _password_refused(where: str, user: str, reply: str, client: IMAPClient) -> LoginRefused:
    try:
        capabilities = client.capabilities()
    except (OSError, imaplib.IMAP4.error):
        capabilities = ()
    offered = frozenset(
        c.decode(errors="replace")[5:].upper() for c in capabilities if c.startswith(b"AUTH=")
    )
    if b"LOGINDISABLED" in capabilities:
        offered = offered - {"PLAIN", "LOGIN"}
    return password_refusal(where, user, reply, offered)


def _shutdown(client: IMAPClient) -> None:
    try:
        client.shutdown()
    except OSError:
        pass


def _make_folder(client: IMAPClient, folder: str) -> None:
    """Create ``folder`` unless it is there. Several workers starting on a new
    mailbox race to create it: the loser's ALREADYEXISTS means it is there."""
    if client.folder_exists(folder):
        return
    try:
        client.create_folder(folder)
    except imaplib.IMAP4.error:
        if not client.folder_exists(folder):
            raise
