"""No mail from anyone can stop, exhaust or embarrass the service (issue 27).

Each attack of the issue (and a few more) is dropped into the inbox of a
game on the Maildir transport ahead of a valid order mail, and ONE `pbem
poll` runs as a real process under a 2 GiB address-space limit, on SQLite
and on a real PostgreSQL (tests/hostile_helpers.py). Whatever the attack:

- the poll ends within its CPU budget and timeout, without a traceback,
  its peak RSS under 512 MB (not a MemoryError caught at the 2 GiB limit);
- the valid mail is played (in the processed folder, alice has her receipt);
- every attack mail left the inbox for the folders the attack allows
  (refused, or held), and is answered where the issue says so;
- the database grows by at most a few KB more than with the valid mail
  alone (``GROWTH_LIMIT``);
- `pbem status` is not "ok" while a mail is held or still failing;
- no outgoing mail quotes more than 200 characters of a sender's subject,
  and nothing private reaches `pbem site`'s output.

Every check of one attack is made, and all that fail are reported together.
The config holds each mail to one attempt (poll.max_attempts = 1): a mail
that fails once is held, so one poll shows where each ends.
"""

from __future__ import annotations

import base64
import random
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from pbem.store.rawmail import unpack
from tests.hostile_helpers import (
    GAME,
    GM_ADDRESS,
    OPEN_GAME,
    PLAYERS,
    STRANGER,
    VALID_ID,
    VALID_KEY,
    GameCopy,
    Run,
    Template,
    attack_key,
    files_under,
    make_template,
    message,
    raw_mail,
    text_of,
    valid_mail,
)

# "a few KB": a refusal's row and its answers, no mail kept whole. SQLite grows
# by whole 4 KB pages of each table and index touched, so rows of 15 KB (a
# 3000-character subject kept once, two answers that say why: issue 29) can
# take 24 KB: the limit is six pages, against attacks of megabytes.
GROWTH_LIMIT = 24 * 1024
# Peak RSS of the poll: about 90 MB for the valid mail alone, 160 MB with a 21 MB
# mail read whole; a poll that reaches its 2 GiB limit and survives on a caught
# MemoryError has not bounded its work before starting it.
PEAK_RSS_LIMIT_KB = 512 * 1024
QUOTE_LIMIT = 200  # characters of a sender's subject any mail may quote
REPLY_BUDGET = 20  # mail.reply_budget_per_hour, its default
ALICE, BOB, CAROL = PLAYERS["alice"], PLAYERS["bob"], PLAYERS["carol"]
REFUSED = frozenset({"rejected", "held"})
ANSWERED = frozenset({"processed", "rejected"})  # never held: the player is answered


# ------------------------------------------------------------------ attacks
@dataclass(frozen=True)
class Attack:
    """One hostile mail (or flood) and what the service must make of it."""

    name: str
    build: Callable[[dict[str, str]], list[bytes]]  # the mails, from the players' passwords
    ends: frozenset[str] = REFUSED  # the folders its mails may end in
    answered: str | None = None  # an address that must get an answer
    max_answers: dict[str, int] = field(default_factory=dict)  # address -> most mails it gets
    unquoted: str = ""  # a sender's text no outgoing mail may quote beyond QUOTE_LIMIT
    private: tuple[str, ...] = ()  # text that must not reach the site
    growth: int = GROWTH_LIMIT


def _nested_comment_from(_: dict[str, str]) -> list[bytes]:
    sender = b"From: " + b"(" * 5000 + b")" * 5000 + b" <mallory@evil.example>"
    headers = [sender, b"To: pbem@localhost", b"Subject: [g1] hi", b"Message-ID: <nest@evil>"]
    return [raw_mail(headers, b"hello\n", case="nested_comment_from")]


def _nul_message_id(_: dict[str, str]) -> list[bytes]:
    headers = [b"From: mallory@evil.example", b"Subject: hi", b"Message-ID: <a\x00b@evil>"]
    return [raw_mail(headers, b"hi\n", case="nul_message_id")]


