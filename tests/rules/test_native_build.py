"""The compiled rules engine (scripts/build_native.py) is never used stale.

The decision (pbem.native) is tested on a folder of fake built files, so it
runs without a compiler; the tests marked `needs_build` copy the real package
with its compiled modules into a temporary folder and import it in a new
process, and are skipped when this checkout has no build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pbem import native

ROOT = Path(__file__).resolve().parents[2]
SUFFIX = native._suffix()
BUILT = bool(native.built_files()) and (Path(native.NATIVE_DIR) / native.MANIFEST_NAME).exists()
needs_build = pytest.mark.skipif(not BUILT, reason="the rules engine is not compiled here")


@pytest.fixture
def fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package folder with every source and an empty 'extension module' for each
    (pbem/rules and pbem/orders); returns its rules folder."""
    package = tmp_path / "pbem"
    for module in native.NATIVE_MODULES:
        _, sub, short = module.split(".")
        (package / sub).mkdir(parents=True, exist_ok=True)
        (package / sub / f"{short}.py").write_text(f"X = {short!r}\n", encoding="utf-8")
        (package / sub / f"{short}{SUFFIX}").write_bytes(b"\x7fELF")
    folder = package / "rules"
    (folder / f"_native__mypyc{SUFFIX}").write_bytes(b"\x7fELF shared")
    monkeypatch.setattr(native, "PACKAGE_DIR", str(package))
    native.write_manifest()
    return folder


def test_a_fresh_build_is_used(fake_build: Path) -> None:
    assert native._stale_reason(native.built_files()) is None


def test_an_edited_source_makes_the_build_stale(fake_build: Path) -> None:
    (fake_build / "engine.py").write_text("X = 'edited'\n", encoding="utf-8")
    assert native._stale_reason(native.built_files()) == (
        "engine.py changed since the build; run scripts/build_native.py"
    )


def test_a_source_touched_but_unchanged_is_not_stale(fake_build: Path) -> None:
    path = fake_build / "engine.py"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert native._stale_reason(native.built_files()) is None  # hashed: same bytes


def test_a_rebuilt_library_without_its_manifest_is_stale(fake_build: Path) -> None:
    (fake_build / f"dice{SUFFIX}").write_bytes(b"\x7fELF other build")
    assert native._stale_reason(native.built_files()) == (
        f"dice{SUFFIX} changed after the build; run scripts/build_native.py"
    )
    (fake_build / native.MANIFEST_NAME).unlink()
    assert native._stale_reason(native.built_files()) == (
        "compiled files without a readable manifest; run scripts/build_native.py"
    )


def test_an_extension_module_the_build_did_not_make_is_stale(fake_build: Path) -> None:
    (fake_build / f"maps{SUFFIX}").write_bytes(b"\x7fELF")
    assert native._stale_reason(native.built_files()) == (
        "the compiled files are not those of the last build; run scripts/build_native.py"
    )


def test_an_edited_orders_source_makes_the_build_stale(fake_build: Path) -> None:
    (fake_build.parent / "orders" / "parser.py").write_text("X = 'edited'\n", encoding="utf-8")
    assert native._stale_reason(native.built_files()) == (
        "parser.py changed since the build; run scripts/build_native.py"
    )
    (fake_build.parent / "orders" / f"parser{SUFFIX}").unlink()
    assert native._stale_reason(native.built_files()) == (
        "the compiled files are not those of the last build; run scripts/build_native.py"
    )


def test_the_manifest_names_built_files_by_their_folder(fake_build: Path) -> None:
    data = json.loads((fake_build / native.MANIFEST_NAME).read_text(encoding="utf-8"))
    assert f"rules/engine{SUFFIX}" in data["built"]
    assert f"orders/parser{SUFFIX}" in data["built"]
    assert f"rules/_native__mypyc{SUFFIX}" in data["built"]
    assert data["format"] == 2


def test_the_manifest_names_every_source_hash(fake_build: Path) -> None:
    data = json.loads((fake_build / native.MANIFEST_NAME).read_text(encoding="utf-8"))
    assert sorted(data["sources"]) == sorted(native.NATIVE_MODULES)
    assert data["sources"]["pbem.rules.engine"]["sha256"] == (
        # sha256 of b"X = 'engine'\n"
        __import__("hashlib").sha256(b"X = 'engine'\n").hexdigest()
    )
    assert len(data["built"]) == len(native.NATIVE_MODULES) + 1  # and the group's library


def test_the_source_finder_loads_the_py_file(fake_build: Path) -> None:
    spec = native.SourceFinder(native.NATIVE_MODULES).find_spec("pbem.rules.engine", None)
    assert spec is not None and spec.origin == str(fake_build / "engine.py")
    assert (
        native.SourceFinder(native.NATIVE_MODULES).find_spec("pbem.rules.mapformat", None) is None
    )


