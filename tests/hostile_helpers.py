"""The world of the hostile-mail suite (issue 27): a game on the Maildir
transport, `pbem` run as a real process under an address-space limit, and
the measures the suite asserts on.

One game folder is set up per database engine (``make_template``: `pbem
init`, two `pbem new`, one `pbem poll`), then copied for every attack
(``GameCopy.from_template``: the folder, and on PostgreSQL the database by
``CREATE DATABASE ... TEMPLATE``), so an attack costs one poll.

An attack's mails are dropped into the inbox's ``new/`` with Maildir names
that sort before the valid order mail's (pbem.mail.maildir orders keys by
the delivery time at their start, then the "M" microseconds, then the "Q"
counter), so the valid mail is read after them.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[1]
MEMORY_LIMIT = 2 * 1024**3  # the 2 GiB address space for one poll
# A poll's budget is CPU time (RLIMIT_CPU in the child: SIGXCPU past it), which
# does not depend on how loaded the machine is; the wall-time timeout is only
# a backstop for a poll that waits on something forever.
POLL_CPU_SECONDS = 30
POLL_TIMEOUT = 240.0
COMMAND_TIMEOUT = 240.0
GAME = "g1"  # seated, draft claims: alice's valid mail is a CLAIM
OPEN_GAME = "g2"  # open for JOIN by mail
GAME_ADDRESS = "pbem@localhost"
GM_ADDRESS = "gm@localhost"
PLAYERS = {"alice": "alice@example.org", "bob": "bob@example.org", "carol": "carol@example.org"}
STRANGER = "mallory@evil.example"
FOLDERS = {"processed": ".processed", "rejected": ".rejected", "held": ".held"}
CASE_HEADER = "X-Hostile-Case"  # every attack mail names its case (found again in any folder)
VALID_ID = "<valid-claims@example.org>"
VALID_KEY = "2000000000.M1Q1.valid"  # sorts after every attack key (see attack_key)
_PASSWORD = re.compile(r"password of (\w+): (\S+)")


@dataclass
class Run:
    """One `pbem` process: what it printed and what it cost."""

    args: list[str]
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    wall: float  # seconds
    cpu: float  # user + system seconds
    max_rss_kb: int

    @property
    def timed_out(self) -> bool:
        """Killed at the wall-time timeout, or past its CPU budget."""
        return self.returncode in (None, -signal.SIGXCPU, -signal.SIGKILL)

    def describe(self) -> str:
        status = {None: "timed out", -signal.SIGXCPU: "out of CPU time"}.get(
            self.returncode, f"exit {self.returncode}"
        )
        return (
            f"`pbem {' '.join(self.args)}`: {status} after {self.wall:.1f} s "
            f"({self.cpu:.1f} s CPU, {self.max_rss_kb // 1024} MB peak)\n"
            f"stdout: {self.stdout[-1500:]}\nstderr: {self.stderr[-3000:]}"
        )


def _limits(memory: int | None, cpu: int | None) -> None:
    """Runs in the child before exec."""
    if memory is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if cpu is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))


def run_pbem(
    directory: Path,
    *args: str,
    timeout: float = COMMAND_TIMEOUT,
    memory_limit: int | None = MEMORY_LIMIT,
    cpu_limit: int | None = None,
    env: dict[str, str] | None = None,
    pythonpath: list[Path] | None = None,
) -> Run:
    """``python -m pbem ARGS`` on <directory>/pbem.toml ($PBEM_CONFIG) as a child process.

    Under ``RLIMIT_AS`` and ``RLIMIT_CPU`` (set in the child before exec),
    killed after ``timeout``; the child's own CPU time and peak RSS come from wait4.
    ``pythonpath``: folders put before the repository (a sitecustomize.py)."""
    command = [sys.executable, "-m", "pbem", *args]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    path = os.pathsep.join(str(p) for p in [*(pythonpath or []), REPO])
    child_env.update(
        {
            "PYTHONPATH": path,
            "PBEM_NATIVE": os.environ.get("PBEM_NATIVE", "0"),
            "PBEM_CONFIG": str(directory / "pbem.toml"),
        }
    )
    child_env.update(env or {})
    out_path, err_path = directory / ".run.out", directory / ".run.err"
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        child = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command,
            cwd=directory,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=lambda: _limits(memory_limit, cpu_limit),
        )
        status, usage = _wait(child.pid, started + timeout)
    child.returncode = status if status is not None else -9  # Popen must not reap it again
    wall = time.monotonic() - started
    returncode = None if status is None else status
    return Run(
        list(args),
        returncode,
        out_path.read_text(errors="replace"),
        err_path.read_text(errors="replace"),
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss,
    )


def _wait(pid: int, deadline: float) -> tuple[int | None, resource.struct_rusage]:
    """Wait for the child (its rusage with it); kill it at the deadline (status None)."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            return None, usage
        time.sleep(0.02)


