"""Errors of the mail layer, each written for the person who will read it.

``MailTooLarge`` and ``UndecodableMail`` are about one incoming mail: their
message can be sent back to its sender. The transport errors are about the
servers and the settings: their message is for the operator.
"""

from __future__ import annotations

from typing import Any


class MailError(Exception):
    """Base class of every error the mail layer raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take other arguments than the message: rebuild from the
        # message and the attributes (the decoding child sends errors pickled).
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))


def _rebuild(cls: type[MailError], message: str, state: dict[str, Any]) -> MailError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class MailTooLarge(MailError):
    """An incoming mail above the size limit; the message tells the sender what to do."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"Your mail is {size:,} bytes long; the game accepts mails of at most "
            f"{limit:,} bytes. Please send your orders as plain text, without "
            f"attachments or pictures, and without quoting earlier mails."
        )
        self.size = size
        self.limit = limit


class UndecodableMail(MailError):
    """Bytes that cannot be read as a mail at all (no header, broken structure)."""


class MailTooDeep(UndecodableMail):
    """Parts inside parts beyond any real mail program's nesting (a hostile mail)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"This mail is too deeply nested (more than {limit} parts inside one another) "
            "to be read. Please send your orders as plain text in a new mail."
        )
        self.limit = limit


class MailHeadersTooLarge(UndecodableMail):
    """A header section past the limits of pbem.mail.bounds, found before parsing."""

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"This mail cannot be read: {problem}. Real mail programs stay far below "
            "that; please send your orders as plain text in a new mail."
        )
        self.problem = problem


class MailTooComplex(UndecodableMail):
    """More MIME parts than any real mail has (a hostile or broken mail)."""

    def __init__(self, parts: int) -> None:
        super().__init__(
            f"This mail has more than {parts:,} parts (attachments, alternatives, "
            "forwarded mails) and cannot be read. Please send your orders as plain "
            "text in a new mail."
        )
        self.parts = parts


class MailTooCostly(UndecodableMail):
    """Reading the mail needed more memory or time than its budget
    (pbem.mail.sandbox), or the reading process died."""

    def __init__(self, needs: str) -> None:
        super().__init__(
            f"This mail needs more than {needs} to read, and was not read. Please send "
            "your orders as plain text, without attachments or quoted mails, in a new mail."
        )
        self.needs = needs


class MailSettingsError(MailError, ValueError):
    """A [mail] setting that is missing or has a value the mail layer cannot use.

    ``key`` is the setting as the config file spells it (``mail.imap.user``),
    so pbem/config.py can name the file and the key."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class TransportError(MailError, OSError):
    """A mail server could not be reached or refused a command; for the operator.

    Also an OSError, so code that handles network trouble in general catches it.
    """


class TlsUnavailable(TransportError):
    """TLS was configured but the server does not offer it; never fall back to plain text."""


class MessageGone(TransportError):
    """A fetched message can no longer be found under its key (moved, expunged, or the
    mailbox was recreated); fetch again and deduplicate by Message-ID."""


class ConnectFailed(TransportError):
    """Nothing answered at the server's address and port (refused, timed out,
    unknown host): the host or the port is wrong, or the server is down."""


class TlsFailed(TransportError):
    """The TLS handshake failed or the server's certificate was refused."""


class LoginRefused(TransportError):
    """The server refused the login: the user name or the password is wrong."""


class AppPasswordRequired(LoginRefused):
    """The provider takes no account password from programs, only an app
    password (Gmail: "Application-specific password required")."""


class OAuth2Required(LoginRefused):
    """The server takes no password login at all, only OAuth2 (XOAUTH2): it
    offers no PLAIN or LOGIN, or says basic authentication is disabled."""


class WrongProtocol(TransportError):
    """A server answered at the address and port, but not in the protocol
    expected (an IMAP server on the SMTP port, or the other way round)."""


class PasswordMissing(TransportError):
    """A password login is configured but no password is set: neither the
    setting nor its environment variable. Raised before connecting."""


class OAuthLoginNeeded(TransportError):
    """There is no usable OAuth2 login: no refresh token stored, or the provider
    refused it (revoked, expired). Only the GM can fix it, with `pbem mail login`."""


