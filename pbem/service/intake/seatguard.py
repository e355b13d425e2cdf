"""What a seat's password lets through, and who is told when it goes wrong.

Three things mailflow.py asks of a mail to a running game (each a call from
one or two lines there):

- ``wrong_password``: a mail from the seat's address whose PASSWORD does
  not open the seat is counted on the seat (``Player.wrong_passwords``);
  the GM is told at the 3rd, 10th, 30th, 100th, 300th... wrong password:
  one mail each, however many come, and none is ever lost to a budget.
- ``leaked_password``: a mail from an address that plays no seat, carrying
  the password of a seat, means the password is known to someone else. The
  owner (at the registered address, never the sender) and the GM are told
  and how to get a new one (``reissue_password``, `pbem new-password`);
  nothing in the mail is applied.
- ``repeated``/``remember``: a mail that says again, under a new
  Message-ID, what the seat's last applied mail said, before anything more
  is played in the game, is answered "already applied", not applied twice.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlmodel import Session, col, func, select

from pbem.mail.decode import DecodedMail
from pbem.orders import Check, ParsedMail
from pbem.service.context import Context
from pbem.service.play import notify
from pbem.service.play.games import find_player, players_of
from pbem.service.play.names import shown
from pbem.service.play.passwords import MAX_TYPED, hash_password, new_password, verify_password
from pbem.service.play.ratelimit import allow
from pbem.store import Game, OrderEntry, PendingOrders, Player
from pbem.vocab import GamePhase, GameStatus, SeatStatus

LEAK_CHECKS_PER_HOUR = 30  # per game: each costs one scrypt run per seat (~50 ms)
NEW_PASSWORD_COMMAND = "pbem new-password {game} {name}"


def is_threshold(count: int) -> bool:
    """3, 10, 30, 100, 300, 1000...: the counts at which the GM hears of them."""
    if count < 3:
        return False
    while count % 10 == 0:
        count //= 10
    return count in (1, 3)


# ------------------------------------------------------------ wrong passwords
def wrong_password(session: Session, ctx: Context, game: Game, player: Player) -> str:
    """Count a wrong PASSWORD from the seat's address; the GM told at thresholds.
    The wrong password itself is never shown anywhere (it may be one typo
    away from the right one)."""
    now = ctx.clock.now()
    player.wrong_passwords = (player.wrong_passwords or 0) + 1
    player.last_wrong_password_at = now
    session.add(player)
    count = player.wrong_passwords
    if is_threshold(count):
        command = NEW_PASSWORD_COMMAND.format(game=game.name, name=player.name)
        notify.gm_note(
            session,
            ctx,
            game,
            f"{count} mails from the address of {player.name} (seat {player.seat}, "
            f"{player.address}) have carried a wrong password in {game.name}, the latest "
            f"at {now:%Y-%m-%d %H:%M} UTC. Nothing in them was applied. If "
            f"{player.name} did not send them, someone who writes mail as that address "
            f"is guessing the password. `{command}` mails {player.name} a new one; "
            "`pbem show` lists the count of every seat.",
            key=f"wrong-passwords:{player.seat}:{count}",
            subject=f"{count} wrong passwords for {player.name}",
        )
    return f"wrong password for {player.name} ({count} so far)"


# ------------------------------------------------------------ leaked passwords
def leaked_password(
    session: Session, ctx: Context, game: Game, mail: DecodedMail, password: str | None
) -> str | None:
    """A mail from an address that holds no seat, with a seat's right password:
    tell the seat's owner and the GM, and return the outcome line (the caller
    refuses the mail); None when the password opens no seat (or there is none).

    Each check costs a scrypt run per seat, so a game checks at most
    LEAK_CHECKS_PER_HOUR such mails an hour; the tellings share the seat's
    alert budget with the refused-mail alerts."""
    if not password or len(password) > MAX_TYPED:
        return None
    now = ctx.clock.now()
    if not allow(session, f"leak-check:{game.id}", LEAK_CHECKS_PER_HOUR, now):
        return None
    owner = next(
        (
            p
            for p in players_of(session, game)
            if p.status == SeatStatus.ACTIVE and verify_password(password, p.secret_hash)
        ),
        None,
    )
    if owner is None:
        return None
    # a budget of its own: wrong passwords forged in the seat's name (which spend
    # "alert:") must not silence the warning that its real password is known
    if allow(session, f"leak:{owner.address}", ctx.config.mail.alert_budget_per_hour, now):
        _tell_leak(session, ctx, game, owner, mail)
    return f"the password of {owner.name} came from {mail.sender}: leaked, nothing applied"


def _tell_leak(
    session: Session, ctx: Context, game: Game, owner: Player, mail: DecodedMail
) -> None:

    sender = shown(mail.sender)
    command = NEW_PASSWORD_COMMAND.format(game=game.name, name=owner.name)
    text = (
        f"A mail to {game.name} from {sender}, which is not your address, carried "
        f"your password (seat {owner.name}). Nothing in it was applied: orders are "
        "read only from your own address. But your password is known to someone "
        "else now. Ask the GM for a new one: the GM runs "
        f"`{command}`, and the new password comes to this address. "
        "If you sent that mail yourself from another address, nothing is wrong "
        "but the address: write from this one."
    )
    about = ("leak", game.name, owner.seat, mail.reply_key)
    subject = "Your password has leaked"
    notify.alert(session, ctx, game, owner.address, subject, text, about, seat=owner.seat)
    notify.gm_note(
        session,
        ctx,
        game,
        f"A mail to {game.name} from {sender} carried the password of {owner.name} "
        f"(seat {owner.seat}, {owner.address}); it was refused and {owner.name} was "
        f"told. The password has leaked: `{command}` mails {owner.name} a new one.",
        key=f"leak:{owner.seat}:{mail.reply_key}",
        subject=f"The password of {owner.name} has leaked",
    )


def reissue_password(session: Session, ctx: Context, game: Game, name: str) -> str:
    """`pbem new-password`: a new password for a seat, mailed to its registered
    address only (never printed); the old one stops working at once, and the
    seat's count of wrong passwords starts again."""

    player = find_player(session, game, name)
    password = new_password()
    player.secret_hash = hash_password(password)
    player.wrong_passwords = 0
    player.last_wrong_password_at = None
    session.add(player)
    text = (
        f"The GM has given your seat {player.name} in {game.name} a new password:\n\n"
        f"    {password}\n\nYour old password no longer works. Put the new one in "
        "your orders as a line PASSWORD followed by it (case, blanks and hyphens do "
        "not matter); a reply to the game's turn notice needs none."
    )
    about = ("new-password", game.name, player.seat, ctx.clock.now().isoformat())
    subject = "Your new password"
    notify.alert(session, ctx, game, player.address, subject, text, about, seat=player.seat)
    return (
        f"a new password for {player.name} (seat {player.seat}) is mailed to "
        f"{player.address}; the old one no longer works"
    )