def where_modules_load(pbem_parent: Path, env: dict[str, str]) -> dict[str, str]:
    """Import pbem from `pbem_parent` in a new process: each module's file, and the state."""
    code = (
        "import importlib, json, pbem.native as n\n"
        "files = {m: importlib.import_module(m).__file__ for m in n.NATIVE_MODULES}\n"
        "files['state'] = n.state().describe()\n"
        "print(json.dumps(files))\n"
    )
    full = {**os.environ, **env, "PYTHONPATH": str(pbem_parent)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=full,
        cwd=pbem_parent,  # `python -c` puts the working folder first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_pbem_native_0_loads_every_module_from_source() -> None:
    files = where_modules_load(ROOT, {"PBEM_NATIVE": "0"})
    state = files.pop("state")
    assert all(path.endswith(".py") for path in files.values()), files
    assert state == (
        "rules engine: pure Python (PBEM_NATIVE=0)"
        if BUILT
        else "rules engine: pure Python (not built; scripts/build_native.py compiles it)"
    )


@pytest.fixture
def copied_package(tmp_path: Path) -> Path:
    """The package with its built files, mtimes kept (as a checkout keeps them)."""
    shutil.copytree(ROOT / "pbem", tmp_path / "pbem", copy_function=shutil.copy2)
    return tmp_path


@needs_build
def test_the_build_is_used_when_it_matches(copied_package: Path) -> None:
    files = where_modules_load(copied_package, {"PBEM_NATIVE": "1"})
    assert files.pop("state") == (
        f"rules engine: compiled (mypyc, {len(native.NATIVE_MODULES)} modules)"
    )
    assert all(path.endswith(SUFFIX) for path in files.values()), files


@needs_build
def test_an_edited_source_loads_every_module_from_source(copied_package: Path) -> None:
    engine = copied_package / "pbem" / "rules" / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    files = where_modules_load(copied_package, {"PBEM_NATIVE": "1"})
    assert files.pop("state") == (
        "rules engine: pure Python (engine.py changed since the build; run scripts/build_native.py)"
    )
    # all of them: compiled modules call each other inside one library
    assert all(path.endswith(".py") for path in files.values()), files
    assert files["pbem.rules.engine"] == str(engine)


@needs_build
def test_pbem_version_says_whether_the_engine_is_compiled() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lines = []
    for flag in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-m", "pbem", "--version"],
            env={**env, "PBEM_NATIVE": flag},
            capture_output=True,
            text=True,
            check=True,
        )
        lines.append(done.stdout.strip())
    assert lines == [
        f"pbem 0.1.0; rules engine: compiled (mypyc, {len(native.NATIVE_MODULES)} modules)",
        "pbem 0.1.0; rules engine: pure Python (PBEM_NATIVE=0)",
    ]


@needs_build
def test_compiled_and_pure_games_are_the_same() -> None:
    code = (
        "from pbem.maps import builtin_map\n"
        "from pbem.maps.presets import load_preset\n"
        "from pbem.rules.simulate import play_game\n"
        "b, o = builtin_map('classic'), load_preset('classic')\n"
        "for seed in (1, 2, 3):\n"
        "    r = play_game(b, o, 4, seed, keep_hashes=True, dice='pbem-dice-v2')\n"
        "    print(seed, r.winner, r.turns, r.hashes[-1], len(r.hashes))\n"
    )
    outs = []
    for flag in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONPATH": str(ROOT), "PBEM_NATIVE": flag},
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert len(outs[0].splitlines()) == 3


def test_the_bots_generator_is_the_64_bit_lcg() -> None:
    """bots.lcg_step (machine-word friendly limbs) is x * A + C mod 2**64, and
    uniform/counts read (x >> 32) * n >> 32, as the plain formula did."""
    from pbem.rules.bots import BotRandom, lcg_step

    a, c, mask = 6364136223846793005, 1442695040888963407, (1 << 64) - 1
    for x in (0, 1, mask, mask - 1, 1 << 63, 0x123456789ABCDEF0, 2**44 - 1, 2**22):
        x0, x1, x2 = lcg_step(x & 0x3FFFFF, (x >> 22) & 0x3FFFFF, x >> 44)
        assert x0 + (x1 << 22) + (x2 << 44) == (x * a + c) & mask
    rng, twin = BotRandom(b"seed"), BotRandom(b"seed")
    x = int.from_bytes(__import__("hashlib").sha256(b"seed").digest()[:8], "big")
    expected = []
    for n in (1, 2, 6, 42, 1000, 2**20, 2**32):
        x = (x * a + c) & mask
        expected.append(((x >> 32) * n) >> 32)
    assert [rng.uniform(n) for n in (1, 2, 6, 42, 1000, 2**20, 2**32)] == expected
    boxes = [0] * 7
    for _ in range(50):
        x = (x * a + c) & mask
        boxes[((x >> 32) * 7) >> 32] += 1
    for n in (1, 2, 6, 42, 1000, 2**20, 2**32):
        twin.uniform(n)
    assert twin.counts(7, 50) == boxes and sum(boxes) == 50


def test_both_ways_of_decoding_dice_faces_agree() -> None:
    """dice.faces_by_bytes (used compiled) and faces_unpacked (used interpreted)."""
    import hashlib

    from pbem.rules.dice import faces_by_bytes, faces_unpacked

    edge = bytes.fromhex("fffffffb fffffffc fffffffd ffffffff fffeffff 00000000 00000005 ffff")
    assert faces_unpacked(edge) == faces_by_bytes(edge) == (6, 0, 0, 0, 6, 1, 6)
    for i in range(200):
        buf = hashlib.shake_256(i.to_bytes(2, "big")).digest(4 * (i % 70) + i % 4)
        assert faces_by_bytes(buf) == faces_unpacked(buf)
