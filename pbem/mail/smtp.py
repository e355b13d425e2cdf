"""Outgoing mail over SMTP (aiosmtplib), one connection per batch.

Every message gets its own result: 5xx replies are permanent failures, 4xx
replies, timeouts and lost connections temporary ones. Problems that no
retry can fix, because the settings are wrong (TLS missing, certificate
refused, login refused), raise TransportError instead, so the operator sees
them; the outbox stays as it was.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

import aiosmtplib
from aiosmtplib import (
    SMTPAuthenticationError,
    SMTPException,
    SMTPNotSupported,
    SMTPRecipientsRefused,
    SMTPResponseException,
)

from pbem.mail.errors import TlsUnavailable, TransportError
from pbem.mail.retry import is_permanent
from pbem.mail.transport import OutgoingMail, SendResult, check_tls, combine_recipient_failures

_CONNECTION_ERRORS = (SMTPException, OSError, asyncio.TimeoutError)


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
    ) -> None:
        check_tls(tls)
        self.host = host
        self.port = port
        self.user = user
        self._password = password
        self.tls = tls
        self.timeout = timeout
        self.ca_file = ca_file
        self.local_hostname = local_hostname

    def send(
        self,
        messages: list[OutgoingMail],
        on_result: Callable[[SendResult], None] | None = None,
    ) -> list[SendResult]:
        """Deliver ``messages`` over one connection; one result per message, in order.

        ``on_result`` is called with each result as soon as the server has
        answered for that message, before the next one is sent."""
        if not messages:
            return []
        results = asyncio.run(self._send_all(messages, on_result or _ignore))
        return results

    async def _send_all(
        self, messages: list[OutgoingMail], on_result: Callable[[SendResult], None]
    ) -> list[SendResult]:
        where = f"SMTP server {self.host}:{self.port}"
        try:
            smtp = await self._open()
        except TransportError:
            raise
        except ssl.SSLCertVerificationError as exc:
            raise TransportError(
                f"{where}: its TLS certificate was refused ({exc.verify_message}); "
                "for a private CA set mail.tls_ca_file"
            ) from exc
        except SMTPAuthenticationError as exc:
            raise TransportError(
                f"{where} refused the login of {self.user!r}: {exc.code} {exc.message}"
            ) from exc
        except _CONNECTION_ERRORS as exc:
            error = f"cannot connect to {where}: {_describe(exc)}"
            failed = [SendResult(m.key, ok=False, permanent=False, error=error) for m in messages]
            for result in failed:
                on_result(result)
            return failed
        results: list[SendResult] = []
        try:
            for message in messages:
                result = await self._send_one(smtp, message)
                results.append(result)
                on_result(result)
                if not smtp.is_connected:
                    break
        finally:
            await _quit(smtp)
        lost = f"{where} closed the connection"
        for message in messages[len(results) :]:
            results.append(SendResult(message.key, ok=False, permanent=False, error=lost))
            on_result(results[-1])
        return results

    async def _open(self) -> aiosmtplib.SMTP:
        # Loading the system's CA bundle costs ~25 ms a connection: only for TLS.
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
                        'mail.smtp_tls = "starttls". Use "implicit" (usually port 465) or, '
                        'only on a trusted network, "none".'
                    )
                await smtp.starttls(tls_context=context)
            if self.user:
                await smtp.login(self.user, self._password)
        except BaseException:
            smtp.close()
            raise
        return smtp

    async def _send_one(self, smtp: aiosmtplib.SMTP, message: OutgoingMail) -> SendResult:
        try:
            refused, _ = await smtp.sendmail(message.sender, list(message.recipients), message.raw)
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
