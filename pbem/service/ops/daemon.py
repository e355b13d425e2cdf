"""`pbem daemon`: poll cycles in a loop until SIGTERM (or SIGINT).

Between cycles it waits on the inbox: IMAP IDLE where the server has it
(a new mail wakes it at once), else a plain sleep. A stop signal lets the
current cycle finish, so no mail is left half handled (and the database
transaction of each mail makes a hard kill safe too).
"""

from __future__ import annotations

import logging
import signal
import threading

from sqlalchemy.engine import Engine

from pbem.config import Config
from pbem.mail.settings import open_inbox
from pbem.service.clock import Clock
from pbem.service.ops.poll import (
    PollBusy,
    database_unusable,
    load_checkpoint,
    poll_lock,
    run_cycle,
)
from pbem.store import init_db
from pbem.store.errors import DatabaseError, DatabaseUnavailable

log = logging.getLogger("pbem.daemon")


def open_database(config: Config, interval: float, clock: Clock | None = None) -> Engine | None:
    """The database, migrated; while it cannot be reached, wait and try again
    (a daemon started with the database down must not just exit), the outage
    recorded as `pbem poll` records it (with ``clock``). None when a stop
    signal came first."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            try:
                return init_db(config.database_url)
            except DatabaseUnavailable as exc:
                log.warning("%s; trying again in %.0f s", exc, interval)
                if clock is not None:
                    database_unusable(config, clock, exc)
            if stop.wait(interval):
                return None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_daemon(
    engine: Engine, config: Config, clock: Clock, interval: float, cycles: int = 0
) -> int:
    """Run until stopped (or ``cycles`` cycles); returns the number of cycles run."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %s: stopping after this cycle", signum)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    done = 0
    try:
        while not stop.is_set():
            try:
                with poll_lock(config.state_dir):
                    report = run_cycle(engine, config, clock)  # logs one line per mail
                for error in report.errors:
                    log.warning("%s; trying again within %.0f s", error, interval)
            except PollBusy:
                log.info("another poll is running; waiting")
            except Exception:  # noqa: BLE001 - a bug must not stop the daemon: say it, go on
                log.exception("the poll cycle failed; trying again in %.0f s", interval)
            done += 1
            if cycles and done >= cycles:
                break
            _wait(engine, config, interval, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log.info("stopped after %d cycles", done)
    return done


def _wait(engine: Engine, config: Config, interval: float, stop: threading.Event) -> None:
    """Wait for new mail (IDLE) or the interval, whichever comes first, in
    slices short enough to notice a stop signal."""
    settings = config.mail
    try:
        with open_inbox(settings) as inbox:
            # A fetch of nothing from the stored checkpoint: mail that arrived
            # after the cycle's fetch (or between two slices) ends the wait at
            # once, instead of an IDLE that never hears of it.
            inbox.fetch_new(load_checkpoint(engine, inbox.source), limit=0)
            waited = 0.0
            while waited < interval and not stop.is_set():
                step = min(5.0, interval - waited)
                if inbox.wait_for_mail(step):
                    return
                waited += step
    except (OSError, DatabaseError) as exc:
        log.warning("waiting for mail: %s", exc)
        stop.wait(interval)
