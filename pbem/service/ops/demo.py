"""`pbem demo`: a whole game by mail on the embedded defaults.

Four bot players, each with a Maildir of its own under a local spool, read
the mail pbem sends them and answer like people would: the game-start mail
with their setup orders and password, every "your turn" notice with a reply
carrying its turn token. Each answer goes into the game's inbox; `poll`
runs it through the whole pipeline (record, decode, authenticate, parse,
adjudicate, store, outbox) and the reports land in the bots' mailboxes.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid
from pathlib import Path

from pbem.config import Config, load_config
from pbem.mail.maildir import spool_mailbox
from pbem.mail.settings import MailSettings
from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.rules.engine import turn_of
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES
from pbem.service.clock import SystemClock
from pbem.service.context import Context
from pbem.service.ops.poll import run_cycle, send_outbox
from pbem.service.play import notify
from pbem.service.play.games import PlayerSpec, create_game, find_game, load
from pbem.service.tell import telling
from pbem.store import init_db, session_scope
from pbem.vocab import GamePhase, InboundStatus

BOTS = ("ada", "brook", "cyrus", "dana")
PASSWORD = re.compile(r"password[^:\n]*:\s*([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})", re.IGNORECASE)


@dataclass
class DemoResult:
    game: str
    winner: str | None
    turns: int
    reports: Path
    mail_root: Path


def demo_config(directory: Path) -> Config:
    base = load_config(None, env={})
    mail: MailSettings = replace(
        base.mail,
        transport="maildir",
        maildir_root=directory / "mail",
        game_address="pbem@demo.localhost",
        gm_address="gm@demo.localhost",
        reply_budget_per_hour=100_000,  # bots answer far faster than people
    )
    return replace(
        base, database_url=f"sqlite:///{directory / 'pbem.db'}", state_dir=directory, mail=mail
    )


def run_demo(
    directory: Path, seed: int = 7, max_turns: int = 2000, say: Callable[[str], None] = print
) -> DemoResult:
    config = demo_config(directory)
    Path(config.mail.maildir_root).mkdir(parents=True, exist_ok=True)
    engine = init_db(config.database_url)
    clock = SystemClock()
    ctx = Context(config, clock, config.mail.own_addresses)
    with session_scope(engine) as session:
        name = _free_name(session)
        created = create_game(
            session,
            name,
            [PlayerSpec(b, f"{b}@demo.localhost") for b in BOTS],
            gm_address=config.mail.gm_address,
            settings={"timezone": "UTC"},
        )
        notify.game_start(session, ctx, created.game, created.passwords)
    telling.tell(engine, ctx)
    say(f"game {name}: {', '.join(BOTS)}; mail spool {config.mail.maildir_root}")
    settings = config.mail
    from pbem.mail.settings import open_sender

    send_outbox(engine, open_sender(settings), clock, settings.game_address)
    players = {
        b: Player(b, f"{b}@demo.localhost", TextBot(make_bot("greedy", seed + i)))
        for i, b in enumerate(BOTS)
    }
    inbox = spool_mailbox(config.mail.maildir_root, config.mail.game_address)
    reports = directory / "reports" / name
    reports.mkdir(parents=True, exist_ok=True)
    seen_turns: set[int] = set()
    for _ in range(max_turns * 3):
        wrote = 0
        for player in players.values():
            wrote += player.answer(engine, config, name, inbox)
        report = run_cycle(engine, config, clock)
        for outcome in report.mails:
            if outcome.status == InboundStatus.REJECTED:
                say(f"  mail {outcome.message_id} rejected: {outcome.outcome}")
        _save_reports(config, reports, seen_turns, say)
        with session_scope(engine, write=False) as session:
            game = find_game(session, name)
            if game.phase == GamePhase.OVER:
                state = load(session, game).state
                winner = state.players[state.winner].name if state.winner is not None else None
                say(f"game over after {state.turn} turns: {winner} wins")
                say(f"reports (HTML, one per turn): {reports}")
                return DemoResult(name, winner, state.turn, reports, config.mail.maildir_root)
            if game.turn > max_turns:
                break
        if not wrote and not report.mails:
            break
    say("the demo stopped before the game ended")
    return DemoResult(name, None, 0, reports, config.mail.maildir_root)


def _free_name(session) -> str:
    from sqlmodel import select

    from pbem.store import Game

    taken = {g.name for g in session.exec(select(Game))}
    i = 1
    while f"demo-{i}" in taken:
        i += 1
    return f"demo-{i}"


@dataclass
class Player:
    """A bot at the other end of the mail: reads its Maildir, answers."""

    name: str
    address: str
    bot: TextBot
    password: str = ""

    def answer(self, engine, config: Config, game_name: str, inbox) -> int:
        box = spool_mailbox(config.mail.maildir_root, self.address)
        written = 0
        for key in sorted(box.keys()):
            raw = box.get_bytes(key)
            box.remove(key)
            msg = BytesParser(policy=policy.default).parsebytes(raw)
            kind = str(msg.get("X-Pbem-Kind", ""))
            text = _plain(msg)
            if kind == "game_start":
                found = PASSWORD.search(text)
                if found:
                    self.password = found.group(1)
            if kind not in ("game_start", "setup_prompt", "your_turn", "reminder"):
                continue
            body = self._orders(engine, game_name)
            if body is None:
                continue
            reply = EmailMessage(policy=policy.SMTP)
            reply["From"] = self.address
            reply["To"] = config.mail.game_address
            subject = str(msg["Subject"])
            reply["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
            reply["Message-ID"] = make_msgid(self.name, "demo.localhost")
            if msg["Message-ID"]:
                reply["In-Reply-To"] = str(msg["Message-ID"])
            reply.set_content(body)
            inbox.add(bytes(reply))
            written += 1
        return written

    def _orders(self, engine, game_name: str) -> str | None:
        """What this player sends now: the bot looks at the board (as a player
        reads it from the report) and writes its orders."""
        with session_scope(engine, write=False) as session:
            game = find_game(session, game_name)
            state = load(session, game).state
        seat = next(i for i, p in enumerate(state.players) if p.name == self.name)
        if state.phase in SETUP_PHASES:
            return f"PASSWORD {self.password}\n" + self.bot.write_setup(state, seat)
        if state.phase == ROUND and seat in waiting_for(state):  # freestyle: any still to move
            state = turn_of(state, seat)
        if state.phase == ENDED or state.current != seat:
            return None
        return self.bot.write_turn(state)


def _plain(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


def _save_reports(config: Config, folder: Path, seen: set[int], say: Callable[[str], None]) -> None:
    """The GM's copy of each turn report, as an HTML file with its picture inline."""
    box = spool_mailbox(config.mail.maildir_root, config.mail.gm_address)
    for key in sorted(box.keys()):
        msg = BytesParser(policy=policy.default).parsebytes(box.get_bytes(key))
        box.remove(key)
        if str(msg.get("X-Pbem-Kind", "")) != "turn_report":
            continue
        subject = " ".join(str(msg["Subject"]).split())
        turn = int(m.group(1)) if (m := re.search(r"Turn (\d+)", subject)) else len(seen) + 1
        if turn in seen:
            continue
        seen.add(turn)
        say(f"  {subject}")
        (folder / f"turn-{turn:04d}.html").write_text(standalone_html(msg), encoding="utf-8")


def standalone_html(msg: EmailMessage) -> str:
    """The HTML part with every cid: picture turned into a data: URI."""
    html_part = msg.get_body(preferencelist=("html",))
    html = html_part.get_content() if html_part is not None else "<pre></pre>"
    for part in msg.walk():
        cid = str(part.get("Content-ID", "")).strip("<>")
        if cid and part.get_content_maintype() == "image":
            data = base64.b64encode(part.get_content()).decode()
            html = html.replace(f"cid:{cid}", f"data:{part.get_content_type()};base64,{data}")
    return html
