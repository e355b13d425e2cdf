"""Issue 30: the GM's commands say what they do, and do what the docs say.

Each test runs `pbem` as a GM does (typer's CliRunner, on a config file)
against a SQLite database and the embedded Maildir transport, so that the
mails the players get are read from their mailboxes.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from sqlmodel import select
from typer.testing import CliRunner, Result

from pbem.cli import app
from pbem.config import load_config
from pbem.mail.maildir import MaildirSender, spool_mailbox, spool_path
from pbem.orders import TextBot
from pbem.report.textfmt import wrap_long
from pbem.rules.bots import make_bot
from pbem.service.clock import ManualClock
from pbem.service.context import Context
from pbem.service.ops.health import Health
from pbem.service.play.games import find_game, load
from pbem.store import ServiceState, init_db, session_scope

runner = CliRunner()
PLAYERS = ["alice", "bob", "carol"]
SECRET = bytes([9]) * 32
NO_CONFIG = {"verify"}  # commands that read no database


class Gm:
    """A GM's folder: a config file, its database, its Maildir mail."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config = folder / "pbem.toml"
        self.config.write_text(
            f'state_dir = "{folder}"\n[poll]\noutage_dir = "{folder / "outages"}"\n',
            encoding="utf-8",
        )
        self.settings = load_config(self.config)
        self.run("init")

    def run(self, *args: str | Path, now: str | None = None, input: str | None = None) -> Result:
        """`pbem [--now NOW] ARGS --config FILE`; PBEM_NOW never outlives the call."""
        words = [str(a) for a in args]
        front = ["--now", now] if now else []
        config = [] if words[0] in NO_CONFIG else ["--config", str(self.config)]
        return runner.invoke(app, [*front, *words, *config], input=input, env={"PBEM_NOW": None})

    def ok(self, *args: str | Path, now: str | None = None, input: str | None = None) -> str:
        result = self.run(*args, now=now, input=input)
        assert result.exit_code == 0, (args, result.stdout, result.stderr, result.exception)
        return result.stdout

    def new_game(self, name: str = "g1", *extra: str) -> str:
        specs = [x for p in PLAYERS for x in ("-p", f"{p}:{p}@example.org")]
        return self.ok("new", name, *specs, *extra)

    def mails(self, player: str) -> list[EmailMessage]:
        box = spool_mailbox(self.settings.mail.maildir_root, f"{player}@example.org")
        parse = BytesParser(policy=policy.default).parsebytes
        found = [parse(box.get_bytes(key)) for key in box.keys()]
        return sorted(found, key=lambda m: str(m["Date"]))  # type: ignore[arg-type,return-value]

    def delivered(self) -> int:
        """Every mail delivered to anyone but the game's own inbox."""
        root = self.settings.mail.maildir_root
        inbox = spool_path(root, self.settings.mail.game_address)
        return sum(
            1
            for box in root.iterdir()
            if box.is_dir() and box != inbox
            for sub in ("new", "cur")
            for _ in (box / sub).glob("*")
        )

    def subjects(self, player: str) -> list[str]:
        return [str(m["Subject"]) for m in self.mails(player)]

    def body(self, mail: EmailMessage) -> str:
        part = mail.get_body(("plain",))
        assert part is not None
        return str(part.get_content())  # type: ignore[attr-defined]

    def state(self, key: str) -> str | None:
        engine = init_db(self.settings.database_url)
        with session_scope(engine, write=False) as session:
            row = session.exec(select(ServiceState).where(ServiceState.key == key)).first()
            value = row.value if row else None
        engine.dispose()
        return value

    def set_state(self, key: str, value: str) -> None:
        engine = init_db(self.settings.database_url)
        with session_scope(engine) as session:
            row = session.exec(select(ServiceState).where(ServiceState.key == key)).first()
            row = row or ServiceState(key=key)
            row.value = value
            session.add(row)
        engine.dispose()


@pytest.fixture
def gm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gm:
    """A GM's folder; every game's secret fixed, so its dice (and the bots'
    orders) are the same on every run."""
    monkeypatch.setattr("pbem.service.play.games.new_secret", lambda: SECRET)
    return Gm(tmp_path)


def iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%MZ")


