"""Real mail servers on 127.0.0.1 for the tests and for development.

``DovecotServer`` runs the system's Dovecot (IMAP + LMTP) with its own
config, users and Maildirs in a temporary directory. ``SmtpRelay`` is an
aiosmtpd server that accepts mail for Dovecot's users and delivers it over
LMTP, so "send over SMTP, read over IMAP" goes through real servers.
tests/fixtures_mail.py and scripts/devmail.py use them; the product itself
never does. aiosmtpd (a test dependency) is imported only here.

Dovecot is started as the current user. As root it keeps its usual
privilege separation (the dovecot and dovenull system users that its
package creates) and gives the mail files to "nobody", because Dovecot
refuses mail access as UID 0. As any other user it runs "rootless": every
service under that user, without chroot.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import os
import pwd
import re
import shutil
import signal
import smtplib
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from imapclient import IMAPClient

HOST = "127.0.0.1"
_SAFE_PASSWORD = re.compile(r"^[A-Za-z0-9._+@-]{1,64}$")
_ADDRESS = re.compile(r"^[a-z0-9._+-]+@[a-z0-9.-]+$")


class ServerUnavailable(RuntimeError):
    """The servers cannot run here (no Dovecot, no aiosmtpd, missing system users)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def dovecot_binary() -> str | None:
    found = shutil.which("dovecot")
    if found:
        return found
    return "/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").is_file() else None