def _html_blockquotes(_: dict[str, str]) -> list[bytes]:
    html = "<html><body>" + "<blockquote>" * 40_000 + "<br>" * 120_000 + "</body></html>"
    headers = [
        f"From: {STRANGER}".encode(),
        b"Subject: [g1] orders",
        b"Message-ID: <html@evil>",
        b"MIME-Version: 1.0",
        b"Content-Type: text/html; charset=utf-8",
    ]
    return [raw_mail(headers, html.encode(), case="html_blockquotes")]


def _encoded_words_subject(_: dict[str, str]) -> list[bytes]:
    subject = b"Subject: " + b" ".join([b"=?utf-8?q?a?="] * 70_000)
    headers = [f"From: {STRANGER}".encode(), subject, b"Message-ID: <words@evil>"]
    return [raw_mail(headers, b"hi\n", case="encoded_words_subject")]


def _header_continuations(_: dict[str, str]) -> list[bytes]:
    headers = [f"From: {BOB}".encode(), b"Subject: [g1] orders", b"Message-ID: <cont@evil>"]
    headers.append(b"X-Long: x\n" + b" x\n" * 1_000_000)  # 3 MB, over the size limit
    return [raw_mail(headers, b"hi\n", case="header_continuations")]


def _tags_subject(_: dict[str, str]) -> list[bytes]:
    headers = [f"From: {STRANGER}".encode(), b"Subject: " + b"[x]" * 340_000]
    return [raw_mail([*headers, b"Message-ID: <tags@evil>"], b"hi\n", case="tags_subject")]


def _wrote_lines(_: dict[str, str]) -> list[bytes]:
    headers = [f"From: {STRANGER}".encode(), b"Subject: [g1] re", b"Message-ID: <wrote@evil>"]
    return [raw_mail(headers, b"a wrote:\n" * 110_000, case="wrote_lines")]


def _big_stranger(_: dict[str, str]) -> list[bytes]:
    body = base64.encodebytes(random.Random(27).randbytes(15_750_000))  # 21 MB
    headers = [f"From: {STRANGER}".encode(), b"Subject: [g1] big", b"Message-ID: <big@evil>"]
    return [raw_mail(headers, body, case="big_stranger")]


def _many_headers(_: dict[str, str]) -> list[bytes]:
    filler = b"".join(b"X-F%d: y\n" % n for n in range(100_000))
    headers = [f"From: {STRANGER}".encode(), b"Subject: hi", b"Message-ID: <many@evil>", filler]
    return [raw_mail(headers, b"hi\n", case="many_headers")]


