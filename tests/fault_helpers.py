"""Helpers of the fault suite (tests/faults/, issue 12).

Built on tests/mailloop_helpers.py (the loopback world of Dovecot, the SMTP
relay and a pbem config) and tests/fixtures_pg.py (a PostgreSQL of one's
own, to kill and start again: the ``own_postgresql`` fixture). What this
module adds:

- ``make_world``: a MailWorld whose config has a ``[poll]`` table with short
  leases, no backoff and an outage folder of its own; optionally PostgreSQL,
  another IMAP server for the game's inbox, or any other [poll] key;
- games of bots with chosen deadlines, players who answer their mail;
- ``pbem`` as subprocesses (poll, daemon, status) and a kill of them;
- ``check_exactly_once``: the promise, checked from the database and from
  every mailbox, returning its figures (mails, answers, outbox rows,
  duplicates) so a test can bound them.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pbem.config import load_config
from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.service.clock import ManualClock
from pbem.service.play import notify
from pbem.service.play.games import PlayerSpec, create_game
from pbem.service.tell import telling
from pbem.store import init_db, session_scope
from pbem.store.pending import notices_pending
from pbem.testing.mailservers import MailServers
from pbem.vocab import InboundStatus, OutboxStatus
from tests.mailloop_helpers import (
    MailPlayer,
    MailWorld,
    kind,
    message_ids,
    parse,
    replies_to,
    wait_until,
    write_config,
)

NAMES = ["ada", "brook", "cyrus"]
AUTO = {"placement": "auto"}  # dealt and placed at creation: turn 1 waits for orders
# Short leases and no backoff: a dead worker's mail and mail are free again at once.
FAST_POLL = {"claim_lease_seconds": 2, "retry_base_seconds": 0}

Games = dict[str, dict[str, MailPlayer]]


# ------------------------------------------------------------------ the world
def poll_table(keys: dict[str, object]) -> str:
    """The ``[poll]`` table of a config, from its keys."""
    lines = ["[poll]"]
    for key, value in keys.items():
        lines.append(f'{key} = "{value}"' if isinstance(value, str) else f"{key} = {value}")
    return "\n".join(lines) + "\n"


def make_world(
    servers: MailServers,
    directory: Path,
    *,
    database_url: str | None = None,
    game_address: str | None = None,
    imap_port: int | None = None,
    smtp_connections: int = 1,
    **poll: object,
) -> MailWorld:
    """A MailWorld with a ``[poll]`` table (FAST_POLL and ``poll``), SQLite in
    ``directory`` unless ``database_url``; the game's inbox may live on
    another IMAP server (``game_address`` and ``imap_port``); the outbox sends
    over ``smtp_connections`` connections at once."""
    game_address = game_address or servers.new_user("game")
    gm_address = servers.new_user("gm")
    path = write_config(
        directory / "pbem.toml", servers, game_address, gm_address, imap_port=imap_port
    )
    text = path.read_text(encoding="utf-8")
    url = database_url or f"sqlite:///{directory / 'pbem.db'}"
    text = text.replace('database_url = "sqlite:///pbem.db"', f'database_url = "{url}"')
    text = text.replace("[mail.smtp]\n", f"[mail.smtp]\nconnections = {smtp_connections}\n", 1)
    # Every worker of the world shares this folder for the database's outage.
    poll = {"outage_dir": str(directory / "outages"), **poll}
    path.write_text(text + "\n" + poll_table({**FAST_POLL, **poll}), encoding="utf-8")
    config = load_config(path, env={})
    engine = init_db(config.database_url)
    clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
    return MailWorld(servers, directory, path, config, engine, clock, game_address, gm_address)


def worker_config(world: MailWorld, name: str) -> Path:
    """The world's config for one more worker: its own state folder and name."""
    folder = world.directory / name
    folder.mkdir(exist_ok=True)
    text = world.config_path.read_text(encoding="utf-8")
    text = text.replace('state_dir = "."', f'state_dir = "{folder}"')
    text = text.replace("[poll]\n", f'[poll]\nworker_id = "{name}"\n', 1)
    path = folder / "pbem.toml"
    path.write_text(text, encoding="utf-8")
    return path


