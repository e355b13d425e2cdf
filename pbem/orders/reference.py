"""docs/ORDERS-REFERENCE.md, written from the HELP text (run this module to regenerate it).

Not imported by the package, so ``python -m pbem.orders.reference`` runs cleanly.
"""

from __future__ import annotations

import sys

from pbem.maps import builtin_map
from pbem.orders.help import help_text
from pbem.rules.board import Board


def reference_document(board: Board) -> str:
    """docs/ORDERS-REFERENCE.md: the HELP reply of ``board``, for readers of the repository."""
    return (
        "# Order language reference\n\n"
        f"This is what HELP mails back for the map `{board.name}`. It is written by\n"
        "`pbem/orders/help.py` from the parser's own table of orders; regenerate it with\n"
        "`python -m pbem.orders.reference > docs/ORDERS-REFERENCE.md` (a test compares the two).\n"
        "The design of the language is ORDERS.md.\n\n"
        f"```text\n{help_text(board)}```\n" + EXPERT_CLAUSES
    )


# What REROLL and COMMANDER do exactly (rules version 3, issue 33); the numbers are
# those of tests/rules/test_rulebook_expert_audit.py.
EXPERT_CLAUSES = """
## REROLL and COMMANDER exactly (expert rules, rules version 3)

The rulebook: "You may, if you wish, re-roll any one die." By mail you cannot
choose after seeing the dice, so `ATTACK ... REROLL` is a policy: on a roll
where you lose a comparison (and hold the card of 'from' or 'to'), your lowest
die that lost is re-rolled **only when it helps**: when the mean, over the six
values the die can take, of (the defender's losses - yours) is greater than
that difference for the roll as it stands. A tie keeps the roll. The extra die
is drawn from the game's dice, after both sides' dice, only when the re-roll is
made. For example 4 4 v 5 3 (one loss each) is kept: a 6 wins both, a 5 or a 4
changes nothing, a 3, 2 or 1 loses both, (2 - 2 - 2 - 2) / 6 = -2/3. Games of
rules version 2 re-roll on every roll that loses a comparison.

Armies per roll, the defender's losses minus yours (exact):

| dice | no re-roll | every time (version 2) | when it helps (version 3) |
|---|---|---|---|
| 1 v 1 | -1/6 = -0.167 | 17/108 = +0.157 | 17/108 = +0.157 |
| 2 v 1 | 17/108 = +0.157 | 23/72 = +0.319 | 23/72 = +0.319 |
| 3 v 1 | 23/72 = +0.319 | 1613/3888 = +0.415 | 1613/3888 = +0.415 |
| 1 v 2 | -53/108 = -0.491 | -143/648 = -0.221 | -143/648 = -0.221 |
| 2 v 2 | -143/324 = -0.441 | 251/3888 = +0.065 | 503/3888 = +0.129 |
| 3 v 2 | 205/1296 = +0.158 | 2305/5832 = +0.395 | 2779/5832 = +0.477 |

The rulebook: "Once per turn while attacking you may change one of the dice."
In pbem the commander makes one of your dice a 6, where that wins a comparison
you lost (the lowest die among equal gains), after any re-roll. `ATTACK ...
COMMANDER` uses it on the first roll of that attack where it wins one (written
on several attacks: the first of them where it does). With no COMMANDER in your
turn's orders it is used on the turn's first roll of 3 attacking dice where it
wins a comparison: never on a probe of 1 or 2 dice. Games of rules version 2
use it on the turn's first roll where it wins a comparison, and refuse the word.
"""


if __name__ == "__main__":
    print(reference_document(builtin_map(sys.argv[1] if len(sys.argv) > 1 else "classic")), end="")