def _deep_multipart(_: dict[str, str]) -> list[bytes]:
    depth = 5_000
    head = [f"From: {STRANGER}".encode(), b"Subject: hi", b"Message-ID: <deep@evil>"]
    head += [b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="b0"']
    opening = b"".join(
        b'--b%d\nContent-Type: multipart/mixed; boundary="b%d"\n\n' % (n, n + 1)
        for n in range(depth)
    )
    closing = b"".join(b"--b%d--\n" % n for n in reversed(range(depth + 1)))
    return [raw_mail(head, opening + b"--b%d\n\nhi\n" % depth + closing, case="deep_multipart")]


def _private_press(passwords: dict[str, str]) -> list[bytes]:
    body = (
        f"PASSWORD {passwords['carol']}\nPRESS TO alice\n"
        "bob writes to all players:\nCAROL-PRIVATE-WORDS for alice only\nENDPRESS\n"
    )
    return [message(CAROL, f"[{GAME}] press", body, case="private_press")]


def _join_flood(_: dict[str, str]) -> list[bytes]:
    joins = [
        message(STRANGER, f"[{OPEN_GAME}] join", f"JOIN {OPEN_GAME} AS m{n}\n", case="join_flood",
                message_id=f"<join-{n}@evil>")
        for n in range(30)
    ]  # fmt: skip
    hellos = [
        message(STRANGER, f"[{OPEN_GAME}] hello", "hello\n", case="join_flood",
                message_id=f"<hello-{n}@evil>")
        for n in range(30)
    ]  # fmt: skip
    return joins + hellos


LONG_SUBJECT = f"[{GAME}] " + "".join(f"{n:04d}" for n in range(1000))[:2995]


def _long_subject(_: dict[str, str]) -> list[bytes]:
    """A forgery in alice's name (a wrong password): the alert quotes its subject short.
    Without any password it would be answered as alice's own mistake, no alert."""
    body = "PASSWORD kq7m-x3hw-9tpf-2zza\nCLAIM Alaska\n"
    return [message(ALICE, LONG_SUBJECT, body, case="long_subject")]


def _absent_far_future(passwords: dict[str, str]) -> list[bytes]:
    body = f"PASSWORD {passwords['bob']}\nABSENT FROM 9999-12-30 TO 9999-12-31\n"
    return [message(BOB, f"[{GAME}] away", body, case="absent_far_future")]


def _non_ascii_from(passwords: dict[str, str]) -> list[bytes]:
    headers = [
        b"From: \xe9 <bob@example.org>",
        b"Subject: [g1] claims",
        b"Message-ID: <nonascii@x>",
    ]
    body = f"PASSWORD {passwords['bob']}\nCLAIM Peru\n".encode()
    return [raw_mail(headers, body, case="non_ascii_from")]


def _non_ascii_glued_from(passwords: dict[str, str]) -> list[bytes]:
    """The issue's case: the byte right before the address, no space (the parsed
    address then starts with a surrogate and every reply to it raised)."""
    headers = [b"From: \xe9bob@example.org", b"Subject: [g1] claims", b"Message-ID: <glued@x>"]
    body = f"PASSWORD {passwords['bob']}\nCLAIM Peru\n".encode()
    return [raw_mail(headers, body, case="non_ascii_glued_from")]


def _nul_from_player(passwords: dict[str, str]) -> list[bytes]:
    headers = [f"From: {BOB}".encode(), b"Subject: [g1] a\x00b", b"Message-ID: <nulbob@x>"]
    body = f"PASSWORD {passwords['bob']}\n\x00CLAIM Peru\x00\n".encode()
    return [raw_mail(headers, body, case="nul_from_player")]


def _message_id_squatting(_: dict[str, str]) -> list[bytes]:
    return [message(STRANGER, "[g1] first", "hi\n", case="squatting", message_id=VALID_ID)]


def _plain_stranger(_: dict[str, str]) -> list[bytes]:
    return [message(STRANGER, "hello", "hello\n", case="plain_stranger")]


ATTACKS = [
    Attack("plain_stranger", _plain_stranger, frozenset({"rejected"})),  # the measure's control
    Attack("nested_comment_from", _nested_comment_from),
    Attack("nul_message_id", _nul_message_id),
    Attack("html_blockquotes", _html_blockquotes),
    Attack("encoded_words_subject", _encoded_words_subject),
    Attack("header_continuations", _header_continuations, frozenset({"rejected"}), answered=BOB),
    Attack("tags_subject", _tags_subject),
    Attack("wrote_lines", _wrote_lines),
    Attack("big_stranger", _big_stranger, frozenset({"rejected"})),
    Attack("many_headers", _many_headers),
    Attack("deep_multipart", _deep_multipart),
    Attack("message_id_squatting", _message_id_squatting, frozenset({"rejected"})),
    Attack(
        "private_press",
        _private_press,
        frozenset({"processed"}),
        private=("CAROL-PRIVATE-WORDS",),
    ),
    Attack(
        "join_flood",
        _join_flood,
        ANSWERED,
        max_answers={STRANGER: REPLY_BUDGET},
        growth=64 * GROWTH_LIMIT,  # 60 rows of headers and the answers within the budget
    ),
    Attack(
        "long_subject",
        _long_subject,
        frozenset({"rejected"}),
        answered=ALICE,
        unquoted=LONG_SUBJECT,
    ),
    Attack("absent_far_future", _absent_far_future, ANSWERED, answered=BOB),
    Attack("non_ascii_from", _non_ascii_from, ANSWERED, answered=BOB),
    Attack("non_ascii_glued_from", _non_ascii_glued_from, ANSWERED, answered=BOB),
    Attack("nul_from_player", _nul_from_player, ANSWERED, answered=BOB),
]


# ------------------------------------------------------------ the two worlds
@dataclass
class World:
    """One engine's template game, and the valid mail played alone on a copy of it."""

    engine: str
    template: Template
    baseline: GameCopy  # the valid mail alone, polled
    baseline_bytes: int
    baseline_run: Run


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]
)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    root = tmp_path_factory.mktemp(f"hostile-{request.param}")
    admin: dict[str, object] | None = None
    if request.param == "sqlite":
        url = f"sqlite:///{root / 'template' / 'var' / 'pbem.db'}"
    else:
        server = make_url(request.getfixturevalue("pg_url"))
        admin = {"host": server.host, "port": server.port, "user": server.username}
        name = f"hostile_template_{id(root)}"
        with psycopg.connect(**admin, dbname="postgres", autocommit=True) as connection:  # type: ignore[arg-type]
            connection.execute(f"CREATE DATABASE {name}")
        url = server.set(database=name).render_as_string(hide_password=False)
    template = make_template(root / "template", url)
    baseline = GameCopy.from_template(template, root / "baseline")
    baseline.deliver(VALID_KEY, valid_mail(template.passwords))
    run = baseline.poll()
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.describe()
    try:
        yield World(request.param, template, baseline, baseline.database_bytes(), run)
    finally:
        baseline.drop()
        if admin is not None:
            with psycopg.connect(**admin, dbname="postgres", autocommit=True) as connection:  # type: ignore[arg-type]
                connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# ----------------------------------------------------------------- the checks
