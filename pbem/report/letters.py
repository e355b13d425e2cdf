"""What the service's own mails say: the prose of each, rendered.

The turn reports, prompts and receipts have their templates (render.py);
these are the mails whose words the service used to write inline: answers
to mail that cannot be taken, alerts, missed turns, deadlines passed. Each
function takes plain facts and returns the rendered mail; who gets it and
when is service/play/notify.py's business.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.orders import OrderProblem
from pbem.orders.errors import in_line_order
from pbem.report import context as rc
from pbem.report import folding, render
from pbem.report.mime import RenderedMail
from pbem.vocab import Refusal

QUOTED_SUBJECT = 200  # characters of a sender's subject quoted in any mail pbem sends
QUOTED_LINE = 200  # characters of one line of a sender's mail quoted back
QUOTED_ADDRESS = 120  # characters of a sender's address or Message-ID quoted
QUOTED_MESSAGE = 600  # characters of a problem's message, which may quote a word of the mail
ELLIPSIS = "\u2026"


def quote(text: str, limit: int) -> str:
    """A sender's text as pbem may quote it: one line (every control character,
    line end included, a blank), at most ``limit`` characters, cut ones ending
    in an ellipsis. Safe for a header: nothing in it can start a new one."""
    cut = text[: limit * 4] if len(text) > limit * 4 else text  # bounded work
    flat = "".join(c if c.isprintable() else " " for c in cut)
    flat = flat.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    if len(flat) > limit or len(cut) < len(text):
        return flat[: max(0, limit - 1)] + ELLIPSIS
    return flat


def quote_subject(subject: str) -> str:
    return quote(subject, QUOTED_SUBJECT)


def cap(text: str, limit: int) -> str:
    """Text pbem writes about a sender's input (a problem's message, an error)
    for a mail body: line ends kept, other control characters dropped, at most
    ``limit`` characters."""
    cut = text[: limit + 1]
    kept = "".join(c for c in cut if c.isprintable() or c == "\n")
    kept = kept.encode("utf-8", "replace").decode("utf-8")
    return kept if len(text) <= limit else kept[: limit - 1] + ELLIPSIS


def problems_of(problems: Sequence[OrderProblem], text: str) -> tuple[rc.Problem, ...]:
    """The orders layer's problems with the line each is about, as the reply shows
    them: in the order of the mail's lines (the mail's own problems last), the
    repeats and the surplus folded (pbem.report.folding)."""
    lines = text.split("\n")
    out = []
    for p in in_line_order(problems):
        line = lines[p.line - 1] if p.line and 0 < p.line <= len(lines) else ""
        message = cap(p.message, QUOTED_MESSAGE)
        suggestion = quote(p.suggestion or "", QUOTED_LINE)
        with_fix = cap(p.with_fix, QUOTED_MESSAGE)
        number = p.line or None
        out.append(rc.Problem(number, quote(line, QUOTED_LINE), message, suggestion, with_fix))
    return folding.fold(out)


def quoted_lines(pairs: Sequence[tuple[int, str]], most: int = 10) -> str:
    """'line 3 "Hi GM,"', ... for lines of a mail pbem did not read: each
    quoted short, at most ``most`` of them and how many more."""
    shown = ", ".join(f'line {n} "{quote(text, 60)}"' for n, text in pairs[:most])
    more = len(pairs) - most
    return shown + (f" and {more} more" if more > 0 else "")


def receipt_orders(canonical: str, notes: Sequence[str]) -> str:
    """The orders a receipt confirms, with what else became of the mail as comments."""
    text = canonical or "\n".join(notes) or "(no orders)"
    if canonical and notes:
        text += "\n" + "\n".join(f"# {note}" for note in notes)
    return text


def refusal(
    info: rc.GameInfo, address: str, seat: int, message: str, token: str = ""
) -> RenderedMail:
    """Nothing of the mail was applied, for one reason about the mail as a whole."""
    return render.render_error_reply(
        rc.ErrorReply(
            address=address,
            problems=(rc.Problem(None, "", message),),
            game=info,
            seat=seat,
            token=token,
        )
    )


def unknown_game(address: str, subject: str, games: Sequence[str]) -> RenderedMail:
    """A mail that names no game pbem can take it for: the sender's own games and
    how to name one (or, for a stranger, that this address plays in none)."""
    if games:
        listed = ", ".join(f"[{name}]" for name in games)
        text = (
            f"Your mail does not say which game it is for, and you play in {len(games)}: "
            f"{listed}. Put the game's name in the subject, like {'[' + games[0] + ']'}, "
            f"or a line GAME {games[0]} above your orders, and send it again. "
            "Nothing was applied."
        )
    else:
        text = (
            "This address plays in no game here, or the mail "
            "names no game. Put the game's name in the subject, like [world-1]."
        )
    return render.render_error_reply(
        rc.ErrorReply(
            address=address,
            problems=(rc.Problem(None, "", text),),
            original_subject=quote_subject(subject),
        )
    )


def mail_held(
    gm: str, attempts: int, message_id: str, sender: str, subject: str, why: str
) -> RenderedMail:
    """For the GM: a mail failed again and again and is held, nothing of it applied."""
    text = (
        f"pbem could not process a mail after {attempts} attempts; "
        "nothing of it was applied. Its headers are kept in the database and the whole "
        "mail in the held folder of the game's mailbox. Once the cause is fixed, "
        "move it back to the inbox and the next poll takes it again.\n\n"
        f"From: {quote(sender, QUOTED_ADDRESS)}\nSubject: {quote_subject(subject)}\n"
        f"Message-ID: {quote(message_id, QUOTED_ADDRESS)}\n\n"
        f"The last error:\n{cap(why, QUOTED_MESSAGE)}"
    )
    return render.render_gm_alert(
        rc.GmAlert("A mail is held: it could not be processed", text, None, gm)
    )


def held_line(message_id: str, sender: str, subject: str) -> str:
    """One line about a mail, for the GM's digest of alerts."""
    return (
        f"{quote(sender, QUOTED_ADDRESS)} {quote(message_id, QUOTED_ADDRESS)} "
        f'"{quote(subject, 80)}"'
    )


