"""Compiled mail templates kept between processes (jinja2's bytecode cache).

A `pbem poll` run by cron is a new process each time, and compiling the
templates a turn needs is a large share of its work before the first mail
(docs/PERFORMANCE.md); the daemon paid it once. Jinja can keep the compiled code
on disk (``FileSystemBytecodeCache``: in a directory of this user's own
under the temporary directory, written by rename, so concurrent workers
never read half a file).

Never stale: jinja checks each entry against the template's source
(SHA-1) and the Python version, and the key here also carries the
environment's settings that are compiled into the code (whitespace
control, autoescaping, jinja's version), so a template compiled under other
settings is never loaded. Any problem with the directory means no cache,
never an error: compiling is always possible.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import jinja2
from jinja2 import BytecodeCache, FileSystemBytecodeCache

log = logging.getLogger("pbem.report")

SETTING = "PBEM_TEMPLATE_CACHE"  # "0": compile in every process; a path: keep them there


class _KeyedCache(FileSystemBytecodeCache):
    """A FileSystemBytecodeCache whose keys include the settings' fingerprint."""

    def __init__(self, fingerprint: str, directory: str | None = None) -> None:
        super().__init__(directory, pattern=f"pbem-{fingerprint}-%s.cache")
        self.fingerprint = fingerprint


def fingerprint(settings: dict[str, object]) -> str:
    """A short hash of what is compiled into a template besides its source."""
    text = repr(sorted((k, repr(v)) for k, v in settings.items())) + jinja2.__version__
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def bytecode_cache(
    settings: dict[str, object], directory: Path | None = None
) -> BytecodeCache | None:
    """The cache for templates compiled with ``settings``; None when it cannot be used
    (switched off with PBEM_TEMPLATE_CACHE=0, or no safe directory). The directory:
    ``directory``, else PBEM_TEMPLATE_CACHE when it names one, else jinja's own."""
    chosen = os.environ.get(SETTING, "")
    if chosen == "0":
        return None
    where = str(directory) if directory else chosen or None
    try:
        if where:
            Path(where).mkdir(parents=True, exist_ok=True)
        return _KeyedCache(fingerprint(settings), where)
    except (OSError, RuntimeError) as exc:  # jinja refuses an unsafe temporary directory
        log.info("compiled templates are not kept between processes: %s", exc)
        return None