def test_a_poll_past_the_deadline_and_the_grace_says_the_miss_alone(gm: Gm) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    gm.ok("set", "g1", "grace_hours=0")
    gm.ok("poll")
    start = datetime.now(UTC)
    jumped = gm.ok("poll", now=iso(start + timedelta(hours=60))).splitlines()
    assert any(line.startswith("g1: turn 1 missed by") for line in jumped), jumped
    assert not [line for line in jumped if "deadline passed, waiting for" in line]


# ------------------------------------------------------- 1. a clock jump is no outage
def test_a_jump_of_the_clock_is_no_outage_a_real_gap_still_is(gm: Gm, tmp_path: Path) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    gm.ok("poll")
    start = datetime.now(UTC)
    jumped = gm.ok("poll", now=iso(start + timedelta(hours=84)))
    assert "outage" not in jumped
    assert (
        [line for line in jumped.splitlines() if "missed by" in line]
        == [line for line in jumped.splitlines() if line.startswith("g1: turn 1 missed by")]
        != []
    )
    for player in PLAYERS:
        assert not [s for s in gm.subjects(player) if "pushed back" in s]
    # The game's clock jumped; the real one did not.
    assert gm.state("last_poll")[:13] == iso(start + timedelta(hours=84))[:13]  # type: ignore[index]
    real = datetime.fromisoformat(gm.state("last_poll_real") or "")
    assert abs(real - datetime.now(UTC)) < timedelta(minutes=5)

    # A real gap: the last poll really was 84 hours ago (its real time written back).
    gm.set_state("last_poll_real", (datetime.now(UTC) - timedelta(hours=84)).isoformat())
    later = gm.ok("poll", now=iso(start + timedelta(hours=84 + 200)))
    assert "g1: deadline pushed back 84.0 h after an outage" in later.splitlines()
    for player in PLAYERS:
        assert [s.split(" (token ")[0] for s in gm.subjects(player) if "pushed back" in s] == [
            "[g1] Deadline pushed back after a server outage of 84 hours"
        ]


# ------------------------------------------------- 11. past outages, folded across hosts
def test_status_keeps_a_past_outage_with_its_start_end_and_length(gm: Gm, tmp_path: Path) -> None:
    inbox = spool_path(gm.settings.mail.maildir_root, gm.settings.mail.game_address)
    shutil.rmtree(inbox)
    inbox.write_text("in the way")  # the inbox cannot be a Maildir
    t0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    for minutes in (0, 40):
        assert gm.run("poll", now=iso(t0 + timedelta(minutes=minutes))).exit_code == 2
    inbox.unlink()
    spool_mailbox(gm.settings.mail.maildir_root, gm.settings.mail.game_address)
    gm.ok("poll", now=iso(t0 + timedelta(minutes=50)))
    found = json.loads(gm.ok("status", "--json"))
    assert found["outages"] == {}
    (past,) = found["past_outages"]
    assert past["component"] == "inbox"
    assert past["since"].startswith("2026-12-01T09:00:00")
    assert past["until"].startswith("2026-12-01T09:50:00")
    assert (past["minutes"], past["alerted"]) == (50.0, True)
    assert "cannot open the inbox Maildir" in past["error"]
    text = gm.ok("status")
    assert "past outages (the last 20 are kept; --json lists them):" in text
    assert "  inbox out from 2026-12-01T09:00:00" in text


