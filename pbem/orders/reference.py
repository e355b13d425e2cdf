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
        f"```text\n{help_text(board)}```\n"
    )


if __name__ == "__main__":
    print(reference_document(builtin_map(sys.argv[1] if len(sys.argv) > 1 else "classic")), end="")