def make_self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """(cert, key) for "localhost" and 127.0.0.1, made with the openssl command."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec",
            "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", str(key), "-out", str(cert), "-days", "2",
            "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@dataclass(frozen=True)
class StoredMessage:
    """One message as the IMAP server holds it."""

    uid: int
    raw: bytes
    flags: tuple[bytes, ...]


class DovecotServer:
    """One Dovecot instance: IMAP (and IMAPS with ``tls``) plus LMTP on loopback."""

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        tls: bool = False,
        oauth2_introspection_url: str | None = None,
    ) -> None:
        binary = dovecot_binary()
        if binary is None:
            raise ServerUnavailable(
                "Dovecot is not installed; run scripts/install-system-deps.sh "
                "(it installs dovecot-imapd and dovecot-lmtpd)"
            )
        self.binary = binary
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="pbem-dovecot-"))
        self.workdir.chmod(0o755)  # the dovecot and dovenull users must reach base_dir
        self.tls = tls
        # With an introspection URL the server takes OAuth2 only (XOAUTH2 and
        # OAUTHBEARER): every token is checked at that URL (a TokenServer).
        self.oauth2_introspection_url = oauth2_introspection_url
        self.imap_port = free_port()
        self.imaps_port = free_port() if tls else 0
        self.lmtp_port = free_port()
        self.cert_file: Path | None = None
        self.key_file: Path | None = None
        self.users: dict[str, str] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._mail_uid, self._mail_gid, self._run_as = self._identity()

    # --- set-up -------------------------------------------------------------

    def _identity(self) -> tuple[int, int, tuple[str, str] | None]:
        """(mail UID, mail GID, (user, group) to run every service as, or None as root)."""
        if os.geteuid() != 0:
            user = pwd.getpwuid(os.geteuid()).pw_name
            group = grp.getgrgid(os.getegid()).gr_name
            return os.geteuid(), os.getegid(), (user, group)
        for name in ("dovecot", "dovenull"):
            try:
                pwd.getpwnam(name)
            except KeyError:
                raise ServerUnavailable(
                    f"the system user {name!r} is missing; reinstall the dovecot-core package"
                ) from None
        nobody = pwd.getpwnam("nobody")
        return nobody.pw_uid, nobody.pw_gid, None

    def _tls_lines(self) -> tuple[list[str], list[str]]:
        """The ssl settings and the imaps listener: none unless the server has TLS."""
        if not self.tls:
            return ["ssl = no"], ["port = 0"]
        self.cert_file, self.key_file = make_self_signed_cert(self.workdir)
        ssl_lines = ["ssl = yes", f"ssl_cert = <{self.cert_file}", f"ssl_key = <{self.key_file}"]
        return ssl_lines, [f"address = {HOST}", f"port = {self.imaps_port}", "ssl = yes"]

    def _rootless_lines(self) -> tuple[list[str], list[str]]:
        """When not root, every service runs as the current user, without chroot."""
        if self._run_as is None:
            return [], []
        user, group = self._run_as
        rootless = [
            f"default_internal_user = {user}",
            f"default_internal_group = {group}",
            f"default_login_user = {user}",
        ]
        return rootless, ["  chroot ="]

    def _passdb_lines(self, users_file: Path) -> list[str]:
        """Passwords from the users' files, or (OAuth2) tokens checked at the
        introspection URL; the users' files are the userdb either way."""
        if self.oauth2_introspection_url is None:
            # One passwd file per user: Dovecot looks at a file at most once a
            # second, so a user added to a shared file could stay unknown for a
            # moment; a file it has never read is read at once.
            return [
                "auth_mechanisms = plain login",
                "passdb {",
                "  driver = passwd-file",
                f"  args = scheme=PLAIN username_format=%u {users_file}",
                "}",
            ]
        oauth2 = self.workdir / "dovecot-oauth2.conf.ext"
        oauth2.write_text(
            "\n".join(
                [
                    f"introspection_url = {self.oauth2_introspection_url}",
                    "introspection_mode = post",
                    "force_introspection = yes",
                    "username_attribute = username",
                    "active_attribute = active",
                    "active_value = true",
                    "",
                ]
            )
        )
        return [
            "auth_mechanisms = xoauth2 oauthbearer",
            "passdb {",
            "  driver = oauth2",
            "  mechanisms = xoauth2 oauthbearer",
            f"  args = {oauth2}",
            "}",
        ]

    def _write_config(self) -> Path:
        run, state, mail, users = (
            self.workdir / name for name in ("run", "state", "mail", "users")
        )
        for directory in (run, state, mail, users):
            directory.mkdir(exist_ok=True)
        os.chown(mail, self._mail_uid, self._mail_gid)
        mail.chmod(0o700)
        ssl_lines, imaps = self._tls_lines()
        rootless, no_chroot = self._rootless_lines()
        users_file = users / "%u"
        config = [
            f"base_dir = {run}",
            f"state_dir = {state}",
            f"instance_name = pbem-dovecot-{self.imap_port}",
            f"log_path = {self.workdir / 'dovecot.log'}",
            "protocols = imap lmtp",
            f"listen = {HOST}",
            *rootless,
            *ssl_lines,
            "disable_plaintext_auth = no",
            "auth_verbose = yes",
            "auth_failure_delay = 0",  # tests try wrong passwords on purpose
            f"first_valid_uid = {self._mail_uid}",
            "mail_location = maildir:~/Maildir",
            "mail_fsync = never",
            *self._passdb_lines(users_file),
            "userdb {",
            "  driver = passwd-file",
            f"  args = username_format=%u {users_file}",
            "}",
            "service anvil {",
            "  unix_listener anvil-auth-penalty {",
            "    mode = 0",  # no growing delays after failed logins from 127.0.0.1
            "  }",
            *no_chroot,
            "}",
            "service imap-login {",
            "  inet_listener imap {",
            f"    address = {HOST}",
            f"    port = {self.imap_port}",
            "  }",
            "  inet_listener imaps {",
            *(f"    {line}" for line in imaps),
            "  }",
            *no_chroot,
            "}",
            "service lmtp {",
            "  inet_listener lmtp {",
            f"    address = {HOST}",
            f"    port = {self.lmtp_port}",
            "  }",
            "}",
            "",
        ]
        path = self.workdir / "dovecot.conf"
        path.write_text("\n".join(config))
        return path

    # --- life cycle ---------------------------------------------------------

    def start(self, ready_timeout: float = 15.0) -> None:
        config = self._write_config()
        log = open(self.workdir / "dovecot.out", "wb")  # noqa: SIM115 (kept open for the child)
        self._process = subprocess.Popen(
            [self.binary, "-F", "-c", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so stop() finds every child
        )
        log.close()
        deadline = time.monotonic() + ready_timeout
        while not _port_open(self.imap_port) or not _port_open(self.lmtp_port):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise ServerUnavailable(f"Dovecot did not start:\n{self.log_tail()}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop Dovecot and every process it started; then remove its directory."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                # SIGTERM to the master and its children at once: told alone, the
                # master waits about a second for them to go after it signals them.
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # children that outlived the master
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        text = ""
        for name in ("dovecot.out", "dovecot.log"):
            path = self.workdir / name
            if path.exists():
                text += path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # --- users and mailboxes --------------------------------------------------

    def add_user(
        self, address: str, password: str = "secret", *, minimal_imap: bool = False
    ) -> None:
        """A mailbox user (login = address), known to Dovecot at once.

        ``minimal_imap`` makes the server announce only IMAP4rev1 to this user
        after login (no IDLE, MOVE or UIDPLUS), like an old or minimal server.
        """
        address = address.lower()
        if not _ADDRESS.match(address) or not _SAFE_PASSWORD.match(password):
            raise ValueError(f"unusable test user {address!r} / password")
        if address in self.users:
            raise ValueError(f"user {address} exists already")
        home = self.workdir / "mail" / address
        extra = "userdb_imap_capability=IMAP4rev1" if minimal_imap else ""
        line = f"{address}:{{PLAIN}}{password}:{self._mail_uid}:{self._mail_gid}::{home}::{extra}\n"
        tmp = self.workdir / "users" / f".{address}.new"
        tmp.write_text(line)
        tmp.replace(self.workdir / "users" / address)
        self.users[address] = password

    def lmtp_deliver(self, sender: str, recipient: str, raw: bytes) -> None:
        """Put ``raw`` into the recipient's INBOX, as a local delivery agent does."""
        with smtplib.LMTP(HOST, self.lmtp_port, timeout=10) as lmtp:
            lmtp.sendmail(sender, [recipient], raw)

    def imap(self, address: str, *, port: int | None = None) -> IMAPClient:
        """A logged-in IMAP client for ``address`` (plain connection); log it out after use."""
        client = IMAPClient(HOST, port or self.imap_port, ssl=False, timeout=10)
        client.login(address, self.users[address.lower()])
        return client

    def read_mailbox(self, address: str, folder: str = "INBOX") -> list[StoredMessage]:
        """Every message of a folder, oldest first, read without marking it seen."""
        client = self.imap(address)
        try:
            client.select_folder(folder, readonly=True)
            uids = sorted(client.search(["ALL"]))
            data = client.fetch(uids, ["BODY.PEEK[]", "FLAGS"]) if uids else {}
            return [StoredMessage(u, data[u][b"BODY[]"], tuple(data[u][b"FLAGS"])) for u in uids]
        finally:
            client.logout()


class SmtpRelay:
    """An SMTP server (aiosmtpd) that delivers into a ``DovecotServer`` over LMTP.

    Recipients Dovecot does not know get "550 5.1.1"; addresses in
    ``tempfail`` get "451 4.3.0". ``tls`` is "none", "starttls" (offered, not
    required) or "implicit" and needs a (cert, key) pair. Logins, when a
    client offers one, are checked against Dovecot's users.
    It can be stopped and started again on the same port.

    With ``xoauth2`` (a function of user and access token, e.g. a
    TokenServer's ``token_valid``) it offers AUTH XOAUTH2 only, like a
    provider that turned basic authentication off; ``login_refusal`` is the
    reply every password login gets instead of the check (a provider's own
    words, e.g. Gmail's "534-5.7.9 Application-specific password required").
    """

    def __init__(
        self,
        dovecot: DovecotServer,
        *,
        tls: str = "none",
        cert: tuple[Path, Path] | None = None,
        port: int | None = None,
        xoauth2: Callable[[str, str], bool] | None = None,
        login_refusal: str | None = None,
    ) -> None:
        try:
            from aiosmtpd.controller import Controller  # noqa: F401 (fail early)
        except ImportError as exc:
            raise ServerUnavailable(
                "aiosmtpd is not installed: scripts/bootstrap.sh installs it with the test "
                "tools (pip install -e '.[test]')"
            ) from exc
        if tls != "none" and cert is None:
            raise ValueError(f"tls={tls!r} needs a certificate")
        self.dovecot = dovecot
        self.tls = tls
        self.cert = cert
        self.port = port or free_port()
        self.tempfail: set[str] = set()
        self.accepted = 0
        self.xoauth2 = xoauth2
        self.login_refusal = login_refusal
        self.xoauth2_refused = 0  # XOAUTH2 logins refused (a stale or revoked token)
        self._controller: Controller | None = None

    def start(self) -> None:
        from aiosmtpd.controller import Controller

        context = None
        if self.cert is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*map(str, self.cert))
        options: dict[str, object] = {
            "authenticator": self._authenticate,
            "auth_require_tls": False,
            "ready_timeout": 10.0,
        }
        if self.tls == "starttls":
            options["tls_context"] = context
        if self.tls == "implicit":
            options["ssl_context"] = context
        handler: _Handler = _Handler(self)
        if self.xoauth2 is not None:
            handler = _XOAuth2Handler(self)
            options["auth_exclude_mechanism"] = ["PLAIN", "LOGIN"]
        controller = Controller(handler, hostname=HOST, port=self.port, **options)  # type: ignore[arg-type]
        controller.start()
        self._controller = controller

    def stop(self) -> None:
        controller, self._controller = self._controller, None
        if controller is not None:
            controller.stop()

    @property
    def running(self) -> bool:
        return self._controller is not None

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        """Down for the duration of the block, up again afterwards (even on failure)."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        from aiosmtpd.smtp import AuthResult, LoginPassword

        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        if self.login_refusal is not None:
            return AuthResult(success=False, handled=False, message=self.login_refusal)
        login = auth_data.login.decode(errors="replace").lower()
        password = auth_data.password.decode(errors="replace")
        return AuthResult(success=self.dovecot.users.get(login) == password, handled=False)


class _Handler:
    """aiosmtpd hooks: check recipients, then hand the message to LMTP."""

    def __init__(self, relay: SmtpRelay) -> None:
        self.relay = relay

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        recipient = address.lower()
        if recipient in self.relay.tempfail:
            return "451 4.3.0 Mailbox temporarily unavailable, try again later"
        if recipient not in self.relay.dovecot.users:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        try:
            for recipient in envelope.rcpt_tos:
                await asyncio.to_thread(
                    self.relay.dovecot.lmtp_deliver, envelope.mail_from, recipient.lower(), raw
                )
        except (smtplib.SMTPException, OSError) as exc:
            return f"451 4.3.0 Delivery to the mailbox failed: {exc}"
        self.relay.accepted += 1
        return "250 OK delivered"


class _XOAuth2Handler(_Handler):
    """The relay's hooks plus AUTH XOAUTH2 (RFC 7628's predecessor, as Google
    and Microsoft speak it): a refused token gets a 334 challenge holding a
    JSON error, then, after the client's empty line, 535."""

    async def auth_XOAUTH2(self, server, args):  # noqa: N802 (aiosmtpd finds it by name)
        import base64
        import json

        from aiosmtpd.smtp import MISSING, AuthResult

        if len(args) > 1:
            blob = args[1].encode()
        else:
            answer = await server.challenge_auth("")
            if answer is MISSING:
                return AuthResult(success=False, handled=True)
            blob = base64.b64encode(answer)
        try:
            fields = base64.b64decode(blob, validate=True).decode().split("\x01")
        except ValueError:
            return AuthResult(success=False, handled=False)
        values = dict(f.split("=", 1) for f in fields if "=" in f)
        user, token = values.get("user", ""), values.get("auth", "").removeprefix("Bearer ")
        assert self.relay.xoauth2 is not None
        if self.relay.xoauth2(user.lower(), token):
            return AuthResult(success=True, auth_data=user)
        self.relay.xoauth2_refused += 1
        error = {"status": "401", "schemes": "bearer", "scope": "https://mail.example/"}
        await server.challenge_auth(json.dumps(error))
        return AuthResult(success=False, handled=False)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.2):
            return True
    except OSError:
        return False