def test_a_database_outage_seen_by_two_hosts_is_kept_once_and_its_end_told_once(
    gm: Gm, tmp_path: Path
) -> None:
    """Two hosts, each with its own outage folder: each sends its alert (folded
    by its Message-ID), and the first back in the database keeps the record."""
    engine = init_db(gm.settings.database_url)
    sender = MaildirSender(gm.settings.mail.maildir_root)
    t0 = datetime(2026, 12, 1, 9, 0, 10, tzinfo=UTC)
    hosts = []
    for name, offset in (("a", 0), ("b", 7)):
        config = replace(
            gm.settings,
            poll=replace(gm.settings.poll, outage_dir=str(tmp_path / f"host-{name}")),
        )
        clock = ManualClock(t0 + timedelta(seconds=offset))
        hosts.append((Health(engine, Context(config, clock, set())), clock))
    for minutes in (0, 31):
        for health, clock in hosts:
            clock.advance(minutes=minutes)
            health.database_down("cannot connect to database x: refused", sender)
    alerts = spool_mailbox(gm.settings.mail.maildir_root, gm.settings.mail.gm_address)
    ids = {str(BytesParser(policy=policy.default).parsebytes(alerts.get_bytes(k))["Message-ID"])
           for k in alerts.keys()}  # fmt: skip
    assert len(alerts.keys()) == 2 and len(ids) == 1  # one alert in the GM's mail client
    for health, clock in hosts:
        clock.advance(minutes=5)
        health.database_up()
    gm.ok("poll", now=iso(t0 + timedelta(minutes=40)))  # the note that it is over goes out
    found = json.loads(gm.ok("status", "--json"))
    (past,) = found["past_outages"]
    assert past["component"] == "database"
    assert past["since"] == t0.isoformat()
    assert past["until"] == (t0 + timedelta(minutes=36, seconds=7)).isoformat()
    assert past["alerted"] is True
    subjects = sorted(
        str(BytesParser(policy=policy.default).parsebytes(alerts.get_bytes(k))["Subject"])
        for k in alerts.keys()
    )
    assert subjects == [
        "[pbem] GM alert: Back to normal: the database",
        "[pbem] GM alert: Outage: the database",
        "[pbem] GM alert: Outage: the database",
    ]


# ------------------------------------------------------------ 5. the dice secret
def test_export_with_secret_of_a_running_game_needs_force(gm: Gm, tmp_path: Path) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    refused = gm.run("export", "g1", "--with-secret")
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert refused.stderr == (
        "error: game g1 is still running: its secret decides every roll still to come, so "
        "writing it into the record would let anyone compute the future dice. It is "
        "published with the game record when the game ends; use --force to write it anyway\n"
    )
    assert "[Secret " not in gm.ok("export", "g1")
    record = tmp_path / "g1.pgn"
    gm.ok("export", "g1", "--with-secret", "--force", "-o", record)
    assert "[Secret " in record.read_text(encoding="utf-8")
    # `pbem verify FILE` uses the record's own [Secret]
    verified = gm.ok("verify", record)
    assert verified.endswith("steps verified; every roll matches the secret\n")
    bare = tmp_path / "bare.pgn"
    gm.ok("export", "g1", "-o", bare)
    missing = gm.run("verify", bare)
    assert missing.stderr == (
        f"error: {bare} has no [Secret] (the game's secret is not revealed yet): "
        "give it with --secret HEX\n"
    )


# ------------------------------------------- 4. a seat kicked during the setup, shown
def test_show_marks_a_seat_kicked_during_the_setup(gm: Gm, tmp_path: Path) -> None:
    gm.new_game("g1", "-o", "claim=draft")
    gm.ok("poll")
    assert gm.ok("kick", "g1", "bob").startswith(
        "g1: bob removed during the setup; the seat is on autopilot until the setup ends, "
        "then its territories go neutral (`pbem show` marks it)"
    )
    shown = gm.ok("show", "g1")
    (line,) = [line for line in shown.splitlines() if line.startswith("bob ")]
    assert line.endswith("  (removed: on autopilot, leaving when the setup ends)")
    (alice,) = [line for line in shown.splitlines() if line.startswith("alice ")]
    assert "(" not in alice
    data = json.loads(gm.ok("show", "g1", "--json"))
    assert data["phase"] == "claim"  # still the setup (the draft)
    assert {p["name"]: (p["standing"], p["leaving_after_setup"]) for p in data["players"]} == {
        "alice": ("playing", False),
        "bob": ("removed", True),
        "carol": ("playing", False),
    }


def test_show_says_who_sent_setup_orders_and_who_holds_each_seat(gm: Gm) -> None:
    words = passwords(gm.new_game("g1", "-o", "claim=draft"))
    gm.ok("poll")
    inbox = spool_path(gm.settings.mail.maildir_root, gm.settings.mail.game_address)
    (inbox / "new" / "claim.eml").write_text(
        f"From: alice@example.org\nTo: {gm.settings.mail.game_address}\nSubject: [g1] claim\n"
        f"Message-ID: <claim-1@example.org>\n\nPASSWORD {words['alice']}\nCLAIM Alaska, Peru\n",
        encoding="utf-8",
    )
    gm.ok("poll")
    gm.ok("replace", "g1", "bob", "bob2@example.org")
    shown = gm.ok("show", "g1").splitlines()
    setup = r"Setup \(claim\): orders sent by alice; awaited from (bob, carol|carol, bob); .*"
    assert any(re.fullmatch(setup, line) for line in shown), shown
    assert any(line.startswith("(next: armies due at the start of the next turn") for line in shown)
    assert "  bob: bob2 <bob2@example.org>, since turn 0" in shown
    assert "  alice: alice <alice@example.org>" in shown
    data = json.loads(gm.ok("show", "g1", "--json"))
    (bob,) = [p for p in data["players"] if p["name"] == "bob"]
    assert (bob["holder"], bob["address"]) == ("bob2", "bob2@example.org")
    assert (data["setup_sent"], sorted(data["setup_awaited"])) == (["alice"], ["bob", "carol"])


