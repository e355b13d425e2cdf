"""A per-mail budget of memory and processor time: big mails are decoded in a child.

Every step of decoding is linear in the mail's size (pbem.mail.bounds), so a
small mail is cheap whatever it holds: below ``child_above_bytes`` (64 KiB)
it is decoded in the poll's own process, where a fork would cost more than
the decoding. A bigger mail is decoded in a forked child under
``resource.setrlimit``: RLIMIT_AS = the child's address space at the fork +
``memory_mib``, RLIMIT_CPU = ``cpu_seconds``, and a wall-clock
``timeout_seconds`` after which the parent kills it. The DecodedMail (or the
MailError) comes back pickled over a pipe. A child that runs out of memory,
out of time, or dies gives MailTooCostly: the poll goes on, and the kernel
never has to kill the poll for one mail.

A forked child holds a copy of the poll's database and mail connections,
and of any lock another thread of the process (a library's) held at the
fork, so it only decodes and leaves with os._exit: no logging, no
database, no atexit handlers, no garbage collection of objects it shares
with its parent. (The logging module takes its own lock around a fork, so
a fork waits for a log line being written, never longer.) Where os.fork is
missing, decoding happens in process.
"""

from __future__ import annotations

import faulthandler
import gc
import io
import os
import pickle
import selectors
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pbem.mail.errors import MailError, MailTooCostly

T = TypeVar("T")

# exit codes of the child, read by the parent
_EXIT_OK = 0
_EXIT_MEMORY = 3
_EXIT_CRASH = 4
_MAX_RESULT_BYTES = 64 * 1024 * 1024  # far above any bounded DecodedMail


@dataclass(frozen=True)
class DecodeBudget:
    """What one mail may cost to read ([mail] decode_* settings, docs/MAIL.md).

    ``child_above_bytes`` < 0 never uses a child (tests, platforms without
    fork); 0 decodes every mail in one."""

    child_above_bytes: int = 64 * 1024
    memory_mib: int = 512
    cpu_seconds: float = 5.0
    timeout_seconds: float = 15.0

    def __post_init__(self) -> None:
        if self.memory_mib < 1 or self.cpu_seconds <= 0 or self.timeout_seconds <= 0:
            raise ValueError(f"a decode budget must be positive (got {self})")

    def wants_child(self, size: int) -> bool:
        return self.child_above_bytes >= 0 and size > self.child_above_bytes


IN_PROCESS = DecodeBudget(child_above_bytes=-1)


def can_fork() -> bool:
    return hasattr(os, "fork") and hasattr(os, "_exit")


def run(work: Callable[[bytes], T], raw: bytes, budget: DecodeBudget) -> T:
    """``work(raw)`` in a forked child within ``budget``: its result, or the
    MailError it raised, or MailTooCostly when it ran out of memory or time
    or died. Never another exception from the child."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing but the work, then _exit
        os.close(read_end)
        _child(work, raw, budget, write_end)
    os.close(write_end)
    data, timed_out = b"", True
    try:
        data, timed_out = _read_all(read_end, budget.timeout_seconds)
    finally:
        os.close(read_end)
        status = _reap(pid, grace=0.0 if timed_out else 2.0)
    if timed_out:
        raise MailTooCostly(_seconds(budget.timeout_seconds))
    return _outcome(data, status, budget)


def _child(work: Callable[[bytes], Any], raw: bytes, budget: DecodeBudget, out: int) -> None:
    code = _EXIT_CRASH
    try:
        gc.disable()  # collect nothing the parent still owns (sockets, connections)
        faulthandler.disable()  # a crash is told by the exit status, not on stderr
        for number in (signal.SIGINT, signal.SIGTERM):  # the poll decides when to stop
            signal.signal(number, signal.SIG_IGN)
        _limit(budget)
        try:
            payload = pickle.dumps(("ok", work(raw)), protocol=pickle.HIGHEST_PROTOCOL)
        except MailError as exc:
            payload = pickle.dumps(("error", exc), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(payload)
        while view:
            view = view[os.write(out, view) :]
        code = _EXIT_OK
    except MemoryError:
        code = _EXIT_MEMORY
    except BaseException:  # noqa: BLE001 - reported by the exit code; nothing else may run
        code = _EXIT_CRASH
    finally:
        os._exit(code)


def _limit(budget: DecodeBudget) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = max(1, int(budget.cpu_seconds + 0.999))
    _set(resource.RLIMIT_CPU, cpu, cpu + 1)
    _set(resource.RLIMIT_AS, _address_space() + budget.memory_mib * 1024 * 1024, None)


def _set(which: int, soft: int, hard: int | None) -> None:
    """Lower a limit, never above the hard limit the process already has."""
    import resource

    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        soft = min(soft, current_hard)
        hard = current_hard if hard is None else min(hard, current_hard)
    resource.setrlimit(which, (soft, resource.RLIM_INFINITY if hard is None else hard))


def _address_space() -> int:
    """This process's virtual memory size in bytes (Linux), else 0."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _read_all(fd: int, timeout: float) -> tuple[bytes, bool]:
    """Everything the child writes until it closes the pipe; (data, timed out)."""
    chunks = io.BytesIO()
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:  # not select(): any fd number
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return chunks.getvalue(), True
            if not selector.select(left):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return chunks.getvalue(), False
            if chunks.tell() + len(chunk) > _MAX_RESULT_BYTES:
                return b"", False
            chunks.write(chunk)


def _reap(pid: int, grace: float) -> int:
    """Collect the child, killing it if it still runs after ``grace`` seconds
    (it closes the pipe only by leaving); its wait status."""
    deadline = time.monotonic() + grace
    done, status = os.waitpid(pid, os.WNOHANG)
    while done == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
        done, status = os.waitpid(pid, os.WNOHANG)
    if done == 0:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
    return status


def _seconds(value: float) -> str:
    return f"{value:g} second" if value == 1 else f"{value:g} seconds"


def _outcome(data: bytes, status: int, budget: DecodeBudget) -> Any:
    if os.WIFSIGNALED(status):
        if os.WTERMSIG(status) == signal.SIGXCPU:
            raise MailTooCostly(f"{_seconds(budget.cpu_seconds)} of processor time")
        raise MailTooCostly(f"what a reader may use (it stopped on signal {os.WTERMSIG(status)})")
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else _EXIT_CRASH
    if code == _EXIT_MEMORY:
        raise MailTooCostly(f"{budget.memory_mib:,} MiB of memory")
    if code != _EXIT_OK or not data:
        raise MailTooCostly(f"what a reader may use (it stopped with code {code})")
    try:
        kind, value = _SafeUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001 - a broken answer is a failed read
        raise MailTooCostly(f"what a reader may use (its answer was unreadable: {exc})") from None
    if kind == "error" and isinstance(value, MailError):
        raise value
    return value


class _SafeUnpickler(pickle.Unpickler):
    """Only what a decoding child sends back: DecodedMail, its parts, mail errors."""

    _ALLOWED = {
        ("pbem.mail.decode", "DecodedMail"),
        ("pbem.mail.decode", "Attachment"),
        ("pbem.mail.errors", "_rebuild"),
        ("datetime", "datetime"),
        ("datetime", "timezone"),
        ("datetime", "timedelta"),
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        if module == "pbem.mail.errors":
            found = super().find_class(module, name)
            if isinstance(found, type) and issubclass(found, MailError):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a decoding result")
