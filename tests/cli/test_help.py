"""`pbem --help` as a new GM reads it (issue 30, point 7): the commands in
panels by what a GM does, --version listed, every description whole sentences."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from pbem import __version__
from pbem.cli import COMMANDS, PANELS, app, help_text

ROOT = Path(__file__).resolve().parents[2]
ORDER = [
    ("Set up a game", ["init", "new", "rules", "gm-password"]),
    (
        "Run and watch games",
        ["poll", "daemon", "status", "outbox", "list", "show", "render", "mail"],
    ),
    (
        "Intervene in a game",
        [
            "process", "adjudicate", "pause", "resume", "extend", "set", "kick", "replace",
            "new-password", "rollback", "upgrade-rules",
        ],
    ),
    ("Records and the site", ["export", "import", "replay", "reveal", "verify", "site"]),
    ("Maps", ["maps"]),
    ("Tools", ["check", "odds", "simulate", "demo"]),
]  # fmt: skip


def _pbem(*args: str, columns: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS=str(columns), PBEM_NATIVE="0")
    return subprocess.run(
        [sys.executable, "-m", "pbem", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _panels(out: str) -> list[tuple[str, list[str]]]:
    """(title, commands) of each panel of a help page, in order."""
    found: list[tuple[str, list[str]]] = []
    for line in out.splitlines():
        title = re.match(r"╭─ (.+?) ─+╮$", line)
        if title:
            found.append((title.group(1), []))
            continue
        row = re.match(r"│ ([a-z][a-z-]*)\s{2,}", line)
        if row and found:
            found[-1][1].append(row.group(1))
    return found


def test_help_lists_the_commands_by_what_a_gm_does() -> None:
    done = _pbem("--help", columns=100)
    assert done.returncode == 0, done.stderr
    panels = _panels(done.stdout)
    assert panels[0][0] == "Options"
    assert panels[1:] == ORDER
    assert [(t, [n for n, _, _ in g]) for t, g in PANELS] == ORDER
    assert sorted(n for _, names in ORDER for n in names) == sorted(n for n, _, _ in COMMANDS)


def test_help_lists_version_and_version_prints_it() -> None:
    out = _pbem("--help", columns=100).stdout
    assert re.search(r"│ --version\s+<bool>\s+Print pbem.s version and which rules engine", out)
    for args in (["--version"], ["--now", "2026-12-01T09:00Z", "--version"]):
        done = _pbem(*args, columns=100)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"pbem {__version__}; rules engine: ")


def test_every_command_is_described_in_one_line_of_whole_sentences() -> None:
    """Wide enough, each command's row is its whole description, ending with
    a period: no description breaks where its source line did."""
    out = _pbem("--help", columns=250).stdout
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^│ ([a-z][a-z-]*)\s{2,}(\S.*?)\s*│$", out, flags=re.MULTILINE)
    }
    assert sorted(rows) == sorted(n for n, _, _ in COMMANDS)
    for name, text in rows.items():
        assert text[0].isupper() and text.endswith("."), (name, text)
    assert rows["init"] == (
        "Create the database (or bring it to the latest schema), and with the local "
        "Maildir transport the game's inbox with its folders."
    )


def test_no_help_text_keeps_a_line_break_of_its_docstring() -> None:
    for name, module, function in COMMANDS:
        command = getattr(importlib.import_module(f"pbem.cli.{module}"), function)
        doc = command.info.help if isinstance(command, typer.Typer) else command.__doc__
        text = help_text(str(doc or ""))
        assert text and "\n" not in text.replace("\n\n", ""), name
        for paragraph in text.split("\n\n"):
            assert paragraph.endswith((".", ")", "?")), (name, paragraph)


def test_a_command_help_wraps_whole_paragraphs() -> None:
    out = _pbem("poll", "--help", columns=250).stdout
    assert (
        "Overlapping runs (cron) exit quietly; exit code 2 when a server or the database "
        "could not be used (each problem on one line; the other stages ran)."
    ) in [line.strip() for line in out.splitlines()]


# A config table's name in a help text, as written (rich markup wants "\\[").
BRACKETED = re.compile(r"\\?\[([a-z][a-z0-9_.]*)\]")


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The path of every command and group under ``command`` (click's, as typer
    builds them: a group has ``commands``)."""
    found = [path]
    for name, sub in getattr(command, "commands", {}).items():
        found.extend(_commands(sub, (*path, name)))
    return found


def _command_at(path: tuple[str, ...]) -> Any:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def test_bracketed_config_names_survive_rich_markup() -> None:
    """Finding 12: `pbem mail login --help` printed "goes where  says": rich
    took [mail.oauth2] for a tag. Every command's help keeps every [table]."""
    checked = set()
    for path in _commands(typer.main.get_command(app)):
        command = _command_at(path)
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        names = {m.group(1) for text in texts for m in BRACKETED.finditer(text)}
        if not names:
            continue
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        for name in names:
            assert f"[{name}]" in result.output, (path, name)
            checked.add(name)
        assert "\\[" not in result.output, path  # an escape shown as such
    assert "mail.oauth2" in checked  # the test sees what it is meant to
