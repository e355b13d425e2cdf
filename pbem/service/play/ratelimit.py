"""Per-address budgets (replies, alerts, press) counted per hour in the database,
so they hold across cron runs and daemons.

Who counts against what (docs/MAIL.md, "Budgets"):
- every answer to an address counts against ``reply:<address>``
  ([mail] reply_budget_per_hour);
- an answer to an address that is no seated player of the game and no GM (a
  stranger: open-game answers, refusals, the unknown-sender answer) counts
  against the one budget of all strangers together too ([mail]
  stranger_budget_per_hour): a forger can use many addresses;
- the GM's held and alert mails count against ``gm-alerts:<address>``
  ([mail] alert_budget_per_hour); past it they are folded into a digest
  (pbem.service.play.digest), never lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session, select

from pbem.service.context import Context
from pbem.store import RateCounter

STRANGERS = "strangers"  # the key of the budget of all strangers together


def allow(session: Session, key: str, per_hour: int, now: datetime) -> bool:
    """Count one use of ``key`` in the current hour; False once the budget is spent."""
    return allow_all(session, [(key, per_hour)], now)


def allow_all(session: Session, budgets: Sequence[tuple[str, int]], now: datetime) -> bool:
    """Count one use of every key, only when every one of them has room left
    (a refusal by one budget spends nothing of the others)."""
    window = now.replace(minute=0, second=0, microsecond=0)
    rows = []
    for key, per_hour in budgets:
        row = session.exec(
            select(RateCounter).where(RateCounter.key == key, RateCounter.window_start == window)
        ).first()
        if row is None:
            row = RateCounter(key=key, window_start=window, count=0)
        if row.count >= per_hour:
            return False
        rows.append(row)
    for row in rows:
        row.count += 1
        session.add(row)
    session.flush()
    return True


def may_answer(
    session: Session,
    ctx: Context,
    address: str,
    *,
    stranger: bool,
    proven: bool = False,
    also: Sequence[tuple[str, int]] = (),
) -> bool:
    """One more answer to ``address`` this hour is within its budget (and, for
    a stranger, within the budget of all strangers; and within ``also``, the
    caller's own budgets); counted when True.

    ``proven``: the answer to a mail with the seat's password or turn token.
    Such answers have a budget of their own, so mails forged in a player's
    name (anyone can write a From line) cannot spend it and silence the
    receipts of the player's real orders."""
    key = f"reply-proven:{address}" if proven else f"reply:{address}"
    budgets = [(key, ctx.config.mail.reply_budget_per_hour), *also]
    if stranger:
        budgets.append((STRANGERS, ctx.config.mail.stranger_budget_per_hour))
    return allow_all(session, budgets, ctx.clock.now())


def gm_alert_allowed(session: Session, ctx: Context, gm: str) -> bool:
    """One more held/alert mail to the GM this hour; counted when True."""
    key = f"gm-alerts:{gm.strip().lower()}"
    return allow(session, key, ctx.config.mail.alert_budget_per_hour, ctx.clock.now())
