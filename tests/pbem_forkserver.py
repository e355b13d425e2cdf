"""A `pbem` on PATH that starts in milliseconds, for tests that run many pbem
commands through bash as a user types them (tests/project/test_gm_recipes.py).

A real `pbem` process spends about a second of CPU importing typer, SQLModel
and the service before its work; the recipes run some thirty of them. Here one
server process imports pbem once; the ``pbem`` on PATH is a small script (the
standard library only) that hands the server its argv, environment, working
folder and its stdin, stdout and stderr (the file descriptors themselves, over
a Unix socket), and exits with the code the command exits with. For each
command the server forks: the child takes those descriptors as 0, 1 and 2,
that folder and that environment, runs ``pbem.entry.main()`` (the console
script's function) as a new process would, and reports its exit code.

What stays real: bash, pipes and redirections, the files and databases the
commands write, every command's output and exit code; what is shared is only
the imported code (imports read no configuration). The installed console
script itself is run by tests/project/test_readme.py.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The modules a command imports, loaded once in the server (pbem.cli builds the
# typer app lazily; the service and report modules are imported by the commands).
PRELOAD = (
    "pbem.entry",
    "pbem.cli",
    "pbem.config",
    "pbem.store",
    "pbem.service.ops.status",
    "pbem.service.ops.poll",
    "pbem.report.render",
)

SHIM = """\
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({path!r})
ask = json.dumps({{"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd()}}).encode()
socket.send_fds(s, [len(ask).to_bytes(8, "big") + ask], [0, 1, 2])
answer = b""
while chunk := s.recv(16):
    answer += chunk
sys.exit(int(answer or b"1"))
"""


def _exit_code(exc: SystemExit) -> int:
    """The status Python gives a process that raised ``exc`` to its top."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _run_command(conn: socket.socket, fds: list[int], ask: dict[str, object]) -> None:
    """In the forked child: become the command, run it, report its exit code."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # pbem's own subprocesses are waited for
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(str(ask["cwd"]))
    os.environ.clear()
    os.environ.update(ask["env"])  # type: ignore[arg-type]
    sys.argv = list(ask["argv"])  # type: ignore[call-overload]
    # click names the program after argv[0] unless __main__ came from `-m`
    # (this server's own start): as under the console script, "pbem".
    main_module = sys.modules["__main__"]
    main_module.__spec__, main_module.__package__ = None, None
    code = 1
    try:
        from pbem.entry import main

        main()
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # noqa: BLE001 - as the interpreter does: a traceback, status 1
        traceback.print_exc()
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError):
        conn.sendall(str(code).encode())
    os._exit(code)


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    size = int.from_bytes(data[:8], "big")
    while len(data) < 8 + size:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    return json.loads(data[8 : 8 + size]), list(fds)


def serve(path: str) -> None:
    """Import pbem, listen on ``path``, fork one child per command."""
    for name in PRELOAD:
        __import__(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the children reap themselves
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        ask, fds = _receive(conn)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        if os.fork() == 0:
            listener.close()
            _run_command(conn, fds, ask)
        conn.close()
        for fd in fds:
            os.close(fd)


@contextlib.contextmanager
def pbem_on_path(env: dict[str, str], cwd: Path) -> Iterator[Path]:
    """A folder holding a fast ``pbem`` (put it first on PATH), served under
    ``env`` from ``cwd`` for as long as the block runs."""
    folder = Path(tempfile.mkdtemp(prefix="pbem-fork-"))
    path = str(folder / "socket")
    shim = folder / "pbem"
    shim.write_text(f"#!{sys.executable} -IS\n" + SHIM.format(path=path), encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "tests.pbem_forkserver", path],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        ready = server.stdout.readline()
        assert ready == "ready\n", f"the pbem fork server did not start ({server.poll()})"
        yield folder
    finally:
        server.kill()
        server.wait(timeout=30)
        if server.stdout is not None:
            server.stdout.close()
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


if __name__ == "__main__":
    serve(sys.argv[1])
