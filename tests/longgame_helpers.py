"""A table of players for long-game tests: a database, a Maildir spool and a clock.

``World`` is one pbem installation under a test's tmp_path: its config file
(Maildir transport, SQLite), its database, and a ManualClock that only moves
when a test moves it. ``poll()`` is one run of `pbem poll` at the clock's
time. ``Seat`` is a person at the other end of the mail: it reads its own
Maildir, and answers the mails that ask for orders, either with the orders
a TextBot writes (as pbem's demo does) or, when the test says so, with a
given text or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from pbem.config import Config, load_config
from pbem.mail.maildir import spool_mailbox
from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.rules.engine import turn_of
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ROUND, SETUP_PHASES, GameState
from pbem.service.clock import ManualClock
from pbem.service.context import Context
from pbem.service.ops.poll import PollReport, run_cycle, send_outbox
from pbem.service.play import notify
from pbem.service.play.games import PlayerSpec, create_game, find_game, load, players_of
from pbem.service.tell import telling
from pbem.store import (
    Game,
    OrderEntry,
    Player,
    SeatHolder,
    TurnResult,
    init_db,
    session_scope,
)

START = datetime(2024, 3, 4, 12, 0, tzinfo=UTC)  # a Monday, noon
SECRET = bytes([5]) * 32
GAME_ADDRESS = "pbem@game.test"
GM_ADDRESS = "gm@game.test"
PASSWORD = re.compile(r"password[^:\n]*:\s*([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})", re.IGNORECASE)
ASKS_FOR_ORDERS = ("game_start", "setup_prompt", "your_turn")


@dataclass
class Mail:
    """One mail as a player receives it."""

    kind: str  # the X-Pbem-Kind header
    subject: str
    text: str  # the plain-text part
    message_id: str
    msg: EmailMessage

    def __repr__(self) -> str:  # short, for assertion messages
        return f"<{self.kind}: {self.subject}>"

    @property
    def untokened(self) -> str:
        """The subject without the reply token a player's copy carries at its end."""
        return re.sub(r" \(token [0-9A-Za-z]+\)$", "", self.subject)

    @property
    def flat(self) -> str:
        """The text with every run of blanks and line ends as one blank (wrapping aside)."""
        return " ".join(self.text.split())

    @property
    def sent_at(self) -> datetime:
        """The Date header: pbem's clock when the mail was queued."""
        return self.msg["Date"].datetime


def parse_mail(raw: bytes) -> Mail:
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    part = msg.get_body(preferencelist=("plain",))
    text = part.get_content() if part is not None else ""
    return Mail(
        kind=str(msg.get("X-Pbem-Kind", "")),
        subject=" ".join(str(msg.get("Subject", "")).split()),
        text=text,
        message_id=str(msg.get("Message-ID", "")),
        msg=msg,  # type: ignore[arg-type]
    )


def write_config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pbem.toml"
    path.write_text(
        f'state_dir = "{folder}"\n'
        f'database_url = "sqlite:///{folder / "pbem.db"}"\n'
        "[mail]\n"
        'transport = "maildir"\n'
        f'maildir_root = "{folder / "mail"}"\n'
        f'game_address = "{GAME_ADDRESS}"\n'
        f'gm_address = "{GM_ADDRESS}"\n'
        "reply_budget_per_hour = 1000\n",
        encoding="utf-8",
    )
    (folder / "mail").mkdir(exist_ok=True)
    return path