def test_the_status_mail_names_who_holds_a_replaced_seat_and_no_address(gm: Gm) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    gm.ok("poll")
    replaced = gm.ok("replace", "g1", "bob", "bob2@example.org")
    found = re.search(r"password (\S+);", replaced)
    assert found is not None, replaced
    inbox = spool_path(gm.settings.mail.maildir_root, gm.settings.mail.game_address)
    (inbox / "new" / "status.eml").write_text(
        f"From: bob2@example.org\nTo: {gm.settings.mail.game_address}\nSubject: [g1] status\n"
        f"Message-ID: <status-1@example.org>\n\nPASSWORD {found.group(1)}\nSTATUS\n",
        encoding="utf-8",
    )
    gm.ok("poll")
    box = spool_mailbox(gm.settings.mail.maildir_root, "bob2@example.org")
    parse = BytesParser(policy=policy.default).parsebytes
    mails = [parse(box.get_bytes(key)) for key in box.keys()]
    (status,) = [m for m in mails if "status-1@example.org" in str(m["In-Reply-To"])]
    body = gm.body(status)  # type: ignore[arg-type]
    assert "bob (held by bob2)" in body
    assert "alice@example.org" not in body and "carol@example.org" not in body


def test_show_marks_the_neutral_seat_neutral(gm: Gm) -> None:
    gm.ok("new", "g2", "-p", "alice:alice@example.org", "-p", "bob:bob@example.org")
    data = json.loads(gm.ok("show", "g2", "--json"))
    standings = {p["name"]: p["standing"] for p in data["players"]}
    assert [s for n, s in standings.items() if n not in ("alice", "bob")] == ["neutral"]


# ------------------------------------- 2 and 3. hand-played orders: odds, summary, mail
def passwords(created: str) -> dict[str, str]:
    found = re.findall(r"password of (\w+): (\S+)", created)
    return dict(found)


def attack_orders(gm: Gm, folder: Path) -> tuple[str, Path]:
    """The greedy bot's orders for the player to move, which attack; (who, file)."""
    engine = init_db(gm.settings.database_url)
    with session_scope(engine, write=False) as session:
        state = load(session, find_game(session, "g1")).state
    engine.dispose()
    text = TextBot(make_bot("greedy", state.current)).write_turn(state)
    assert "ATTACK" in text
    path = folder / f"turn-{state.turn}.txt"
    path.write_text(text, encoding="utf-8")
    return state.players[state.current].name, path


