"""A real PostgreSQL for the tests, and a fresh database on either engine.

Fixtures:
- ``pg_url`` (session): starts a private PostgreSQL server from the system
  packages, listening on 127.0.0.1 only, and gives the SQLAlchemy URL of one
  database on it. Stopped and removed at the end of the session. Skips with
  a reason when PostgreSQL is not installed and cannot be installed.
- ``pg_db_url``: a new, empty database on that server for one test, dropped after.
- ``db_url``: parametrized over "sqlite" and "postgresql": a new, empty
  database for one test (a file in tmp_path, or ``pg_db_url``), so one test
  runs against both engines.
- ``own_postgresql``: a server of one test's own with a database "faults",
  to kill (``server.kill()``) and start again (``server.start_again()``);
  it loses no acknowledged commit when killed (synchronous commit on).

initdb refuses to run as root, so when the tests run as root the server is
run as the ``postgres`` system user (created by the postgresql package),
through runuser, in a temporary folder that user owns.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parent.parent
INSTALL_SCRIPT = REPO / "scripts" / "install-system-deps.sh"
SERVER_USER = "postgres"
SERVER_DATABASE = "pbem_test"

_database_numbers = itertools.count(1)


def _find_bindir() -> Path | None:
    """The bin folder of the newest installed PostgreSQL, if any."""

    def version(path: str) -> tuple[int, ...]:
        number = Path(path).parent.parent.name
        return tuple(int(n) for n in re.findall(r"\d+", number))

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    return Path(found[-1]).parent if found else None


def _install_postgresql() -> str:
    """Run the project's install script; return its output for the skip message."""
    try:
        done = subprocess.run(
            ["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=900
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return str(err)
    return (done.stdout + done.stderr).strip()[-500:]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Server:
    """One private PostgreSQL server in its own folder."""

    def __init__(self, bindir: Path, *, crash_safe: bool = False) -> None:
        self.bindir = bindir
        # A server to kill keeps every commit it acknowledged: no asynchronous
        # commit (fsync may stay off, the machine itself does not crash).
        self.crash_safe = crash_safe
        self.root = Path(tempfile.mkdtemp(prefix="pbem-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self.log = self.root / "server.log"
        self.port = 0
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            account = pwd.getpwnam(SERVER_USER)
            self.as_user = ["runuser", "-u", SERVER_USER, "--"]
            os.chown(self.root, account.pw_uid, account.pw_gid)
        self.socket_dir.mkdir()
        if self.as_user:
            os.chown(self.socket_dir, account.pw_uid, account.pw_gid)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.as_user, *args], cwd=self.root, capture_output=True, text=True, timeout=120
        )

    def start(self) -> None:
        init = self.run(
            str(self.bindir / "initdb"),
            "-D", str(self.data),
            "-U", "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{init.stdout}\n{init.stderr}")
        for _attempt in range(3):  # the free port may be taken between probe and start
            self.port = _free_port()
            started = self.pg_ctl("start")
            if started.returncode == 0:
                return
        log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
        raise RuntimeError(f"PostgreSQL did not start:\n{started.stderr}\n{log}")

    def pg_ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} "
            f"-c unix_socket_directories={self.socket_dir} -c fsync=off "
            + ("" if self.crash_safe else "-c synchronous_commit=off -c full_page_writes=off")
        )
        return self.run(
            str(self.bindir / "pg_ctl"),
            "-D", str(self.data),
            "-l", str(self.log),
            "-o", options,
            "-w", "-t", "60",
            *args,
        )  # fmt: skip

    def kill(self) -> None:
        """Stop at once, as a crash would (every connection cut, no checkpoint)."""
        done = self.pg_ctl("-m", "immediate", "stop")
        assert done.returncode == 0, done.stderr

    def start_again(self) -> None:
        """Start on the same port after ``kill``."""
        done = self.pg_ctl("start")
        assert done.returncode == 0, done.stderr

    def connect_admin(self) -> psycopg.Connection:
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        )

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def _started_server(database: str, *, crash_safe: bool = False) -> Iterator[_Server]:
    """A server with ``database`` made, stopped and removed afterwards; skips
    with a reason when PostgreSQL is missing and cannot be installed."""
    bindir = _find_bindir()
    if bindir is None:
        output = _install_postgresql()
        bindir = _find_bindir()
        if bindir is None:
            pytest.skip(
                "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb) and "
                f"scripts/install-system-deps.sh could not install it: {output}"
            )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            pytest.skip(f"running as root, and there is no {SERVER_USER!r} user to run initdb")
    server = _Server(bindir, crash_safe=crash_safe)
    try:
        server.start()
        with server.connect_admin() as admin:
            admin.execute(f"CREATE DATABASE {database}")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    for server in _started_server(SERVER_DATABASE):
        yield server.url(SERVER_DATABASE)


@pytest.fixture
def own_postgresql() -> Iterator[_Server]:
    """A PostgreSQL server of this test's own (database "faults"), to kill and
    start again."""
    yield from _started_server("faults", crash_safe=True)


@pytest.fixture
def pg_db_url(pg_url: str) -> Iterator[str]:
    server = make_url(pg_url)
    name = f"test_{next(_database_numbers)}"
    admin_args = {
        "host": server.host,
        "port": server.port,
        "user": server.username,
        "dbname": "postgres",
        "autocommit": True,
    }
    with psycopg.connect(**admin_args) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield server.set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(**admin_args) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'pbem.db'}"
    return request.getfixturevalue("pg_db_url")
