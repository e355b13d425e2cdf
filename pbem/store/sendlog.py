"""The send log: on a SQLite database, the outbox's leases and sent marks in a
small file of their own, beside the database (``<database>-sendlog``).

Why a second file: SQLite has one write lock per file. A poll's inbox holds
the database's lock for the whole of one mail (~60 ms: the turn, its
reports, its pictures), and the sender must commit each mail it sent before
it sends the next (the exactly-once promise, docs/RELIABILITY.md). In one
file the two wait for each other, mail by mail; with the sender's commits
here, the sender sends while the inbox works.

The outbox table stays the record. A mark here is folded into it (``marks``
read, the outbox rows updated, then ``forget``) at the end of each send run;
whatever a killed worker left is folded by the next run of any worker. So a
row counts as sent when the outbox says so *or* a mark here does, and as
leased while a claim here has not run out.

Plain ``sqlite3`` (no ORM): a few small statements on one table. A mark's
commit is not synced to disk (``synchronous = NORMAL``): lost in a power loss
or OS crash (never in a killed process), it can only send that mail again,
with its Message-ID. A lease's commit is synced (``FULL``), and with it every
mark before it: a power loss can undo the marks of one batch at most, as
when the marks were the outbox table's (docs/RELIABILITY.md §8).
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from pbem.store.db import session_scope
from pbem.store.errors import DatabaseError
from pbem.store.models import ServiceState

log = logging.getLogger("pbem.store")

SUFFIX = "-sendlog"
KEY = "sendlog_key"  # service_state: the random name of the database a log belongs to
BUSY_TIMEOUT_S = 30.0  # only senders write here, each for well under a millisecond
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS send_claim (
    outbox_id INTEGER PRIMARY KEY,  -- outbox.id
    owner     TEXT    NOT NULL,     -- the worker holding the lease
    until_us  INTEGER NOT NULL,     -- the lease runs out then (microseconds since 1970, UTC)
    sent_us   INTEGER               -- accepted by the server then; NULL while leased
)
"""


def path_for(url: URL | Engine) -> Path | None:
    """Where the send log of this database lives; None when it has none
    (PostgreSQL, whose row locks let the sender and the inbox overlap in one
    database, and an in-memory SQLite database, which one process uses alone)."""
    if isinstance(url, Engine):
        url = url.url
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ":memory:"
    if database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser().with_name(Path(database).name + SUFFIX)


def _us(moment: datetime) -> int:
    return (moment - _EPOCH) // _US


def _moment(us: int) -> datetime:
    return _EPOCH + us * _US


@dataclass(frozen=True)
class Mark:
    """One mail the server accepted, not yet written into the outbox table."""

    outbox_id: int
    sent_at: datetime


def database_key(engine: Engine, *, create: bool = True) -> str | None:
    """The random name of this database (service_state ``sendlog_key``, written
    by migration 0004; made here if the row is missing). A log whose name
    differs was left by another database at this path (deleted and made
    again): its marks would name rows of that one, and are dropped."""
    with session_scope(engine, write=False) as session:
        row = session.exec(select(ServiceState).where(ServiceState.key == KEY)).first()
        if row is not None or not create:
            return row.value if row is not None else None
    try:
        with session_scope(engine) as session:
            session.add(ServiceState(key=KEY, value=uuid.uuid4().hex))
    except IntegrityError:
        pass  # another worker named it at the same moment: theirs stands
    return database_key(engine, create=False)