def auth_refused(
    info: rc.GameInfo,
    address: str,
    sender: str,
    subject: str,
    message_id: str,
    cause: str = "",
    seat: int | None = None,
    token: str = "",
) -> RenderedMail:
    """For the registered address: a mail in its name failed authentication,
    and why (``cause``, a vocab.Refusal: a wrong password, or the token of no
    turn of this seat); the mail carries the seat's current token."""
    head = f"A mail from your address ({quote(sender, QUOTED_ADDRESS)}) reached game {info.name}"
    quoted = f"Subject: {quote_subject(subject)}\nMessage-ID: {quote(message_id, QUOTED_ADDRESS)}"
    impostor = (
        "If you did not send it, someone may be trying to play in your name; the GM "
        "has been told too."
    )
    if cause == Refusal.WRONG_PASSWORD:
        name = info.player(seat).name if seat is not None else "your-name"
        gm = f" ({info.gm_address})" if info.gm_address else ""
        text = (
            f"{head} with a PASSWORD line, but the password is wrong, so nothing in it "
            f"was applied.\n\n{quoted}\n\nIf you sent it: the password is wrong. Your "
            f"password came with the first mail of {info.name} (case, blanks and hyphens "
            "do not matter). A reply to this mail needs no password: its subject carries "
            f"your token. If the password is lost, ask the GM{gm} for a new one: the GM "
            f"runs `pbem new-password {info.name} {name}`, and it comes to this "
            f"address.\n\n{impostor}"
        )
        title = "Not applied: the password is wrong"
    else:
        text = (
            f"{head} with the token of no turn of yours in its subject, so nothing in "
            f"it was applied.\n\n{quoted}\n\nIf you sent it, reply to this mail (its "
            "subject carries your token), or add a line PASSWORD your-password to your "
            f"orders. {impostor}"
        )
        title = "A mail in your name was refused"
    return render.render_gm_alert(
        rc.GmAlert(subject=title, text=text, game=info, address=address, token=token, replies=True)
    )


