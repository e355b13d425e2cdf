"""Issue 5: the `pbem poll` and `pbem daemon` commands as cron and systemd run them.

Real subprocesses on a config file pointing at the loopback servers: exit
codes, the one log line per mail, the lock that makes an overlapping run
exit quietly, and a daemon that picks up mail while it waits and stops
cleanly on SIGTERM.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from sqlmodel import select

from pbem.service.ops.poll import poll_lock
from pbem.store import ServiceState, session_scope
from pbem.testing.mailservers import MailServers, free_port
from tests.mailloop_helpers import (
    MailWorld,
    kind,
    order_mail,
    parse,
    replies_to,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.integration

NAMES = ["ada", "brook", "cyrus"]
AUTO = {"placement": "auto"}
IDLE_LINE = "0 mails; 0 sent, 0 deferred, 0 failed"
# Alembic logs these on every start once `pbem poll` has set up INFO logging
# (reported to the lead); they are not pbem's own lines.
ALEMBIC = ("Context impl ", "Will assume ")


def lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if not line.startswith(ALEMBIC)]


def test_pbem_poll_exit_codes_log_lines_and_the_lock(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("cron", NAMES, overrides=AUTO, bots=True)

    nothing = world.pbem("poll")
    assert (nothing.returncode, lines(nothing.stdout), nothing.stderr) == (0, [IDLE_LINE], "")

    mover, raw = world.turn_mail("cron", players)
    mid = mover.send(world.game_address, raw)
    done = world.pbem("poll")
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == [
        f"{mid} game=cron processed: turn 1 played",
        "1 mails; 6 sent, 0 deferred, 0 failed",
    ]

    # The IMAP server cannot be reached (nothing listens on the port): exit code 2.
    closed = write_config(
        tmp_path / "closed.toml",
        mail_servers,
        world.game_address,
        world.gm_address,
        imap_port=free_port(),
    )
    unreachable = world.pbem("poll", config=closed)
    assert unreachable.returncode == 2
    # The other stages still ran (nothing was due); one line names the server and its setting.
    assert lines(unreachable.stdout) == ["0 mails; 0 sent, 0 deferred, 0 failed"]
    assert unreachable.stderr.startswith(
        "error: cannot read the inbox: cannot connect to IMAP server 127.0.0.1:"
    )
    assert len(unreachable.stderr.splitlines()) == 1

    # Another poll holds the lock (cron started the next run too early): a quiet exit.
    mover, raw = world.turn_mail("cron", players)
    second = mover.send(world.game_address, raw)
    with poll_lock(world.config.state_dir):
        busy = world.pbem("poll")
    assert (busy.returncode, lines(busy.stdout), busy.stderr) == (0, [], "")
    assert world.folder("INBOX") == [second]
    assert [m.message_id for m in world.inbound()] == [mid]

    after = world.pbem("poll")
    assert after.returncode == 0, after.stderr
    assert lines(after.stdout)[0] == f"{second} game=cron processed: turn 2 played"
    assert [e.message_id for e in world.order_log("cron")] == [mid, second]


def test_daemon_takes_mail_while_it_waits_and_stops_on_sigterm(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("idle", NAMES, overrides=AUTO, bots=True)
    daemon = subprocess.Popen(
        world.command("daemon", "--interval", "1"),
        cwd=tmp_path,
        env=world.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until(lambda: last_poll(world), what="the daemon's first cycle")
        mover, raw = world.turn_mail("idle", players)
        mid = mover.send(world.game_address, raw)  # arrives while the daemon waits
        [receipt] = wait_until(lambda: replies_to(mover.mailbox(), mid), what="the receipt")
        assert kind(receipt) == "receipt"
        daemon.send_signal(signal.SIGTERM)
        output, _ = daemon.communicate(timeout=15)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, output
    logged = lines(output)
    [mail_line] = [line for line in logged if mid in line]  # one log line per mail
    assert mail_line.endswith(f" {mid} game=idle processed: turn 1 played")
    assert any(line.endswith("signal 15: stopping after this cycle") for line in logged)
    assert "stopped after" in logged[-1]
    assert [e.message_id for e in world.order_log("idle")] == [mid]
    assert world.processed() == [mid]


# `pbem daemon` whose first cycle, right after it has fetched and handled a
# mail, sees one more mail arrive (delivered into Dovecot over LMTP).
DELIVER_DURING_CYCLE = """
import os, smtplib, sys
import pbem.service.ops.poll as poll
handled = poll.process_mail
def handle_then_deliver(engine, ctx, mail, held=None):
    outcome = handled(engine, ctx, mail, held)
    late = os.environ.pop("LATE_MAIL", None)
    if late:
        with smtplib.LMTP("127.0.0.1", int(os.environ["LMTP_PORT"])) as lmtp:
            lmtp.sendmail(os.environ["LATE_FROM"], [os.environ["LATE_TO"]], open(late, "rb").read())
    return outcome
poll.process_mail = handle_then_deliver
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


def test_daemon_takes_mail_that_arrived_during_its_cycle_without_waiting_the_interval(
    mail_servers: MailServers, tmp_path: Path
) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game("busy", NAMES, overrides=AUTO, bots=True)
    mover, raw = world.turn_mail("busy", players)
    first = mover.send(world.game_address, raw)
    late = order_mail(
        mover.address, world.game_address, "[busy] status", f"PASSWORD {mover.password}\nSTATUS"
    )
    (tmp_path / "late.eml").write_bytes(late)
    env = world.env() | {
        "LATE_MAIL": str(tmp_path / "late.eml"),
        "LMTP_PORT": str(mail_servers.dovecot.lmtp_port),
        "LATE_FROM": mover.address,
        "LATE_TO": world.game_address,
    }
    # An hour between cycles: only IDLE (or noticing the mail at once) can start
    # the second cycle; the daemon stops by itself after it.
    command = world.command(
        "daemon", "--interval", "3600", "--cycles", "2", script=DELIVER_DURING_CYCLE
    )
    daemon = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        output, _ = daemon.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(
            "the daemon sat out its interval while a mail that came during its cycle waited"
        )
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, output
    late_id = str(parse(late)["Message-ID"])
    logged = lines(output)
    assert any(line.endswith(f"{first} game=busy processed: turn 1 played") for line in logged)
    assert any(line.endswith(f"{late_id} game=busy processed: status") for line in logged)
    assert logged[-1].endswith("stopped after 2 cycles")
    assert world.processed() == [first, late_id]


def last_poll(world: MailWorld) -> str | None:
    with session_scope(world.engine, write=False) as session:
        row = session.exec(select(ServiceState).where(ServiceState.key == "last_poll")).first()
        return row.value if row else None