class MailServers:
    """Dovecot plus the SMTP relay in front of it, with helpers for tests and scripts."""

    def __init__(self, dovecot: DovecotServer, smtp: SmtpRelay) -> None:
        self.dovecot = dovecot
        self.smtp = smtp
        self._counter = 0

    @classmethod
    def start(cls) -> MailServers:
        dovecot = DovecotServer()
        dovecot.start()
        try:
            smtp = SmtpRelay(dovecot)
            smtp.start()
        except BaseException:
            dovecot.stop()
            raise
        return cls(dovecot, smtp)

    def stop(self) -> None:
        try:
            self.smtp.stop()
        finally:
            self.dovecot.stop()

    def new_user(
        self, name: str = "user", password: str = "secret", *, minimal_imap: bool = False
    ) -> str:
        """A fresh mailbox ``<name>-<n>@pbem.test``; returns its address."""
        self._counter += 1
        address = f"{name}-{self._counter}@pbem.test"
        self.dovecot.add_user(address, password, minimal_imap=minimal_imap)
        return address

    def deliver(self, to: str, raw: bytes, sender: str = "player@pbem.test") -> None:
        """Send ``raw`` to ``to`` through the SMTP relay (which delivers into Dovecot)."""
        with smtplib.SMTP(HOST, self.smtp.port, timeout=10) as client:
            client.sendmail(sender, [to], raw)

    def read_mailbox(self, address: str, folder: str = "INBOX") -> list[StoredMessage]:
        return self.dovecot.read_mailbox(address, folder)
