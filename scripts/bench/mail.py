"""Benchmark of the mail loop (issue 5): order mails for running games through `pbem poll`.

    python scripts/bench/mail.py                    # 100 games x 4 players, 10 rounds
    python scripts/bench/mail.py --games 20 --rounds 3
    python scripts/bench/mail.py --profile poll.prof  # also cProfile one round in-process
    python scripts/bench/mail.py --connections 3      # [mail.smtp] connections = 3

It starts Dovecot (IMAP + LMTP) and the SMTP relay on 127.0.0.1 (as the
tests do), creates the games (auto placement: setup done) with a mailbox
per player and sends their start mails. Then, round by round, the player
to move in every game reads their "your turn" notice over IMAP and answers
it with the greedy bot's orders (the token in the subject); the answers go
straight into Dovecot over LMTP, and one `pbem poll` (a subprocess, timed
alone, its peak RSS taken by GNU time) fetches, decodes, authenticates,
adjudicates, commits, moves them and sends every report through the relay.
A round must wait for the one before: a game's next orders depend on the
turn just adjudicated.

Afterwards the bare mail work is timed with the same transports and nothing
else: fetching the same mails over IMAP (BODY.PEEK) and sending the same
number of reports (the very bytes pbem sent) over SMTP, in the outbox's
batches and over as many connections as the poll used (``--connections``,
pbem's ``[mail.smtp] connections``); with more than one, the bare send over
one connection is printed too. The ratio of the two
is pbem's own cost above the mail servers. Everything stays on loopback and
every server is stopped at the end. Exits 1 when a mail was not processed
as a played turn or a report was not sent.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import smtplib
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlmodel import col, select  # noqa: E402

from pbem.config import load_config  # noqa: E402
from pbem.mail.imap import ImapInbox  # noqa: E402
from pbem.mail.settings import open_sender  # noqa: E402
from pbem.mail.smtp import SmtpSender  # noqa: E402
from pbem.mail.transport import OutgoingMail  # noqa: E402
from pbem.orders import TextBot  # noqa: E402
from pbem.rules.bots import make_bot  # noqa: E402
from pbem.service.clock import SystemClock  # noqa: E402
from pbem.service.context import Context  # noqa: E402
from pbem.service.ops.poll import run_cycle, send_outbox  # noqa: E402
from pbem.service.play import notify
from pbem.service.play.games import (  # noqa: E402
    PlayerSpec,
    create_game,
    find_game,
    load,
    players_of,
)
from pbem.service.tell.outbox import BATCH as SEND_BATCH  # noqa: E402
from pbem.store import Outbox, OutboxBody, init_db, session_scope  # noqa: E402
from pbem.store.rawmail import unpack  # noqa: E402
from pbem.testing.mailservers import HOST, MailServers  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PROCESSED = "pbem-processed"
SUMMARY = re.compile(r"^(\d+) mails; (\d+) sent, (\d+) deferred, (\d+) failed$", re.MULTILINE)
PLAYED = re.compile(r" processed: turn \d+ played$", re.MULTILINE)
PEAK_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
CPU = re.compile(r"(?:User|System) time \(seconds\): ([\d.]+)")
TIME = "/usr/bin/time"  # GNU time (Debian package "time"), for the peak RSS
HELD = re.compile(r"^pbem-bench-held ([\d.]+) ([\d.]+) (\d+)$", re.MULTILINE)
# `pbem poll`, timing each mail's one transaction (process_mail's session_scope):
# how long the game's row (on SQLite the database's write lock) is held per mail.
TIMED_POLL = """
import atexit, sys, time
from contextlib import contextmanager
import pbem.service.intake.mailflow as mailflow
inner = mailflow.session_scope
held = [0.0, 0.0, 0]
@contextmanager
def timed(*args, **kwargs):
    started, cpu = time.perf_counter(), time.thread_time()
    with inner(*args, **kwargs) as session:
        yield session
    held[0] += time.perf_counter() - started
    held[1] += time.thread_time() - cpu
    held[2] += 1
mailflow.session_scope = timed
atexit.register(lambda: print("pbem-bench-held %.6f %.6f %d" % tuple(held), file=sys.stderr))
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


