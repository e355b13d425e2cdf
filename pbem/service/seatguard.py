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
  Message-ID, what the seat's last applied mail said, in the same turn of
  that seat, is answered "already applied" and not applied twice.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlmodel import Session, col, select

from pbem.mail.decode import DecodedMail
from pbem.orders import Check, ParsedMail
from pbem.service import notify, outmail
from pbem.service.context import Context
from pbem.service.games import find_player, players_of
from pbem.service.names import shown
from pbem.service.passwords import MAX_TYPED, hash_password, new_password, verify_password
from pbem.service.ratelimit import allow
from pbem.store import Game, OrderEntry, Player
from pbem.vocab import GameStatus, SeatStatus

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
    if allow(session, f"alert:{owner.address}", ctx.config.mail.alert_budget_per_hour, now):
        _tell_leak(session, ctx, game, owner, mail)
    return f"the password of {owner.name} came from {mail.sender}: leaked, nothing applied"


def _tell_leak(
    session: Session, ctx: Context, game: Game, owner: Player, mail: DecodedMail
) -> None:
    from pbem.report import context as rc
    from pbem.report import render

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
    info = outmail.game_info(session, ctx, game)
    outmail.post(
        session,
        ctx,
        render.render_gm_alert(rc.GmAlert("Your password has leaked", text, info, owner.address)),
        owner.address,
        ("leak", game.name, owner.seat, mail.reply_key),
        game=game,
        seat=owner.seat,
    )
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
    from pbem.report import context as rc
    from pbem.report import render

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
    info = outmail.game_info(session, ctx, game)
    now = ctx.clock.now()
    outmail.post(
        session,
        ctx,
        render.render_gm_alert(rc.GmAlert("Your new password", text, info, player.address)),
        player.address,
        ("new-password", game.name, player.seat, now.isoformat()),
        game=game,
        seat=player.seat,
    )
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


def repeated(session: Session, game: Game, player: Player, mail: DecodedMail) -> str | None:
    """"Already applied" when this mail says what the seat's last applied mail
    said and no turn of the seat has begun since; else None.

    A seat's turn has begun since turn T when the game is past T and either
    the seat is to move or the order log holds a turn of the seat after T."""
    turn = player.last_applied_turn
    if turn is None or player.last_applied_digest != digest(game, player, mail.text):
        return None
    if game.turn < turn:  # rolled back before it (a rollback changes the digest too)
        return None
    if game.turn > turn:
        if game.current_seat == player.seat:
            return None
        later = session.exec(
            select(OrderEntry.id).where(
                OrderEntry.game_id == game.id,
                OrderEntry.seat == player.seat,
                col(OrderEntry.turn) > turn,
            )
        ).first()
        if later is not None:
            return None
    when = "setup" if turn == 0 else f"turn {turn}"
    return (
        f"Already applied: this mail says what your mail of {when} said, and that "
        "one was applied. Nothing was applied again. To change what you sent, send "
        "different orders."
    )


def remember(
    player: Player,
    game: Game,
    mail: DecodedMail,
    parsed: ParsedMail,
    reply: notify.Reply,
    applied: bool,
) -> None:
    """Keep the seat's last applied mail: its digest and the turn it came in
    (``reply.turn``). A mail that only asked (STATUS, MAP, HELP...) or changed
    nothing is not kept: asking again is answered again."""
    if not applied or reply.turn is None:
        return
    acted = [c for c in parsed.commands if not isinstance(c, Check) and c not in reply.commands]
    if parsed.orders or parsed.press or acted:
        player.last_applied_digest = digest(game, player, mail.text)
        player.last_applied_turn = reply.turn


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
