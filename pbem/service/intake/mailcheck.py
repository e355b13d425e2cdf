"""The checks of one mail that decide before anything is done: which games
it names (bounded), whether its From address is readable, whether a
player's mail without proof is their mistake, whether its commands can be
done. Pure or read-only helpers of pbem.service.intake.mailflow."""

from __future__ import annotations

import re

from sqlmodel import Session

from pbem.mail.decode import DecodedMail
from pbem.orders import Absent, OrderProblem, ParsedMail, envelope
from pbem.report import letters
from pbem.report.subjects import TOKEN_RE
from pbem.service.context import Context
from pbem.service.intake.proof import is_live
from pbem.service.play import schedule
from pbem.store import Game, Player

TAG = re.compile(r"\[([A-Za-z0-9_-]+)\]")
MAX_NAMED = 5  # game names read from one mail's tags, and from its GAME/JOIN lines
MAX_NAME_CHARS = 300  # longer than any game's name


def named_games(mail: DecodedMail) -> list[str]:
    """The game names a mail gives, the first GAME or JOIN lines first, then
    the subject's tags; at most MAX_NAMED of each, each cut to MAX_NAME_CHARS
    (longer than any game's name, so a cut name matches none)."""
    lines = envelope.named_games(mail.text, MAX_NAMED)  # read by the orders layer
    tags: list[str] = []
    for match in TAG.finditer(mail.subject):
        tags.append(match.group(1))
        if len(tags) == MAX_NAMED:
            break
    names = [*reversed(lines), *tags]  # the last line named wins, as it always did
    return list(dict.fromkeys(n[:MAX_NAME_CHARS] for n in names))


def no_reply_reason_raw(sender: str, own: set[str]) -> str | None:
    """Why an undecodable mail gets no answer: no sender, or one of pbem's own."""
    if not sender or sender in own:
        return "no sender or our own address"
    return None


def readable_address(address: str) -> bool:
    """An address pbem can store, answer and compare: printable, no blanks (an
    8-bit byte that is no UTF-8 in a From line decodes to a lone surrogate,
    which is not printable and which no database takes; the mail layer scrubs
    it to U+FFFD, the replacement character)."""
    return address.isprintable() and " " not in address and "\ufffd" not in address


def no_other_token(game: Game, player: Player, mail: DecodedMail) -> bool:
    """The subject carries no turn token, or this turn's token of this player
    (a reply that cannot resign): nothing that only an impostor would send."""
    match = TOKEN_RE.search(mail.subject)
    if match is None:
        return True
    return is_live(game, player, match.group(1))


def missing_proof_answer(game: Game, resigning: bool) -> str:
    """A seat's mail with neither the password nor a token: what to do. The
    answer carries the seat's current token itself (in the setup too, where
    no "Your turn" mail has come yet), so replying to it is enough."""
    if resigning:
        return (
            "Nothing was applied: RESIGN needs your PASSWORD line, even in a reply to "
            f"a mail of the game. Send RESIGN again with a line PASSWORD your-password "
            f"(the password came with the first mail of {game.name})."
        )
    return (
        "Nothing was applied: your mail carries neither a line PASSWORD your-password "
        "nor, in its subject, the token of a mail the game sent you (a forwarded or a "
        "new mail has none). Reply to this mail with your orders: its subject carries "
        "your token. Or add the line PASSWORD your-password (it came with the first "
        f"mail of {game.name})."
    )


# A note of the receipt of a reply with the live token and a wrong PASSWORD line.
WRONG_PASSWORD_BESIDE_TOKEN = (
    "The PASSWORD line of your mail is wrong; the token of the mail you replied to "
    "was enough (a reply needs no password). Your password came with the first mail "
    "of {game}; if it is lost, ask the GM for a new one."
)


def command_problems(
    session: Session, ctx: Context, game: Game, player: Player, parsed: ParsedMail
) -> list[OrderProblem]:
    """What makes a command of the mail impossible before anything is done
    (an absence that cannot be noted), with its line: the whole mail is
    refused and nothing of it applied."""
    problems = []
    for cmd in parsed.commands:
        if isinstance(cmd, Absent):
            why = schedule.absence_problem(session, ctx, game, player, cmd.start, cmd.end)
            if why is not None:
                problems.append(OrderProblem(cmd.line, cmd.column, cmd.text, why))
    return problems


def shown_address(sender: str) -> str:
    """A From address as it came, for a log line or an answer: \\xe9 for an 8-bit
    byte, ? where the mail layer put a replacement character."""
    sender = sender.replace("\ufffd", "?")
    try:
        given = sender.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        given = sender.encode("utf-8", "backslashreplace")
    return letters.quote(given.decode("ascii", "backslashreplace"), 80)


def kept_address(sender: str) -> str:
    """What is left of an unreadable address once the characters that are not
    printable are dropped: whose address it was meant to be."""
    return "".join(c for c in sender if c.isprintable() and c not in " \ufffd")
