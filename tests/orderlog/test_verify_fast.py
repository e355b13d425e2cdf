"""`pbem verify FILE --secret HEX` answers before typer is imported (pbem/entry.py):
the same output, the same errors and the same exit code as the typer command
(pbem.cli.records.verify), checked case by case in a new process (the fast
cases one after the other in one process, each answer captured on its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.entry import _verify_args

RECORD = Path(__file__).parents[1] / "data" / "records" / "greedy-seed3-v1.pgn"
RECORD_V2 = RECORD.with_name("greedy-seed5-v2.pgn")
SECRET = "e9c7de4d1f4f4f20d20c23052794a7b5e92dbb25dd03a406714b8bd536adcc81"
ROOT = Path(__file__).resolve().parents[2]


def in_new_process(args: list[str]) -> tuple[int, str, str, bool]:
    """(exit code, stdout, stderr, whether typer was imported) of `pbem ARGS`."""
    script = (
        "import sys\n"
        "from pbem.entry import main\n"
        f"sys.argv = ['pbem', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('typer' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    err_lines = done.stderr.splitlines(keepends=True)
    imported = err_lines[-1].strip() == "True"
    return done.returncode, done.stdout, "".join(err_lines[:-1]), imported


def in_one_new_process(calls: list[list[str]]) -> list[tuple[int, str, str, bool]]:
    """``in_new_process`` of each of ``calls``, one after the other in one new
    process (one interpreter start, not one a call): each call's exit code,
    output and errors captured on their own, and whether typer had been
    imported by then (typer never imported by one means by none before it)."""
    script = (
        "import contextlib, io, json, sys\n"
        "from pbem.entry import main\n"
        "answers = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    out, err = io.StringIO(), io.StringIO()\n"
        "    sys.argv = ['pbem', *args]\n"
        "    code = 0\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            main()\n"
        "        except SystemExit as exc:\n"
        "            code = exc.code if isinstance(exc.code, int) else (exc.code is not None)\n"
        "    answers.append([code, out.getvalue(), err.getvalue(), 'typer' in sys.modules])\n"
        "print(json.dumps(answers))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(calls)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return [(int(c), o, e, bool(t)) for c, o, e, t in json.loads(done.stdout)]


def with_typer(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


def tampered(tmp_path: Path, old: str, new: str) -> str:
    text = RECORD.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"tampered-{len(list(tmp_path.glob('tampered-*')))}.pgn"  # one each
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return str(path)


def cases(tmp_path: Path) -> list[list[str]]:
    wrong = SECRET[:-1] + ("0" if SECRET[-1] != "0" else "1")
    binary = tmp_path / "binary.pgn"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    garbage = tmp_path / "garbage.pgn"
    garbage.write_text("hello\n", encoding="utf-8")
    return [
        ["verify", str(RECORD), "--secret", SECRET],
        ["verify", "--secret", SECRET, str(RECORD)],
        ["verify", str(RECORD), f"--secret={SECRET}"],
        ["verify", str(RECORD)],  # the record's own [Secret]
        ["verify", tampered(tmp_path, f'[Secret "{SECRET}"]\n', ""), "--secret", SECRET],
        ["verify", tampered(tmp_path, f'[Secret "{SECRET}"]\n', "")],
        ["verify", str(RECORD), "--secret", wrong],
        ["verify", str(RECORD), "--secret", "not-hex"],
        ["verify", tampered(tmp_path, f'[Secret "{SECRET}"]\n', ""), "--secret", "00"],
        ["verify", tampered(tmp_path, f'[Secret "{SECRET}"]\n', ""), "--secret", ""],
        ["verify", str(tmp_path / "missing.pgn"), "--secret", SECRET],
        ["verify", str(binary), "--secret", SECRET],
        ["verify", str(garbage), "--secret", SECRET],
        ["verify", tampered(tmp_path, "UNTIL 2 LEFT", "UNTIL 3 LEFT"), "--secret", SECRET],
        ["verify", tampered(tmp_path, "PLACE 3 ", "PLACE 99 "), "--secret", SECRET],
        ["verify", tampered(tmp_path, '[Map "classic"]', '[Map "atlantis"]'), "--secret", SECRET],
    ]


def test_the_fast_verify_answers_as_the_typer_command(tmp_path: Path) -> None:
    calls = cases(tmp_path)
    answers = in_one_new_process(calls)
    for args, (code, out, err, typer_imported) in zip(calls, answers, strict=True):
        assert not typer_imported, args
        assert (code, out, err) == with_typer(args), args
    assert answers[0][:2] == (0, "all 76 steps verified; every roll matches the secret\n")


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "--help"],
        ["verify", str(RECORD), "--secret"],
        ["verify", str(RECORD), "--secret", SECRET, "--extra"],
        ["verify", "--secret", "--secret", str(RECORD)],
    ],
)
def test_other_spellings_go_to_typer(args: list[str]) -> None:
    assert _verify_args(args[1:]) is None
    code, out, err, typer_imported = in_new_process(args)
    assert typer_imported  # (the usage text itself differs: program name, width)
    assert code == with_typer(args)[0]
    assert out + err


def test_a_secret_of_the_wrong_size_is_named_with_the_records_dice_version(
    tmp_path: Path,
) -> None:
    text = RECORD_V2.read_text(encoding="utf-8")
    bare = tmp_path / "g2.pgn"
    bare.write_text(
        "".join(x for x in text.splitlines(keepends=True) if not x.startswith("[Secret ")),
        encoding="utf-8",
    )
    sizes = (("00", 1), ("", 0), ("ab" * 33, 33))
    fast = in_one_new_process([["verify", str(bare), "--secret", s] for s, _ in sizes])
    for (secret, size), fast_answer in zip(sizes, fast, strict=True):
        for answer in (
            fast_answer[:3],
            with_typer(["verify", str(bare), "--secret", secret]),
        ):
            assert answer == (
                1,
                f"the secret is {size} bytes ({2 * size} hex digits); a pbem-dice-v2 secret "
                "is exactly 32 bytes (64 hex digits)\n",
                "",
            ), secret
