"""Benchmark of start-up (issue 28): what a command costs before and beside its work.

    python scripts/bench/startup.py                 # 9 runs of each command
    python scripts/bench/startup.py --runs 15
    python scripts/bench/startup.py --root /tmp/base  # time another checkout of pbem
    python scripts/bench/startup.py --compare /tmp/base  # this one and another, in turn

It prepares a game as the README does (``pbem init``, ``pbem new g1`` with
three players, one ``pbem poll`` to send the start mails) in a temporary
folder: SQLite in ``var/pbem.db``, the local Maildir transport. Then each of
these runs in a new process, in turn, ``--runs`` times, after one run each
to warm the bytecode cache:

- ``python -c "import sqlmodel"``: the baseline (every command that opens the
  database needs sqlmodel);
- ``pbem --help``;
- ``pbem show g1``;
- an idle ``pbem poll``: no mail in the inbox, nothing due (the cron job of
  every minute);
- the idle poll's own work: ``pbem.cli.mail.poll`` called in a process that
  has already imported the command's modules (``pbem.cli``, ``pbem.cli.mail``,
  ``pbem.service.ops.poll``, ``pbem.store``, ``pbem.config``); whatever the cycle
  imports lazily counts as its work.

For each it prints the median wall time, CPU time (user + system) and peak
RSS of the process (``os.wait4``), and the ratio of the medians to the
baseline's. The children get a bytecode cache of their own
(``PYTHONPYCACHEPREFIX`` in the temporary folder, ``PYTHONDONTWRITEBYTECODE``
unset), as an installed package has, and no ``PBEM_*`` variables. With
``--compare OTHER``, the same runs of another checkout (its own game and
folder) alternate with this one's, so that both meet the same load. Exits 1
when the idle poll was not idle (it must read no mail and send none).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IDLE = "0 mails; 0 sent, 0 deferred, 0 failed"

WORK = """
import sys, time
import importlib, pbem.cli, pbem.cli.mail, pbem.config, pbem.store
try:  # the poll's module, in the layout with service sub-packages or before it
    importlib.import_module("pbem.service.ops.poll")
except ModuleNotFoundError:
    importlib.import_module("pbem.service.poll")
start, cpu = time.perf_counter(), time.process_time()
try:
    pbem.cli.mail.poll(None)
except SystemExit:
    pass
sys.stderr.write(f"work {time.perf_counter() - start:.6f} {time.process_time() - cpu:.6f}\\n")
"""


@dataclass
class Figures:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    work: list[float] = field(default_factory=list)  # as the child reports it: wall
    work_cpu: list[float] = field(default_factory=list)  # and CPU

    def line(self, name: str, base: Figures | None) -> str:
        wall, cpu = statistics.median(self.wall), statistics.median(self.cpu)
        out = (
            f"{name:<28} wall {wall * 1000:7.0f} ms   cpu {cpu * 1000:7.0f} ms   "
            f"peak RSS {statistics.median(self.rss_kb) / 1024:5.1f} MB"
        )
        if base is not None:
            out += (
                f"   ratio to the baseline: wall {wall / statistics.median(base.wall):.2f}x, "
                f"cpu {cpu / statistics.median(base.cpu):.2f}x"
            )
        return out


def child_env(root: Path, folder: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PBEM_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPATH"] = str(root)
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], figures: Figures | None) -> str:
    """One process; its wall time, CPU and peak RSS go into ``figures``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}):\n{text}{errors}")
    if figures is not None:
        figures.wall.append(wall)
        figures.cpu.append(usage.ru_utime + usage.ru_stime)
        figures.rss_kb.append(usage.ru_maxrss)
        for line in errors.splitlines():
            if line.startswith("work "):
                figures.work.append(float(line.split()[1]))
                figures.work_cpu.append(float(line.split()[2]))
    return text


def prepare(folder: Path, env: dict[str, str]) -> None:
    """The README's first game: a database, an inbox, a game, its start mails sent."""
    pbem = [sys.executable, "-m", "pbem"]
    run([*pbem, "init"], folder, env, None)
    players = ["alice:alice@example.org", "bob:bob@example.org", "carol:carol@example.org"]
    run([*pbem, "new", "g1", *(x for p in players for x in ("-p", p))], folder, env, None)
    run([*pbem, "poll"], folder, env, None)


COMMANDS = {
    'python -c "import sqlmodel"': [sys.executable, "-c", "import sqlmodel"],
    "pbem --help": [sys.executable, "-m", "pbem", "--help"],
    "pbem show g1": [sys.executable, "-m", "pbem", "show", "g1"],
    "pbem poll (idle)": [sys.executable, "-m", "pbem", "poll"],
    "the idle poll's work": [sys.executable, "-c", WORK],
}
BASELINE = 'python -c "import sqlmodel"'


def report(root: Path, runs: int, figures: dict[str, Figures]) -> None:
    base = figures[BASELINE]
    print(f"pbem at {root}; {runs} runs each, medians; Python {sys.version.split()[0]}")
    for name, fig in figures.items():
        print(fig.line(name, None if fig is base else base))
    work, cpu = figures["the idle poll's work"].work, figures["the idle poll's work"].work_cpu
    print(
        f"the idle poll's own work (after its imports): wall {statistics.median(work) * 1000:.0f}"
        f" ms (min {min(work) * 1000:.0f}, max {max(work) * 1000:.0f}), "
        f"cpu {statistics.median(cpu) * 1000:.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (median)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the pbem checkout to time")
    parser.add_argument("--compare", type=Path, help="another checkout, timed in turn with it")
    args = parser.parse_args()
    roots = [args.root.resolve()] + ([args.compare.resolve()] if args.compare else [])
    top = Path(tempfile.mkdtemp(prefix="pbem-startup-"))
    try:
        places = []
        for number, root in enumerate(roots):
            folder = top / str(number)
            folder.mkdir()
            env = child_env(root, folder)
            prepare(folder, env)
            for argv in COMMANDS.values():  # warm the bytecode cache
                run(argv, folder, env, None)
            places.append((root, folder, env, {name: Figures() for name in COMMANDS}))
        for _ in range(args.runs):  # in turn, so that the load of the moment falls on all
            for name, argv in COMMANDS.items():
                for _root, folder, env, figures in places:
                    out = run(argv, folder, env, figures[name])
                    if argv[-1] == "poll" and IDLE not in out:
                        print(f"FAIL: the idle poll was not idle: {out.strip()}")
                        return 1
        for root, _folder, _env, figures in places:
            report(root, args.runs, figures)
        load = os.getloadavg()
        print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
