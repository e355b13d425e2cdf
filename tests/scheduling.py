"""The order the suite's tests are handed to pytest-xdist's workers (see
scripts/test.sh: ``--dist loadfile --no-loadscope-reorder``).

Why: the main pass runs three workers on two cores, and a long test started
last runs alone at the end while the other workers idle. xdist hands out one
test file at a time in collection order; the files of known-slow tests go
first (longest processing time first), so the short ones fill the gaps at the
end. A whole file to one worker builds each module-scoped fixture (a game
played once, read by many tests) once, not once per worker. (``--dist
loadgroup`` would split files, but xdist 3.8 cannot group under pytest 9:
it renames ``item._nodeid``, which pytest 9 no longer reads.)

Order changes nothing a test proves: every test still runs, with its own
fixtures; the order is the same in every worker, as xdist requires.
"""

from __future__ import annotations

import pytest

# Node-id prefixes of the slowest tests, slowest first (from `pytest
# --durations=40` of the main pass; a test not named here keeps its place).
# (The GM recipes, once first at 125 s, take about 25 s since each `pbem` is
# forked from one process; the demo, 64 s, went from 22nd to 10th. Starting
# every fault file at once was tried: they slowed each other down.)
SLOW_FIRST: tuple[str, ...] = (
    "tests/faults/test_poll_stages_in_order.py::test_a_poll_killed_while_it_sends",
    "tests/faults/test_faults_servers.py::test_sigkill_mid_send_batch",
    "tests/faults/test_faults_servers.py::test_smtp_stopped_mid_batch",
    "tests/faults/test_faults_outages.py::test_poll_with_the_database_down",
    "tests/project/test_bench_smoke.py::test_bench_startup",
    "tests/faults/test_poll_stages_in_order.py::test_the_outbox_goes_out_after_the_inbox",
    "tests/faults/test_faults_servers.py::test_postgresql_restarted_mid_poll",
    "tests/service/test_hostile_fuzz.py::test_no_mutated_mail_escapes_the_mail_handler",
    "tests/project/test_bench_smoke.py::test_bench_workers",
    "tests/cli/test_demo.py",
    "tests/report/test_report_mail.py",
    "tests/service/test_mail_freestyle.py",
    "tests/service/test_fog_audit.py",
    "tests/service/test_longgames_deadlines.py",
    "tests/faults/test_reliability_faults.py",
    "tests/faults/test_faults_servers.py",
    "tests/service/test_mail_setup_report.py",
    "tests/service/test_poll_hostile.py",
    "tests/service/test_hostile_mail.py",
    "tests/cli/test_mailloop_cli.py",
    "tests/cli/test_gm_cli.py",
    "tests/project/test_bench_smoke.py",
    "tests/project/test_gm_recipes.py::test_every_recipe_runs_as_written",
    "tests/service/test_rulebook_classic_mail.py",
    "tests/report/test_report_mime_writer.py",
    "tests/service/test_mailloop_game.py",
    "tests/project/test_readme.py",
    "tests/service/test_longgames_seats.py",
    "tests/faults/",
)


def _rank(nodeid: str) -> int:
    for rank, prefix in enumerate(SLOW_FIRST):
        if nodeid.startswith(prefix):
            return rank
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first; a stable sort: the rest keep pytest's order."""
    items.sort(key=lambda item: _rank(item.nodeid))
