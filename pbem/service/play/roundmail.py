"""The mail of a freestyle round (play_order = freestyle): each player still to
move gets one "your move" mail when the round opens.

Apart from notify.py, which tells the turns of a game played in turn order;
what the mail shows is the report layer's (render.render_your_turn, given the
turn as it would begin now: pbem.rules.engine.turn_of).
"""

from __future__ import annotations

from sqlmodel import Session

from pbem.report import context as rc
from pbem.rules.freestyle import waiting_for
from pbem.rules.state import GameState
from pbem.service.context import Context
from pbem.service.play import catchup, notices
from pbem.service.play.games import players_of
from pbem.service.play.gamesettings import settings_of
from pbem.service.play.mailinfo import epoch
from pbem.service.play.notices import iso
from pbem.service.play.passwords import reply_token
from pbem.store import Game
from pbem.vocab import NoticeKind as K


def round_open(
    session: Session, ctx: Context, game: Game, state: GameState, info: rc.GameInfo, step: int
) -> None:
    """Freestyle: each player still to move in this round (not a bot seat) gets
    the round's "your move" mail, once (its key is the round, not the turn)."""
    players = players_of(session, game)
    bots = settings_of(game).get("bot_seats", [])
    for seat in waiting_for(state):
        if seat in bots:
            continue
        player = players[seat]
        since = catchup.since_last_turn(session, game, player, state)
        about = ("round", game.name, state.round, seat, player.address, *epoch(game))
        notices.add(session, ctx, K.YOUR_TURN, player.address, about=about, game=game, seat=seat,
                    step=step, info=info, deadline=iso(game.deadline), since=list(since),
                    token=reply_token(game, seat))  # fmt: skip