# ------------------------------------------------------------------ the game
def write_config(
    directory: Path, database_url: str, max_attempts: int = 1, poll_extra: str = ""
) -> Path:
    """pbem.toml: the Maildir defaults under <directory>/var, one attempt per mail
    (a mail that fails once is held: one poll shows where every mail ends);
    ``poll_extra``: more keys of the [poll] table."""
    path = directory / "pbem.toml"
    path.write_text(
        f'state_dir = "{directory / "var"}"\n'
        f'database_url = "{database_url}"\n\n'
        f"[poll]\nmax_attempts = {max_attempts}\nretry_base_seconds = 0\n{poll_extra}",
        encoding="utf-8",
    )
    return path


@dataclass
class Template:
    """A game folder set up once per engine: copied for every attack."""

    directory: Path
    database_url: str  # sqlite:///... or the template PostgreSQL database
    passwords: dict[str, str]
    admin: dict[str, object] | None = None  # psycopg.connect arguments on PostgreSQL


def make_template(directory: Path, database_url: str) -> Template:
    """`pbem init`, the seated game g1 (draft claims) and the open game g2, one poll
    (the start mails go out), the passwords read from `pbem new`'s output."""
    directory.mkdir(parents=True, exist_ok=True)
    write_config(directory, database_url)
    players = [arg for name, address in PLAYERS.items() for arg in ("-p", f"{name}:{address}")]
    passwords: dict[str, str] = {}
    for args in (
        ("init",),
        ("new", GAME, "-o", "claim=draft", *players),
        ("new", OPEN_GAME, "--open", "--seats", "3"),
        ("poll",),
    ):
        done = run_pbem(directory, *args)
        assert done.returncode == 0, done.describe()
        passwords.update(_PASSWORD.findall(done.stdout))
    assert set(passwords) == set(PLAYERS), passwords
    admin: dict[str, object] | None = None
    if not database_url.startswith("sqlite"):
        url = make_url(database_url)
        admin = {"host": url.host, "port": url.port, "user": url.username, "dbname": "postgres"}
    return Template(directory, database_url, passwords, admin)


_copies = iter(range(1, 1_000_000))