@dataclass
class PollRun:
    seconds: float
    peak_rss_mb: float
    cpu: float  # user + system seconds of the poll process: what other load does not change
    mails: int
    played: int
    sent: int
    deferred: int
    failed: int
    held: float = 0.0  # seconds inside the mails' transactions (the game locked)
    held_cpu: float = 0.0  # the poll thread's CPU seconds in them (what load does not change)
    transactions: int = 0


@dataclass
class Bench:
    servers: MailServers
    directory: Path
    games: int
    players: int
    connections: int = 1
    game_address: str = ""
    config_path: Path = Path()
    runs: list[PollRun] = field(default_factory=list)
    bots: dict[str, TextBot] = field(default_factory=dict)
    database_url: str = "sqlite:///pbem.db"
    delivered: int = 0
    start_mails: int = 0  # outbox rows up to this id are the start mails

    # --- set-up ---------------------------------------------------------------

    def setup(self) -> None:
        self.game_address = self.servers.new_user("game")
        gm = self.servers.new_user("gm")
        self.config_path = self.directory / "pbem.toml"
        self.config_path.write_text(
            f"""state_dir = "."
database_url = "{self.database_url}"
[mail]
transport = "imap"
game_address = "{self.game_address}"
gm_address = "{gm}"
reply_budget_per_hour = 1000
[mail.imap]
host = "{HOST}"
port = {self.servers.dovecot.imap_port}
user = "{self.game_address}"
password = "secret"
tls = "none"
processed_folder = "{PROCESSED}"
[mail.smtp]
host = "{HOST}"
port = {self.servers.smtp.port}
tls = "none"
connections = {self.connections}
""",
            encoding="utf-8",
        )
        self.config = load_config(self.config_path, env={})
        self.engine = init_db(self.config.database_url)
        ctx = Context(self.config, SystemClock(), self.config.mail.own_addresses)
        for g in range(self.games):
            specs = []
            for s in range(self.players):
                name = f"p{s}"
                specs.append(PlayerSpec(name, self.servers.new_user(f"g{g}-{name}")))
                self.bots[specs[-1].address] = TextBot(make_bot("greedy", g * 10 + s))
            with session_scope(self.engine) as session:
                created = create_game(
                    session,
                    f"bench-{g}",
                    specs,
                    overrides={"placement": "auto"},
                    settings={"timezone": "UTC"},
                )
                notify.game_start(session, ctx, created.game, created.passwords)
        _tell(self.engine, ctx)
        settings = self.config.mail
        report = send_outbox(
            self.engine, open_sender(settings), SystemClock(), settings.game_address
        )
        if report.deferred or report.failed:
            raise SystemExit(f"the start mails were not all sent: {report}")
        with session_scope(self.engine, write=False) as session:
            self.start_mails = max(session.exec(select(Outbox.id)).all(), default=0)

    # --- one round --------------------------------------------------------------

    def deliver_round(self) -> int:
        """Every game's player to move answers the notice; straight into Dovecot (LMTP)."""
        answers: list[tuple[str, bytes]] = []
        for g in range(self.games):
            with session_scope(self.engine, write=False) as session:
                game = find_game(session, f"bench-{g}")
                if game.phase != "playing":
                    continue
                state = load(session, game).state
                address = players_of(session, game)[state.current].address
            notice = self._latest_notice(address)
            body = self.bots[address].write_turn(state)
            answers.append((address, _answer(address, self.game_address, notice, body)))
        with smtplib.LMTP(HOST, self.servers.dovecot.lmtp_port, timeout=30) as lmtp:
            for address, raw in answers:
                lmtp.sendmail(address, [self.game_address], raw)
        self.delivered += len(answers)
        return len(answers)

    def _latest_notice(self, address: str) -> bytes:
        client = self.servers.dovecot.imap(address)
        try:
            client.select_folder("INBOX", readonly=True)
            uids = client.search(["HEADER", "X-Pbem-Kind", "your_turn"])
            return client.fetch([max(uids)], ["BODY.PEEK[HEADER]"])[max(uids)][b"BODY[HEADER]"]
        finally:
            client.logout()

    def poll(self) -> PollRun:
        """One `pbem poll` in a subprocess, under GNU time for its own peak RSS.

        Not wait4/RUSAGE_CHILDREN: Linux starts a child's ru_maxrss at the RSS
        of the parent it was forked from (here this process, with the SMTP
        relay in it), so those figures would be this script's, not pbem's."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
        env["PYTHONPATH"] = str(REPO)
        command = [
            TIME,
            "-v",
            sys.executable,
            "-c",
            TIMED_POLL,
            "poll",
            "--config",
            str(self.config_path),
        ]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=self.directory, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        found = SUMMARY.search(done.stdout)
        peak = PEAK_RSS.search(done.stderr)
        if done.returncode != 0 or found is None or peak is None:
            raise SystemExit(f"pbem poll failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        mails, sent, deferred, failed = map(int, found.groups())
        played = len(PLAYED.findall(done.stdout))
        cpu = sum(float(t) for t in CPU.findall(done.stderr))
        held = HELD.search(done.stderr)
        run = PollRun(
            seconds, int(peak.group(1)) / 1024, cpu, mails, played, sent, deferred, failed,
            float(held.group(1)) if held else 0.0, float(held.group(2)) if held else 0.0,
            int(held.group(3)) if held else 0,
        )  # fmt: skip
        self.runs.append(run)
        return run

    # --- the bare mail work -------------------------------------------------------

    def bare_fetch(self) -> tuple[float, int]:
        """Fetch every processed mail again over IMAP (BODY.PEEK), with pbem's inbox."""
        inbox = ImapInbox(
            HOST,
            self.servers.dovecot.imap_port,
            self.game_address,
            "secret",
            tls="none",
            inbox=PROCESSED,
            processed_folder=PROCESSED,
            rejected_folder="pbem-rejected",
        )
        started = time.perf_counter()
        with inbox:
            mails, _ = inbox.fetch_new(None)
        return time.perf_counter() - started, len(mails)

    def bare_send(self, connections: int) -> tuple[float, int]:
        """Send the reports pbem sent (same bytes, same recipients), in the outbox's
        batches, over ``connections`` connections each."""
        with session_scope(self.engine, write=False) as session:
            rows = session.exec(
                select(Outbox.id, Outbox.recipient, OutboxBody.raw, OutboxBody.raw_format)
                .join(OutboxBody, col(OutboxBody.outbox_id) == col(Outbox.id))
                .where(Outbox.status == "sent", Outbox.id > self.start_mails)  # not the start mails
                .order_by(col(Outbox.id))
            ).all()
        mails = [
            OutgoingMail(str(i), self.game_address, (to,), unpack(raw, fmt))
            for i, to, raw, fmt in rows
        ]
        sender = SmtpSender(HOST, self.servers.smtp.port, tls="none", connections=connections)
        started = time.perf_counter()
        sent = 0
        for start in range(0, len(mails), SEND_BATCH):
            sent += sum(r.ok for r in sender.send(mails[start : start + SEND_BATCH]))
        return time.perf_counter() - started, sent

    # --- profile ------------------------------------------------------------------

    def profile_round(self, path: str) -> None:
        """One more round, polled in this process under cProfile (not timed)."""
        self.deliver_round()
        profiler = cProfile.Profile()
        profiler.enable()
        report = run_cycle(self.engine, self.config, SystemClock())
        profiler.disable()
        profiler.dump_stats(path)
        print(f"\nprofile of one in-process poll ({len(report.mails)} mails, {report.sent} sent):")
        stats = pstats.Stats(profiler).sort_stats("cumulative")
        stats.print_stats(40)


