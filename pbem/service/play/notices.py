"""Notice rows: a mail decided inside a game's transaction, told after its commit.

``add`` is the one way notify.py records a mail: who gets it, its kind, the
stable Message-ID it will have, the step of the order log it is about, and
the few inputs the store does not keep (``params``). telling.py renders it
after the commit from the store: the game's state at that step is replayed
from the order log (the snapshot before it, then the log's entries), the
same way the decision computed it, and the game's roster is the one the
decision saw (kept in ``params``: a later mail may change it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col, func, select

from pbem.orderlog import replay
from pbem.report import context as rc
from pbem.rules.state import GameState
from pbem.service.context import Context
from pbem.service.play.games import definition_of, to_entry
from pbem.service.play.mailinfo import message_id
from pbem.service.play.passwords import reply_token
from pbem.store import Game, Notice, OrderEntry, TurnResult
from pbem.store.db import is_postgresql
from pbem.vocab import NoticeKind

_TABLE = Notice.__table__  # type: ignore[attr-defined]
# A new notice, or nothing when its Message-ID is decided already (a mail is told once).
_INSERT_SQLITE = sqlite_insert(_TABLE).on_conflict_do_nothing(index_elements=["message_id"])
_INSERT_PG = pg_insert(_TABLE).on_conflict_do_nothing(index_elements=["message_id"])


def add(
    session: Session,
    ctx: Context,
    kind: NoticeKind,
    to: str,
    *,
    about: tuple[object, ...] = (),
    mid: str = "",
    game: Game | None,
    seat: int | None = None,
    step: int | None = None,
    in_reply_to: str | None = None,
    info: rc.GameInfo | None = None,
    **params: Any,
) -> None:
    """Record one mail to tell: its Message-ID is ``mid``, or made from ``about``."""
    if info is not None:
        params["info"] = info_params(info)
    bind = session.get_bind()
    insert = _INSERT_PG if is_postgresql(bind) else _INSERT_SQLITE  # type: ignore[arg-type]
    session.execute(
        insert.values(
            game_id=game.id if game is not None else None,
            kind=str(kind),
            step=step,
            recipient=to,
            seat=seat,
            message_id=mid or message_id(ctx, *about),
            in_reply_to=in_reply_to,
            params_json=json.dumps(params, sort_keys=True, separators=(",", ":")),
            created_at=ctx.clock.now(),
        )
    )


def alert(
    session: Session,
    ctx: Context,
    game: Game | None,
    to: str,
    subject: str,
    text: str,
    about: tuple[object, ...],
    seat: int | None = None,
    in_reply_to: str | None = None,
    answer: bool = False,
) -> None:
    """One note of the service's own (report/render gm_alert) to one address;
    ``in_reply_to``: the mail it answers. To a seat (``seat``): with the
    seat's current reply token (passwords.reply_token). ``answer``: the answer to
    the GM's commands by mail (titled as an answer, the GM's help pointer at its foot)."""
    from pbem.service.play.mailinfo import game_info

    info = game_info(session, ctx, game) if game is not None else None
    token = ""
    if game is not None and seat is not None:
        token = reply_token(game, seat)
    extra: dict[str, Any] = {"answer": True} if answer else {}
    add(session, ctx, NoticeKind.ALERT, to, about=about, game=game, seat=seat, info=info,
        in_reply_to=in_reply_to, subject=subject, text=text, token=token, **extra)  # fmt: skip


# ------------------------------------------------------------ the roster
def info_params(info: rc.GameInfo) -> dict[str, Any]:
    """What a game's mails show of it that can change later (names, statuses,
    the GM, zones, the secret once revealed); the board and options are the game's."""
    return {
        "title": info.title,
        "commitment": info.commitment,
        "secret": info.secret_hex,
        "dice": info.dice_version,
        "players": [
            [p.seat, p.name, p.colour, p.address, p.status, p.holder] for p in info.players
        ],
        "gm": info.gm_address,
        "tz": info.timezone,
        "zones": [list(z) for z in info.player_zones],
        "from": info.from_address,
        "preset": info.preset,
        "dice_commitment": info.dice_commitment,
    }


def info_of(session: Session, game: Game, kept: dict[str, Any]) -> rc.GameInfo:
    """The game as the decision saw it (see ``info_params``)."""
    definition = definition_of(session, game)
    return rc.GameInfo(
        name=game.name,
        title=kept["title"],
        board=definition.board,
        options=definition.options,
        commitment=kept["commitment"],
        secret_hex=kept["secret"],
        dice_version=kept["dice"],
        players=tuple(rc.PlayerInfo(*p) for p in kept["players"]),
        gm_address=kept["gm"],
        timezone=kept["tz"],
        from_address=kept["from"],
        preset=kept["preset"],
        player_zones=tuple((int(s), z) for s, z in kept["zones"]),
        dice_commitment=kept.get("dice_commitment", ""),  # (absent: kept before reroll footers)
    )


def when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# ------------------------------------------------------------- the steps
def seq_now(session: Session, game: Game) -> int:
    """The order log's last entry: the step the game's state now is at (0: the deal)."""
    last = session.exec(select(func.max(OrderEntry.seq)).where(OrderEntry.game_id == game.id)).one()
    return int(last or 0)


def step_seqs(session: Session, game: Game, steps: Sequence[replay.Step]) -> list[int]:
    """The log entry that completed each of ``steps`` (just played: the last one is
    the log's last entry, and each step took as many entries as it holds)."""
    seq = seq_now(session, game)
    out = []
    for step in reversed(steps):
        out.append(seq)
        seq -= len(step.entries)
    return out[::-1]


def replay_to(session: Session, game: Game, seq: int) -> tuple[GameState, replay.Step | None]:
    """The state after log entry ``seq``, and the step that entry completed (None
    for the deal or a setup entry still waiting): the snapshot before it and the
    entries after that, applied as the decision applied them."""
    definition = definition_of(session, game)
    before = TurnResult.seq < seq if seq > 0 else TurnResult.seq <= 0  # 0: the deal itself
    query = select(TurnResult).where(TurnResult.game_id == game.id, before)
    base = session.exec(query.order_by(col(TurnResult.seq).desc())).first()
    start = -1 if base is None else base.seq
    entries = session.exec(
        select(OrderEntry)
        .where(OrderEntry.game_id == game.id, OrderEntry.seq > start, OrderEntry.seq <= seq)
        .order_by(col(OrderEntry.seq))
    ).all()
    if base is None:
        loaded = replay.rebuild(definition, [])
    else:
        data = json.loads(base.snapshot_json)
        loaded = replay.Game(
            definition, GameState.from_dict(data, definition.board, definition.options)
        )
    step = None
    for i, row in enumerate(entries):
        step = replay.apply(loaded, to_entry(row), keep_before=i == len(entries) - 1)
    return loaded.state, step
