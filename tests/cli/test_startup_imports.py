"""Start-up stays lean (issue 28): a command imports what it needs, no more.

`pbem poll` runs every minute from cron and nearly always finds no mail and
nothing due; `pbem show` prints one game. Each runs here in a new process on
a prepared game (SQLite, the local Maildir) and the modules it imported are
compared with the heavy ones it must not need: the templates (jinja2), the
map picture (Pillow), the reports, the rules engine and the order reader,
the mail transports of other setups and the mail decoder, Alembic, the
PostgreSQL dialect. No
time is measured (scripts/bench/startup.py does that).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pbem.cli import COMMANDS, app, app_for, build, command_of

ROOT = Path(__file__).resolve().parents[2]

# the modules the process runs pbem's own entry point in, then lists
LIST_MODULES = """
import json, sys
sys.argv = ["pbem", *sys.argv[1:]]
from pbem.entry import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print("MODULES " + json.dumps(sorted(sys.modules)))
"""

# needed by no command that only reads the store, nor by an idle poll
HEAVY = (
    "jinja2",
    "PIL",
    "alembic",
    "aiosmtplib",
    "imapclient",
    "sqlalchemy.dialects.postgresql",
    "pbem.mail.decode",
    "pbem.mail.htmltext",
    "pbem.report.render",
    "pbem.report.pictures",
    "pbem.report.picture",
    "pbem.report.mime",
    "pbem.service.play.notify",
    "pbem.service.intake.mailflow",
    "pbem.service.tell.outmail",
)
# and an idle poll reads no game: no rules, orders, log or reports at all
IDLE_POLL_HEAVY = (
    *HEAVY,
    "pbem.rules",
    "pbem.orders",
    "pbem.orderlog",
    "pbem.report",
    "pbem.maps",
    "pbem.service.play.games",
    "pbem.service.play.turns",
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(ROOT)
    if "PBEM_NATIVE" in os.environ:
        env["PBEM_NATIVE"] = os.environ["PBEM_NATIVE"]
    return env


def _pbem(folder: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pbem", *args],
        cwd=folder,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _modules(folder: Path, *args: str) -> tuple[set[str], str]:
    """The modules a new process imported to run ``pbem ARGS``, and its output."""
    done = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, *args],
        cwd=folder,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out, _, listed = done.stdout.rpartition("MODULES ")
    return set(json.loads(listed)), out


def _loaded(modules: set[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's first game, its start mails sent: nothing waits, nothing is due."""
    folder = tmp_path_factory.mktemp("startup")
    _pbem(folder, "init")
    players = ["alice:alice@example.org", "bob:bob@example.org", "carol:carol@example.org"]
    _pbem(folder, "new", "g1", *(x for p in players for x in ("-p", p)))
    _pbem(folder, "poll")
    return folder


def test_an_idle_poll_imports_no_game_nor_report(game: Path) -> None:
    modules, out = _modules(game, "poll")
    assert "0 mails; 0 sent, 0 deferred, 0 failed" in out  # idle indeed
    assert "sqlmodel" in modules and "pbem.service.ops.poll" in modules  # it did poll
    assert _loaded(modules, IDLE_POLL_HEAVY) == []


def test_show_imports_no_report_nor_mail_machinery(game: Path) -> None:
    modules, out = _modules(game, "show", "g1")
    assert "Game g1" in out
    assert _loaded(modules, HEAVY) == []


def test_help_imports_no_database() -> None:
    modules, out = _modules(ROOT, "--help")
    assert "poll" in out and "show" in out
    assert _loaded(modules, ("sqlalchemy", "sqlmodel", "pydantic", *HEAVY)) == []


def test_the_command_named_is_found_after_the_options_for_every_command() -> None:
    assert command_of(["poll"]) == "poll"
    assert command_of(["show", "g1", "--json"]) == "show"
    assert command_of(["--now", "2026-12-01T09:00Z", "poll"]) == "poll"
    assert command_of(["--now=2026-12-01T09:00Z", "gm-password", "g1"]) == "gm-password"
    for whole in ([], ["--help"], ["--version"], ["pol"], ["--now"], ["--now", "x"]):
        assert command_of(whole) is None
        assert app_for(whole) is app


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS])
def test_a_command_alone_answers_as_in_the_whole_app(name: str) -> None:
    """The app of one command (what `pbem NAME ...` runs) documents and
    checks that command exactly as the whole app does."""
    alone = build(name)
    assert isinstance(alone, typer.Typer)
    runner = CliRunner()
    for args in ([name, "--help"], [name, "--no-such-option"]):
        whole = runner.invoke(app, args, env={"COLUMNS": "100"})
        one = runner.invoke(alone, args, env={"COLUMNS": "100"})
        assert (one.exit_code, one.output) == (whole.exit_code, whole.output)
