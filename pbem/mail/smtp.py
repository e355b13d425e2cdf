"""Outgoing mail over SMTP (aiosmtplib): one batch over one or a few connections.

Every message gets its own result: 5xx replies are permanent failures, 4xx
replies, timeouts and lost connections temporary ones. Problems that no
retry can fix, because the settings are wrong (TLS missing, certificate
refused, login refused), raise TransportError instead, so the operator sees
them; the outbox stays as it was.

A mail is prepared for the wire once (``prepare``: CRLF line endings, dot
stuffing, its SIZE) and sent with aiosmtplib's MAIL and RCPT commands and a
DATA command of our own, because aiosmtplib's ``sendmail`` scans the mail
twice with a regex (scripts/bench/smtp.py; docs/PERFORMANCE.md). That is
``DataPath.PREPARED``; ``DataPath.PLAIN`` is aiosmtplib's ``sendmail`` itself,
the plain path that tests/mail/test_mail_smtp_wire.py checks it against.

With ``connections`` > 1 the batch is shared over that many connections in
one event loop, each taking the next mail of the batch when it is free; each
result is reported the moment its server answered. An exception raised by
``on_result`` (the outbox's LeaseRanOut) stops every connection before it
sends another mail, and is raised from ``send``.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

import aiosmtplib
from aiosmtplib import (
    SMTPAuthenticationError,
    SMTPConnectError,
    SMTPDataError,
    SMTPException,
    SMTPHeloError,
    SMTPNotSupported,
    SMTPRecipientRefused,
    SMTPRecipientsRefused,
    SMTPResponse,
    SMTPResponseException,
    SMTPServerDisconnected,
    SMTPTimeoutError,
)
from aiosmtplib.email import quote_address

from pbem.mail.errors import (
    NO_ANSWER_CAUSES,
    ConnectFailed,
    LoginRefused,
    OAuth2Required,
    TlsFailed,
    TlsUnavailable,
    TransportError,
    password_missing,
    password_refusal,
    wrong_protocol,
)
from pbem.mail.oauth import TokenSource, xoauth2
from pbem.mail.retry import is_permanent
from pbem.mail.transport import (
    MAX_SMTP_CONNECTIONS,
    OutgoingMail,
    SendResult,
    check_tls,
    combine_recipient_failures,
)

_CONNECTION_ERRORS = (SMTPException, OSError, asyncio.TimeoutError)
_START_INPUT = 354
_COMPLETED = 250
_AUTH_CONTINUE = 334
_AUTH_OK = 235
_MALFORMED = -1  # aiosmtplib's code for a reply that is no SMTP reply
_MALFORMED_PREFIX = "Malformed SMTP response line:"


class DataPath(StrEnum):
    """How a mail's transaction is sent."""

    PREPARED = "prepared"  # MAIL, RCPT, then DATA of the mail prepared once (``prepare``)
    PLAIN = "plain"  # aiosmtplib's ``sendmail``


@dataclass(frozen=True)
class Prepared:
    """A mail in its wire form: what follows the DATA command, final ``.`` line included.

    ``size`` is the RFC 1870 SIZE: the octets with CRLF line endings, before
    dot stuffing (the figure aiosmtplib's ``sendmail`` announces)."""

    data: bytes
    size: int


def prepare(raw: bytes) -> Prepared:
    """Lone CR and lone LF become CRLF, the mail ends with CRLF, a line that
    starts with a dot gets a second one, and the ``.`` line ends it: the bytes
    aiosmtplib would send, in a few ``bytes.replace`` passes instead of two
    regex scans. (CRLF first, so a CR of a CRLF pair is never taken as lone.)"""
    text = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").replace(b"\n", b"\r\n")
    if not text.endswith(b"\r\n"):
        text += b"\r\n"
    size = len(text)
    stuffed = text.replace(b"\n.", b"\n..")
    if stuffed.startswith(b"."):
        stuffed = b"." + stuffed
    return Prepared(stuffed + b".\r\n", size)