def new_game(
    world: MailWorld,
    name: str,
    *,
    seed: int = 11,
    settings: dict[str, object] | None = None,
    send: bool = True,
) -> dict[str, MailPlayer]:
    """A game of three greedy bots placed automatically, with these game
    ``settings`` (timing, policies); its start mails sent when ``send``."""
    players = {
        n: MailPlayer(
            n, world.servers.new_user(n), world.servers, TextBot(make_bot("greedy", seed + i))
        )
        for i, n in enumerate(NAMES)
    }
    with session_scope(world.engine) as session:
        created = create_game(
            session,
            name,
            [PlayerSpec(p.name, p.address) for p in players.values()],
            overrides=AUTO,
            gm_address=world.gm_address,
            settings={"timezone": "UTC", **(settings or {})},
        )
        notify.game_start(session, world.ctx, created.game, created.passwords)
    telling.tell(world.engine, world.ctx)  # the start mails, rendered after the commit
    for player in players.values():
        player.password = created.passwords[player.name]
    if send:
        report = world.send_outbox()
        assert (report.sent, report.deferred, report.failed) == (len(NAMES) + 1, 0, 0), report
    return players


def new_games(world: MailWorld, count: int) -> Games:
    return {f"g{i}": new_game(world, f"g{i}", seed=10 * i) for i in range(count)}


def answer_all(world: MailWorld, games: Games) -> int:
    """Every player reads their new mail and answers what asks for orders."""
    return sum(p.answer(world, name) for name, players in games.items() for p in players.values())


def play_rounds(world: MailWorld, games: Games, rounds: int, step: Callable[[], object]) -> None:
    """``rounds`` times: everyone answers, then ``step()`` (polls, faults, ...)."""
    for _ in range(rounds):
        answer_all(world, games)
        step()


def wait_answered(world: MailWorld, games: Games, timeout: float = 60) -> None:
    try:
        wait_until(lambda: all_answered(world, games), timeout, "every order mail answered")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; {what_waits(world, games)}") from None


def what_waits(world: MailWorld, games: Games) -> str:
    """The order mails without an outcome and the outbox rows not sent (for a failure)."""
    rows = {r.message_id: r for r in world.inbound()}
    mails = [
        (mid, rows[mid].status, rows[mid].attempts, rows[mid].last_error, rows[mid].lease_owner)
        if mid in rows
        else (mid, "no row")
        for mid in sent_by_players(games)
        if mid not in rows
        or rows[mid].status not in (InboundStatus.PROCESSED, InboundStatus.REJECTED)
    ]
    unsent = [
        (r.id, r.status, r.attempts, r.lease_owner, r.last_error)
        for r in world.outbox()
        if r.status != OutboxStatus.SENT
    ]
    return f"mails waiting: {mails}; outbox rows waiting: {unsent}; inbox: {world.folder()}"


def sent_rows(world: MailWorld) -> set[int]:
    """The outbox rows committed as sent."""
    return {r.id for r in world.outbox() if r.status == OutboxStatus.SENT and r.id}


def outbox_sent(world: MailWorld) -> int:
    """How many outbox rows are committed as sent."""
    return len(sent_rows(world))


def queued_games(world: MailWorld, count: int) -> Games:
    """``count`` games whose start mails (4 each) wait in the outbox: a send batch."""
    return {f"g{i}": new_game(world, f"g{i}", seed=10 * i, send=False) for i in range(count)}


def sent_by_players(games: Games) -> list[str]:
    return [mid for players in games.values() for p in players.values() for mid in p.sent]


def all_answered(world: MailWorld, games: Games) -> bool:
    """Every order mail has its outcome, every notice decided is told, and no
    outbox row waits (a worker that dies between its commit and its telling
    leaves the next "your turn" as an untold notice for a later poll)."""
    done = {
        r.message_id
        for r in world.inbound()
        if r.status in (InboundStatus.PROCESSED, InboundStatus.REJECTED)
    }
    return (
        set(sent_by_players(games)) <= done
        and not notices_pending(world.engine)
        and len(sent_rows(world)) == len(world.outbox())
    )


# ------------------------------------------------------------------ the promise
@dataclass
class Figures:
    """What one run of a fault test came to (for its assertions and its report)."""

    mails: int = 0  # order mails the players sent
    answers: int = 0  # replies to them, one per mail
    applied: int = 0  # order-log entries that came from a mail
    rows: int = 0  # outbox rows, every one sent
    delivered: int = 0  # mails found in the mailboxes pbem writes to
    duplicates: int = 0  # deliveries beyond the first of one Message-ID
    gm_alerts: int = 0


def gm_mail(world: MailWorld) -> list:  # noqa: ANN201 - list[EmailMessage]
    return [parse(m.raw) for m in world.servers.read_mailbox(world.gm_address)]


