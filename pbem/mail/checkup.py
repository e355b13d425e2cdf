"""`pbem mail test`: the mail settings tried end to end, each problem said in words.

Each server is tried the way the poll uses it (the same ``ImapInbox`` and
``SmtpSender``, so the same TLS and login code): log in to IMAP and list
the folders, log in to SMTP, and, when asked, send the GM a mail. A failure
is classified by the error the transport raised (pbem/mail/errors.py): the
port (nothing answers), TLS, a wrong password, an app password needed,
OAuth2 needed, no usable OAuth2 login, a server of another protocol on the
port, or no password set. Any other exception is a failure too (OTHER, its
words shown): `pbem mail test` never ends in a traceback, and each server's
result stands on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from pbem.mail.errors import (
    AppPasswordRequired,
    ConnectFailed,
    LoginRefused,
    OAuth2Required,
    OAuthLoginNeeded,
    PasswordMissing,
    TlsFailed,
    TlsUnavailable,
    WrongProtocol,
)
from pbem.mail.settings import MailSettings, open_inbox, open_sender
from pbem.mail.transport import OutgoingMail
from pbem.vocab import MailProblem

_ADVICE = {
    MailProblem.PORT: "nothing answers there: check the host and the port (and a firewall)",
    MailProblem.TLS: "TLS does not work with these settings: check tls and the port",
    MailProblem.BAD_PASSWORD: "the login was refused: check the user and the password",
    MailProblem.APP_PASSWORD: "the provider wants an app password, not the account's",
    MailProblem.OAUTH2_NEEDED: "the server takes OAuth2 only, no password",
    MailProblem.LOGIN_NEEDED: "no usable OAuth2 login: run `pbem mail login`",
    MailProblem.WRONG_PROTOCOL: "a server answered but speaks another protocol: check the port",
    MailProblem.NO_PASSWORD: "no password is set: see below where to set it",
    MailProblem.OTHER: "the server could not be used",
}


@dataclass(frozen=True)
class Finding:
    """What one step found: ``problem`` is None when the step worked."""

    step: str  # "IMAP", "SMTP", "mail to the GM"
    where: str  # host:port and the settings' table
    text: str  # what worked, or the error in full
    problem: MailProblem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def headline(self) -> str:
        return "ok" if self.problem is None else _ADVICE[self.problem]


def problem_of(exc: BaseException) -> MailProblem:
    """The kind of a transport error, for the words `pbem mail test` prints."""
    kinds: tuple[tuple[type[BaseException], MailProblem], ...] = (
        (ConnectFailed, MailProblem.PORT),
        (TlsFailed, MailProblem.TLS),
        (TlsUnavailable, MailProblem.TLS),
        (AppPasswordRequired, MailProblem.APP_PASSWORD),
        (OAuth2Required, MailProblem.OAUTH2_NEEDED),
        (LoginRefused, MailProblem.BAD_PASSWORD),
        (OAuthLoginNeeded, MailProblem.LOGIN_NEEDED),
        (WrongProtocol, MailProblem.WRONG_PROTOCOL),
        (PasswordMissing, MailProblem.NO_PASSWORD),
    )
    for kind, problem in kinds:
        if isinstance(exc, kind):
            return problem
    return MailProblem.OTHER


def _failed(step: str, where: str, exc: Exception) -> Finding:
    text = str(exc) or type(exc).__name__
    return Finding(step, where, text, problem_of(exc))


def check_imap(settings: MailSettings) -> Finding:
    imap = settings.imap
    where = f"{imap.host}:{imap.port} [mail.imap], {imap.auth.value} login as {imap.user!r}"
    try:
        with open_inbox(settings) as inbox:
            names = inbox.folder_names() if hasattr(inbox, "folder_names") else []
    except Exception as exc:  # every failure is a finding, never a traceback
        return _failed("IMAP", where, exc)
    return Finding("IMAP", where, f"logged in; folders: {', '.join(names) or '(none)'}")


def check_smtp(settings: MailSettings) -> Finding:
    smtp = settings.smtp
    login = f"{smtp.auth.value} login as {smtp.user!r}" if smtp.user else "no login"
    where = f"{smtp.host}:{smtp.port} [mail.smtp], {login}"
    try:
        sender = open_sender(settings)
        check = getattr(sender, "check", None)
        if check is not None:
            check()
    except Exception as exc:  # every failure is a finding, never a traceback
        return _failed("SMTP", where, exc)
    return Finding("SMTP", where, "logged in" if smtp.user else "connected")


def send_to_gm(settings: MailSettings) -> Finding:
    """A short mail from the game's address to the GM's."""
    message = EmailMessage()
    message["From"] = settings.game_address
    message["To"] = settings.gm_address
    message["Subject"] = "pbem mail test"
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=settings.game_address.rsplit("@", 1)[-1])
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(
        "This mail was sent by `pbem mail test --send-to-gm`: the game's mail goes out.\n"
    )
    mail = OutgoingMail("mail-test", settings.game_address, (settings.gm_address,), bytes(message))
    where = f"{settings.game_address} -> {settings.gm_address}"
    try:
        result = open_sender(settings).send([mail])[0]
    except Exception as exc:  # every failure is a finding, never a traceback
        return _failed("mail to the GM", where, exc)
    if not result.ok:
        return Finding("mail to the GM", where, result.error, MailProblem.OTHER)
    return Finding("mail to the GM", where, "sent; look for it in the GM's mailbox")


def checks(settings: MailSettings, *, send: bool = False) -> Iterator[Finding]:
    """IMAP, SMTP and (``send``) a mail to the GM, each found as it is tried;
    a mail only when SMTP worked."""
    yield check_imap(settings)
    smtp = check_smtp(settings)
    yield smtp
    if send and smtp.ok:
        yield send_to_gm(settings)


def check_all(settings: MailSettings, *, send: bool = False) -> list[Finding]:
    """Every finding of ``checks``."""
    return list(checks(settings, send=send))
