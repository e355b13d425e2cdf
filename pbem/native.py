"""Whether the rules engine runs compiled (mypyc) or from source, and never stale.

`scripts/build_native.py` compiles the modules of NATIVE_MODULES in place
(pbem/rules/engine.cpython-*.so beside engine.py) and writes a manifest of
what it compiled: each source's SHA-256, size and mtime, and each built file's
size and mtime. Python's own import system prefers an extension module to a
source file, so a developer who edits engine.py after a build would silently
run the old engine. `check()` (run once, when pbem is imported) prevents that:
when PBEM_NATIVE=0 is set, the manifest is missing or unreadable, a built file
is not the one the manifest names, or a source differs from what was compiled,
a finder placed first on sys.meta_path loads every module of the group from
its .py file instead. It is all or nothing: compiled modules call each other
directly inside their shared library and take each other's classes as native
types, so one stale module cannot be replaced alone.

The check costs a directory listing and one stat per module (sources whose
size and mtime match the manifest are not read); a source whose mtime changed
but whose bytes did not (a git checkout) is hashed and still counts as fresh.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from types import ModuleType

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
NATIVE_DIR = os.path.join(PACKAGE_DIR, "rules")  # the manifest and the group's library
#: the mypyc group: its shared library is pbem/rules/_native__mypyc.*.so
GROUP = "pbem.rules._native"
#: what the build compiles: the rules engine's hot path (mapformat.py stays Python), and
#: the order reader a replay runs for every turn (docs/PERFORMANCE.md)
NATIVE_MODULES: tuple[str, ...] = tuple(
    f"pbem.rules.{name}"
    for name in (
        "actions",
        "armies",
        "attacking",
        "board",
        "bots",
        "cards",
        "combat",
        "defence",
        "dice",
        "engine",
        "events",
        "opening",
        "options",
        "simulate",
        "state",
        "teamrules",
        "teams",
        "turnplan",
        "victory",
    )
) + tuple(
    f"pbem.orders.{name}"
    for name in (
        "canonical",
        "lexer",
        "linereader",
        "lines",
        "mailorders",
        "parser",
        "setupcheck",
        "validate",
    )
) + ("pbem.orderlog.records",)  # (not orderlog.replay: tests count its calls by monkeypatching)
MANIFEST_NAME = "_native.json"
MANIFEST_FORMAT = 2  # 2: built files named by their path under pbem/ (rules/, orders/)
ENV = "PBEM_NATIVE"


@dataclass(frozen=True, slots=True)
class NativeState:
    """What `check` found: `compiled` is True when the compiled modules are used."""

    compiled: bool
    reason: str

    def describe(self) -> str:
        """One line for `pbem --version` and the benchmarks."""
        if self.compiled:
            return f"rules engine: compiled (mypyc, {len(NATIVE_MODULES)} modules)"
        return f"rules engine: pure Python ({self.reason})"


def _suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def _short(module: str) -> str:
    return module.rsplit(".", 1)[1]


def source_path(module: str) -> str:
    """pbem.rules.engine -> PACKAGE_DIR/rules/engine.py"""
    return os.path.join(PACKAGE_DIR, *module.split(".")[1:]) + ".py"


def manifest_path() -> str:
    return os.path.join(PACKAGE_DIR, "rules", MANIFEST_NAME)


def native_dirs() -> list[str]:
    """The folders the build puts extension modules in (pbem/rules, pbem/orders)."""
    return sorted({os.path.dirname(source_path(m)) for m in NATIVE_MODULES})


def built_files(directory: str | None = None) -> list[str]:
    """Every extension module in the build's folders (all of them are the build's), sorted."""
    found: list[str] = []
    for folder in [directory] if directory else native_dirs():
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found += [
            os.path.join(folder, n)
            for n in names
            if any(n.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)
        ]
    return sorted(found)


def _key(path: str) -> str:
    """A built file's name in the manifest: its path under pbem/, with '/'."""
    return os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/")


def _built_key(module: str) -> str:
    return _key(source_path(module)[: -len(".py")] + _suffix())


def _sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _stamp(path: str) -> dict[str, int]:
    st = os.stat(path)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def write_manifest() -> str:
    """Record what was just compiled (called by scripts/build_native.py)."""
    sources = {m: {**_stamp(source_path(m)), "sha256": _sha256(source_path(m))}
               for m in NATIVE_MODULES}
    built = {_key(p): _stamp(p) for p in built_files()}
    missing = [m for m in NATIVE_MODULES if _built_key(m) not in built]
    if missing:
        raise RuntimeError(f"the build made no extension module for {', '.join(missing)}")
    data = {"format": MANIFEST_FORMAT, "suffix": _suffix(), "sources": sources, "built": built}
    with open(manifest_path(), "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
        handle.write("\n")
    return manifest_path()


def _stale_reason(built: Sequence[str]) -> str | None:
    """Why the built files must not be used, or None when they match their sources."""
    try:
        with open(manifest_path(), encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("format") != MANIFEST_FORMAT or data.get("suffix") != _suffix():
            return "built by another build or Python; run scripts/build_native.py"
        recorded_built: dict[str, dict[str, int]] = data["built"]
        sources: dict[str, dict[str, object]] = data["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return "compiled files without a readable manifest; run scripts/build_native.py"
    if sorted(_key(p) for p in built) != sorted(recorded_built):
        return "the compiled files are not those of the last build; run scripts/build_native.py"
    for path in built:
        if _stamp(path) != recorded_built[_key(path)]:
            return f"{os.path.basename(path)} changed after the build; run scripts/build_native.py"
    if sorted(sources) != sorted(NATIVE_MODULES):
        return "the build compiled other modules; run scripts/build_native.py"
    for module in NATIVE_MODULES:
        path, want = source_path(module), sources[module]
        try:
            stamp = _stamp(path)
        except OSError:
            return f"{_short(module)}.py is missing"
        if stamp["size"] == want.get("size") and stamp["mtime_ns"] == want.get("mtime_ns"):
            continue
        if _sha256(path) != want.get("sha256"):
            return f"{_short(module)}.py changed since the build; run scripts/build_native.py"
    return None


class SourceFinder:
    """First on sys.meta_path: loads the group's modules from their .py files."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = frozenset(modules)

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in self.modules:
            return None
        return importlib.util.spec_from_file_location(name, source_path(name))


_state: NativeState | None = None


def check() -> NativeState:
    """Decide once per process; install the SourceFinder when compiled code must not run."""
    global _state
    if _state is not None:
        return _state
    built = [p for p in built_files() if p.endswith(_suffix())]
    if not built:
        _state = NativeState(False, "not built; scripts/build_native.py compiles it")
        return _state
    if os.environ.get(ENV, "1").strip() == "0":
        reason: str | None = f"{ENV}=0"
    else:
        reason = _stale_reason(built)
    if reason is None:
        _state = NativeState(True, "")
        return _state
    loaded = [m for m in NATIVE_MODULES if m in sys.modules]
    if loaded:  # imported before pbem was: too late to choose
        reason += f" (but {loaded[0]} was already imported compiled)"
    sys.meta_path.insert(0, SourceFinder(NATIVE_MODULES))
    _state = NativeState(False, reason)
    return _state


def state() -> NativeState:
    """The decision `check` made (it is made when pbem is imported)."""
    return check()