class World:
    """One pbem installation, and the clock the test moves."""

    def __init__(self, folder: Path, start: datetime = START) -> None:
        self.folder = folder
        self.config_path = write_config(folder)
        self.config: Config = load_config(self.config_path, env={})
        self.engine = init_db(self.config.database_url)
        self.clock = ManualClock(start)
        self.ctx = Context(self.config, self.clock, self.config.mail.own_addresses)
        self.root = Path(self.config.mail.maildir_root)
        self.polls: list[PollReport] = []

    # ------------------------------------------------------------ time, polls
    def advance(self, **delta: float) -> datetime:
        return self.clock.advance(**delta)

    def poll(self) -> PollReport:
        report = run_cycle(self.engine, self.config, self.clock)
        self.polls.append(report)
        return report

    def poll_until(self, when: datetime, every_hours: float = 12) -> PollReport:
        """Polls every few hours (as cron would, so no outage) up to ``when``,
        then one at ``when``; returns that last poll's report."""
        step = timedelta(hours=every_hours)
        while self.clock.now() + step < when:
            self.clock.advance(hours=every_hours)
            self.poll()
        self.clock.set(when)
        return self.poll()

    def flush(self) -> None:
        """Tell what was decided, then send the outbox now (what the CLI leaves
        for the next poll)."""
        from pbem.mail.settings import open_sender

        telling.tell(self.engine, self.ctx)
        settings = self.config.mail
        send_outbox(self.engine, open_sender(settings), self.clock, settings.game_address)

    # -------------------------------------------------------------- database
    @contextmanager
    def session(self, write: bool = True) -> Iterator[Session]:
        with session_scope(self.engine, write=write) as session:
            yield session

    def create(
        self,
        name: str,
        players: list[str],
        *,
        settings: dict[str, Any] | None = None,
        overrides: dict[str, str] | None = None,
        secret: bytes = SECRET,
        dice_version: str = "v1",  # the outcomes these tests pin were rolled with v1
    ) -> dict[str, str]:
        """A game with these players (addresses name@players.test), its start mails sent."""
        with self.session() as session:
            created = create_game(
                session,
                name,
                [PlayerSpec(p, address_of(p)) for p in players],
                overrides=overrides if overrides is not None else {"placement": "auto"},
                gm_address=GM_ADDRESS,
                settings=settings,
                secret=secret,
                dice_version=dice_version,
            )
            notify.game_start(session, self.ctx, created.game, created.passwords)
        self.flush()
        return created.passwords

    def open_game(
        self,
        name: str,
        seats: int,
        settings: dict[str, Any] | None = None,
        overrides: dict[str, str] | None = None,
    ) -> None:
        with self.session() as session:
            create_game(
                session,
                name,
                [],
                overrides=overrides or {},
                gm_address=GM_ADDRESS,
                settings=settings,
                secret=SECRET,
                open_seats=seats,
                dice_version="v1",
            )

    def gm(self, action: Callable[..., str], game: str, *args: Any) -> str:
        """A GM command (pbem.service.play.gm) at the clock's time; its mails sent."""
        with self.session() as session:
            result = action(session, self.ctx, find_game(session, game), *args)
        self.flush()
        return result

    def game(self, name: str) -> Game:
        with self.session(write=False) as session:
            return find_game(session, name)

    def state(self, name: str) -> GameState:
        with self.session(write=False) as session:
            return load(session, find_game(session, name)).state

    def replayed_record(self, name: str) -> str:
        """The game's record with its secret (`pbem export --with-secret --force`),
        once its replay from the order log matched every stored turn."""
        from pbem.service.play.archive import export_record, replay_game

        with self.session() as session:
            game = find_game(session, name)
            assert replay_game(session, game).ok
            return export_record(session, game, with_secret=True, force=True)

    def players(self, name: str) -> list[Player]:
        with self.session(write=False) as session:
            return players_of(session, find_game(session, name))

    def player(self, game: str, name: str) -> Player:
        return next(p for p in self.players(game) if p.name == name)

    def log(self, name: str) -> list[OrderEntry]:
        with self.session(write=False) as session:
            game = find_game(session, name)
            query = select(OrderEntry).where(OrderEntry.game_id == game.id)
            return list(session.exec(query.order_by(col(OrderEntry.seq))))

    def chain(self, name: str) -> list[tuple[int, int, int | None, str]]:
        """(log seq, turn, seat, state hash) of every stored step."""
        with self.session(write=False) as session:
            game = find_game(session, name)
            query = select(TurnResult).where(TurnResult.game_id == game.id)
            rows = session.exec(query.order_by(col(TurnResult.seq)))
            return [(r.seq, r.turn, r.seat, r.state_hash) for r in rows]

    def holders(self, name: str) -> list[tuple[int, str, str, int, int | None]]:
        """(seat, name, address, from turn, to turn) of every seat holder."""
        with self.session(write=False) as session:
            game = find_game(session, name)
            query = select(SeatHolder).where(SeatHolder.game_id == game.id)
            rows = session.exec(query.order_by(col(SeatHolder.id)))
            return [(r.seat, r.name, r.address, r.from_turn, r.to_turn) for r in rows]

    # ------------------------------------------------------------------ mail
    def take(self, address: str) -> list[Mail]:
        """Every mail waiting for ``address``, oldest first, taken out of its Maildir."""
        from pbem.mail.maildir import _delivery_order

        box = spool_mailbox(self.root, address)
        mails = []
        for key in sorted(box.keys(), key=_delivery_order):
            mails.append(parse_mail(box.get_bytes(key)))
            box.remove(key)
        return mails

    def send(
        self,
        sender: str,
        body: str,
        subject: str = "orders",
        in_reply_to: str | None = None,
    ) -> str:
        """A mail from ``sender`` into the game's inbox; returns its Message-ID."""
        msg = EmailMessage(policy=policy.SMTP)
        msg["From"] = sender
        msg["To"] = GAME_ADDRESS
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid("player", "players.test")
        msg["Date"] = self.clock.now()
        if in_reply_to:
            msg["In-Reply-To"] = in_reply_to
        msg.set_content(body)
        spool_mailbox(self.root, GAME_ADDRESS).add(bytes(msg))
        return str(msg["Message-ID"])


def address_of(name: str) -> str:
    return f"{name}@players.test"


