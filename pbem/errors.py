"""The error types a user can cause, gathered for the CLI's one-line messages."""

from __future__ import annotations


def user_error_types() -> tuple[type[BaseException], ...]:
    """Imported late so that quick commands do not load every layer."""
    from pbem.config import ConfigError
    from pbem.rules.errors import MapError, OptionsError, RulesError
    from pbem.service.clock import ClockError
    from pbem.service.errors import ServiceError
    from pbem.store.errors import DatabaseError

    return (
        ConfigError,
        MapError,
        OptionsError,
        RulesError,
        ServiceError,
        DatabaseError,
        ClockError,
    )
