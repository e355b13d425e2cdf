"""Real mail servers on 127.0.0.1 for the mail tests (see pbem/testing/mailservers.py).

Session fixtures (started once, stopped in teardown, no process left over):

- ``mail_servers``: Dovecot (IMAP + LMTP, no TLS) and an SMTP relay in front
  of it that delivers every accepted mail into Dovecot over LMTP. The relay
  can be stopped and started mid-test: ``with mail_servers.smtp.stopped(): ...``.
- ``tls_mail_servers``: a second Dovecot with a self-signed certificate
  (STARTTLS on ``imap_port``, implicit TLS on ``imaps_port``) and two SMTP
  relays (STARTTLS and implicit TLS) delivering into it; the CA file is
  ``tls_mail_servers.ca_file``.

Function fixtures: ``mail_user`` (a fresh mailbox on ``mail_servers``,
password "secret"). Helpers on the servers object: ``new_user()``,
``deliver(to, raw)`` (over SMTP), ``read_mailbox(address, folder)`` (over IMAP,
without marking anything seen), ``dovecot.imap(address)`` (a logged-in client).

The fixtures skip only when Dovecot is missing and
scripts/install-system-deps.sh cannot install it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.testing.mailservers import (
    DovecotServer,
    MailServers,
    ServerUnavailable,
    SmtpRelay,
    dovecot_binary,
)

_INSTALL_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "install-system-deps.sh"


def _ensure_dovecot() -> None:
    if dovecot_binary() is not None:
        return
    outcome = "scripts/install-system-deps.sh is missing"
    if _INSTALL_SCRIPT.is_file():
        done = subprocess.run(
            ["bash", str(_INSTALL_SCRIPT)], capture_output=True, text=True, timeout=900
        )
        outcome = (done.stderr or done.stdout).strip()[-500:] or f"exit code {done.returncode}"
    if dovecot_binary() is None:
        pytest.skip(f"Dovecot is not installed and could not be installed: {outcome}")


@pytest.fixture(scope="session")
def mail_servers() -> Iterator[MailServers]:
    _ensure_dovecot()
    try:
        servers = MailServers.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield servers
    finally:
        servers.stop()


@pytest.fixture
def mail_user(mail_servers: MailServers) -> str:
    return mail_servers.new_user("game")


class TlsMailServers(MailServers):
    """Dovecot with TLS, an SMTP relay offering STARTTLS and one with implicit TLS."""

    def __init__(
        self, dovecot: DovecotServer, smtp: SmtpRelay, smtp_implicit: SmtpRelay, ca_file: str
    ) -> None:
        super().__init__(dovecot, smtp)
        self.smtp_implicit = smtp_implicit
        self.ca_file = ca_file

    def stop(self) -> None:
        try:
            self.smtp_implicit.stop()
        finally:
            super().stop()


@pytest.fixture(scope="session")
def tls_mail_servers() -> Iterator[TlsMailServers]:
    _ensure_dovecot()
    dovecot = DovecotServer(tls=True)
    relays: list[SmtpRelay] = []
    try:
        dovecot.start()
        assert dovecot.cert_file is not None and dovecot.key_file is not None
        for mode in ("starttls", "implicit"):
            relay = SmtpRelay(dovecot, tls=mode, cert=(dovecot.cert_file, dovecot.key_file))
            relay.start()
            relays.append(relay)
    except ServerUnavailable as exc:
        dovecot.stop()
        pytest.skip(str(exc))
    except BaseException:
        for relay in relays:
            relay.stop()
        dovecot.stop()
        raise
    servers = TlsMailServers(dovecot, relays[0], relays[1], str(dovecot.cert_file))
    try:
        yield servers
    finally:
        servers.stop()
