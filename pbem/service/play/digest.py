"""The daily digest: one mail a day with the turns a player did not get a report of.

A player who sent SET MAIL DIGEST (or whose game defaults to it) gets the
reports of their own turns only; once a day, at the first poll 24 hours
after their last digest, this sends them the headline of every other turn
played since (the turn reports' own subjects), so nothing is missed. A
ServiceState row per seat keeps when the last digest went and up to which
step of the log it reached.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.service.context import Context
from pbem.service.play.gamesettings import mail_mode
from pbem.store import Game, ServiceState, TurnResult, session_scope
from pbem.vocab import GameStatus, SeatStatus

EVERY = timedelta(hours=24)
GM_KEY = "gm-digest:"  # + the GM's address: the alerts folded past the GM's budget
MOST_FOLDED = 30  # alerts listed in one GM digest (all are counted)


def _key(game: Game, seat: int) -> str:
    return f"digest:{game.id}:{seat}"


def run(engine: Engine, ctx: Context) -> list[str]:
    """Queue the digests that are due; one line per digest sent."""
    out: list[str] = []
    with session_scope(engine) as session:
        # Only games whose settings name a digest (a default or a player's
        # wish) are loaded: the others are not read at every poll.
        wanted = select(Game).where(
            Game.status == GameStatus.RUNNING, col(Game.settings_json).contains("digest")
        )
        for game in session.exec(wanted):
            from pbem.service.play.games import (
                players_of,  # the rules and orders: not at every poll
            )

            for player in players_of(session, game):
                if player.status == SeatStatus.ACTIVE and mail_mode(game, player.seat) == "digest":
                    out += _one(session, ctx, game, player.seat)
        out += _gm_digests(session, ctx)
    return out


def fold_gm_alert(session: Session, ctx: Context, gm: str, subject: str, line: str) -> None:
    """An alert for the GM past their budget of the hour: kept for the GM's
    digest, sent at the first poll of a later hour (``_gm_digests``)."""
    key = GM_KEY + gm.strip().lower()
    now = ctx.clock.now()
    row = session.exec(select(ServiceState).where(ServiceState.key == key)).first()
    row = row or ServiceState(key=key, value=json.dumps({"since": now.isoformat(), "count": 0}))
    folded = json.loads(row.value)
    folded["count"] += 1
    lines = folded.setdefault("lines", [])
    if len(lines) < MOST_FOLDED:
        lines.append(f"{now:%Y-%m-%d %H:%M} UTC  {subject}: {line}"[:400])
    row.value = json.dumps(folded)
    session.add(row)
    session.flush()


def _gm_digests(session: Session, ctx: Context) -> list[str]:
    """One mail per GM with the alerts folded in an earlier hour; at most one
    an hour, outside the budget it stands in for."""
    now = ctx.clock.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    out = []
    rows = session.exec(select(ServiceState).where(col(ServiceState.key).startswith(GM_KEY)))
    for row in list(rows):
        folded = json.loads(row.value)
        since = datetime.fromisoformat(folded["since"])
        if since >= hour:
            continue
        from pbem.service.play import notices

        gm = row.key.removeprefix(GM_KEY)
        count, lines = folded["count"], folded.get("lines", [])
        more = count - len(lines)
        text = (
            f"Alerts past your budget of {ctx.config.mail.alert_budget_per_hour} an hour "
            f"([mail] alert_budget_per_hour) since {since:%Y-%m-%d %H:%M} UTC: {count}, "
            "folded into this one mail.\n\n"
            + "\n".join(lines)
            + (f"\n... and {more} more" if more > 0 else "")
            + "\n\n`pbem status` shows the held mail."
        )
        about = ("gm-digest", gm, folded["since"])
        notices.alert(session, ctx, None, gm, f"Digest of {count} alerts", text, about)
        session.delete(row)
        out.append(f"digest of {count} GM alerts to {gm}")
    session.flush()
    return out


def _one(session: Session, ctx: Context, game: Game, seat: int) -> list[str]:
    now = ctx.clock.now()
    row = session.exec(select(ServiceState).where(ServiceState.key == _key(game, seat))).first()
    last_seq = session.exec(
        select(TurnResult.seq)
        .where(TurnResult.game_id == game.id)
        .order_by(col(TurnResult.seq).desc())
    ).first()
    if row is None:  # the first poll after the wish: the digest counts from here
        value = {"at": now.isoformat(), "seq": last_seq or 0}
        session.add(ServiceState(key=_key(game, seat), value=json.dumps(value)))
        return []
    mark = json.loads(row.value)
    if now - datetime.fromisoformat(mark["at"]) < EVERY:
        return []
    turns = list(
        session.exec(
            select(TurnResult.turn)
            .where(
                TurnResult.game_id == game.id,
                col(TurnResult.seq) > mark["seq"],
                col(TurnResult.seat).is_not(None),
                TurnResult.seat != seat,
                col(TurnResult.turn) > 0,
            )
            .order_by(col(TurnResult.seq))
        )
    )
    row.value = json.dumps({"at": now.isoformat(), "seq": last_seq or mark["seq"]})
    session.add(row)
    if not turns:
        return []
    from pbem.report import render
    from pbem.service.play import history, mailinfo, notices
    from pbem.service.play.games import players_of

    info = mailinfo.game_info(session, ctx, game)
    lines = []
    for turn in dict.fromkeys(turns):
        report = history.stored_report(session, info, game, turn)
        if report is not None:
            subject = render.render_turn_report(report, seat).subject
            lines.append(subject.removeprefix(f"[{game.name}] "))
    player = players_of(session, game)[seat]
    text = (
        f"The turns played since your last digest ({len(lines)}):\n\n"
        + "\n".join(f"  {line}" for line in lines)
        + "\n\nSTATUS brings you the board as it stands; SET MAIL EVERY brings back "
        "every turn report."
    )
    about = ("digest", game.name, seat, now.isoformat())
    subject = f"Daily digest: {len(lines)} turns"
    notices.alert(session, ctx, game, player.address, subject, text, about, seat=seat)
    return [f"{game.name}: digest of {len(lines)} turns to {player.name}"]
