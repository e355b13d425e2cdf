"""The world of the mail-loop tests (issue 5): real servers, a pbem config
pointing at them, and players at the other end of the mail.

Dovecot (IMAP + LMTP) and the SMTP relay come from tests/fixtures_mail.py.
``MailWorld`` adds a game inbox and a GM mailbox on them, writes a
``pbem.toml`` with transport "imap" (plain text on loopback, said so
explicitly), and opens the database that both the in-process poll and a
``pbem`` subprocess use. ``MailPlayer`` is a person's mail client: it reads
its mailbox over IMAP and sends over SMTP; with a bot it answers its mail
with orders like the players of `pbem demo` do.
"""

from __future__ import annotations

import os
import re
import smtplib
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
from pathlib import Path
from typing import TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbem.config import Config, load_config
from pbem.mail.settings import open_sender
from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.rules.state import ENDED, SETUP_PHASES
from pbem.service.clock import ManualClock
from pbem.service.context import Context
from pbem.service.ops.poll import PollReport, poll_lock, run_cycle, send_outbox
from pbem.service.play import notify
from pbem.service.play.games import PlayerSpec, create_game, find_game, load
from pbem.service.tell import telling
from pbem.store import Game, InboundMessage, OrderEntry, Outbox, init_db, session_scope
from pbem.testing.mailservers import HOST, MailServers

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[1]
PROCESSED_FOLDER = "pbem-processed"
REJECTED_FOLDER = "pbem-rejected"
PASSWORD_LINE = re.compile(
    r"password[^:\n]*:\s*([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})", re.IGNORECASE
)

# A `pbem poll` that dies (os._exit) right after the first mail's transaction
# has committed and before the mail is moved: a process killed at the worst time.
CRASH_AFTER_COMMIT = """
import os, sys
import pbem.service.ops.poll as poll
committed = poll.process_mail
def process_then_die(engine, ctx, mail, held=None):
    committed(engine, ctx, mail, held)  # the mail's one transaction has committed here
    os._exit(9)
poll.process_mail = process_then_die
from pbem.cli import app
app(sys.argv[1:], prog_name="pbem")
"""


def write_config(
    path: Path,
    servers: MailServers,
    game_address: str,
    gm_address: str,
    *,
    imap_port: int | None = None,
    smtp_port: int | None = None,
    reply_budget: int = 1000,
    reply_to_unknown: bool = False,
) -> Path:
    """A pbem.toml for the loopback servers (database and state next to it)."""
    path.write_text(
        f"""
state_dir = "."
database_url = "sqlite:///pbem.db"

[mail]
transport = "imap"
game_address = "{game_address}"
gm_address = "{gm_address}"
from_name = "pbem test"
reply_budget_per_hour = {reply_budget}
alert_budget_per_hour = 5
reply_to_unknown = {"true" if reply_to_unknown else "false"}

[mail.imap]
host = "{HOST}"
port = {imap_port or servers.dovecot.imap_port}
user = "{game_address}"
password = "secret"
tls = "none"
timeout = 10
processed_folder = "{PROCESSED_FOLDER}"
rejected_folder = "{REJECTED_FOLDER}"

[mail.smtp]
host = "{HOST}"
port = {smtp_port or servers.smtp.port}
tls = "none"
timeout = 10
""",
        encoding="utf-8",
    )
    return path


