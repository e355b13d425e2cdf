"""A long Subject is folded at a blank after its first words, never right after
"Subject:" (issue 29, point 10): the standard library put a value that fits a
line of its own on the second line, and mail programs showed a leading blank.
Both writers (report/wire.py and the plain path, mime.to_mime) fold alike,
and the value read back is the value written."""

from __future__ import annotations

import random
from email import policy
from email.parser import BytesParser

from pbem.report import mime, wire
from pbem.report.mime import RenderedMail, to_mime

# A subject the standard library's default policy folds right after "Subject:".
STDLIB_BAD = "[sim-7] Turn 4: p3 took 6 territories, holds South America. p2 to move"


def subject_bytes(raw: bytes) -> bytes:
    head = raw.split(b"\n\n", 1)[0]
    return b"Subject:" + head.split(b"\nSubject:", 1)[1].split(b"\nDate:", 1)[0] + b"\n"


def test_the_stdlib_fold_is_the_bug_and_ours_is_not() -> None:
    header = policy.default.header_factory("Subject", STDLIB_BAD)
    assert policy.default.fold_binary("Subject", header).startswith(b"Subject:\n ")
    assert wire.folded("Subject", STDLIB_BAD) == (
        b"Subject: [sim-7] Turn 4: p3 took 6 territories, holds South America. p2 to\n move\n"
    )


def test_a_token_is_never_split_over_two_lines() -> None:
    subject = "[world-championship-final-2024] Not applied, 1 problem: turn 1 (token dee63a26da)"
    assert wire.folded("Subject", subject) == (
        b"Subject: [world-championship-final-2024] Not applied, 1 problem: turn 1\n"
        b" (token dee63a26da)\n"
    )


def test_random_subjects_fold_alike_in_both_writers_and_read_back_whole() -> None:
    rng = random.Random(29)
    words = ["[g1]", "Not", "applied,", "3", "problems:", "turn", "(token", "abcdef0123)", "x" * 70]
    for _ in range(300):
        subject = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        ours = wire.folded("Subject", subject)
        assert not ours.startswith(b"Subject:\n"), ours
        lines = ours.rstrip(b"\n").split(b"\n")
        assert all(line.startswith(b" ") and line[1:2] != b" " for line in lines[1:]), ours
        rendered = RenderedMail(subject, "text", "<p>text</p>", kind="k", game="g1")
        raw = bytes(to_mime(rendered, sender="p@x.test", recipient="a@x.test", message_id="<1@x>"))
        assert subject_bytes(raw) == ours
        read = BytesParser(policy=policy.default).parsebytes(raw)
        assert str(read["Subject"]) == subject


def test_a_subject_that_is_not_plain_ascii_keeps_the_policys_fold() -> None:
    subject = "[g] Turn 4: p3 took Zürich, Genève and " + "more " * 12
    assert mime.fold_subject("Subject", subject, 78, "\n") is None
    folded = wire.folded("Subject", subject)
    assert b"=?utf-8?" in folded
