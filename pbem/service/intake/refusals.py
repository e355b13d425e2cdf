"""The outcomes of a player's mail that was answered but applied nothing.

Such a mail is stored as processed (it was handled for a game: kept whole as
evidence, moved to the processed folder, the player told what was wrong),
yet nothing in it took effect: no password or turn token, an old turn's
token, no orders, problems in its lines. `pbem status` lists them beside the
rejected mail, so that no mail's failure hides from the GM; the outcomes are
written here, once, for the mail flow that writes them and the status that
reads them.
"""

from __future__ import annotations

import re

NO_PROOF = "no password or turn token"
NO_ORDERS = "no orders"


def stale_token(turn: int) -> str:
    return f"stale token of turn {turn}"


# the whole outcome; "check; 2 problems" (a CHECK, answered) or "absence; 2
# problems" (the ABSENT was applied) are no refusal
_APPLIED_NOTHING = re.compile(
    r"no password or turn token|stale token of turn \d+|no orders|\d+ problems?"
)
# what the database narrows to before _APPLIED_NOTHING decides (LIKE patterns)
LIKE = (NO_PROOF, NO_ORDERS, "stale token of turn %", "% problem", "% problems")


def applied_nothing(outcome: str) -> bool:
    """Whether a processed mail's outcome says nothing in it was applied."""
    return _APPLIED_NOTHING.fullmatch(outcome) is not None