def check_poll(copy: GameCopy, run: Run) -> list[str]:
    """The poll ended in time without a traceback, and the valid mail was played."""
    problems = []
    if run.timed_out:
        problems.append(f"the poll did not end within its budget: {run.describe()}")
    elif "Traceback" in run.stderr:
        problems.append(f"the poll printed a traceback: {run.describe()}")
    if run.max_rss_kb > PEAK_RSS_LIMIT_KB:
        problems.append(f"the poll's peak RSS was {run.max_rss_kb // 1024} MB: {run.describe()}")
    if copy.folder_of("valid") != ["processed"]:
        problems.append(f"the valid mail is in {copy.folder_of('valid')}, not processed")
    receipts = [m for m in copy.new_mail(ALICE) if b"Setup orders accepted" in m]
    if len(receipts) != 1:
        problems.append(f"alice got {len(receipts)} receipts for her valid claims, not 1")
    return problems


def answers_to(copy: GameCopy, address: str) -> list[bytes]:
    """Mail sent to an address since the copy, less alice's receipt for the valid mail."""
    return [m for m in copy.new_mail(address) if VALID_ID.encode() not in m]


def quoted_too_long(copy: GameCopy, text: str) -> list[str]:
    """Outgoing mails that quote more than QUOTE_LIMIT characters of ``text``."""
    window = QUOTE_LIMIT + 1
    found = []
    for address in copy.addresses():
        if address == "pbem@localhost":
            continue
        for raw in copy.new_mail(address):
            read = text_of(raw)
            if any(text[i : i + window] in read for i in range(len(text) - window + 1)):
                found.append(f"a mail to {address} quotes over {QUOTE_LIMIT} characters")
    return found


