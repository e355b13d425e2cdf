"""Issue 34: `pbem mail test` says in words what is wrong with the mail settings.

Each failure comes from a server on 127.0.0.1 that fails that way: a wrong
password (Dovecot and the relay), an app password needed (Gmail's words,
from a scripted IMAP server and the relay), OAuth2 needed (a Dovecot and a
relay that offer XOAUTH2 only; Microsoft's "basic authentication is
disabled"), TLS (implicit TLS on a plain port, STARTTLS not offered), the
port (nothing listening; a port that never answers), and no OAuth2 login yet.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.mail.errors import PasswordMissing, WrongProtocol
from pbem.mail.imap import ImapInbox
from pbem.mail.smtp import SmtpSender
from pbem.mail.transport import OutgoingMail
from pbem.service.play import notify
from pbem.service.play.games import PlayerSpec, create_game
from pbem.service.tell import telling
from pbem.store import session_scope
from pbem.testing.faultservers import ScriptedImapServer, SilentServer
from pbem.testing.mailservers import HOST, MailServers, SmtpRelay, free_port
from tests.fixtures_oauth import OAuthServers
from tests.mailloop_helpers import MailWorld
from tests.mailloop_helpers import write_config as write_poll_config

pytestmark = pytest.mark.integration

GMAIL_IMAP = (
    "NO [ALERT] Application-specific password required: "
    "https://support.google.com/accounts/answer/185833 (Failure)"
)
GMAIL_SMTP = (
    "534 5.7.9 Application-specific password required. "
    "Learn more at https://support.google.com/mail/?p=InvalidSecondFactor"
)
MICROSOFT_SMTP = "535 5.7.139 Authentication unsuccessful, basic authentication is disabled."

ADVICE = {
    "port": "nothing answers there",
    "tls": "TLS does not work with these settings",
    "bad-password": "the login was refused: check the user and the password",
    "app-password": "the provider wants an app password",
    "oauth2-needed": "the server takes OAuth2 only",
    "login-needed": "no usable OAuth2 login: run `pbem mail login`",
    "wrong-protocol": "a server answered but speaks another protocol",
    "no-password": "no password is set",
    "other": "the server could not be used",
}


def write(
    path: Path,
    *,
    imap_port: int,
    smtp_port: int,
    user: str = "game@pbem.test",
    password: str = "secret",
    imap_tls: str = "none",
    smtp_tls: str = "none",
    auth: str = "password",
    timeout: float = 10,
) -> Path:
    path.write_text(
        f"""
