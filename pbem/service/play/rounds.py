"""Freestyle games in the service: who may move, and what a round is.

Under ``play_order = freestyle`` (pbem/rules/freestyle.py) every player still
to move in the round may send orders, and each mail is played when it is
read, in arrival order. The service's periods follow the round: one deadline,
one set of reminders and one "your move" mail per player per round, and at
the deadline the missed turns are played in turn order (deadlines.py).

A reply token names the game's turn when the mail was sent
(passwords.turn_token); in a freestyle game the turn moves with every other
player's move, so any token of the current round is live: the round opened at
the turn kept in the game's settings as ``round_from``.
"""

from __future__ import annotations

import json
from typing import Final

from pbem.store import Game

FREESTYLE: Final = "freestyle"
ROUND_FROM: Final = "round_from"  # settings key: turns played when the round opened


def is_freestyle(game: Game) -> bool:
    """Read from the stored options (no state needed): ``play_order`` is kept only
    when it is not the default."""
    options = json.loads(game.options_json or "{}")
    return bool(options.get("play_order") == FREESTYLE)


def round_from(game: Game) -> int:
    """The game's turn when the current round opened (the game's turn itself in a
    game that is not freestyle: each turn is its own period)."""
    if not is_freestyle(game):
        return game.turn
    stored = json.loads(game.settings_json or "{}")
    return int(stored.get(ROUND_FROM, game.turn))


def note_round(game: Game, opened_at: int) -> None:
    """Keep the turn at which the current round opened (the state's turn less
    the turns played in the round so far)."""
    stored = json.loads(game.settings_json or "{}")
    if stored.get(ROUND_FROM) != opened_at:
        stored[ROUND_FROM] = opened_at
        game.settings_json = json.dumps(stored, sort_keys=True)


def live_turns(game: Game) -> range:
    """The turns whose reply tokens are live: the current one, and in a
    freestyle game every turn since the round opened."""
    return range(round_from(game), game.turn + 1)