def site_leaks(copy: GameCopy, secrets: list[str]) -> list[str]:
    """`pbem site` runs and none of its files holds one of ``secrets``."""
    out = copy.directory / "site"
    run = copy.run("site", str(out))
    if run.returncode != 0 or "Traceback" in run.stderr:
        return [f"pbem site failed: {run.describe()}"]
    leaks = []
    for path in files_under(out):
        data = path.read_bytes()
        leaks += [f"{path.relative_to(out)} holds {s!r}" for s in secrets if s.encode() in data]
    return leaks


def check_attack(world: World, copy: GameCopy, attack: Attack, count: int, run: Run) -> list[str]:
    problems = check_poll(copy, run)
    places = copy.folder_of(attack.name if attack.name != "message_id_squatting" else "squatting")
    if len(places) != count or not set(places) <= attack.ends:
        problems.append(
            f"the {count} attack mail(s) ended in {sorted(set(places))} ({len(places)} found), "
            f"expected only {sorted(attack.ends)}"
        )
    if attack.answered and not answers_to(copy, attack.answered):
        problems.append(f"{attack.answered} got no answer")
    for address, most in attack.max_answers.items():
        got = len(answers_to(copy, address))
        if got > most:
            problems.append(f"{address} got {got} answers, over the budget of {most}")
    if attack.unquoted:
        problems += quoted_too_long(copy, attack.unquoted)
    grown = copy.database_bytes() - world.baseline_bytes
    if grown > attack.growth:
        problems.append(f"the database grew {grown} bytes more than for the valid mail alone")
    if "held" in places or "inbox" in places:
        status = copy.run("status")
        if status.returncode == 0:
            problems.append(f"`pbem status` says ok while a mail is held: {status.stdout[-500:]}")
    if attack.private:
        problems += site_leaks(copy, [*attack.private, *world.template.passwords.values()])
    return problems


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_one_poll_survives_the_attack_and_plays_the_valid_mail(
    world: World, attack: Attack, tmp_path: Path
) -> None:
    copy = GameCopy.from_template(world.template, tmp_path / "game")
    try:
        mails = attack.build(world.template.passwords)
        count = len(mails)
        for n, raw in enumerate(mails, 1):
            copy.deliver(attack_key(n), raw)
        del mails
        copy.deliver(VALID_KEY, valid_mail(world.template.passwords))
        run = copy.poll()
        problems = check_attack(world, copy, attack, count, run)
    finally:
        copy.drop()
    assert not problems, f"{attack.name} on {world.engine}:\n- " + "\n- ".join(problems)


# ------------------------------------------------- what is kept of a password
def test_password_lines_are_blanked_in_the_stored_mail_and_the_processed_folder(
    world: World,
) -> None:
    copy, password = world.baseline, world.template.passwords["alice"]
    assert check_poll(copy, world.baseline_run) == []
    rows = copy.query(
        f"SELECT raw, raw_format FROM inbound_message WHERE message_id = '{VALID_ID}'"
    )
    assert len(rows) == 1
    raw, raw_format = rows[0]
    assert isinstance(raw, bytes | memoryview)
    stored = unpack(bytes(raw), str(raw_format))
    assert b"CLAIM Alaska" in stored or b"Message-ID" in stored  # the mail is kept...
    assert password.encode() not in stored  # ...without its password
    processed = copy.folder_bytes("processed")
    assert len(processed) == 1 and VALID_ID.encode() in processed[0]
    assert password.encode() not in processed[0]
    assert site_leaks(copy, list(world.template.passwords.values())) == []


# -------------------------------------- a poll killed on a mail still holds it
KILLER = textwrap.dedent(
    """
    # Loaded by every Python process of the poll (PYTHONPATH): decoding the
    # mail marked "killer" kills the process at once, as the kernel's OOM
    # killer would (no exception, no clean-up), in the poll or in any child.
    import os, signal
    import pbem.mail.decode as decode
    real = decode.decode_mail
    def killing(raw, *args, **kwargs):
        if b"X-Hostile-Case: killer" in raw[:4096]:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(raw, *args, **kwargs)
    decode.decode_mail = killing
    """
)