class SmtpSender:
    """A ``Sender`` for one SMTP server. Call ``send`` from synchronous code."""

    def __init__(
        self,
        host: str,
        port: int = 587,
        user: str = "",
        password: str = "",
        *,
        tls: str = "starttls",
        timeout: float = 30.0,
        ca_file: str | None = None,
        local_hostname: str | None = None,
        connections: int = 1,
        data_path: DataPath = DataPath.PREPARED,
        tokens: TokenSource | None = None,
    ) -> None:
        check_tls(tls)
        if not 1 <= connections <= MAX_SMTP_CONNECTIONS:
            raise ValueError(f"connections must be 1..{MAX_SMTP_CONNECTIONS} (got {connections})")
        self.host = host
        self.port = port
        self.user = user
        self._password = password
        self.tls = tls
        self.timeout = timeout
        self.ca_file = ca_file
        self.local_hostname = local_hostname
        self.connections = connections
        self.data_path = data_path
        self.tokens = tokens  # OAuth2 (AUTH XOAUTH2) instead of the password

    @property
    def _where(self) -> str:
        return f"SMTP server {self.host}:{self.port}"

    def send(
        self,
        messages: list[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
    ) -> list[SendResult]:
        """Deliver ``messages``; one result per message, in the order given.

        ``on_result`` is called with each result as soon as the server has
        answered for that message, before its connection sends the next one.
        Each connection sends its mails in the order of ``messages``."""
        if not messages:
            return []
        return asyncio.run(self._send_all(messages, on_result or _ignore))

    async def _send_all(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None]
    ) -> list[SendResult]:
        count = min(self.connections, len(messages))
        opened = await asyncio.gather(
            *(self._connect() for _ in range(count)), return_exceptions=True
        )
        smtps = [o for o in opened if isinstance(o, aiosmtplib.SMTP)]
        raised = [o for o in opened if isinstance(o, BaseException)]
        if raised:  # a setting is wrong (or worse): no connection sends anything
            for smtp in smtps:
                smtp.close()
            raise raised[0]
        if not smtps:
            error = next(o for o in opened if isinstance(o, str))
            failed = [SendResult(m.key, ok=False, permanent=False, error=error) for m in messages]
            for result in failed:
                on_result(result)
            return failed
        batch = _Batch(deque(enumerate(messages)), on_result)
        await asyncio.gather(*(self._work(smtp, batch) for smtp in smtps))
        if batch.stop is not None:
            raise batch.stop
        lost = f"{self._where} closed the connection"
        while batch.queue:  # every connection was lost before these
            index, message = batch.queue.popleft()
            batch.report(index, SendResult(message.key, ok=False, permanent=False, error=lost))
        return [batch.results[i] for i in range(len(messages))]

    async def _work(self, smtp: aiosmtplib.SMTP, batch: _Batch) -> None:
        """One connection: the next mail of the batch until none is left, the
        connection is lost, or a result's callback raised (``batch.stop``)."""
        try:
            while batch.queue and batch.stop is None:
                index, message = batch.queue.popleft()
                result = await self._send_one(smtp, message, batch)
                if result is None:  # stopped before DATA: never sent, not reported
                    return
                if not batch.report(index, result) or not smtp.is_connected:
                    return
        finally:
            await _quit(smtp)

    async def _connect(self) -> aiosmtplib.SMTP | str:
        """An open connection, or why none could be made (a temporary failure).

        Settings problems raise TransportError."""
        where = self._where
        try:
            return await self._open()
        except ConnectFailed as exc:  # down for now, perhaps: the mails wait
            return exc.message
        except (TransportError, ssl.SSLCertVerificationError):
            raise
        except _CONNECTION_ERRORS as exc:
            return f"cannot connect to {where}: {_describe(exc)}"

    def check(self) -> None:
        """Connect, secure and log in as ``send`` would, then say goodbye
        (`pbem mail test`). Every failure raises, classified: ConnectFailed,
        TlsFailed, TlsUnavailable, LoginRefused and its kinds, OAuthLoginNeeded."""

        async def visit() -> None:
            await _quit(await self._open())

        asyncio.run(visit())

    async def _open(self) -> aiosmtplib.SMTP:
        """A connection, secured and logged in as configured; failures classified."""
        where = self._where
        if self.tokens is None and self.user and not self._password:
            raise password_missing("smtp", self.user)
        try:
            return await self._open_raw()
        except TransportError:
            raise
        except SMTPResponseException as exc:
            if exc.code != _MALFORMED:
                raise
            greeting = exc.message.removeprefix(_MALFORMED_PREFIX)
            raise wrong_protocol(f"{where} (mail.smtp.port)", "SMTP", greeting) from exc
        except ssl.SSLError as exc:
            raise _tls_failed(where, exc) from exc
        except SMTPConnectError as exc:
            if isinstance(exc.__cause__ or exc.__context__, ssl.SSLError):
                raise _tls_failed(where, exc) from exc
            why = f": {NO_ANSWER_CAUSES}" if isinstance(exc, TimeoutError) else ""
            raise ConnectFailed(f"cannot connect to {where}: {_describe(exc)}{why}") from exc

    async def _open_raw(self) -> aiosmtplib.SMTP:
        # Loading the system's CA bundle is dear (docs/PERFORMANCE.md): only for TLS.
        context = None if self.tls == "none" else ssl.create_default_context(cafile=self.ca_file)
        smtp = aiosmtplib.SMTP(
            hostname=self.host,
            port=self.port,
            use_tls=self.tls == "implicit",
            start_tls=False,
            tls_context=context if self.tls == "implicit" else None,
            timeout=self.timeout,
            local_hostname=self.local_hostname,
        )
        await smtp.connect()
        try:
            if self.tls == "starttls":
                await smtp.ehlo()
                if not smtp.supports_extension("starttls"):
                    raise TlsUnavailable(
                        f"SMTP server {self.host}:{self.port} does not offer STARTTLS, but "
                        'mail.smtp.tls = "starttls". Use "implicit" (usually port 465) or, '
                        'only on a trusted network, "none".'
                    )
                await smtp.starttls(tls_context=context)
            if self.tokens is not None:
                await self._xoauth2_login(smtp, self.tokens)
            elif self.user:
                await self._password_login(smtp)
            await _hello(smtp)  # the extensions (SIZE) are known before the first MAIL
        except BaseException:
            smtp.close()
            raise
        return smtp

    async def _password_login(self, smtp: aiosmtplib.SMTP) -> None:
        await _hello(smtp)
        offered = frozenset(m.upper() for m in smtp.server_auth_methods)
        if offered and "XOAUTH2" in offered and not offered & {"PLAIN", "LOGIN", "CRAM-MD5"}:
            raise OAuth2Required(
                f"{self._where} takes no password login for {self.user!r}, only OAuth2 (it "
                'offers AUTH XOAUTH2 alone). Set auth = "oauth2" for [mail.smtp], fill in '
                '[mail.oauth2] and run `pbem mail login` (docs/GAME-MASTERS.md, "Mail '
                'providers")'
            )
        try:
            await smtp.login(self.user, self._password)
        except SMTPAuthenticationError as exc:
            raise password_refusal(
                self._where, self.user, f"{exc.code} {exc.message}", offered
            ) from exc

    async def _xoauth2_login(self, smtp: aiosmtplib.SMTP, tokens: TokenSource) -> None:
        """AUTH XOAUTH2 with an access token; a refused token is replaced by a
        fresh one, once. (The token is fetched in a thread: it may take an
        HTTP request, and the loop serves the other connections meanwhile.)"""
        await _hello(smtp)
        token = await asyncio.to_thread(tokens.access_token)
        reply = await _auth_xoauth2(smtp, self.user, token)
        if reply.code == _AUTH_OK:
            return
        tokens.refused(token)
        token = await asyncio.to_thread(tokens.access_token)
        reply = await _auth_xoauth2(smtp, self.user, token)
        if reply.code != _AUTH_OK:
            raise LoginRefused(
                f"{self._where} refused the OAuth2 login of {self.user!r} even with a fresh "
                f"access token ({reply.code} {reply.message}): is mail.smtp.user the account "
                "that logged in with `pbem mail login`, and does the login's scope include SMTP?"
            )

    async def _send_one(
        self, smtp: aiosmtplib.SMTP, message: OutgoingMail, batch: _Batch
    ) -> SendResult | None:
        """One mail's transaction and its result; None when the batch was
        stopped while this mail's envelope was being given (nothing sent)."""
        try:
            transaction = _TRANSACTIONS[self.data_path]
            refused = await transaction(smtp, message, lambda: batch.stop is None)
        except _Stopped:
            return None
        except SMTPRecipientsRefused as exc:
            failures = [
                (r.recipient, is_permanent(r.code), f"{r.recipient}: {r.code} {r.message}")
                for r in exc.recipients
            ]
            return combine_recipient_failures(message, failures)
        except SMTPResponseException as exc:
            return SendResult(
                message.key, ok=False, permanent=is_permanent(exc.code), error=_describe(exc)
            )
        except (SMTPNotSupported, ValueError) as exc:  # e.g. a non-ASCII address
            return SendResult(message.key, ok=False, permanent=True, error=str(exc))
        except _CONNECTION_ERRORS as exc:
            return SendResult(message.key, ok=False, permanent=False, error=_describe(exc))
        failures = [
            (rcpt, is_permanent(reply.code), f"{rcpt}: {reply.code} {reply.message}")
            for rcpt, reply in refused.items()
        ]
        return combine_recipient_failures(message, failures)