def auth_failed_for_gm(
    info: rc.GameInfo,
    gm: str,
    sender: str,
    name: str,
    address: str,
    message_id: str,
    cause: str = "",
) -> RenderedMail:
    """For the GM: whose mail failed authentication, why, and that its owner was told."""
    why = f" ({cause})" if cause else ""
    return render.render_gm_alert(
        rc.GmAlert(
            subject=f"Authentication failed for {name}",
            text=f"A mail from {quote(sender, QUOTED_ADDRESS)} for {name} failed "
            f"authentication{why} ({quote(message_id, QUOTED_ADDRESS)}). Nothing was "
            f"applied; {address} was told.",
            game=info,
            address=gm,
        )
    )


def turn_over(
    info: rc.GameInfo,
    address: str,
    seat: int,
    stale: int,
    now: int,
    mover: str,
    resigning: bool,
    token: str,
) -> RenderedMail:
    """A reply to a mail of turn ``stale``, which is over: where the game is now
    (turn ``now``, ``mover`` to move, "" in the setup); no list of problems.
    The mail carries the seat's current token: a reply to it is read."""
    over = "The setup is over" if stale == 0 else f"Turn {stale} is over"
    yours = bool(mover) and mover == info.player(seat).name
    if resigning:
        text = (
            f"{over}: your mail answers a mail of the game from then, so nothing in it "
            "was applied. To resign, send RESIGN with your PASSWORD line (a reply to a "
            "mail of the game cannot resign for you)."
        )
    elif yours:
        text = (
            f"{over}; your current turn is {now}. Nothing in your mail was applied: it "
            f"answers a mail of the game from {'the setup' if stale == 0 else 'then'}. "
            f"Reply to this mail with your orders for turn {now} (its subject carries "
            "your current token)."
        )
    else:
        where = f"the game is at turn {now}" + (f", {mover} to move" if mover else "")
        text = (
            f"{over}; {where}. Nothing in your mail was applied: it answers a mail of the "
            f'game from {"the setup" if stale == 0 else "then"}. A "Your turn" mail asks '
            "for your orders when your turn comes; a reply to this mail is read until "
            "the game's turn moves on."
        )
    subject = f"{over}: your turn is {now}" if yours else f"{over}: the game is at turn {now}"
    alert = rc.GmAlert(subject, text, info, address, token=token, replies=True)
    return render.render_gm_alert(alert)


def round_over(
    info: rc.GameInfo,
    address: str,
    seat: int,
    now: int,
    waiting: Sequence[str],
    resigning: bool,
    token: str,
) -> RenderedMail:
    """Freestyle: a reply to a mail of a round that is over (round ``now`` is on,
    ``waiting`` still to move in it); no list of problems."""
    name = info.player(seat).name
    yours = name in waiting
    if resigning:
        text = (
            "That round is over: your mail answers a mail of the game from then, so nothing "
            "in it was applied. To resign, send RESIGN with your PASSWORD line."
        )
    elif yours:
        text = (
            f"That round is over; round {now} is on and you have not moved in it yet. "
            "Nothing in your mail was applied: it answers a mail of an earlier round. Reply "
            f"to this mail with your orders for round {now} (its subject carries your "
            "current token)."
        )
    else:
        text = (
            f"That round is over; in round {now} you have moved already. Nothing in your "
            'mail was applied: it answers a mail of an earlier round. A "Your move" mail '
            "asks for your orders when the next round opens."
        )
    subject = f"That round is over: your move in round {now}" if yours else (
        f"That round is over: the game is in round {now}"
    )
    alert = rc.GmAlert(subject, text, info, address, token=token, replies=True)
    return render.render_gm_alert(alert)