@dataclass
class GameCopy:
    """One attack's own copy of the template: folder, database, inbox."""

    template: Template
    directory: Path
    database_url: str
    before: dict[str, set[str]] = field(default_factory=dict)  # mail files at the copy

    @classmethod
    def from_template(cls, template: Template, directory: Path) -> GameCopy:
        shutil.copytree(template.directory, directory, ignore=shutil.ignore_patterns("poll.lock"))
        if template.admin is None:
            url = f"sqlite:///{directory / 'var' / 'pbem.db'}"
        else:
            name = f"hostile_{os.getpid()}_{next(_copies)}"
            source = make_url(template.database_url).database
            with psycopg.connect(**template.admin, autocommit=True) as admin:  # type: ignore[arg-type]
                admin.execute(f"CREATE DATABASE {name} TEMPLATE {source}")
            url = make_url(template.database_url).set(database=name).render_as_string(False)
        write_config(directory, url)
        copy = cls(template, directory, url)
        copy.before = {a: {p.name for p in copy.mailbox(a)} for a in copy.addresses()}
        return copy

    def configure(self, max_attempts: int = 1, poll_extra: str = "") -> None:
        """Rewrite pbem.toml with other [poll] settings."""
        write_config(self.directory, self.database_url, max_attempts, poll_extra)

    def drop(self) -> None:
        """Remove the copy's PostgreSQL database (the folder goes with tmp_path)."""
        if self.template.admin is not None:
            name = make_url(self.database_url).database
            with psycopg.connect(**self.template.admin, autocommit=True) as admin:  # type: ignore[arg-type]
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    # -- the mail on disk
    @property
    def mail_root(self) -> Path:
        return self.directory / "var" / "mail"

    @property
    def inbox(self) -> Path:
        return self.mail_root / GAME_ADDRESS

    def addresses(self) -> list[str]:
        return [p.name for p in self.mail_root.iterdir() if p.is_dir()]

    def deliver(self, key: str, raw: bytes) -> None:
        """Drop a mail into the inbox under a chosen Maildir key."""
        (self.inbox / "new").mkdir(parents=True, exist_ok=True)
        (self.inbox / "new" / key).write_bytes(raw)

    def mailbox(self, address: str) -> list[Path]:
        """Every mail file of a mailbox (new and cur)."""
        box = self.mail_root / address
        return sorted(
            p for sub in ("new", "cur") if (box / sub).is_dir() for p in (box / sub).iterdir()
        )

    def new_mail(self, address: str) -> list[bytes]:
        """The mails that arrived in a mailbox since the copy was made."""
        known = self.before.get(address, set())
        return [p.read_bytes() for p in self.mailbox(address) if p.name not in known]

    def folder_of(self, case: str) -> list[str]:
        """Where the mails of one case are now: "inbox", "processed", "rejected", "held"."""
        marker = f"{CASE_HEADER}: {case}\n".encode()
        found = []
        places = {"inbox": self.inbox, **{k: self.inbox / v for k, v in FOLDERS.items()}}
        for place, box in places.items():
            for sub in ("new", "cur"):
                for path in sorted((box / sub).iterdir()) if (box / sub).is_dir() else []:
                    with open(path, "rb") as handle:
                        head = handle.read(8192).replace(b"\r\n", b"\n")
                    if marker in head:
                        found.append(place)
        return found

    def folder_bytes(self, place: str) -> list[bytes]:
        box = self.inbox / FOLDERS[place]
        return [p.read_bytes() for sub in ("new", "cur") for p in sorted((box / sub).iterdir())]

    # -- the database
    def database_bytes(self) -> int:
        """How much the database holds: on SQLite the file's size after a WAL
        checkpoint; on PostgreSQL the stored size of every row of every table
        (pg_column_size of the row: compressed and TOASTed values as stored),
        which, unlike the files, does not move in 8 KB pages."""
        if self.template.admin is None:
            path = self.directory / "var" / "pbem.db"
            with sqlite3.connect(path) as lite:
                lite.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            lite.close()
            return path.stat().st_size
        with psycopg.connect(self._pg_url()) as db:
            tables = [
                row[0]
                for row in db.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                ).fetchall()
            ]
            total = 0
            for table in tables:
                size = db.execute(f'SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM "{table}" t')
                total += int(size.fetchone()[0])  # type: ignore[index]
            return total

    def _pg_url(self) -> str:
        url = make_url(self.database_url)
        return f"host={url.host} port={url.port} user={url.username} dbname={url.database}"

    def query(self, sql: str) -> list[tuple[object, ...]]:
        """Rows of one SELECT on either engine."""
        if self.template.admin is None:
            with sqlite3.connect(self.directory / "var" / "pbem.db") as lite:
                rows = lite.execute(sql).fetchall()
            lite.close()
            return rows
        with psycopg.connect(self._pg_url()) as db:
            return [tuple(row) for row in db.execute(sql).fetchall()]

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT, **options: object) -> Run:
        return run_pbem(self.directory, *args, timeout=timeout, **options)  # type: ignore[arg-type]

    def poll(self, **options: object) -> Run:
        """One `pbem poll` under 2 GiB, POLL_CPU_SECONDS of CPU and POLL_TIMEOUT."""
        limits: dict[str, object] = {"timeout": POLL_TIMEOUT, "cpu_limit": POLL_CPU_SECONDS}
        return run_pbem(self.directory, "poll", **{**limits, **options})  # type: ignore[arg-type]


# ----------------------------------------------------------------- the mails
def attack_key(n: int) -> str:
    """A Maildir key that sorts before VALID_KEY, in the order of n."""
    return f"1000000000.M{n}Q{n}.hostile"


def message(
    sender: str,
    subject: str,
    body: str,
    *,
    case: str,
    message_id: str | None = None,
    to: str = GAME_ADDRESS,
) -> bytes:
    """A plain text mail as a mail program writes it, marked with its case."""
    msg = EmailMessage(policy=policy.SMTP)
    msg[CASE_HEADER] = case
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = message_id or f"<{case}@example.org>"
    msg.set_content(body)
    return bytes(msg)


def raw_mail(headers: list[bytes], body: bytes, *, case: str) -> bytes:
    """A mail written byte for byte (for what a mail library refuses to write)."""
    head = b"".join(h if h.endswith(b"\n") else h + b"\n" for h in headers)
    return f"{CASE_HEADER}: {case}\n".encode() + head + b"\n" + body


def valid_mail(passwords: dict[str, str]) -> bytes:
    """alice's draft claims, with her password: the mail every attack stands before."""
    body = f"PASSWORD {passwords['alice']}\nCLAIM Alaska, Ontario, Greenland\n"
    return message(PLAYERS["alice"], f"[{GAME}] my claims", body, case="valid", message_id=VALID_ID)


def parse(raw: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(raw)  # type: ignore[return-value]


def text_of(raw: bytes) -> str:
    """Headers and every text part of a mail, decoded (what a person reads)."""
    msg = parse(raw)
    parts = [f"{k}: {v}" for k, v in msg.items()]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            try:
                parts.append(part.get_content())  # type: ignore[attr-defined]
            except (LookupError, ValueError):
                parts.append(part.get_payload(decode=True).decode("utf-8", "replace"))  # type: ignore[union-attr]
    return "\n".join(parts)


def files_under(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            yield path
