"""Apply every player's setup actions at once (setup is simultaneous)."""

from __future__ import annotations

from typing import TypeVar

from pbem.rules import opening
from pbem.rules.actions import Claim, Headquarters, PlaceInitial, PlaceNeutral, SetupAction
from pbem.rules.engine import ShuffleStream
from pbem.rules.errors import RulesError
from pbem.rules.events import Event
from pbem.rules.state import CLAIM, HQ, PLACE, GameState

_A = TypeVar("_A", bound=SetupAction)


def play_setup(
    state: GameState, actions: dict[int, list[SetupAction]], rng: ShuffleStream
) -> list[Event]:
    """One setup phase (claims, placement or headquarters) for all players.

    ``rng`` is used only by the automatic placement after a draft; the service
    gives it the stream labelled ``setup:place``.
    """
    if state.phase == CLAIM:
        claims = {
            seat: list(_one(acts, Claim, seat, state).territories) for seat, acts in actions.items()
        }
        if state.options.claim == "turns":  # one round; the phase lasts till all are taken
            events = opening.claim_round(state, claims)
            if not opening.claims_done(state):
                return events
        else:
            events = opening.claim_draft(state, claims)
        return events + opening.after_draft(state, rng)
    if state.phase == PLACE:
        places = {
            seat: [(t, n) for a in acts if isinstance(a, PlaceInitial) for n, t in a.placements]
            for seat, acts in actions.items()
        }
        neutral = {
            seat: [(t, n) for a in acts if isinstance(a, PlaceNeutral) for n, t in a.placements]
            for seat, acts in actions.items()
        }
        return opening.place_initial(state, places, neutral)
    if state.phase == HQ:
        hqs = {
            seat: _one(acts, Headquarters, seat, state).territory for seat, acts in actions.items()
        }
        return opening.choose_headquarters(state, hqs)
    raise RulesError("setup", f"the game is in its {state.phase} phase, not setting up")


def _one(actions: list[SetupAction], kind: type[_A], seat: int, state: GameState) -> _A:
    found = [a for a in actions if isinstance(a, kind)]
    if len(found) != 1:
        raise RulesError("setup", f"{state.players[seat].name} must send one {kind.__name__} order")
    return found[0]