class OAuthError(MailError):
    """The OAuth2 authorization server refused a request or could not be reached
    (during `pbem mail login`, or a refresh that may work again later)."""


# Where a server's password can come from, besides the config file.
ENV_IMAP_PASSWORD = "PBEM_IMAP_PASSWORD"
ENV_SMTP_PASSWORD = "PBEM_SMTP_PASSWORD"
_PASSWORD_ENV = {"imap": ENV_IMAP_PASSWORD, "smtp": ENV_SMTP_PASSWORD}

# A greeting's first words, and the kind of server that says them.
_GREETINGS = (
    ("* OK", "an IMAP server"),
    ("* PREAUTH", "an IMAP server"),
    ("220", "an SMTP server"),
    ("+OK", "a POP3 server"),
    ("HTTP/", "a web server"),
    ("SSH-", "an SSH server"),
)
_USUAL_PORTS = {
    "IMAP": 'IMAP is usually 993 (tls = "implicit") or 143 (tls = "starttls")',
    "SMTP": 'SMTP is usually 587 (tls = "starttls") or 465 (tls = "implicit")',
}


def password_missing(server: str, user: str) -> PasswordMissing:
    """The error for a password login without a password; ``server`` is
    "imap" or "smtp"."""
    return PasswordMissing(
        f"no password is set for the {server.upper()} login of {user!r}: set the "
        f"environment variable {_PASSWORD_ENV[server]}, or password in [mail.{server}] "
        "(for Gmail: an app password)"
    )


def wrong_protocol(where: str, expected: str, greeting: str) -> WrongProtocol:
    """The error for a server that answered in another protocol than ``expected``
    ("IMAP" or "SMTP"), guessed from its ``greeting``."""
    text = greeting.strip()
    if text[:2] in ("b'", 'b"') and text.endswith(text[1]):  # a repr of bytes
        text = text[2:-1]
    text = text.replace("\\r", "").replace("\\n", "").strip()
    guess = next((kind for start, kind in _GREETINGS if text.startswith(start)), None)
    looks = f"this looks like {guess}" if guess else "it speaks another protocol"
    shown = text if len(text) <= 100 else text[:100] + "..."
    return WrongProtocol(
        f"{where} answered, but not in {expected}: {looks} ({shown!r}). Check the "
        f"port: {_USUAL_PORTS[expected]}"
    )


# Why a server would accept a connection and then say nothing.
NO_ANSWER_CAUSES = (
    "a wrong port, a firewall, or a port that expects TLS at once "
    '(tls = "implicit", usually 993 for IMAP and 465 for SMTP)'
)

# What providers say when they take no password from a program.
_APP_PASSWORD_SIGNS = ("application-specific password", "app password")
_OAUTH2_ONLY_SIGNS = ("basic authentication is disabled", "basicauthblocked")


def password_refusal(where: str, user: str, reply: str, offered: frozenset[str]) -> LoginRefused:
    """The error for a refused password login, in words: an app password needed,
    OAuth2 needed (the server said so, or offers XOAUTH2 but no password
    mechanism), or simply a wrong user name or password."""
    text = reply.lower()
    if any(sign in text for sign in _APP_PASSWORD_SIGNS):
        return AppPasswordRequired(
            f"{where} wants an app password for {user!r}, not the account's password "
            f"({reply}). Create one in the account's security settings (Gmail: turn on "
            "2-Step Verification, then Security > App passwords) and use it as the password"
        )
    oauth_only = "XOAUTH2" in offered and not offered & {"PLAIN", "LOGIN"}
    if oauth_only or any(sign in text for sign in _OAUTH2_ONLY_SIGNS):
        return OAuth2Required(
            f"{where} takes no password login for {user!r}, only OAuth2 ({reply}). Set "
            'auth = "oauth2" for this server, fill in [mail.oauth2] and run `pbem mail '
            'login` (docs/GAME-MASTERS.md, "Mail providers")'
        )
    return LoginRefused(
        f"{where} refused the login of {user!r}: the user name or the password is wrong ({reply})"
    )
