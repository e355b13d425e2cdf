"""Compile the rules engine with mypyc, in place (issue 16: speed).

    python scripts/build_native.py          # build (about 30 s on 2 cores)
    python scripts/build_native.py --clean  # remove every built file

The compiled modules sit next to their sources (pbem/rules/engine.cpython-*.so
beside engine.py), all in one mypyc group whose shared library is
pbem/rules/_native__mypyc.*.so, so nothing lands at the repository root; the C
files and objects go to a temporary folder. The build writes
pbem/rules/_native.json, the manifest that `pbem.native` reads at start-up:
the SHA-256, size and mtime of every compiled source and of every built file.
A source that no longer matches makes the whole group load from source (the
compiled modules call each other directly, so one stale module cannot be swapped
alone); so does PBEM_NATIVE=0.

Pure Python always works: if mypyc or a C compiler is missing, or the build
fails, this prints a warning, removes what it built and exits 0 (1 with
--strict, as a developer checking the build wants).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbem.native import (  # noqa: E402
    GROUP,
    NATIVE_MODULES,
    built_files,
    manifest_path,
    source_path,
    write_manifest,
)


def clean() -> list[Path]:
    """Remove every compiled module, the group's library and the manifest."""
    removed = [Path(p) for p in built_files()]
    if Path(manifest_path()).exists():
        removed.append(Path(manifest_path()))
    for path in removed:
        path.unlink()
    return removed


def source_paths() -> list[str]:
    return [str(Path(source_path(name)).relative_to(ROOT)) for name in NATIVE_MODULES]


def build(verbose: bool, keep_c: Path | None = None) -> None:
    """Run mypyc and setuptools' build_ext --inplace from the repository root."""
    from mypyc.build import mypycify  # imported here: pure Python needs no mypyc
    from setuptools import setup

    with tempfile.TemporaryDirectory(prefix="pbem-native-") as tmp:
        if keep_c is not None:  # the generated C, to read what mypyc made of a line
            tmp = str(keep_c.resolve())
        old = Path.cwd()
        os.chdir(ROOT)
        try:
            out = io.StringIO()
            quiet = contextlib.nullcontext() if verbose else contextlib.redirect_stdout(out)
            with quiet:
                ext = mypycify(
                    source_paths(),
                    opt_level="3",
                    group_name=GROUP,
                    target_dir=str(Path(tmp) / "c"),
                )
                setup(
                    name="pbem-native",
                    packages=[],
                    py_modules=[],
                    ext_modules=ext,
                    script_args=["build_ext", "--inplace", "--build-temp", str(Path(tmp) / "o")]
                    + ([] if verbose else ["--quiet"]),
                )
        finally:
            os.chdir(old)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove every built file")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the build fails")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--keep-c", type=Path, help="write the generated C to this folder")
    args = parser.parse_args()
    removed = clean()
    if args.clean:
        print(f"removed {len(removed)} built files")
        return 0
    try:
        if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
            raise RuntimeError("no C compiler (cc or gcc) on the PATH")
        build(args.verbose, args.keep_c)
        write_manifest()
    except (Exception, SystemExit) as exc:  # setuptools exits on a compiler error
        clean()
        print(
            f"warning: the rules engine was not compiled ({type(exc).__name__}: {exc}); "
            "pbem runs as pure Python (slower, same results)",
            file=sys.stderr,
        )
        return 1 if args.strict else 0
    what = "rules, orders, orderlog.records"
    print(f"compiled {len(NATIVE_MODULES)} modules of pbem ({what}) with mypyc")
    return 0


if __name__ == "__main__":
    sys.exit(main())