def gm_alerts(world: MailWorld) -> list[str]:
    """Subjects of the GM alerts in the GM's mailbox, oldest first."""
    return [str(m["Subject"]) for m in gm_mail(world) if kind(m) == "gm_alert"]


def check_exactly_once(
    world: MailWorld,
    games: Games,
    *,
    kills: int = 0,
    per_kill: int = 1,
    alerts: int = 0,
    inbox: list[str] | None = None,
) -> Figures:
    """Every order mail one row, one outcome, applied at most once and answered
    once; every outbox row sent and at its recipient, a duplicate (same
    Message-ID) at most ``per_kill`` times per kill (the SMTP connections);
    exactly ``alerts`` GM alerts.
    ``inbox``: the Message-IDs still in the game's inbox (default: read it)."""
    figures = Figures()
    sent = sent_by_players(games)
    figures.mails = len(sent)
    assert len(sent) == len(set(sent)), "a player sent one Message-ID twice"
    rows = Counter(r.message_id for r in world.inbound())
    assert all(rows[mid] == 1 for mid in sent), {m: rows[m] for m in sent if rows[m] != 1}
    statuses = {r.message_id: r.status for r in world.inbound()}
    assert {statuses[mid] for mid in sent} <= {InboundStatus.PROCESSED}, statuses
    left = world.folder("INBOX") if inbox is None else inbox
    assert left == [], f"still in the inbox: {left}"
    for name in games:
        logged = Counter(e.message_id for e in world.order_log(name) if e.message_id)
        assert all(count == 1 for count in logged.values()), logged
        assert set(logged) <= set(sent)
        figures.applied += len(logged)
    boxes: dict[str, Counter[str]] = {}
    for players in games.values():
        for player in players.values():
            mailbox = player.mailbox()
            boxes[player.address] = message_ids(mailbox)
            for mid in player.sent:
                answers = {str(m["Message-ID"]) for m in replies_to(mailbox, mid)}
                assert len(answers) == 1, (mid, answers)
                figures.answers += 1
    gm = gm_mail(world)
    boxes[world.gm_address] = message_ids(gm)
    expected: dict[str, Counter[str]] = {address: Counter() for address in boxes}
    for row in world.outbox():
        assert row.status == OutboxStatus.SENT, (row.message_id, row.status, row.last_error)
        expected.setdefault(row.recipient, Counter())[row.message_id] += 1
        figures.rows += 1
    for address, got in boxes.items():
        assert set(got) == set(expected[address]), address
        figures.delivered += sum(got.values())
        figures.duplicates += sum(count - 1 for count in got.values())
    allowed = kills * per_kill  # one per connection with a mail in flight when killed
    assert figures.duplicates <= allowed, f"{figures.duplicates} duplicates for {kills} kills"
    figures.gm_alerts = sum(1 for m in gm if kind(m) == "gm_alert")
    assert figures.gm_alerts == alerts, [str(m["Subject"]) for m in gm if kind(m) == "gm_alert"]
    return figures


# ------------------------------------------------------------------ processes
def start_daemon(
    world: MailWorld, config: Path | None = None, log: str = "daemon", interval: float = 0.5
) -> subprocess.Popen[bytes]:
    """`pbem daemon` in the background, its output in ``<log>.log``."""
    out = open(world.directory / f"{log}.log", "ab")  # noqa: SIM115 - closed with the process
    try:
        return subprocess.Popen(
            world.command("daemon", "--interval", str(interval), config=config),
            cwd=world.directory,
            env=world.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    finally:
        out.close()  # the child has its own copy


def start_command(
    world: MailWorld, *args: str, script: str | None = None, config: Path | None = None
) -> subprocess.Popen[bytes]:
    """Any `pbem` command in the background (to be killed), output discarded."""
    return subprocess.Popen(
        world.command(*args, script=script, config=config),
        cwd=world.directory,
        env=world.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    """Signal one process we started and wait for it; its exit code."""
    if process.poll() is None:
        process.send_signal(sig)
    return process.wait(timeout=60)


def status_json(world: MailWorld, config: Path | None = None) -> tuple[int, dict]:
    """`pbem status --json`: (exit code, the object)."""
    done = world.pbem("status", "--json", config=config)
    assert done.returncode in (0, 1, 2), done.stderr
    return done.returncode, json.loads(done.stdout)


def poll_ok(world: MailWorld, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = world.pbem("poll", config=config)
    assert done.returncode == 0, done.stdout + done.stderr
    return done