@dataclass
class Seat:
    """A player at the end of the mail. ``auto``: the TextBot answers every
    mail that asks for orders; otherwise the test writes the answers."""

    world: World
    game: str
    name: str
    password: str = ""
    bot: TextBot | None = None
    auto: bool = True
    address: str = ""
    received: list[Mail] = field(default_factory=list)
    unanswered: list[Mail] = field(default_factory=list)  # mails that ask for orders

    def __post_init__(self) -> None:
        self.address = self.address or address_of(self.name)

    def read(self) -> list[Mail]:
        """New mail, kept in ``received`` too; picks up a password from a game-start mail."""
        mails = self.world.take(self.address)
        for mail in mails:
            if mail.kind == "game_start" and (found := PASSWORD.search(mail.text)):
                self.password = found.group(1)
        self.received += mails
        self.unanswered += [m for m in mails if m.kind in ASKS_FOR_ORDERS + ("error_reply",)]
        return mails

    def kinds(self) -> list[str]:
        return [m.kind for m in self.received]

    def answer(self) -> int:
        """The bot's orders to the latest mail that asks for them (one mail at most)."""
        if not self.auto or self.bot is None or not self.unanswered:
            return 0
        asking, self.unanswered = self.unanswered, []
        state = self.world.state(self.game)
        seat = self.seat_no(state)
        if state.phase in SETUP_PHASES:
            body = f"PASSWORD {self.password}\n" + self.bot.write_setup(state, seat)
            self.world.send(self.address, body, f"Re: {asking[-1].subject}")
            return 1
        kinds: tuple[str, ...] = ("your_turn",)
        if state.phase == ROUND:  # freestyle: a seat still to move plays on the board now,
            if seat not in waiting_for(state):  # and tries again when refused (another
                return 0  # player's move came first and changed the board)
            state, kinds = turn_of(state, seat), ("your_turn", "error_reply")
        if state.phase == "over" or state.current != seat:
            return 0
        turn = [m for m in asking if m.kind in kinds]
        if not turn:
            return 0
        self.reply(turn[-1], self.bot.write_turn(state))
        return 1

    def reply(self, mail: Mail, body: str) -> str:
        """Reply to one of our mails (its subject carries the turn token)."""
        subject = mail.subject if mail.subject.lower().startswith("re:") else f"Re: {mail.subject}"
        return self.world.send(self.address, body, subject, in_reply_to=mail.message_id)

    def write(self, body: str, subject: str = "") -> str:
        """A fresh mail (not a reply): it needs the password to be accepted."""
        subject = subject or f"[{self.game}] orders"
        return self.world.send(self.address, f"PASSWORD {self.password}\n{body}", subject)

    def seat_no(self, state: GameState) -> int:
        return next(i for i, p in enumerate(state.players) if p.name == self.name)

    def latest(self, kind: str) -> Mail:
        return [m for m in self.received if m.kind == kind][-1]


class Table:
    """The players of one game and the loop: read mail, answer, poll."""

    def __init__(self, world: World, game: str, names: list[str], seed: int = 11) -> None:
        self.world = world
        self.game = game
        self.seats = {
            n: Seat(world, game, n, bot=TextBot(make_bot("greedy", seed + i)))
            for i, n in enumerate(names)
        }
        self.gm: list[Mail] = []

    def __getitem__(self, name: str) -> Seat:
        return self.seats[name]

    def mover(self) -> str:
        """The name of the player whose turn it is."""
        state = self.world.state(self.game)
        return state.players[state.current].name

    def silence(self, *names: str) -> None:
        """These players stop answering (all of them when none are named)."""
        for name in names or tuple(self.seats):
            self.seats[name].auto = False

    def read_all(self) -> dict[str, list[Mail]]:
        new = {name: seat.read() for name, seat in self.seats.items()}
        self.gm += self.world.take(GM_ADDRESS)
        return new

    def step(self) -> PollReport:
        """Everyone reads their mail and the bots answer; then one poll."""
        self.read_all()
        for seat in self.seats.values():
            seat.answer()
        return self.world.poll()

    def run(self, until: Callable[[], bool], limit: int = 60) -> None:
        """Steps (the clock standing still) until ``until()`` holds."""
        for _ in range(limit):
            if until():
                return
            self.step()
        raise AssertionError(f"{self.game}: condition not reached in {limit} polls")

    def mails(self, name: str, kind: str | None = None) -> list[Mail]:
        seat = self.seats[name]
        return [m for m in seat.received if kind is None or m.kind == kind]

    def clear(self) -> None:
        """Forget the mail read so far (mails asking for orders stay to be answered)."""
        self.read_all()
        for seat in self.seats.values():
            seat.received.clear()
        self.gm.clear()


def new_table(
    world: World,
    game: str,
    names: list[str],
    *,
    settings: dict[str, Any] | None = None,
    overrides: dict[str, str] | None = None,
    seed: int = 11,
    dice_version: str = "v1",
) -> Table:
    """A running game with bot players (placement automatic unless overridden),
    its game-start mails delivered, the passwords known."""
    passwords = world.create(
        game, names, settings=settings, overrides=overrides, dice_version=dice_version
    )
    table = Table(world, game, names, seed)
    for name, seat in table.seats.items():
        seat.password = passwords[name]
    return table
