"""sendlog_folded: the outbox table is the one record of what was sent

pbem up to revision 0007 kept a SQLite database's outbox leases and "sent"
marks, while a sender worked, in a file beside it (``<database>-sendlog``).
From this revision the outbox table alone holds them; a send log left by an
older pbem is folded into the table at the first start
(pbem/store/sendlog.py, ``fold_leftover``, run by ``init_db`` after this
migration).

No schema changes. The revision keeps an older pbem away: a worker from
before it would lease and mark in the send log, which newer workers no
longer read, and could send a mail a newer worker sends too. Such a pbem
refuses a database at this revision ("upgrade pbem").

Revision ID: 0008
Revises: 0007
"""

from collections.abc import Sequence

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