def test_a_mail_that_kills_the_poll_is_held_after_max_attempts(
    world: World, tmp_path: Path
) -> None:
    """The issue: a poll killed for memory counted no attempt, so the mail was
    claimed again at every lease expiry, forever. An attempt counts before the
    work starts: after max_attempts killed polls the mail is held, the GM is
    told, and the valid mail behind it is played."""
    if world.engine != "sqlite":
        pytest.skip("the attempt counting is the same code on both engines")
    copy = GameCopy.from_template(world.template, tmp_path / "game")
    # A dead poll's claim is free again at the next poll (an hour later).
    copy.configure(max_attempts=2, poll_extra="claim_lease_seconds = 60\n")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(KILLER)
    killer = message(STRANGER, "[g1] boom", "hi\n", case="killer")
    copy.deliver(attack_key(1), killer)
    copy.deliver(VALID_KEY, valid_mail(world.template.passwords))
    runs = []
    start = datetime.now(UTC).replace(microsecond=0)
    for hour in range(1, 5):  # each poll an hour later: every lease has run out
        now = (start + timedelta(hours=hour)).isoformat()
        runs.append(copy.poll(pythonpath=[hooks], env={"PBEM_NOW": now}))
        if copy.folder_of("killer") == ["held"]:
            break
    assert copy.folder_of("killer") == ["held"], "\n".join(r.describe() for r in runs)
    assert copy.folder_of("valid") == ["processed"]
    assert len(runs) <= 3, [r.returncode for r in runs]  # two killed polls, then held
    alerts = [text_of(m) for m in copy.new_mail(GM_ADDRESS)]
    assert sum("held" in a for a in alerts) == 1, alerts


# ------------------------------------- a bug on many mails: held, told within budgets
BUGGY = textwrap.dedent(
    """
    # Loaded by every Python process of the poll (PYTHONPATH): decoding a mail
    # marked "bug" raises, as a bug in pbem would, in the poll or in any child.
    import pbem.mail.decode as decode
    real = decode.decode_mail
    def buggy(raw, *args, **kwargs):
        if b"X-Hostile-Case: bug" in raw[:4096]:
            raise RuntimeError("a bug in pbem")
        return real(raw, *args, **kwargs)
    decode.decode_mail = buggy
    """
)
ALERT_BUDGET = 5  # mail.alert_budget_per_hour, its default


def test_a_bug_on_ten_mails_holds_them_answers_the_sender_and_alerts_within_budget(
    world: World, tmp_path: Path
) -> None:
    """The issue: a mail that raises in the handler ends held with no answer to
    its sender, and held-mail alerts to the GM have no budget. Ten mails from
    bob that each trip a bug: each is held (one attempt here), bob is told,
    the GM gets at most the alert budget, `pbem status` is not ok, and the
    valid mail behind them is played."""
    if world.engine != "sqlite":
        pytest.skip("the budgets are the same code on both engines")
    copy = GameCopy.from_template(world.template, tmp_path / "game")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(BUGGY)
    for n in range(1, 11):
        mail = message(BOB, f"[{GAME}] orders {n}", "CLAIM Peru\n", case="bug")
        copy.deliver(attack_key(n), mail.replace(b"<bug@", f"<bug-{n}@".encode()))
    copy.deliver(VALID_KEY, valid_mail(world.template.passwords))
    run = copy.poll(pythonpath=[hooks])
    assert not run.timed_out, run.describe()
    assert copy.folder_of("bug") == ["held"] * 10, run.describe()
    assert copy.folder_of("valid") == ["processed"]
    gm_mail = copy.new_mail(GM_ADDRESS)
    assert 1 <= len(gm_mail) <= ALERT_BUDGET, [text_of(m)[:300] for m in gm_mail]
    assert answers_to(copy, BOB), "bob was not told his mails could not be handled"
    assert copy.run("status").returncode != 0