def _tell(engine: object, ctx: Context) -> None:
    """The start mails rendered and queued (a pbem that decides, then tells)."""
    try:
        from pbem.service.tell import telling
    except ImportError:  # a pbem that queued them in the decision's transaction
        return
    telling.tell(engine, ctx)  # type: ignore[arg-type]


def _answer(address: str, game_address: str, notice_header: bytes, body: str) -> bytes:
    """The player's answer to the notice: "Re:" its subject, so the token goes back."""
    notice = BytesParser(policy=policy.default).parsebytes(notice_header, headersonly=True)
    reply = EmailMessage(policy=policy.SMTP)
    reply["From"] = address
    reply["To"] = game_address
    reply["Subject"] = f"Re: {notice['Subject']}"
    reply["Message-ID"] = make_msgid("bench", "players.test")
    reply["In-Reply-To"] = str(notice["Message-ID"])
    reply.set_content(body)
    return bytes(reply)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument(
        "--connections", type=int, default=1, help="SMTP connections per batch (poll and bare)"
    )
    parser.add_argument("--profile", metavar="FILE", help="also cProfile one round in-process")
    args = parser.parse_args()

    if not Path(TIME).is_file():
        print(
            f"scripts/bench/mail.py needs GNU time at {TIME} (apt-get install time)",
            file=sys.stderr,
        )
        return 2
    servers = MailServers.start()
    try:
        with tempfile.TemporaryDirectory(prefix="pbem-bench-") as tmp:
            return run(Bench(servers, Path(tmp), args.games, args.players, args.connections), args)
    finally:
        servers.stop()


