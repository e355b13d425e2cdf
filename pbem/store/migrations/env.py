"""Alembic environment of pbem, driven from Python (pbem.store.migrate), no alembic.ini.

The caller passes an open connection in ``config.attributes["connection"]``;
this file only binds the models' metadata to it.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString

import pbem.store.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from pbem.store.types import UTCDateTime


def render_item(kind: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Write our column types as plain SQLAlchemy types, so old migrations
    never depend on the model code of the day."""
    if kind == "type" and isinstance(obj, AutoString):
        return "sa.String()"
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError(
            "pbem migrations run through pbem.store.migrate (upgrade, init_db), "
            "which passes them a connection"
        )
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        render_item=render_item,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("pbem migrations need a database connection (offline mode is not supported)")
run_migrations_online()
