#!/usr/bin/env python3
"""Run a development mail system on 127.0.0.1: Dovecot (IMAP) and an SMTP
server that delivers into it, the same pair the tests use.

    python scripts/devmail.py                      # game@pbem.localhost + gm@pbem.localhost
    python scripts/devmail.py --user alice@pbem.localhost --user bob@pbem.localhost
    python scripts/devmail.py --tls                # self-signed TLS: STARTTLS and implicit

It prints the ports, the users and their password, and a [mail] section for
pbem.toml, then runs until Ctrl-C or SIGTERM and removes everything it made.
Needs Dovecot (scripts/install-system-deps.sh) and pbem's test tools (aiosmtpd),
which scripts/bootstrap.sh installs in .venv: run by another Python that lacks
them, it runs itself again with .venv/bin/python.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ("aiosmtpd", "imapclient")  # the SMTP server; the IMAP client of the checks


def _missing() -> list[str]:
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


if __name__ == "__main__" and _missing():
    venv = ROOT / ".venv" / "bin" / "python"
    if venv.is_file() and Path(sys.executable).resolve() != venv.resolve():
        os.execv(str(venv), [str(venv), *sys.argv])
    print(
        f"devmail: {', '.join(_missing())} not installed for {sys.executable}: "
        "run scripts/bootstrap.sh (it installs them in .venv), then "
        ".venv/bin/python scripts/devmail.py",
        file=sys.stderr,
    )
    sys.exit(1)

sys.path.insert(0, str(ROOT))

from pbem.testing.mailservers import (  # noqa: E402 (after the path set-up)
    HOST,
    DovecotServer,
    ServerUnavailable,
    SmtpRelay,
)

DEFAULT_USERS = ["game@pbem.localhost", "gm@pbem.localhost"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--user", action="append", help="a mailbox to create (repeatable); first = game address"
    )
    parser.add_argument("--password", default="secret", help="password of every user")
    parser.add_argument("--tls", action="store_true", help="self-signed TLS instead of plain")
    args = parser.parse_args(argv)
    users = [u.lower() for u in (args.user or DEFAULT_USERS)]

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    try:
        dovecot = DovecotServer(tls=args.tls)
        dovecot.start()
    except ServerUnavailable as exc:
        print(f"devmail: {exc}", file=sys.stderr)
        return 1
    relays: list[SmtpRelay] = []
    try:
        for address in users:
            dovecot.add_user(address, args.password)
        if args.tls:
            assert dovecot.cert_file is not None and dovecot.key_file is not None
            cert = (dovecot.cert_file, dovecot.key_file)
            relays = [SmtpRelay(dovecot, tls=mode, cert=cert) for mode in ("starttls", "implicit")]
        else:
            relays = [SmtpRelay(dovecot)]
        for relay in relays:
            relay.start()
        print(_summary(dovecot, relays, users, args.password), flush=True)
        stop.wait()
    except ServerUnavailable as exc:
        print(f"devmail: {exc}", file=sys.stderr)
        return 1
    finally:
        for relay in relays:
            relay.stop()
        dovecot.stop()
        print("devmail: stopped", file=sys.stderr)
    return 0


def _summary(
    dovecot: DovecotServer, relays: list[SmtpRelay], users: list[str], password: str
) -> str:
    tls = dovecot.tls
    lines = [
        f"Dovecot IMAP   {HOST}:{dovecot.imap_port}" + ("  (STARTTLS)" if tls else "  (plain)"),
    ]
    if tls:
        lines.append(f"Dovecot IMAPS  {HOST}:{dovecot.imaps_port}  (implicit TLS)")
    lines.append(f"Dovecot LMTP   {HOST}:{dovecot.lmtp_port}")
    for relay in relays:
        lines.append(f"SMTP           {HOST}:{relay.port}  ({relay.tls})")
    if tls:
        lines.append(f"CA certificate {dovecot.cert_file}  (MailSettings.tls_ca_file)")
    lines.append(f"Users (password {password!r}): " + ", ".join(users))
    lines.append(f"Work directory {dovecot.workdir}  (Dovecot log: dovecot.log)")
    mode = "starttls" if tls else "none"
    lines += [
        "",
        "# pbem.toml",
        "[mail]",
        'transport = "imap"',
        f'game_address = "{users[0]}"',
        *([f'gm_address = "{users[1]}"'] if len(users) > 1 else []),
        "[mail.imap]",
        f'host = "{HOST}"',
        f"port = {dovecot.imap_port}",
        f'user = "{users[0]}"',
        f'password = "{password}"',
        f'tls = "{mode}"',
        "[mail.smtp]",
        f'host = "{HOST}"',
        f"port = {relays[0].port}",
        f'tls = "{mode}"',
        "",
        "Ctrl-C stops everything.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
