"""Outages of the inbox, the SMTP server and the database: noticed, told once.

Each cycle says, per component, whether it worked. An outage starts at the
first failure; once it has lasted ``poll.outage_alert_minutes`` the GM gets
one alert (by mail when mail can go out; always in the log and in ``pbem
status``), and one note when it is over. Inbox and SMTP outages are rows of
service_state, shared by every worker, and their alert mails have a
Message-ID made from the outage's start, so three workers make one alert,
not three. The database's own outage cannot be written into the database:
it lives in a file shared by every worker of that database (``[poll]
outage_dir``, by default in the system's temporary folder; its name comes
from the database URL), read and written under a file lock, and its alert
is sent directly. The first worker past the threshold sends it and marks
the file; the others see the mark. The alert's Message-ID comes from the
GM's address and the window of ``outage_alert_minutes`` the outage started
in, so even workers that cannot share the file (other hosts) send mails
that clients fold when they saw it start in the same window. Once the
database answers again the outage is kept in it (pbem.service.ops.outagelog),
where every host sees it: one record, one note that it is over.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from pbem.config import Config
from pbem.mail.transport import OutgoingMail, Sender
from pbem.service.context import Context
from pbem.service.ops import outagelog
from pbem.store import ServiceState, session_scope
from pbem.store.errors import DatabaseError
from pbem.vocab import Component

log = logging.getLogger("pbem.health")

_PREFIX = "outage:"
_WHAT = {
    Component.INBOX: "reading the game's inbox",
    Component.SMTP: "sending mail",
    Component.DATABASE: "the database",
}


@dataclass
class Outage:
    since: str  # ISO time of the first failure
    error: str
    alerted: bool = False

    def minutes(self, now: datetime) -> float:
        return (now - datetime.fromisoformat(self.since)).total_seconds() / 60


def _row_key(component: Component) -> str:
    return _PREFIX + component.value


def outage_file(config: Config) -> Path:
    """The file every worker of this database keeps its outage in.

    Workers have state folders of their own; this one is shared: the
    folder ``[poll] outage_dir`` (default: the system's temporary folder),
    a name made from the database URL (never the URL itself: it may hold a
    password)."""
    folder = (
        Path(config.poll.outage_dir)
        if config.poll.outage_dir
        else Path(tempfile.gettempdir()) / "pbem-outages"
    )
    digest = hashlib.sha256(config.database_url.encode()).hexdigest()[:16]
    return folder / f"database-{digest}.json"


@contextmanager
def _locked(path: Path) -> Iterator[list[Outage | None]]:
    """The outage in ``path``, under an exclusive lock; what the caller leaves
    in the one-item list is written back (None removes it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        held: list[Outage | None] = [_read(path)]
        before = held[0]
        yield held
        if held[0] is None:
            path.unlink(missing_ok=True)
        elif held[0] != before:
            partial = path.with_suffix(".tmp")
            partial.write_text(json.dumps(asdict(held[0])))
            partial.replace(path)  # a reader never sees half a file


def _read(path: Path) -> Outage | None:
    try:
        return Outage(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def outages(session: Session, config: Config) -> dict[str, Outage]:
    """Every outage going on now, by component."""
    found: dict[str, Outage] = {}
    rows = session.exec(select(ServiceState).where(col(ServiceState.key).startswith(_PREFIX)))
    for row in rows:
        found[row.key[len(_PREFIX) :]] = Outage(**json.loads(row.value))
    db = database_outage(config)
    if db is not None:
        found[Component.DATABASE.value] = db
    return found


def database_outage(config: Config) -> Outage | None:
    return _read(outage_file(config))


class Health:
    """What one cycle saw of each component, and the alerts that follow from it."""

    def __init__(self, engine: Engine, ctx: Context) -> None:
        self.engine = engine
        self.ctx = ctx
        self.outage_file = outage_file(ctx.config)
        self.alert_after = timedelta(minutes=ctx.config.poll.outage_alert_minutes)
        self.alert_after_minutes = ctx.config.poll.outage_alert_minutes

    # --- inbox and SMTP: shared rows ------------------------------------------
    def up(self, component: Component) -> None:
        try:
            with session_scope(self.engine) as session:
                row = session.exec(
                    select(ServiceState).where(ServiceState.key == _row_key(component))
                ).first()
                if row is None:
                    return
                outage = Outage(**json.loads(row.value))
                session.delete(row)
                now = self.ctx.clock.now()
                minutes = outage.minutes(now)
                log.warning("%s works again after %.0f minutes", _WHAT[component], minutes)
                outagelog.remember(session, _past(component, outage, now))
                if outage.alerted:
                    self._mail_gm(session, component, outage, over=True)
        except (DatabaseError, IntegrityError) as exc:
            log.warning("could not record that %s works again: %s", _WHAT[component], exc)

    def down(self, component: Component, error: str, *, mail_works: bool) -> None:
        now = self.ctx.clock.now()
        try:
            with session_scope(self.engine) as session:
                key = _row_key(component)
                row = session.exec(select(ServiceState).where(ServiceState.key == key)).first()
                if row is None:
                    row = ServiceState(key=key)
                    outage = Outage(now.isoformat(), error)
                else:
                    outage = Outage(**json.loads(row.value))
                    outage.error = error
                if (
                    not outage.alerted
                    and now - datetime.fromisoformat(outage.since) >= self.alert_after
                ):
                    outage.alerted = True
                    log.error(
                        "ALERT: %s has failed since %s: %s", _WHAT[component], outage.since, error
                    )
                    if mail_works:
                        self._mail_gm(session, component, outage, over=False)
                row.value = json.dumps(asdict(outage))
                session.add(row)
        except (DatabaseError, IntegrityError) as exc:
            log.warning("could not record the outage of %s: %s", _WHAT[component], exc)

    def _mail_gm(
        self, session: Session, component: Component, outage: Outage, *, over: bool
    ) -> None:
        from pbem.report import context as rc  # the templates: only for an alert
        from pbem.report import render
        from pbem.service.play import mailinfo
        from pbem.service.tell import outmail

        gm = self.ctx.config.mail.gm_address
        rendered = render.render_gm_alert(
            rc.GmAlert(*_alert_text(component, outage, over), None, gm)
        )
        outmail.queue(
            session,
            self.ctx,
            rendered,
            recipient=gm,
            message_id=mailinfo.message_id(
                self.ctx, "outage", component.value, outage.since, "over" if over else "alert"
            ),
            game=None,
        )

    # --- the database: a shared file, and a direct mail ------------------------
    def database_up(self) -> None:
        """The first worker to use the database again ends the outage for all."""
        if not self.outage_file.exists():
            return  # the usual case: no lock taken
        try:
            with _locked(self.outage_file) as held:
                outage = held[0]
                held[0] = None
        except OSError as exc:
            log.warning("%s; set [poll] outage_dir to a folder every worker may write", exc)
            return
        if outage is None:
            return  # another worker ended it just now
        now = self.ctx.clock.now()
        log.warning("the database works again after %.0f minutes", outage.minutes(now))
        try:
            with session_scope(self.engine) as session:
                # Kept in the database, which every worker on every host sees: a
                # host without the shared file folds its record into the first one.
                earlier = outagelog.remember(session, _past(Component.DATABASE, outage, now))
                told_over = earlier is not None and earlier.alerted
                if outage.alerted and not told_over:
                    self._mail_gm(session, Component.DATABASE, outage, over=True)
        except (DatabaseError, IntegrityError) as exc:
            log.warning("could not record that the database is back: %s", exc)

    def database_down(self, error: str, sender: Sender | None) -> None:
        """Record the outage (shared by every worker) and alert once when long."""
        now = self.ctx.clock.now()
        try:
            with _locked(self.outage_file) as held:
                known = held[0]
                outage = Outage(known.since if known else now.isoformat(), error)
                outage.alerted = known.alerted if known else False
                if not outage.alerted and outage.minutes(now) >= self.alert_after_minutes:
                    log.error("ALERT: the database has failed since %s: %s", outage.since, error)
                    if sender is not None:  # under the lock: the others wait, then see it
                        self._send_directly(sender, outage)
                    outage.alerted = True  # told (in the log at least): not again this outage
                held[0] = outage
        except OSError as exc:  # the outage cannot be kept: said in the log, the cycle goes on
            log.error(
                "cannot record the database outage (%s): %s; set [poll] outage_dir to a "
                "folder every worker may write",
                error,
                exc,
            )

    def _send_directly(self, sender: Sender, outage: Outage) -> bool:
        from pbem.report import context as rc
        from pbem.report import render
        from pbem.report.mime import to_mime

        gm = self.ctx.config.mail.gm_address
        rendered = render.render_gm_alert(
            rc.GmAlert(*_alert_text(Component.DATABASE, outage, False), None, gm)
        )
        msg = to_mime(
            rendered,
            sender=self.ctx.config.mail.game_address,
            recipient=gm,
            message_id=database_alert_id(self.ctx, outage),
            in_reply_to=None,
            references=[],
            date=self.ctx.clock.now(),
        )
        mail = OutgoingMail("database-alert", self.ctx.config.mail.game_address, (gm,), bytes(msg))
        try:
            return sender.send([mail])[0].ok
        except OSError as exc:
            log.warning("could not mail the database alert: %s", exc)
            return False


def database_alert_id(ctx: Context, outage: Outage) -> str:
    """The same for every worker that saw the outage start in the same window
    of ``outage_alert_minutes``: workers on hosts that share no outage file
    (each its own ``since``) send alerts that mail clients fold."""
    from pbem.service.play import mailinfo

    gm = ctx.config.mail.gm_address
    window = max(ctx.config.poll.outage_alert_minutes, 1.0) * 60
    start = int(datetime.fromisoformat(outage.since).timestamp() // window)
    return mailinfo.message_id(ctx, "outage", "database", gm, start, "alert")


def _past(component: Component, outage: Outage, until: datetime) -> outagelog.PastOutage:
    return outagelog.PastOutage(
        component, outage.since, until.isoformat(), outage.error, outage.alerted
    )


def _alert_text(component: Component, outage: Outage, over: bool) -> tuple[str, str]:
    what = _WHAT[component]
    if over:
        return (
            f"Back to normal: {what}",
            f"{what.capitalize()} works again (it had failed since {outage.since} UTC). "
            "Mail that waited is being handled now; nothing was lost.",
        )
    consequence = {
        Component.INBOX: "New orders are not read; they wait in the inbox. Sending and "
        "deadlines go on.",
        Component.SMTP: "Mail waits in the outbox and goes out once the server is back.",
        Component.DATABASE: "Nothing can be read or applied; mail waits in the inbox.",
    }[component]
    return (
        f"Outage: {what}",
        f"{what.capitalize()} has failed since {outage.since} UTC.\n\nThe last error: "
        f"{outage.error}\n\n{consequence}\n\nYou will get one more mail when it works again; "
        "`pbem status` shows it meanwhile.",
    )