def odds_block(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Odds"))
    end = next(i for i, line in enumerate(lines) if "Whole plan" in line)
    return lines[start : end + 1]


def test_check_and_dry_run_print_the_odds_of_the_check_mail(gm: Gm, tmp_path: Path) -> None:
    words = passwords(gm.new_game("g1", "-o", "placement=auto"))
    gm.ok("poll")
    who, orders = attack_orders(gm, tmp_path)
    checked = gm.ok("check", orders, "--game", "g1", "--as", who)
    assert checked.startswith(f"{who}'s orders in {orders} valid, checked against game g1, turn ")
    odds = odds_block(checked)
    assert odds[-1].startswith("  Whole plan (every territory attacked taken): ")
    dry = gm.ok("adjudicate", "g1", "--orders", orders, "--dry-run")
    assert dry.splitlines()[:3] == [
        f"{who}'s orders in {orders} valid, checked against game g1, turn 1; nothing was "
        "applied (--dry-run):",
        "",
        "Orders, as they would be recorded:",
    ]
    assert odds_block(dry) == odds
    # The CHECK mail of the same orders, by the real mail path, carries the same lines.
    inbox = spool_path(gm.settings.mail.maildir_root, gm.settings.mail.game_address)
    body = f"PASSWORD {words[who]}\nCHECK\n" + orders.read_text(encoding="utf-8")
    (inbox / "new" / "check.eml").write_text(
        f"From: {who}@example.org\nTo: {gm.settings.mail.game_address}\nSubject: [g1] check\n"
        f"Message-ID: <check-1@example.org>\n\n{body}",
        encoding="utf-8",
    )
    gm.ok("poll")
    (reply,) = [m for m in gm.mails(who) if "check-1@example.org" in str(m["In-Reply-To"])]
    # (the mail wraps long lines at 78 characters, the terminal does not)
    wrapped = "\n".join(wrap_long(line) for line in odds).splitlines()
    assert odds_block(gm.body(reply)) == wrapped
    assert gm.state("last_poll") is not None


def test_refused_orders_are_said_in_the_gms_words(gm: Gm, tmp_path: Path) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    who, orders = attack_orders(gm, tmp_path)
    bad = tmp_path / "bad.txt"
    bad.write_text("ATTACK Atlantis -> Alaska\n", encoding="utf-8")
    checked = gm.run("check", bad, "--game", "g1", "--as", who)
    assert checked.exit_code == 1
    lines = checked.stdout.splitlines()
    assert lines[:3] == [
        f"{who}'s orders in {bad} refused (1 problem); nothing was applied:",
        "",
        "line 1: ATTACK Atlantis -> Alaska",
    ]
    assert "mail" not in checked.stdout and "HELP" not in checked.stdout
    played = gm.run("adjudicate", "g1", "--orders", bad, "--dry-run")
    assert played.exit_code == 1
    assert played.stderr.splitlines()[:3] == [
        f"{who}'s orders in {bad} refused (1 problem); nothing was applied:",
        "",
        "line 1: ATTACK Atlantis -> Alaska",
    ]
    assert "mail" not in played.stderr and "HELP" not in played.stderr


def test_check_lists_every_problem_names_the_player_and_heads_both_modes_alike(
    gm: Gm, tmp_path: Path
) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    who, _ = attack_orders(gm, tmp_path)
    engine = init_db(gm.settings.database_url)
    with session_scope(engine, write=False) as session:
        state = load(session, find_game(session, "g1")).state
    engine.dispose()
    board = state.board.territories
    theirs = next(t.name for i, t in enumerate(board) if state.owner[i] != state.current)
    bad = tmp_path / "bad.txt"
    bad.write_text(f"PLACE 1 {theirs}\nATTAK Kamchatca -> Alaska\n", encoding="utf-8")
    checked = gm.run("check", bad, "--game", "g1", "--as", who)
    assert checked.exit_code == 1
    lines = checked.stdout.splitlines()
    # the syntax error does not hide the game's: the PLACE on a territory not theirs
    head = rf"{who}'s orders in .* refused \(\d problems\); nothing was applied:"
    assert re.fullmatch(head, lines[0])
    assert lines[2] == f'("you" below means {who}: the messages are those of {who}\'s reply)'
    assert any(f"{theirs} is not yours" in line for line in lines)
    assert "line 2: ATTAK Kamchatca -> Alaska" in lines
    good = tmp_path / "good.txt"
    good.write_text("PLACE 1 Alaska\n", encoding="utf-8")
    mapped = gm.ok("check", good).splitlines()
    assert mapped[0].startswith(f"orders in {good} valid, checked against the map only ")
    assert mapped[0].endswith("; nothing was applied:")
    refused = gm.run("check", bad).stdout.splitlines()
    assert refused[0] == f"orders in {bad} refused (1 problem); nothing was applied:"


def test_adjudicate_prints_the_summary_and_the_mails_and_sends_them_with_send(
    gm: Gm, tmp_path: Path
) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    gm.ok("poll")
    who, orders = attack_orders(gm, tmp_path)
    before = gm.delivered()
    played = gm.ok("adjudicate", "g1", "--orders", orders).splitlines()
    assert f"{who}: turn 1 played" in played
    at = played.index("turn 1:")
    assert played[at + 1].startswith(f"  {who} receives ")
    assert played[at + 2].startswith(f"  {who} placed ")
    assert any(re.match(rf"  {who} took (no territory|.*)\.$", line) for line in played[at:])
    # every attack, taken or failed, with the armies lost, and the tally
    attacks = [line for line in played[at:] if re.match(r"  .* \(\d+\) -> .*: ", line)]
    assert attacks and all(re.search(r"\(lost \d+, killed \d+", line) for line in attacks)
    tally = rf"  {who} attacked (once|\d+ times): \d+ taken, \d+ failed; lost \d+ arm(y|ies)"
    assert any(re.fullmatch(tally, line) for line in played[at:])
    assert re.fullmatch(r"next: \w+ to move \(turn 2\); deadline .* UTC", played[-2])
    queued = played[-1]
    assert re.fullmatch(
        r"\d+ mails? queued: they go out at the next `pbem poll` \(or now: `pbem outbox --retry`\)",
        queued,
    )
    count = int(queued.split()[0])
    assert count >= len(PLAYERS)  # a report each, the next player's notice
    assert gm.delivered() == before  # nothing sent yet
    gm.ok("outbox", "--retry")
    sent = gm.delivered()
    assert sent == before + count
    # --send: sent at once, as `pbem poll` sends the outbox
    who, orders = attack_orders(gm, tmp_path)
    played = gm.ok("adjudicate", "g1", "--orders", orders, "--send").splitlines()
    count = int(played[-1].split()[0])
    assert played[-1] == (
        f"{count} mails queued; the outbox sent now (these {count}): {count} sent, "
        "0 deferred, 0 failed"
    )
    assert gm.delivered() == sent + count
    # --send sends the whole outbox: the mails waiting from before are said
    sent = gm.delivered()
    waiting = int(gm.ok("process", "g1").splitlines()[-1].split()[0])
    who, orders = attack_orders(gm, tmp_path)
    played = gm.ok("adjudicate", "g1", "--orders", orders, "--send").splitlines()
    count = int(played[-1].split()[0])
    assert played[-1] == (
        f"{count} mails queued; the outbox sent now (these {count} and {waiting} waiting "
        f"from before): {count + waiting} sent, 0 deferred, 0 failed"
    )
    assert gm.delivered() == sent + count + waiting


def test_process_says_who_is_next_and_the_mails_it_queued(gm: Gm) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    done = gm.ok("process", "g1").splitlines()
    assert done[0] == "g1: turn 1 played by the GM, default orders"
    assert re.fullmatch(r"next: (alice|bob|carol) to move \(turn 2\); deadline .* UTC", done[1])
    assert re.fullmatch(r"\d+ mails queued: they go out at the next `pbem poll` .*", done[2])


def test_rollback_asks_first_and_tells_the_players_why(gm: Gm, tmp_path: Path) -> None:
    gm.new_game("g1", "-o", "placement=auto")
    for _ in range(2):
        _, orders = attack_orders(gm, tmp_path)
        gm.ok("adjudicate", "g1", "--orders", orders, "--send")
    asked = gm.run(
        "rollback", "g1", "2", "--message", "the dice server was misconfigured", input="n\n"
    )
    assert asked.exit_code == 1
    assert asked.stdout == (
        "Roll g1 back to the start of turn 2 (it is at turn 3), undoing turn 2 (1 log "
        "entry), and tell every player? [y/N]: n\nnothing changed\n"
    )
    assert json.loads(gm.ok("show", "g1", "--json"))["turn"] == 3
    done = gm.ok(
        "rollback", "g1", "2", "--message", "the dice server was misconfigured", input="y\n"
    )
    assert done.splitlines()[-1].startswith("g1 rolled back to turn 2 (turn 2 undone, 1 log entry)")
    gm.ok("poll")
    for player in PLAYERS:
        (notice,) = [m for m in gm.mails(player) if "Rolled back to turn 2" in str(m["Subject"])]
        assert "The GM says why: the dice server was misconfigured" in gm.body(notice)
        assert "turn 2: turn 2 was undone. The board" in " ".join(gm.body(notice).split())
        assert "log entries" not in gm.body(notice)
    # --yes: no question
    _, orders = attack_orders(gm, tmp_path)
    gm.ok("adjudicate", "g1", "--orders", orders)
    quiet = gm.ok("rollback", "g1", "2", "--yes")
    assert quiet.startswith("g1 rolled back to turn 2")