@dataclass
class _Batch:
    """The mails not taken yet, shared by the connections, and what came back."""

    queue: deque[tuple[int, OutgoingMail]]
    on_result: Callable[[SendResult], None]
    results: dict[int, SendResult] = field(default_factory=dict)
    stop: Exception | None = None  # raised by on_result: no connection sends another mail

    def report(self, index: int, result: SendResult) -> bool:
        """Hand one result to the caller; False when the batch must stop."""
        self.results[index] = result
        try:
            self.on_result(result)
        except Exception as exc:
            if self.stop is None:
                self.stop = exc
            return False
        return self.stop is None


class _Stopped(Exception):
    """The batch stopped while this connection gave a mail's envelope."""


async def _transaction(
    smtp: aiosmtplib.SMTP, message: OutgoingMail, go_on: Callable[[], bool]
) -> dict[str, SMTPResponse]:
    """MAIL, RCPT per recipient, DATA: the refused recipients (if not all were).

    What aiosmtplib's ``sendmail`` does, with the mail prepared once: every
    address is checked before anything is sent, SIZE is announced only when
    the server offers it, and a failed transaction is reset (RSET) so the
    connection can go on. Addresses must be ASCII: no SMTPUTF8."""
    for address in (message.sender, *message.recipients):
        _check_address(address)
    prepared = prepare(message.raw)
    options = [f"size={prepared.size}"] if smtp.supports_extension("size") else []
    try:
        await smtp.mail(message.sender, options=options)
        refused = await _recipients(smtp, message.recipients)
        if not go_on():
            raise _Stopped
        await _data(smtp, prepared.data)
    except (SMTPResponseException, SMTPRecipientsRefused, _Stopped):
        try:
            await smtp.rset()
        except _CONNECTION_ERRORS:
            pass  # a reset that fails says nothing about this mail
        raise
    return refused