def your_games(games: Sequence[str]) -> str:
    """The first lines of the answer to HELP: the games the address plays in."""
    if not games:
        return ""
    listed = ", ".join(f"[{name}]" for name in games)
    return (
        f"Your games here: {listed}. A mail to one names it in its subject, like "
        f"[{games[0]}], or in a line GAME {games[0]}.\n\n"
    )


def stranger_help(
    address: str, open_games: Sequence[tuple[str, int, int]], gm: str = ""
) -> RenderedMail:
    """HELP from an address that plays in no game here: how to join an open game."""
    if open_games:
        listed = "; ".join(
            f"[{name}], {free} of {seats} seats free" for name, free, seats in open_games
        )
        now = f"Games open for players now: {listed}."
        example = open_games[0][0]
    else:
        ask = f" (ask the GM, {gm}, when one opens)" if gm else ""
        now = f"No game is open for players now{ask}."
        example = "game-name"
    text = (
        "This address runs games of Risk by mail, and your address plays in none of "
        f"them.\n\n{now}\n\nTo join an open game, send a mail with the line\n\n"
        f"    JOIN {example} AS yourname\n\nand answer the mail that asks you to "
        "confirm. Once the game starts, a mail with the word HELP brings the order "
        "language."
    )
    return render.render_help(rc.Help(address, text, None, title="How to join a game here"))


def turns_played(
    info: rc.GameInfo, address: str, turns: Sequence[int], token: str = ""
) -> RenderedMail:
    """HISTORY without a turn: the turns there are reports of."""
    text = "Turns played: " + (", ".join(str(t) for t in turns) or "none yet")
    text += "\nSend HISTORY N for the report of turn N."
    return render.render_help(
        rc.Help(address, text, info, token=token, title="History: the turns played")
    )


def no_report(info: rc.GameInfo, address: str, turn: int, token: str = "") -> RenderedMail:
    text = f"There is no report of turn {turn}."
    return render.render_help(
        rc.Help(address, text, info, token=token, title=f"History: no report of turn {turn}")
    )


def press_copy(info: rc.GameInfo, sender: str, recipient: str, body: str) -> RenderedMail:
    """The GM's copy of a press message (by the game's option)."""
    return render.render_gm_alert(rc.GmAlert(f"Press from {sender} to {recipient}", body, info))


def resigned(name: str) -> str:
    return f"{name} has resigned; their territories are neutral now."


def deadline_passed(what: str, who: str, grace: float) -> tuple[str, str]:
    """The announcement that a deadline passed: (text, subject)."""
    return (
        f"The deadline {what} has passed; still waiting for {who}. "
        f"After {grace:g} more hours the default orders are played.",
        f"Deadline passed, waiting for {who}",
    )


def missed_turn(
    info: rc.GameInfo,
    address: str,
    turn: int,
    missed_in_row: int,
    limit: int,
    of_last: tuple[int, int, int] | None,
    removed: bool,
    token: str = "",
) -> RenderedMail:
    """The default orders were played for a player; ``of_last`` is (misses among
    the last M, M, the removal threshold N) when the game counts them."""
    text = (
        f"No valid orders from you arrived for turn {turn} by the end of the grace "
        f"period, so the default orders were played for you (forced trades, armies "
        f"spread on your borders, no attacks).\n\nTurns missed in a row: "
        f"{missed_in_row}" + (f" of {limit} allowed." if limit else ".")
    )
    if of_last is not None:
        recent, m, n = of_last
        text += f"\nTurns missed among your last {m}: {recent} (removal at {n})."
    if removed:
        text += "\n\nBy the rules of this game you are now removed from it."
    subject = f"You missed turn {turn}"
    return render.render_gm_alert(rc.GmAlert(subject, text, info, address, token=token))
