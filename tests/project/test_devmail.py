"""`scripts/devmail.py`, offered to GMs for trying real mail, runs after the
documented install (issue 30, point 9): scripts/bootstrap.sh installs what it
needs, and a Python without it hands over to the checkout's .venv."""

from __future__ import annotations

import os
import re
import signal
import smtplib
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest

from pbem.testing.mailservers import dovecot_binary

ROOT = Path(__file__).resolve().parents[2]
NO_DOVECOT = pytest.mark.skipif(
    dovecot_binary() is None,
    reason="Dovecot is not installed (scripts/install-system-deps.sh installs it)",
)


def test_bootstrap_installs_what_devmail_needs() -> None:
    bootstrap = (ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")
    extras = re.findall(r"pip install -q -e '\.\[([a-z,]+)\]'", bootstrap)
    assert extras == ["test"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = project["dependencies"] + [
        d for extra in extras[0].split(",") for d in project["optional-dependencies"][extra]
    ]
    names = {re.split(r"[<>=\[ ]", d)[0].lower() for d in installed}
    assert {"aiosmtpd", "imapclient"} <= names


def _run_devmail(command: list[str], env: dict[str, str]) -> None:
    """Start devmail, wait for its summary, talk SMTP to it, stop it with SIGTERM."""
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl-C stops everything."):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(60) and process.poll() is None, (lines, process.stderr)
        smtp = next(line for line in lines if line.startswith("SMTP "))
        host, port = re.fullmatch(r"SMTP\s+([\d.]+):(\d+)\s+\(none\)", smtp).groups()  # type: ignore[union-attr]
        assert host == "127.0.0.1"
        with smtplib.SMTP(host, int(port), timeout=10) as client:
            assert client.ehlo()[0] == 250
        assert "Users (password 'secret'): game@pbem.localhost, gm@pbem.localhost" in lines
        assert 'transport = "imap"' in lines
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert err.splitlines()[-1] == "devmail: stopped"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.pop("PYTHONPATH", None)
    return env


@NO_DOVECOT
def test_devmail_starts_and_stops_with_the_bootstrapped_python() -> None:
    _run_devmail([sys.executable, str(ROOT / "scripts" / "devmail.py")], _env())


SYSTEM_PYTHON = Path("/usr/bin/python3")


@NO_DOVECOT
@pytest.mark.skipif(
    not SYSTEM_PYTHON.is_file()
    or subprocess.run([str(SYSTEM_PYTHON), "-c", "import aiosmtpd"], capture_output=True).returncode
    == 0,
    reason="no system Python without aiosmtpd to try",
)
def test_devmail_run_by_another_python_hands_over_to_the_venv(tmp_path: Path) -> None:
    """`python3 scripts/devmail.py` in a bootstrapped checkout, python3 being the
    system's (no aiosmtpd): it runs itself again with .venv/bin/python."""
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "devmail.py"
    script.write_text((ROOT / "scripts" / "devmail.py").read_text(encoding="utf-8"))
    (tmp_path / "pbem").symlink_to(ROOT / "pbem")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    venv = tmp_path / ".venv" / "bin" / "python"
    venv.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    venv.chmod(0o755)
    _run_devmail([str(SYSTEM_PYTHON), str(script)], _env())


def test_devmail_without_its_tools_says_the_one_command(tmp_path: Path) -> None:
    if not SYSTEM_PYTHON.is_file():
        pytest.skip("no system Python")
    script = tmp_path / "scripts" / "devmail.py"  # a checkout with no .venv
    script.parent.mkdir()
    script.write_text((ROOT / "scripts" / "devmail.py").read_text(encoding="utf-8"))
    done = subprocess.run(
        [str(SYSTEM_PYTHON), str(script)], env=_env(), capture_output=True, text=True, timeout=60
    )
    if done.returncode == 0 or "not installed" not in done.stderr:
        pytest.skip("the system Python has devmail's tools")
    assert done.returncode == 1
    assert done.stderr.endswith(
        f"not installed for {SYSTEM_PYTHON}: run scripts/bootstrap.sh (it installs them in "
        ".venv), then .venv/bin/python scripts/devmail.py\n"
    )
