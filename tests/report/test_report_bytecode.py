"""Compiled mail templates kept between processes (pbem/report/bytecode.py).

A new process with the cache renders every byte as one without it, loads
what an earlier process compiled instead of compiling again, and never
loads code compiled under other settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from jinja2 import DictLoader, Environment

from pbem.report.bytecode import bytecode_cache, fingerprint

REPO = Path(__file__).resolve().parents[2]

# Renders the first two turns' mails of the sample game; prints their hash and,
# with COUNT=1, how many templates this process compiled.
_RENDER = """
import hashlib, os, jinja2
compiled = []
original = jinja2.Environment.compile
def counting(self, source, name=None, filename=None, raw=False, defer_init=False):
    compiled.append(name)
    return original(self, source, name, filename, raw, defer_init)
jinja2.Environment.compile = counting
from pbem.report import render
from pbem.testing.sample import play_sample
digest = hashlib.sha256()
for report in play_sample(seed=7, players=4, turns=2, bot="greedy").reports:
    for seat in (*range(4), None):
        mail = render.render_turn_report(report, seat)
        digest.update(mail.text.encode() + mail.html.encode())
print(digest.hexdigest(), len(compiled))
"""


def _render(cache: str) -> tuple[str, int]:
    env = {**os.environ, "PBEM_TEMPLATE_CACHE": cache, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _RENDER], env=env, capture_output=True, text=True, check=True
    )
    digest, compiled = done.stdout.split()
    return digest, int(compiled)


def test_a_new_process_loads_the_compiled_templates_and_renders_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "templates"
    plain, compiled_without = _render("0")
    first, compiled_first = _render(str(cache))
    second, compiled_second = _render(str(cache))
    assert plain == first == second
    assert compiled_without == compiled_first > 0  # the turn report's templates and includes
    assert compiled_second == 0  # every one loaded from the cache
    assert len(list(cache.glob("pbem-*.cache"))) == compiled_first


def test_code_compiled_under_other_settings_is_never_loaded(tmp_path: Path) -> None:
    source = {"t.txt": "{% if true %}\n  a\n{% endif %}\nb"}

    def rendered(trim: bool) -> str:
        settings: dict[str, object] = {"trim_blocks": trim, "lstrip_blocks": trim}
        env = Environment(
            loader=DictLoader(source),
            bytecode_cache=bytecode_cache(settings, tmp_path),
            trim_blocks=trim,
            lstrip_blocks=trim,
        )
        return env.get_template("t.txt").render()

    assert rendered(True) == "  a\nb"
    assert rendered(False) == "\n  a\n\nb"  # compiled again, not the trimmed code
    assert rendered(True) == "  a\nb"
    names = sorted(p.name for p in tmp_path.glob("pbem-*.cache"))
    assert len(names) == 2
    assert fingerprint({"trim_blocks": True}) != fingerprint({"trim_blocks": False})


def test_switched_off_or_unusable_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PBEM_TEMPLATE_CACHE", "0")
    assert bytecode_cache({}) is None
    monkeypatch.setenv("PBEM_TEMPLATE_CACHE", str(tmp_path / "here"))
    cache = bytecode_cache({})
    assert cache is not None and (tmp_path / "here").is_dir()
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("PBEM_TEMPLATE_CACHE", str(blocked / "below"))
    assert bytecode_cache({}) is None