async def _plain_transaction(
    smtp: aiosmtplib.SMTP, message: OutgoingMail, go_on: Callable[[], bool]
) -> dict[str, SMTPResponse]:
    """The transaction as aiosmtplib's ``sendmail`` sends it (the batch's stop is
    checked before MAIL: sendmail gives no moment between RCPT and DATA)."""
    for address in (message.sender, *message.recipients):
        _check_address(address)
    if not go_on():
        raise _Stopped
    refused, _ = await smtp.sendmail(message.sender, list(message.recipients), message.raw)
    return refused


_TRANSACTIONS = {DataPath.PREPARED: _transaction, DataPath.PLAIN: _plain_transaction}


async def _recipients(smtp: aiosmtplib.SMTP, recipients: Iterable[str]) -> dict[str, SMTPResponse]:
    """RCPT for each; SMTPRecipientsRefused when every one was refused."""
    refused: list[SMTPRecipientRefused] = []
    count = 0
    for address in recipients:
        count += 1
        try:
            await smtp.rcpt(address)
        except SMTPRecipientRefused as exc:
            refused.append(exc)
    if len(refused) == count:
        raise SMTPRecipientsRefused(refused)
    return {exc.recipient: SMTPResponse(exc.code, exc.message) for exc in refused}


async def _data(smtp: aiosmtplib.SMTP, data: bytes) -> SMTPResponse:
    """The DATA command with a prepared mail, which aiosmtplib's ``data`` would
    scan again. Public calls only: the command itself, then the protocol's
    ``write`` and ``read_response``. No other command can come in between: one
    connection serves one transaction at a time (``SmtpSender._work``)."""
    start = await smtp.execute_command(b"DATA")
    if start.code != _START_INPUT:
        raise SMTPDataError(start.code, start.message)
    protocol = smtp.protocol
    if protocol is None:
        raise SMTPServerDisconnected("Connection lost")
    try:
        protocol.write(data)
        reply = await protocol.read_response(timeout=smtp.timeout)
    except (SMTPServerDisconnected, SMTPTimeoutError):
        smtp.close()  # as aiosmtplib does: the connection is out of step
        raise
    if reply.code != _COMPLETED:
        raise SMTPDataError(reply.code, reply.message)
    return reply


