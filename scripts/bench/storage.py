"""Bytes stored per player-turn: games of four bots played by mail into one
SQLite database (the demo's whole mail path), measured as pbem stored them
before issue 12 (every rendered mail kept whole), as it stores them now
(compressed), and after the retention period (sent mail pruned to headers).

    python scripts/bench/storage.py [--games 20] [--dir var/bench-storage]

Prints figures; it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import time
import zlib
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbem.service.clock import SystemClock  # noqa: E402
from pbem.service.ops import demo
from pbem.service.tell import outbox
from pbem.store import init_db  # noqa: E402


def table_bytes(db: Path) -> dict[str, int]:
    """Bytes of each table and index as SQLite lays them out (dbstat)."""
    with sqlite3.connect(db) as con:
        try:
            rows = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:  # a SQLite built without dbstat: the file
            return {"(file)": db.stat().st_size}
    return {name: int(size) for name, size in rows}


def plain_bytes(db: Path) -> int:
    """What the mail columns would hold uncompressed (the layout before issue 12)."""
    total = 0
    with sqlite3.connect(db) as con:
        for table in ("outbox_body", "inbound_message"):
            for raw, fmt in con.execute(f"SELECT raw, raw_format FROM {table}"):
                total += len(zlib.decompress(raw)) if fmt == "zlib" else len(raw)
    return total


def vacuum(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return db.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--dir", type=Path, default=Path("var/bench-storage"))
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    started = time.perf_counter()
    turns = 0
    for game in range(args.games):
        result = demo.run_demo(args.dir, seed=100 + game, say=lambda _line: None)
        turns += result.turns
    played = time.perf_counter() - started
    db = args.dir / "pbem.db"
    tables = table_bytes(db)
    mail_tables = sum(v for k, v in tables.items() if k.startswith(("outbox", "inbound")))
    rest = sum(tables.values()) - mail_tables
    before = plain_bytes(db) + rest  # every rendered mail kept whole
    now = vacuum(db)
    engine = init_db(f"sqlite:///{db}")
    later = SystemClock().now() + timedelta(days=15)
    pruned = 0
    while batch := outbox.prune_sent(engine, later, 14):
        pruned += batch
    engine.dispose()
    after = vacuum(db)
    print(f"{args.games} games, {turns} player-turns by mail in {played:.0f} s")
    print(f"{'stored':<34}{'bytes':>14}{'per player-turn':>18}")
    for label, size in (
        ("before (rendered mail kept whole)", before),
        ("now (mail compressed)", now),
        (f"after retention ({pruned} mails pruned)", after),
    ):
        print(f"{label:<34}{size:>14,}{size / turns:>18,.0f}")
    print(
        f"ratio to the baseline (mail kept whole): now {now / before:.2f}x, "
        f"after retention {after / before:.2f}x"
    )


if __name__ == "__main__":
    main()
