"""Whether a player's mail proves it is theirs, and what may be answered without.

A mail from a seat's address is the player's when it carries the seat's
password, or the current token of a mail pbem sent the seat: every mail
pbem sends a player (the "your turn" notice, a reminder, a receipt, a CHECK
answer, a problem reply, the answer to an old mail) carries in its subject
``(token X)``, X the MAC of (game, seat, the game's turn when it was sent)
under the game's secret (pbem.service.play.passwords.turn_token). Only mail
pbem sent to that seat's address holds it, so a reply with it proves the
sender reads that mail; it goes stale once the game's turn moves on.

A mail that only asks (HELP, STATUS, MAP, HISTORY) changes nothing: it is
answered without proof, always at the seat's registered address.
"""

from __future__ import annotations

from pbem.mail.decode import DecodedMail
from pbem.orders import Help, History, ParsedMail, ShowMap, Status
from pbem.report.subjects import TOKEN_RE
from pbem.service.play import rounds
from pbem.service.play.passwords import turn_token, verify_password
from pbem.store import Game, Player
from pbem.vocab import Proof

STALE_TURNS = 500  # how far back a reply's token is recognised as this player's
REQUESTS = (Help, Status, ShowMap, History)  # commands that change nothing


def token_of(mail: DecodedMail) -> str | None:
    match = TOKEN_RE.search(mail.subject)
    return match.group(1) if match else None


def proof(
    game: Game, player: Player, mail: DecodedMail, password: str | None, needs_password: bool
) -> Proof:
    """Registered sender (checked by the caller) AND the password or the live token.

    A reply that carries the live token is the player's even with a wrong
    PASSWORD line beside it (the player copied the password wrong, and said
    so in the receipt), except for what needs the password (RESIGN)."""
    live = is_live(game, player, token_of(mail))
    if password:
        if verify_password(password, player.secret_hash):
            return Proof.PASSWORD
        return Proof.TOKEN_WRONG_PASSWORD if live and not needs_password else Proof.NONE
    if needs_password or not live:
        return Proof.NONE
    return Proof.TOKEN


def is_live(game: Game, player: Player, token: str | None) -> bool:
    """The token of a mail pbem sent this seat in the current turn (a freestyle
    game: in the current round, rounds.live_turns)."""
    if token is None:
        return False
    secret = bytes.fromhex(game.secret)
    turns = rounds.live_turns(game)
    return any(turn_token(secret, game.name, player.seat, t) == token for t in turns)


def stale_token_turn(game: Game, player: Player, mail: DecodedMail) -> int | None:
    """The earlier turn whose mail this one answers (its subject carries that
    turn's token for this seat), or None: a token of no turn of this player is
    not a player's mistake."""
    token = token_of(mail)
    if token is None:
        return None
    secret = bytes.fromhex(game.secret)
    first = rounds.round_from(game)  # (freestyle: the tokens of this round are live)
    for turn in range(first - 1, max(-1, first - 1 - STALE_TURNS), -1):
        if turn_token(secret, game.name, player.seat, turn) == token:
            return turn
    return None


def requests_only(parsed: ParsedMail | None) -> bool:
    """The mail only asks (HELP, STATUS, MAP, HISTORY): no orders, no press, no
    other command, no CHECK. Answered without proof: nothing changes."""
    return (
        parsed is not None
        and bool(parsed.commands)
        and not (parsed.orders or parsed.press or parsed.check)
        and all(isinstance(c, REQUESTS) for c in parsed.commands)
    )