def parse(raw: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(raw)  # type: ignore[return-value]


def plain_text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""  # type: ignore[union-attr]


def kind(msg: EmailMessage) -> str:
    return str(msg.get("X-Pbem-Kind", ""))


def order_mail(
    sender: str,
    to: str,
    subject: str,
    body: str,
    *,
    message_id: str | None = None,
    in_reply_to: str | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    """A plain order mail as a mail program writes it."""
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = message_id or make_msgid("order", "players.test")
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content(body)
    return bytes(msg)


@dataclass
class MailPlayer:
    """A person's mail client: reads over IMAP (never marking mail seen), sends over SMTP."""

    name: str
    address: str
    servers: MailServers
    bot: TextBot | None = None
    password: str = ""
    last_uid: int = 0
    sent: list[str] = field(default_factory=list)  # Message-IDs of the mails sent

    def mailbox(self) -> list[EmailMessage]:
        """Every mail in the INBOX, oldest first."""
        return [parse(m.raw) for m in self.servers.read_mailbox(self.address)]

    def new_mail(self) -> list[EmailMessage]:
        """The mail that arrived since the last call."""
        stored = [m for m in self.servers.read_mailbox(self.address) if m.uid > self.last_uid]
        if stored:
            self.last_uid = stored[-1].uid
        return [parse(m.raw) for m in stored]

    def send(self, to: str, raw: bytes, envelope_from: str | None = None) -> str:
        """Hand one mail to the SMTP relay; returns its Message-ID."""
        with smtplib.SMTP(HOST, self.servers.smtp.port, timeout=10) as client:
            client.sendmail(self.address if envelope_from is None else envelope_from, [to], raw)
        mid = str(parse(raw)["Message-ID"])
        self.sent.append(mid)
        return mid

    def reply_mail(self, to: str, notice: EmailMessage, body: str) -> bytes:
        """An answer to a mail from pbem: "Re:" its subject (so the token goes back), threaded."""
        subject = str(notice["Subject"])
        subject = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        return order_mail(self.address, to, subject, body, in_reply_to=str(notice["Message-ID"]))

    def reply(self, to: str, notice: EmailMessage, body: str) -> str:
        return self.send(to, self.reply_mail(to, notice, body))

    def latest(self, wanted: str) -> EmailMessage:
        """The newest mail of one kind (e.g. "your_turn") in the mailbox."""
        return [m for m in self.mailbox() if kind(m) == wanted][-1]

    def answer(self, world: MailWorld, game_name: str) -> int:
        """Read the new mail and answer what asks for orders, like a player would.

        The bot looks at the board (the stored state, as a player reads it
        from the reports) and writes the orders; setup orders carry the
        password from the game-start mail, turn orders rely on the token
        in the subject of the "your turn" notice they answer."""
        assert self.bot is not None
        written = 0
        for msg in self.new_mail():
            if kind(msg) == "game_start" and (found := PASSWORD_LINE.search(plain_text(msg))):
                self.password = found.group(1)
            state = world.state(game_name)
            seat = next(i for i, p in enumerate(state.players) if p.name == self.name)
            if kind(msg) in ("game_start", "setup_prompt") and state.phase in SETUP_PHASES:
                body = f"PASSWORD {self.password}\n" + self.bot.write_setup(state, seat)
            elif kind(msg) == "your_turn" and state.phase != ENDED and state.current == seat:
                body = self.bot.write_turn(state)
            else:
                continue
            self.reply(world.game_address, msg, body)
            written += 1
        return written


@dataclass
class MailWorld:
    """pbem configured for the loopback servers, with its own game inbox and database."""

    servers: MailServers
    directory: Path
    config_path: Path
    config: Config
    engine: Engine
    clock: ManualClock
    game_address: str
    gm_address: str

    @classmethod
    def create(cls, servers: MailServers, directory: Path, **config_options: object) -> MailWorld:
        game_address = servers.new_user("game")
        gm_address = servers.new_user("gm")
        path = write_config(
            directory / "pbem.toml", servers, game_address, gm_address, **config_options
        )  # type: ignore[arg-type]
        config = load_config(path, env={})
        engine = init_db(config.database_url)
        # The manual clock starts at the real time, so mail queued here and mail
        # queued by a `pbem` subprocess (on the system clock) are due alike.
        clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
        return cls(servers, directory, path, config, engine, clock, game_address, gm_address)

    @property
    def ctx(self) -> Context:
        return Context(self.config, self.clock, self.config.mail.own_addresses)

    # --- the service ----------------------------------------------------------

    def poll(self) -> PollReport:
        """One `pbem poll` cycle in this process, on the manual clock."""
        with poll_lock(self.config.state_dir):
            return run_cycle(self.engine, self.config, self.clock)

    def send_outbox(self) -> PollReport:
        settings = self.config.mail
        return send_outbox(self.engine, open_sender(settings), self.clock, settings.game_address)

    def pbem(
        self,
        *args: str,
        script: str | None = None,
        config: Path | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """The real `pbem` command (``script``: a `python -c` wrapper instead) on this config."""
        return subprocess.run(
            self.command(*args, script=script, config=config),
            cwd=self.directory,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def command(
        self, *args: str, script: str | None = None, config: Path | None = None
    ) -> list[str]:
        python = [sys.executable, "-c", script] if script else [sys.executable, "-m", "pbem"]
        return [*python, *args, "--config", str(config or self.config_path)]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        env["PYTHONUNBUFFERED"] = "1"
        return env

    # --- games ----------------------------------------------------------------

    def new_game(
        self,
        name: str,
        names: list[str],
        *,
        overrides: dict[str, str] | None = None,
        bots: bool = False,
        seed: int = 11,
    ) -> dict[str, MailPlayer]:
        """A game of these players (each with a fresh mailbox), its start mails sent."""
        players = {
            n: MailPlayer(
                n,
                self.servers.new_user(n),
                self.servers,
                TextBot(make_bot("greedy", seed + i)) if bots else None,
            )
            for i, n in enumerate(names)
        }
        with session_scope(self.engine) as session:
            created = create_game(
                session,
                name,
                [PlayerSpec(p.name, p.address) for p in players.values()],
                overrides=overrides or {},
                gm_address=self.gm_address,
                settings={"timezone": "UTC"},
            )
            notify.game_start(session, self.ctx, created.game, created.passwords)
        telling.tell(self.engine, self.ctx)  # the start mails, rendered after the commit
        for player in players.values():
            player.password = created.passwords[player.name]
        report = self.send_outbox()
        assert report.sent == len(names) + (0 if self._in_setup(name) else 1), report
        return players

    def _in_setup(self, name: str) -> bool:
        return self.state(name).phase in SETUP_PHASES

    def play(self, name: str, players: dict[str, MailPlayer], turns: int) -> None:
        """The bots answer their mail and pbem polls until ``turns`` more turns are played."""
        target = self.game(name).turn + turns
        for _ in range(2 * turns + 2):
            for player in players.values():
                player.answer(self, name)
            self.poll()
            if self.game(name).turn >= target:
                return
        raise AssertionError(f"{name} is stuck at turn {self.game(name).turn}")

    def to_move(self, name: str, players: dict[str, MailPlayer]) -> MailPlayer:
        state = self.state(name)
        return players[state.players[state.current].name]

    def turn_mail(self, name: str, players: dict[str, MailPlayer]) -> tuple[MailPlayer, bytes]:
        """The player to move and their answer to the "your turn" notice (not sent yet)."""
        player = self.to_move(name, players)
        assert player.bot is not None
        body = player.bot.write_turn(self.state(name))
        return player, player.reply_mail(self.game_address, player.latest("your_turn"), body)

    def state(self, name: str):  # noqa: ANN201 - GameState
        with session_scope(self.engine, write=False) as session:
            return load(session, find_game(session, name)).state

    def game(self, name: str) -> Game:
        with session_scope(self.engine, write=False) as session:
            return find_game(session, name)

    def order_log(self, name: str) -> list[OrderEntry]:
        with session_scope(self.engine, write=False) as session:
            game = find_game(session, name)
            query = select(OrderEntry).where(OrderEntry.game_id == game.id)
            return list(session.exec(query.order_by(col(OrderEntry.seq))))

    def inbound(self) -> list[InboundMessage]:
        with session_scope(self.engine, write=False) as session:
            return list(session.exec(select(InboundMessage).order_by(col(InboundMessage.id))))

    def outbox(self) -> list[Outbox]:
        with session_scope(self.engine, write=False) as session:
            return list(session.exec(select(Outbox).order_by(col(Outbox.id))))

    # --- the game's own mailbox -------------------------------------------------

    def folder(self, folder: str = "INBOX") -> list[str]:
        """Message-IDs of the game inbox's folder (INBOX, processed or rejected)."""
        stored = self.servers.read_mailbox(self.game_address, folder)
        return [str(parse(m.raw)["Message-ID"]) for m in stored]

    def processed(self) -> list[str]:
        return self.folder(PROCESSED_FOLDER)

    def rejected(self) -> list[str]:
        return self.folder(REJECTED_FOLDER)


def wait_until(condition: Callable[[], T], timeout: float = 30.0, what: str = "") -> T:
    """Poll ``condition`` until it returns something true (a bound, not a speed test)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {timeout:g} s: {what or condition}")
        time.sleep(0.1)


def message_ids(mails: list[EmailMessage]) -> Counter[str]:
    """How often each Message-ID arrived: a report sent twice shows as a 2."""
    return Counter(str(m["Message-ID"]) for m in mails)


def replies_to(mails: list[EmailMessage], message_id: str) -> list[EmailMessage]:
    return [m for m in mails if str(m.get("In-Reply-To", "")) == message_id]
