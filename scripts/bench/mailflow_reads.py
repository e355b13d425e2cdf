"""How often one order mail is identified, its game rebuilt, its players read.

    python scripts/bench/mailflow_reads.py              # 3 players, 6 turns
    python scripts/bench/mailflow_reads.py --turns 12

Plays whole games in process (Maildir transport, SQLite, a manual clock):
setup orders of a game in deadline mode, then played turns of a game whose
orders are adjudicated at once (bots write the orders, each with its
PASSWORD line). Around the inbox stage of each poll it counts, per mail:

- identify: calls of ``mail.identity.identify`` and ``content_hash`` (the
  hash that names a mail);
- loads: calls of ``games.load`` (the game now: its snapshot, or its log
  replayed); snapshots: ``GameState.from_dict`` (a state rebuilt from a
  snapshot);
- players: SELECTs of the ``player`` table (players_of: the calls that ask);
- submits: calls of ``games.submit`` (a setup mail in deadline mode was
  played twice: a dry run, then for real).

Run it with PBEM_NATIVE=0 so that the counters reach every caller.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sqlalchemy import event  # noqa: E402

from pbem.config import load_config  # noqa: E402
from pbem.mail import identity  # noqa: E402
from pbem.mail.maildir import spool_mailbox  # noqa: E402
from pbem.orders import TextBot  # noqa: E402
from pbem.rules.bots import make_bot  # noqa: E402
from pbem.rules.state import SETUP_PHASES, GameState  # noqa: E402
from pbem.service.clock import ManualClock  # noqa: E402
from pbem.service.context import Context  # noqa: E402
from pbem.service.ops import poll
from pbem.service.play import games, notify
from pbem.service.play.games import PlayerSpec, create_game, find_game, load  # noqa: E402
from pbem.store import init_db, session_scope  # noqa: E402

GAME_ADDRESS = "pbem@game.test"
NAMES = ("ann", "bob", "cat")


class Counts:
    """Counters that run only while a mail of the inbox is handled."""

    def __init__(self) -> None:
        self.on = False
        self.seen: Counter[str] = Counter()

    def count(self, what: str) -> None:
        if self.on:
            self.seen[what] += 1

    def wrap(self, owner: Any, name: str, what: str) -> None:
        real: Callable[..., Any] = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count(what)
            return real(*args, **kwargs)

        setattr(owner, name, counted)

    @contextmanager
    def counting(self) -> Iterator[None]:
        self.on = True
        try:
            yield
        finally:
            self.on = False


def _install(counts: Counts, engine: Any) -> None:
    for module in {identity, *_importers_of("identify")}:
        counts.wrap(module, "identify", "identify")
    counts.wrap(identity, "content_hash", "content_hash")
    for name, what in (("load", "loads"), ("players_of", "players_of"), ("submit", "submits")):
        real = getattr(games, name)
        for module in [games, *_importers_of(name)]:
            if vars(module)[name] is real:
                counts.wrap(module, name, what)
    real_from_dict = GameState.from_dict.__func__  # type: ignore[attr-defined]

    def from_dict(cls: type[GameState], *args: Any, **kwargs: Any) -> GameState:
        counts.count("snapshots")
        return real_from_dict(cls, *args, **kwargs)  # type: ignore[no-any-return]

    GameState.from_dict = classmethod(from_dict)  # type: ignore[method-assign,assignment]

    @event.listens_for(engine, "before_cursor_execute")
    def _on_execute(_c: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("SELECT") and "FROM player " in statement + " ":
            counts.count("players")


def _importers_of(name: str) -> list[Any]:
    """Service modules that imported ``name`` by name (their own reference)."""
    found = []
    for key, module in list(sys.modules.items()):
        if key.startswith("pbem.service.") and key != "pbem.service.play.games":
            if name in vars(module) and callable(vars(module)[name]):
                found.append(module)
    return found


def _config(folder: Path) -> Path:
    path = folder / "pbem.toml"
    path.write_text(
        f'state_dir = "{folder}"\n'
        f'database_url = "sqlite:///{folder / "pbem.db"}"\n'
        "[mail]\n"
        'transport = "maildir"\n'
        f'maildir_root = "{folder / "mail"}"\n'
        f'game_address = "{GAME_ADDRESS}"\n'
        'gm_address = "gm@game.test"\n'
        "reply_budget_per_hour = 100000\n",
        encoding="utf-8",
    )
    (folder / "mail").mkdir(exist_ok=True)
    return path


def _send(root: Path, sender: str, body: str) -> None:
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = sender
    msg["To"] = GAME_ADDRESS
    msg["Subject"] = "orders"
    msg["Message-ID"] = make_msgid("player", "players.test")
    msg.set_content(body)
    spool_mailbox(root, GAME_ADDRESS).add(bytes(msg))


def run(turns: int) -> dict[str, Counter[str]]:
    """Counts per kind of mail: "setup (deadline)" and "turn"."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = load_config(_config(folder), env={})
        engine = init_db(config.database_url)
        clock = ManualClock(datetime(2024, 3, 4, 12, 0, tzinfo=UTC))
        ctx = Context(config, clock, config.mail.own_addresses)
        root = Path(config.mail.maildir_root)
        counts = Counts()
        _install(counts, engine)
        results: dict[str, Counter[str]] = {}
        writers = [TextBot(make_bot("greedy", seat)) for seat in range(len(NAMES))]
        for name, settings, kind in (
            ("setup", {"adjudicate": "deadline"}, "setup (deadline)"),
            ("play", None, "turn"),
        ):
            overrides = {} if kind.startswith("setup") else {"placement": "auto"}
            with session_scope(engine) as session:
                specs = [PlayerSpec(n, f"{n}@players.test") for n in NAMES]
                created = create_game(
                    session,
                    name,
                    specs,
                    overrides=overrides,
                    settings=settings,
                    secret=bytes(32),
                    dice_version="v2",
                )
                notify.game_start(session, ctx, created.game, created.passwords)
            mails = 0
            counts.seen = Counter()
            for _ in range(turns if kind == "turn" else len(NAMES)):
                with session_scope(engine, write=False) as session:
                    state = load(session, find_game(session, name)).state
                if kind == "turn" and state.phase in SETUP_PHASES:
                    break
                seat = state.current if kind == "turn" else state.order[mails]
                text = (
                    writers[seat].write_turn(state)
                    if kind == "turn"
                    else writers[seat].write_setup(state, seat)
                )
                who = NAMES[seat]
                _send(root, f"{who}@players.test", f"PASSWORD {created.passwords[who]}\n{text}")
                with counts.counting():
                    report = poll._inbox_stage(engine, ctx, config.mail, None, poll.PollReport())
                assert report is None, report
                mails += 1
            results[kind] = Counter({k: v for k, v in counts.seen.items()})
            results[kind]["mails"] = mails
        engine.dispose()
        return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6)
    args = parser.parse_args()
    results = run(args.turns)
    print(
        f"{'mail':<18}{'mails':>6}{'identify':>10}{'hash':>6}{'loads':>7}{'snapshots':>11}"
        f"{'players':>9}{'players_of':>12}{'submits':>9}   (per mail)"
    )
    for kind, seen in results.items():
        n = max(1, seen["mails"])
        print(
            f"{kind:<18}{seen['mails']:>6}{seen['identify'] / n:>10.2f}"
            f"{seen['content_hash'] / n:>6.2f}{seen['loads'] / n:>7.2f}"
            f"{seen['snapshots'] / n:>11.2f}"
            f"{seen['players'] / n:>9.2f}{seen['players_of'] / n:>12.2f}"
            f"{seen['submits'] / n:>9.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