def run(bench: Bench, args: argparse.Namespace) -> int:
    started = time.perf_counter()
    bench.setup()
    print(
        f"set-up: {args.games} games x {args.players} players, "
        f"{args.connections} SMTP connection(s) per batch, start mails sent "
        f"({time.perf_counter() - started:.1f} s, not counted)"
    )
    empty = bench.poll()
    print(
        f"an empty `pbem poll` (start-up, connect, nothing to do): {empty.seconds:.2f} s, "
        f"{empty.cpu:.2f} s CPU, peak RSS {empty.peak_rss_mb:.0f} MB"
    )
    bench.runs.clear()
    for r in range(args.rounds):
        delivered = bench.deliver_round()
        run_ = bench.poll()
        print(
            f"round {r + 1:>2}: {delivered} mails delivered; poll {run_.seconds:6.2f} s "
            f"({run_.cpu:.2f} s CPU), {run_.played} turns played, {run_.sent} sent, "
            f"peak RSS {run_.peak_rss_mb:.0f} MB"
        )
    runs = bench.runs
    total = sum(r.seconds for r in runs)
    mails = sum(r.mails for r in runs)
    played = sum(r.played for r in runs)
    sent = sum(r.sent for r in runs)
    peak = max(r.peak_rss_mb for r in runs)
    fetch_s, fetched = bench.bare_fetch()
    send_s, resent = bench.bare_send(args.connections)
    one_s = bench.bare_send(1)[0] if args.connections > 1 else send_s
    bare = fetch_s + send_s
    print()
    print(f"order mails delivered        {bench.delivered}")
    print(f"processed by pbem poll       {mails} ({played} turns played)")
    print(f"total poll time              {total:.1f} s   (target < 60 s)")
    print(f"  without process start-up   {total - len(runs) * empty.seconds:.1f} s")
    print(f"mails per second             {mails / total:.1f}")
    print(f"peak RSS of one poll         {peak:.0f} MB   (target < 150 MB)")
    print(
        f"reports sent                 {sent}  (deferred {sum(r.deferred for r in runs)}, "
        f"failed {sum(r.failed for r in runs)})"
    )
    print(f"bare IMAP fetch              {fetch_s:.1f} s for {fetched} mails (BODY.PEEK)")
    print(
        f"bare SMTP send               {send_s:.2f} s for {resent} mails "
        f"({args.connections} connection(s) per batch of {SEND_BATCH})"
    )
    if args.connections > 1:
        print(f"  over one connection        {one_s:.2f} s")
    print(f"bare mail work               {bare:.1f} s")
    print(f"ratio poll / bare            {total / bare:.1f}x   (goal <= 2x)")
    own = total - len(runs) * empty.seconds
    print(f"  without process start-up   {own / bare:.1f}x")
    print(
        f"per order mail               {1000 * total / max(mails, 1):.0f} ms "
        f"({1000 * own / max(mails, 1):.0f} ms without start-up)"
    )
    held = sum(r.held for r in runs)
    print(
        f"game locked per order mail   {1000 * held / max(mails, 1):.1f} ms "
        f"(inside the mail's transaction, {sum(r.transactions for r in runs)} transactions), "
        f"{1000 * sum(r.held_cpu for r in runs) / max(mails, 1):.1f} ms CPU"
    )
    cpu = sum(r.cpu for r in runs) - len(runs) * empty.cpu
    print(
        f"CPU of the polls             {1000 * cpu / max(mails, 1):.0f} ms per order mail "
        "without start-up (other load does not change it)"
    )
    ok = (
        played == mails == bench.delivered
        and all(r.deferred == r.failed == 0 for r in runs)
        and fetched == mails
        and resent == sent
    )
    if not ok:
        print("error: not every mail was played or not every report was sent", file=sys.stderr)
    if args.profile:
        bench.profile_round(args.profile)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