def _check_address(address: str) -> None:
    """ValueError for an address that cannot go on an SMTP command line as ASCII."""
    quoted = quote_address(address)
    if not quoted.isascii():
        raise ValueError(f"address {address!r} is not ASCII (pbem does not use SMTPUTF8)")


async def _hello(smtp: aiosmtplib.SMTP) -> None:
    """EHLO, or HELO for a server that knows no EHLO, unless done already."""
    if not smtp.is_ehlo_or_helo_needed:
        return
    try:
        await smtp.ehlo()
    except SMTPHeloError:
        if not smtp.is_connected:
            raise
        await smtp.helo()


async def _auth_xoauth2(smtp: aiosmtplib.SMTP, user: str, token: str) -> SMTPResponse:
    """AUTH XOAUTH2 (the initial response on the command line). A refusal comes
    as a 334 challenge holding the server's error (JSON, base64); an empty
    line answers it, and the server's final reply (535) follows."""
    reply = await smtp.execute_command(b"AUTH", b"XOAUTH2", xoauth2(user, token).encode())
    if reply.code == _AUTH_CONTINUE:
        reply = await smtp.execute_command(b"")
    return reply


def _tls_failed(where: str, exc: BaseException) -> TlsFailed:
    cause = exc if isinstance(exc, ssl.SSLError) else (exc.__cause__ or exc.__context__)
    if isinstance(cause, ssl.SSLCertVerificationError):
        return TlsFailed(
            f"{where}: its TLS certificate was refused ({cause.verify_message}); "
            "for a private CA set mail.tls_ca_file"
        )
    return TlsFailed(
        f"{where}: the TLS handshake failed ({_describe(exc)}). With mail.smtp.tls = "
        '"implicit" the port must speak TLS at once (usually 465); a port that starts in '
        'plain text (587, 25) wants tls = "starttls"'
    )


def _ignore(_result: SendResult) -> None:
    pass


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SMTPResponseException):
        return f"{exc.code} {exc.message}"
    return str(exc) or type(exc).__name__


async def _quit(smtp: aiosmtplib.SMTP) -> None:
    try:
        if smtp.is_connected:
            await smtp.quit()
    except _CONNECTION_ERRORS:
        pass
    finally:
        smtp.close()