state_dir = "."
[mail]
transport = "imap"
game_address = "{user}"
gm_address = "gm@pbem.test"
[mail.imap]
host = "{HOST}"
port = {imap_port}
user = "{user}"
password = "{password}"
auth = "{auth}"
tls = "{imap_tls}"
timeout = {timeout}
[mail.smtp]
host = "{HOST}"
port = {smtp_port}
user = "{user}"
password = "{password}"
auth = "{auth}"
tls = "{smtp_tls}"
timeout = {timeout}
[mail.oauth2]
provider = "microsoft"
client_id = "pbem-test"
token_endpoint = "http://127.0.0.1:{free_port()}/token"
token_file = "no-login-yet"
"""
    )
    return path


def mail_test(config: Path, *more: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["mail", "test", "--config", str(config), *more])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def failed(output: str) -> list[tuple[str, str]]:
    """(step, the kind of problem) of each failed step, in order."""
    found = []
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("FAILED "):
            step = line.split()[1].rstrip(":")
            advice = lines[index + 1].strip()
            kind = next((k for k, words in ADVICE.items() if advice.startswith(words)), advice)
            found.append((step, kind))
    return found


@pytest.fixture
def relay_factory(mail_servers: MailServers) -> Iterator[list[SmtpRelay]]:
    started: list[SmtpRelay] = []
    yield started
    for relay in started:
        relay.stop()


def relay(started: list[SmtpRelay], mail_servers: MailServers, **options: str) -> SmtpRelay:
    made = SmtpRelay(mail_servers.dovecot, **options)  # type: ignore[arg-type]
    made.start()
    started.append(made)
    return made


def test_good_settings_pass_and_a_mail_reaches_the_gm(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    user = mail_servers.new_user("game")
    mail_servers.new_user("gm")
    config = write(
        tmp_path / "pbem.toml",
        imap_port=mail_servers.dovecot.imap_port,
        smtp_port=mail_servers.smtp.port,
        user=user,
    )
    code, output = mail_test(config)
    assert code == 0, output
    assert failed(output) == []
    assert "ok     IMAP" in output and "folders: " in output and "INBOX" in output
    assert "ok     SMTP" in output and "logged in" in output
    assert "secret" not in output


def test_a_wrong_password(mail_servers: MailServers, tmp_path: Path) -> None:
    user = mail_servers.new_user("game")
    config = write(
        tmp_path / "pbem.toml",
        imap_port=mail_servers.dovecot.imap_port,
        smtp_port=mail_servers.smtp.port,
        user=user,
        password="wrong",
    )
    code, output = mail_test(config)
    assert code == 1
    assert failed(output) == [("IMAP", "bad-password"), ("SMTP", "bad-password")]
    assert "wrong" not in output.replace("is wrong", "")  # the password is never shown


def test_an_app_password_needed_in_gmails_words(
    mail_servers: MailServers, relay_factory: list[SmtpRelay], tmp_path: Path
) -> None:
    imap = ScriptedImapServer(GMAIL_IMAP)
    imap.start()
    try:
        smtp = relay(relay_factory, mail_servers, login_refusal=GMAIL_SMTP)
        config = write(tmp_path / "pbem.toml", imap_port=imap.port, smtp_port=smtp.port)
        code, output = mail_test(config)
    finally:
        imap.stop()
    assert code == 1
    assert failed(output) == [("IMAP", "app-password"), ("SMTP", "app-password")]
    assert "2-Step Verification" in output


def test_oauth2_needed_when_the_servers_offer_xoauth2_only(
    oauth_servers: OAuthServers, tmp_path: Path
) -> None:
    user = oauth_servers.new_user("game")
    config = write(
        tmp_path / "pbem.toml",
        imap_port=oauth_servers.dovecot.imap_port,
        smtp_port=oauth_servers.smtp.port,
        user=user,
    )
    code, output = mail_test(config)
    assert code == 1
    assert failed(output) == [("IMAP", "oauth2-needed"), ("SMTP", "oauth2-needed")]
    assert 'auth = "oauth2"' in output and "pbem mail login" in output


def test_oauth2_needed_in_microsofts_words(
    mail_servers: MailServers, relay_factory: list[SmtpRelay], tmp_path: Path
) -> None:
    user = mail_servers.new_user("game")
    smtp = relay(relay_factory, mail_servers, login_refusal=MICROSOFT_SMTP)
    config = write(
        tmp_path / "pbem.toml",
        imap_port=mail_servers.dovecot.imap_port,
        smtp_port=smtp.port,
        user=user,
    )
    code, output = mail_test(config)
    assert failed(output) == [("SMTP", "oauth2-needed")]
    assert "basic authentication is disabled" in output


def test_tls_implicit_on_a_plain_port_and_starttls_not_offered(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    config = write(
        tmp_path / "pbem.toml",
        imap_port=mail_servers.dovecot.imap_port,
        smtp_port=mail_servers.smtp.port,
        imap_tls="implicit",
        smtp_tls="starttls",
    )
    code, output = mail_test(config)
    assert code == 1
    assert failed(output) == [("IMAP", "tls"), ("SMTP", "tls")]
    assert "handshake failed" in output and "does not offer STARTTLS" in output


def test_the_port_nothing_listens_or_nothing_answers(tmp_path: Path) -> None:
    silent = SilentServer()
    try:
        config = write(
            tmp_path / "pbem.toml", imap_port=free_port(), smtp_port=silent.port, timeout=1
        )
        code, output = mail_test(config)
    finally:
        silent.stop()
    assert code == 1
    assert failed(output) == [("IMAP", "port"), ("SMTP", "port")]
    assert "refused" in output.lower()
    assert "expects TLS at once" in output  # the timeout's likely causes, TLS among them


def test_oauth2_without_a_login_yet_against_servers(
    oauth_servers: OAuthServers, tmp_path: Path
) -> None:
    user = oauth_servers.new_user("game")
    config = write(
        tmp_path / "pbem.toml",
        imap_port=oauth_servers.dovecot.imap_port,
        smtp_port=oauth_servers.smtp.port,
        user=user,
        auth="oauth2",
    )
    code, output = mail_test(config)
    assert code == 1
    assert failed(output) == [("IMAP", "login-needed"), ("SMTP", "login-needed")]
    assert "does not exist" in output


def test_the_ports_swapped_each_server_speaks_the_other_protocol(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    """Finding 2: an IMAP server on the SMTP port crashed `pbem mail test`
    (aiosmtplib's "Malformed SMTP response line") and an SMTP server on the
    IMAP port was "nothing answers there"."""
    user = mail_servers.new_user("game")
    for imap_tls, smtp_tls in (("none", "none"), ("starttls", "starttls")):
        config = write(
            tmp_path / "pbem.toml",
            imap_port=mail_servers.smtp.port,
            smtp_port=mail_servers.dovecot.imap_port,
            user=user,
            imap_tls=imap_tls,
            smtp_tls=smtp_tls,
        )
        code, output = mail_test(config)
        assert code == 1
        assert failed(output) == [("IMAP", "wrong-protocol"), ("SMTP", "wrong-protocol")]
        assert "this looks like an SMTP server ('220 " in output
        assert "this looks like an IMAP server ('* OK " in output
        assert "Traceback" not in output and "Malformed" not in output


def test_the_poll_says_which_protocol_answered(mail_servers: MailServers) -> None:
    """The poll's inbox and outbox stages get the same errors (OSErrors, so an
    outage with these words, not a mail deferred as if the server were down)."""
    user = mail_servers.new_user("game")
    inbox = ImapInbox(HOST, mail_servers.smtp.port, user, "secret", tls="none", timeout=10)
    with pytest.raises(WrongProtocol, match="looks like an SMTP server"):
        inbox.connect()
    sender = SmtpSender(HOST, mail_servers.dovecot.imap_port, user, "secret", tls="none")
    mail = OutgoingMail("m1", user, ("gm@pbem.test",), b"Subject: hi\r\n\r\nhi\r\n")
    with pytest.raises(WrongProtocol, match="looks like an IMAP server"):
        sender.send([mail])
    assert isinstance(WrongProtocol("x"), OSError)  # what the poll's stages catch


def test_pbem_poll_with_the_ports_swapped_is_an_outage_in_these_words(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    """The real `pbem poll` on swapped ports, with mail due: exit code 2, one
    line per server in the words above, no traceback, the outbox untouched."""
    world = MailWorld.create(mail_servers, tmp_path)
    with session_scope(world.engine) as session:
        players = [PlayerSpec(n, mail_servers.new_user(n)) for n in ("ada", "brook", "cyrus")]
        created = create_game(session, "g", players, gm_address=world.gm_address)
        notify.game_start(session, world.ctx, created.game, created.passwords)
    telling.tell(world.engine, world.ctx)
    due = [(row.status, row.attempts) for row in world.outbox()]
    assert due and {status for status, _ in due} == {"pending"}
    swapped = write_poll_config(
        tmp_path / "swapped.toml",
        mail_servers,
        world.game_address,
        world.gm_address,
        imap_port=mail_servers.smtp.port,
        smtp_port=mail_servers.dovecot.imap_port,
    )
    done = world.pbem("poll", config=swapped)
    assert done.returncode == 2, done.stderr
    errors = done.stderr.splitlines()
    assert len(errors) == 2 and "Traceback" not in done.stderr, done.stderr
    assert errors[0].startswith("error: cannot read the inbox: IMAP server 127.0.0.1:")
    assert "this looks like an SMTP server" in errors[0]
    assert errors[1].startswith("error: cannot send mail: SMTP server 127.0.0.1:")
    assert "this looks like an IMAP server" in errors[1]
    assert [(row.status, row.attempts) for row in world.outbox()] == due


def test_no_password_is_said_before_connecting(tmp_path: Path) -> None:
    """Finding 14: no password (the key left out, PBEM_*_PASSWORD unset) was
    "the user name or the password is wrong"; nothing listens on these ports."""
    config = write(
        tmp_path / "pbem.toml", imap_port=free_port(), smtp_port=free_port(), password=""
    )
    code, output = mail_test(config)
    assert code == 1
    assert failed(output) == [("IMAP", "no-password"), ("SMTP", "no-password")]
    assert "PBEM_IMAP_PASSWORD, or password in [mail.imap]" in output
    assert "PBEM_SMTP_PASSWORD, or password in [mail.smtp]" in output
    assert "wrong" not in output and "refused" not in output
    with pytest.raises(PasswordMissing, match="PBEM_IMAP_PASSWORD"):  # the poll's error
        ImapInbox(HOST, free_port(), "game@pbem.test", "", tls="none").connect()
    mail = OutgoingMail("m1", "game@pbem.test", ("gm@pbem.test",), b"Subject: hi\r\n\r\nhi\r\n")
    with pytest.raises(PasswordMissing, match="PBEM_SMTP_PASSWORD"):
        SmtpSender(HOST, free_port(), "game@pbem.test", "", tls="none").send([mail])


def test_any_other_error_is_a_finding_and_each_server_stands_alone(
    mail_servers: MailServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception nobody foresaw is a failed step in words, not a traceback,
    and the other server's result is printed all the same."""

    def boom(self: SmtpSender) -> None:
        raise RuntimeError("something unforeseen")

    monkeypatch.setattr(SmtpSender, "check", boom)
    user = mail_servers.new_user("game")
    config = write(
        tmp_path / "pbem.toml",
        imap_port=mail_servers.dovecot.imap_port,
        smtp_port=mail_servers.smtp.port,
        user=user,
    )
    code, output = mail_test(config)
    assert code == 1
    assert "ok     IMAP" in output
    assert failed(output) == [("SMTP", "other")]
    assert "something unforeseen" in output
