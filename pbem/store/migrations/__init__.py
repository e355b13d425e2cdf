"""Alembic migrations of the pbem schema; run them through pbem.store.migrate."""
