"""Subject lines that read well in an inbox: ``[world-1] Turn 14: alice took ...``.

Every subject of a game starts with ``[NAME]`` (the mail layer finds the game
there) and stays within ``SUBJECT_WIDTH`` characters, summarising when there
is much to say, except that a subject carrying a turn token is never cut.
A turn notice carries its token as ``(token 7f3a9c)``; ``TOKEN_RE`` finds it
again in the subject of a reply.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pbem.report.textfmt import join_words, plural

SUBJECT_WIDTH = 78
TOKEN_RE = re.compile(r"\(token ([0-9A-Za-z]+)\)")


def tag(game: str | None) -> str:
    return f"[{game}] " if game else "[pbem] "


def fit(candidates: Sequence[str], width: int = SUBJECT_WIDTH) -> str:
    """The first candidate that fits; the last one cut short when none does.

    A turn token is never lost nor cut: a player replying to the mail must
    send it back. Candidates without the token are passed over, and a
    subject with the token that fits no width is kept whole (the MIME layer
    folds a long header over several lines; nothing of it is dropped): the
    last, the shortest."""
    found = next((m for c in candidates if (m := TOKEN_RE.search(c))), None)
    usable = [c for c in candidates if found is None or found.group(0) in c]
    for text in usable:
        if len(text) <= width:
            return text
    if found is not None:
        return usable[-1]  # the shortest with the token: folded, not cut
    return candidates[-1][: width - 3].rstrip() + "..."


def with_token(subject: str, token: str) -> str:
    """A subject of a mail to a player with the seat's current token at its end
    (a reply to it proves the sender reads the seat's mail)."""
    return f"{subject} (token {token})" if token else subject


def reply_subject(
    game: str | None, what: str, turn: int | None, token: str, freestyle_round: int = 0
) -> str:
    """The subject of an answer to a player's mail, made from the game, the turn
    (a freestyle game between turns: the round) and the token only, never from
    the subject of the mail answered: replying to it again and again gives the
    same subject (one "Re:" at most, the reader's)."""
    when = "" if turn is None else (": setup orders" if turn == 0 else f": turn {turn}")
    if freestyle_round and turn is not None:
        when = f": round {freestyle_round}"
    return fit([with_token(f"{tag(game)}{what}{when}", token)])


def tag_of(subject: str) -> str:
    """The leading [game] tag of a subject, if any."""
    found = re.match(r"(?:re:\s*)*\[[^\]]*\]\s*", subject, flags=re.IGNORECASE)
    return found.group(0) if found else ""


def turn_subject(
    game: str,
    turn: int,
    mover: str,
    conquests: Sequence[str],
    continents: Sequence[str],
    out: Sequence[str],
    next_name: str | None,
    winner: str | None,
    token: str = "",
    fogged: bool = False,
) -> str:
    """``[world-1] Turn 14: alice took Kamchatka, bob is out. carol to move``
    (and the reader's ``(token X)`` in a player's own copy). ``fogged``: another
    player's turn under fog of war, whose conquests out of the reader's sight
    are not told (so "took nothing" would not be true)."""
    sight = " in sight" if fogged else ""
    head = f"{tag(game)}Turn {turn}: "
    if winner is not None:
        tail = f". {winner} wins!"
    elif next_name is not None:
        tail = f". {next_name} to move"
    else:
        tail = ""
    if conquests:
        full = f"{mover} took {join_words(conquests)}{sight}"
        short = f"{mover} took {plural(len(conquests), 'territory', 'territories')}{sight}"
    else:
        full = short = f"{mover} took nothing{sight}"
    holds = f"holds {join_words(continents)}" if continents else ""
    outs = f"{join_words(out)} {'is' if len(out) == 1 else 'are'} out" if out else ""
    outs_short = f"{plural(len(out), 'player')} out" if len(out) > 1 else outs

    def line(*parts: str) -> str:
        return with_token(head + ", ".join(p for p in parts if p) + tail, token)

    return fit(
        [
            line(full, holds, outs),
            line(short, holds, outs),
            line(short, outs),
            line(short, outs_short),
            line(short),
        ]
    )


def your_turn_subject(game: str, turn: int, token: str, freestyle_round: int = 0) -> str:
    """(freestyle: the round, since the turn's number depends on who moves first)"""
    if freestyle_round:
        return f"{tag(game)}Your move in round {freestyle_round} (token {token})"
    return f"{tag(game)}Your turn {turn} (token {token})"


def reminder_subject(game: str, period: str | None, token: str | None, deadline: str) -> str:
    """``period``: "turn 5", or in a freestyle game "round 2"; None in the setup."""
    what = period or "setup orders"
    token_part = f" (token {token})" if token else ""
    return fit(
        [
            f"{tag(game)}Reminder: {what} due {deadline}{token_part}",
            f"{tag(game)}Reminder: {what}{token_part}",
        ]
    )