class SendLog:
    """One worker's connection to the send log of the database named ``key``
    (see ``database_key``); use it from one thread."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        try:
            self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise DatabaseError(f"cannot open the send log {path}: {exc}") from exc
        self._synced: bool | None = None  # the connection's synchronous level
        self._belong_to(key)

    def _belong_to(self, key: str) -> None:
        with self._write() as db:
            row = db.execute("SELECT value FROM meta WHERE name = 'database'").fetchone()
            if row is not None and row[0] == key:
                return
            if row is not None:
                stale = db.execute("DELETE FROM send_claim").rowcount
                log.warning("%s was another database's: %d rows dropped", self.path, stale)
            db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('database', ?)", (key,))

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: the check and the change
        see the same log), committed at the end, rolled back if it raises;
        synced to disk when ``durable``."""
        try:
            if self._synced is not durable:  # set outside a transaction, where it applies
                self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
                self._synced = durable
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise DatabaseError(f"the send log {self.path} cannot be written: {exc}") from exc

    def claim(
        self, candidates: Iterable[int], owner: str, until: datetime, now: datetime, limit: int
    ) -> list[int]:
        """Lease up to ``limit`` of ``candidates`` (in their order) for ``owner``:
        those without a claim, or whose claim ran out unsent. The rest are
        sent or another worker's."""
        wanted = list(candidates)
        if not wanted:
            return []
        now_us = _us(now)
        with self._write(durable=True) as db:
            held = {
                row_id
                for row_id, until_us, sent_us in _select_in(
                    db, "SELECT outbox_id, until_us, sent_us FROM send_claim", wanted
                )
                if sent_us is not None or until_us > now_us
            }
            taken = [row_id for row_id in wanted if row_id not in held][:limit]
            db.executemany(
                "INSERT OR REPLACE INTO send_claim (outbox_id, owner, until_us, sent_us) "
                "VALUES (?, ?, ?, NULL)",
                [(row_id, owner, _us(until)) for row_id in taken],
            )
        return taken

    def mark_sent(
        self, row_id: int, owner: str, now: datetime, rest: list[int], until: datetime
    ) -> tuple[bool, int]:
        """Record one acceptance and renew the lease of the batch's ``rest``,
        in one commit. Returns (marked, how many of ``rest`` are no longer ours)."""
        with self._write() as db:
            marked = db.execute(
                "UPDATE send_claim SET sent_us = ? "
                "WHERE outbox_id = ? AND owner = ? AND sent_us IS NULL",
                (_us(now), row_id, owner),
            ).rowcount
            kept = self._renew(db, rest, owner, until)
        return marked == 1, len(rest) - kept

    def holds(self, row_id: int, owner: str) -> bool:
        """Is ``row_id`` leased by ``owner`` and not marked sent?"""
        row = self._db.execute(
            "SELECT 1 FROM send_claim WHERE outbox_id = ? AND owner = ? AND sent_us IS NULL",
            (row_id, owner),
        ).fetchone()
        return row is not None

    def renew(self, rest: list[int], owner: str, until: datetime) -> int:
        """Extend ``owner``'s lease of ``rest``; how many are no longer ours."""
        with self._write() as db:
            return len(rest) - self._renew(db, rest, owner, until)

    @staticmethod
    def _renew(db: sqlite3.Connection, rest: list[int], owner: str, until: datetime) -> int:
        if not rest:
            return 0
        marks = ",".join("?" * len(rest))
        return db.execute(
            f"UPDATE send_claim SET until_us = ? WHERE outbox_id IN ({marks}) "  # noqa: S608
            "AND owner = ? AND sent_us IS NULL",
            (_us(until), *rest, owner),
        ).rowcount

    def give_back(self, ids: list[int], owner: str) -> list[int]:
        """End ``owner``'s unsent claims on ``ids``; the ids that were ours."""
        if not ids:
            return []
        with self._write() as db:
            ours = [
                row_id
                for (row_id,) in _select_in(
                    db,
                    "SELECT outbox_id FROM send_claim WHERE owner = ? AND sent_us IS NULL",
                    ids,
                    (owner,),
                )
            ]
            db.executemany("DELETE FROM send_claim WHERE outbox_id = ?", [(i,) for i in ours])
        return ours

    def marks(self) -> list[Mark]:
        """Every acceptance not folded into the outbox yet, any worker's."""
        rows = self._db.execute(
            "SELECT outbox_id, sent_us FROM send_claim WHERE sent_us IS NOT NULL ORDER BY outbox_id"
        )
        return [Mark(row_id, _moment(sent_us)) for row_id, sent_us in rows]

    def forget(self, ids: list[int]) -> None:
        """Drop marks once the outbox table holds them (after its commit)."""
        if not ids:
            return
        with self._write() as db:
            db.executemany(
                "DELETE FROM send_claim WHERE outbox_id = ? AND sent_us IS NOT NULL",
                [(i,) for i in ids],
            )

    def in_flight(self, now: datetime) -> tuple[set[int], dict[int, str]]:
        """What the outbox table does not show yet: the rows sent (marks not
        folded) and the rows leased now, with their holders."""
        sent: set[int] = set()
        leased: dict[int, str] = {}
        now_us = _us(now)
        for row_id, owner, until_us, sent_us in self._db.execute(
            "SELECT outbox_id, owner, until_us, sent_us FROM send_claim"
        ):
            if sent_us is not None:
                sent.add(row_id)
            elif until_us > now_us:
                leased[row_id] = owner
        return sent, leased


def _select_in(
    db: sqlite3.Connection, query: str, ids: list[int], before: tuple[object, ...] = ()
) -> list[tuple[int, ...]]:
    """``query ... AND/WHERE outbox_id IN (ids)``, in chunks under SQLite's
    limit of bound parameters."""
    joiner = " AND " if " WHERE " in query else " WHERE "
    rows: list[tuple[int, ...]] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows.extend(db.execute(f"{query}{joiner}outbox_id IN ({marks})", (*before, *chunk)))
    return rows


def open_for(engine: Engine) -> SendLog | None:
    """This database's send log, opened (created if missing); None without one."""
    path = path_for(engine)
    return SendLog(path, str(database_key(engine))) if path is not None else None


def in_flight_for(engine: Engine, now: datetime) -> tuple[set[int], dict[int, str]]:
    """``SendLog.in_flight`` of this database's log; nothing when it has none
    or none was made yet (nothing was ever sent through one)."""
    path = path_for(engine)
    key = database_key(engine, create=False) if path is not None else None
    if path is None or key is None or not path.exists():
        return set(), {}
    sendlog = SendLog(path, key)
    try:
        return sendlog.in_flight(now)
    finally:
        sendlog.close()