# ------------------------------------------------------------ repeated mail
def digest(game: Game, player: Player, text: str) -> str:
    """The mail's text as compared: blanks inside and around lines, and empty
    lines, do not count (a mail program re-sending a mail may change them)."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    body = "\n".join(line for line in lines if line)
    # A rollback (`pbem rollback` counts them) or a new holder of the seat makes
    # the same text new again.
    rollbacks = json.loads(game.settings_json or "{}").get("rollbacks", 0)
    seat = f"{game.name}\0{rollbacks}\0{player.seat}\0{player.address}"
    return hashlib.sha256(f"{seat}\0{body}".encode()).hexdigest()


def _last_seq(session: Session, game: Game) -> int:
    last = session.exec(select(func.max(OrderEntry.seq)).where(OrderEntry.game_id == game.id))
    return last.one() or 0


def _asked(session: Session, game: Game, player: Player) -> bool:
    """Whether the game waits for this seat's orders now (its setup orders of
    this round, or its turn), so that the same text is new orders."""
    if game.phase == GamePhase.SETUP:
        kept = session.exec(
            select(PendingOrders.id).where(
                PendingOrders.game_id == game.id,
                PendingOrders.turn == 0,
                PendingOrders.seat == player.seat,
            )
        ).first()
        return kept is None
    # (A freestyle game between turns has no current seat: nothing was played
    # since the seat's own turn, so even when that turn closed the round the same
    # text again is that mail delivered twice, not the next round's orders.)
    return game.phase == GamePhase.PLAYING and game.current_seat == player.seat


def repeated(session: Session, game: Game, player: Player, mail: DecodedMail) -> str | None:
    """Answer "already applied" when this mail says what the seat's last
    applied mail said and nothing has been played in the game since (its
    order log has not grown); else None.

    A mail whose orders were played (logged) is repeated only while the game
    does not wait for this seat again: the same orders for the seat's next
    turn or setup round are new orders. A mail that logged nothing (press,
    commands, orders held for the deadline or the setup round) would do
    the same again, so any copy is answered instead."""
    seq = player.last_applied_seq
    if seq is None or player.last_applied_digest != digest(game, player, mail.text):
        return None
    if _last_seq(session, game) != seq:
        return None
    if player.last_applied_logged and _asked(session, game, player):
        return None
    return (
        "Already applied: this mail says what your last mail said, and that one "
        "was applied; nothing has been played since. Nothing was applied again. "
        "To change what you sent, send different orders."
    )


def remember(
    session: Session,
    player: Player,
    game: Game,
    mail: DecodedMail,
    parsed: ParsedMail,
    reply: notify.Reply,
    applied: bool,
    seq_before: int,
) -> None:
    """Keep the seat's last applied mail: its digest, the game's last
    order-log entry now that it is applied, and whether it logged any. A
    mail that only asked (STATUS, MAP, HELP...) or changed nothing is not
    kept: asking again is answered again."""
    if not applied:
        return
    acted = [c for c in parsed.commands if not isinstance(c, Check) and c not in reply.commands]
    if parsed.orders or parsed.press or acted:
        player.last_applied_digest = digest(game, player, mail.text)
        player.last_applied_seq = _last_seq(session, game)
        player.last_applied_logged = player.last_applied_seq != seq_before


def last_seq(session: Session, game: Game) -> int:
    """The game's last order-log entry (0 before any): what ``remember`` compares."""
    return _last_seq(session, game)


def wrong_password_report(session: Session, limit: int = 20) -> list[dict[str, Any]]:
    """`pbem status`: the seats of running games with wrong passwords, the
    latest first (at most ``limit``)."""
    rows = session.exec(
        select(Game.name, Player.name, Player.wrong_passwords, Player.last_wrong_password_at)
        .where(
            Player.game_id == Game.id,
            col(Player.wrong_passwords) > 0,
            Game.status != GameStatus.FINISHED,
        )
        .order_by(col(Player.last_wrong_password_at).desc())
        .limit(limit)
    )
    return [
        {
            "game": game,
            "player": name,
            "wrong_passwords": count,
            "last_wrong_password_at": latest.isoformat() if latest else None,
        }
        for game, name, count, latest in rows
    ]


def wrong_password_lines(report: list[dict[str, Any]]) -> list[str]:
    return [
        f"wrong passwords: {r['player']} in {r['game']}: {r['wrong_passwords']}, "
        f"the latest {r['last_wrong_password_at']}"
        for r in report
    ]
