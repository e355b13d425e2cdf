"""Shared test set-up. Fixtures live in one module per layer (see pytest_plugins)."""

pytest_plugins = [
    "tests.fixtures_pg",
    "tests.fixtures_mail",
    "tests.fixtures_oauth",
    "tests.scheduling",
]
