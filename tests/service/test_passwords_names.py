"""Issue 27, seats: passwords of 48 bits and more, checked leniently (old ones
still open); wrong passwords counted per seat and told to the GM at
thresholds; a right password from a wrong address told as a leak; a mail
re-sent under a new Message-ID answered "already applied"; names and
addresses checked alike at `pbem new`, JOIN and `pbem replace`.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from pathlib import Path

import pytest
from sqlmodel import select
from typer.testing import CliRunner, Result

from pbem.cli import app
from pbem.service.intake import seatguard
from pbem.service.play import gm
from pbem.service.play.games import PlayerSpec, create_game, find_game, parse_player
from pbem.service.play.names import (
    MAX_GAME_NAME,
    BadName,
    address_problem,
    check_address,
    check_game_name,
    check_player_name,
)
from pbem.service.play.passwords import (
    ALPHABET,
    ENTROPY_BITS,
    LENGTH,
    canonical,
    hash_password,
    new_password,
    verify_password,
)
from pbem.store import Game, InboundMessage, OrderEntry, init_db, session_scope
from tests.longgame_helpers import World, address_of, new_table

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24, 6]}
GROUPED = re.compile(r"[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}")
runner = CliRunner()


# ------------------------------------------------------------------ passwords
def test_a_password_has_at_least_48_bits() -> None:
    assert len(set(ALPHABET)) == len(ALPHABET) == 32
    assert len(ALPHABET) ** LENGTH >= 2**48
    assert len(ALPHABET) ** LENGTH == 2**60 and ENTROPY_BITS == 60
    assert not set("ilou") & set(ALPHABET)  # nothing to read as 1, 0 or v
    made = [new_password() for _ in range(300)]
    assert all(GROUPED.fullmatch(p) for p in made)
    assert all(set(p.replace("-", "")) <= set(ALPHABET) for p in made)
    assert len(set(made)) == 300
    # every character of the alphabet turns up, in every position, given enough draws
    assert {c for p in made for c in p.replace("-", "")} == set(ALPHABET)


def test_verification_ignores_case_blanks_hyphens_and_look_alikes() -> None:
    password = "kq7m-x3hw-9tp0"
    stored = hash_password(password)
    for typed in (
        password,
        "KQ7M-X3HW-9TP0",
        "kq7m x3hw 9tp0",
        "kq7mx3hw9tp0",
        " kq7m - x3hw - 9tpO ",  # a letter O for the zero
        "kq7m\u2013x3hw\u20139tp0",  # en dashes, as a mail program may write hyphens
        "kq7m\u00adx3hw\u200b9tp0",  # a soft hyphen and a zero-width space
    ):
        assert verify_password(typed, stored), typed
    for wrong in ("kq7m-x3hw-9tp1", "kq7m-x3hw-9tp", "kq7m-x3hw-9tp00", "", "x" * 500):
        assert not verify_password(wrong, stored), wrong
    assert canonical("Ab-Il o") == "ab110"


def test_passwords_issued_before_keep_working() -> None:
    """A hash made the old way (scrypt of the word password as issued) still opens."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(b"amber-pine-onyx-07", salt=salt, n=2**14, r=8, p=1, dklen=32)
    stored = f"scrypt$16384$8$1${salt.hex()}${digest.hex()}"
    for typed in ("amber-pine-onyx-07", "Amber-Pine-Onyx-07", "amber pine onyx 07"):
        assert verify_password(typed, stored), typed
    assert verify_password("amberpineonyx07", stored)  # the words run together
    for wrong in ("amber-pine-onyx-08", "amber-pine-onyx", "amb3r-pine-onyx-07"):
        assert not verify_password(wrong, stored), wrong


def test_the_gm_hears_of_wrong_passwords_at_3_10_30_100() -> None:
    assert [n for n in range(1, 3001) if seatguard.is_threshold(n)] == [
        3,
        10,
        30,
        100,
        300,
        1000,
        3000,
    ]


# --------------------------------------------------------- names, addresses
@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("@", "nothing before the @"),
        ("a@", "no domain after the @"),
        ("a@b,c@d", "several @"),
        ("a@b.org,c@d.org", "several @"),
        ("/etc/passwd", "no @"),
        ("../../x@y.org", "the part before the @"),
        ("a/b@y.org", "the part before the @"),
        ("al ice@example.org", "a space or a control character"),
        ("a@b.org\r\nBcc: c@d.org", "a space or a control character"),
        ("a\x00@b.org", "a space or a control character"),
        ("a@b", "the domain must be like example.org"),
        ("a@-b.org", "the domain must be like example.org"),
        ("a..b@c.org", "the part before the @"),
        ("Ann <ann@example.org>", "a space or a control character"),
        ("x" * 300 + "@example.org", "longer than 254 characters"),
        ("", "a mail address is needed"),
    ],
)
def test_addresses_refused_name_the_value(address: str, why: str) -> None:
    problem = address_problem(address)
    assert problem is not None and why in problem
    if address.strip():
        shown = repr(address[:60])
        assert shown in problem
    with pytest.raises(BadName):
        check_address(address)


def test_plain_addresses_pass_in_lower_case() -> None:
    assert check_address(" Ann.Lee+pbem@Mail.Example.ORG ") == "ann.lee+pbem@mail.example.org"
    assert check_address("pbem@localhost") == "pbem@localhost"
    assert check_address("o'neil@x-y.example") == "o'neil@x-y.example"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("al ice", "player name 'al ice': use letters, digits, - and _ only"),
        ("Zoë", "player name 'Zoë': use letters, digits, - and _ only"),
        ("a\r\nb", "player name 'a\\r\\nb': use letters, digits, - and _ only"),
        ("a" * 21, f"player name {'a' * 21!r} is too long: at most 20 characters"),
        ("ALL", "player name ALL is reserved; pick another"),
        ("neutral", "player name neutral is reserved; pick another"),
    ],
)
def test_player_names_refused(name: str, message: str) -> None:
    with pytest.raises(BadName) as caught:
        check_player_name(name)
    assert str(caught.value) == message


def test_parse_player_checks_name_and_address() -> None:
    assert parse_player("Ann:Ann@Example.org:red") == PlayerSpec("Ann", "ann@example.org", "red")
    with pytest.raises(BadName, match=re.escape("'a@' is not a mail address")):
        parse_player("ann:a@")
    with pytest.raises(BadName, match="several @"):
        parse_player("ann:a@b.org,c@d.org")


def _pbem(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "pbem.toml"
    config.write_text(f'database_url = "sqlite:///{tmp_path / "pbem.db"}"\n', encoding="utf-8")
    return config


@pytest.mark.parametrize(
    ("player", "message"),
    [
        ("ann:a@", "'a@' is not a mail address: no domain after the @"),
        ("ann:@", "'@' is not a mail address: nothing before the @"),
        ("ann:a@b.org,c@d.org", "'a@b.org,c@d.org' is not a mail address: several @"),
        ("ann:/var/mail/a@b.org", "'/var/mail/a@b.org' is not a mail address: the part"),
        ("ann:a b@c.org", "'a b@c.org' is not a mail address: it holds a space"),
        ("ann:a@b.org\r\nBcc: x@y.org", "is not a mail address: it holds a space or a control"),
        ("an\nn:a@b.org", "player name 'an\\nn': use letters, digits, - and _ only"),
    ],
)
def test_pbem_new_refuses_bad_addresses_in_one_line(
    tmp_path: Path, player: str, message: str
) -> None:
    config = _config(tmp_path)
    result = _pbem("new", "g", "-p", player, "-p", "bob:bob@example.org", "--config", config)
    assert result.exit_code == 1, result.stdout
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine, write=False) as session:
        assert session.exec(select(Game)).all() == []
    engine.dispose()


def test_pbem_new_refuses_a_bad_gm_address(tmp_path: Path) -> None:
    config = _config(tmp_path)
    players = ["-p", "ann:ann@example.org", "-p", "bob:bob@example.org"]
    result = _pbem("new", "g", *players, "--gm", "gm@", "--config", config)
    assert result.exit_code == 1
    assert result.stderr == "error: 'gm@' is not a mail address: no domain after the @\n"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ÄÖ", "game name 'ÄÖ': use letters, digits, - and _ only"),
        ("a/b", "game name 'a/b': use letters, digits, - and _ only"),
        ("..", "game name '..': use letters, digits, - and _ only"),
        ("-x", "game name '-x': use letters, digits, - and _ only"),
        ("a b", "game name 'a b': use letters, digits, - and _ only"),
        ("x" * 41, "is too long: at most 40 characters"),
        ("g" * 300, "... (300 characters) is too long: at most 40 characters"),
    ],
)
def test_game_names_a_subject_tag_and_a_file_can_carry(
    tmp_path: Path, name: str, message: str
) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine, write=False) as session:
        with pytest.raises(BadName) as caught:
            check_game_name(session, name)
    assert message in str(caught.value)
    engine.dispose()


def test_game_names_collide_whatever_their_case(tmp_path: Path) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    specs = [PlayerSpec("ann", "ann@example.org"), PlayerSpec("bob", "bob@example.org")]
    name = "World-1" + "x" * (MAX_GAME_NAME - 7)
    with session_scope(engine) as session:
        create_game(session, name, specs)
    for other, message in (
        (name, f"a game named {name!r} exists already"),
        (name.lower(), f"a game named {name!r} exists already (names differing only in case"),
    ):
        with pytest.raises(BadName) as caught:
            with session_scope(engine) as session:
                create_game(session, other, specs)
        assert message in str(caught.value)
    engine.dispose()


def test_a_game_stored_under_an_older_rule_still_loads(tmp_path: Path) -> None:
    """Names are checked when a game is made; a stored one keeps its name."""
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    specs = [PlayerSpec("ann", "ann@example.org"), PlayerSpec("bob", "bob@example.org")]
    with session_scope(engine) as session:
        create_game(session, "g", specs)
        find_game(session, "g").name = "Spiel-ÄÖ"
    with session_scope(engine, write=False) as session:
        assert find_game(session, "Spiel-ÄÖ").turn >= 0
    engine.dispose()


def test_join_checks_the_name_and_the_address(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.open_game("jn", 2)
    world.send("long@players.test", "JOIN jn AS abcdefghijabcdefghijabcde", "join")
    world.send("odd@nodot", "JOIN jn AS odd", "join")
    world.poll()
    long = world.take("long@players.test")
    assert [m.subject for m in long] == ["[jn] Joining refused"]
    assert "is too long: at most 20 characters" in long[0].flat
    odd = world.take("odd@nodot")
    assert [m.subject for m in odd] == ["[jn] Joining refused"]
    assert "'odd@nodot' is not a mail address" in odd[0].flat
    assert world.players("jn") == []


def test_replace_checks_the_same_way(tmp_path: Path) -> None:
    world = World(tmp_path)
    new_table(world, "rp", PLAYERS, settings=TIMING).silence()
    for address, why in (("a@b.org,c@d.org", "several @"), ("a@", "no domain after the @")):
        with pytest.raises(BadName, match=re.escape(why)):
            world.gm(gm.replace, "rp", "bob", address)
    with pytest.raises(BadName, match="is too long"):
        world.gm(gm.replace, "rp", "bob", "dan@players.test", "d" * 30)
    assert world.player("rp", "bob").address == address_of("bob")


# -------------------------------------------------------------- in the mail
def _quiet_table(tmp_path: Path, name: str):  # noqa: ANN202
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS, settings={**TIMING, "press_per_hour": 10})
    table.silence()
    table.step()
    table.clear()
    return world, table


def _inbound(world: World) -> list[tuple[str, str]]:
    with world.session(write=False) as session:
        rows = session.exec(select(InboundMessage).order_by(InboundMessage.id)).all()  # type: ignore[arg-type]
        return [(r.status, r.outcome) for r in rows]


def test_wrong_passwords_are_counted_and_the_gm_told_at_thresholds(tmp_path: Path) -> None:
    world, table = _quiet_table(tmp_path, "wp")
    for _ in range(31):
        world.send(address_of("bob"), "PASSWORD zzzz-zzzz-zzzz\nPRESS TO ann\nhi\nENDPRESS")
    world.poll()
    bob = world.player("wp", "bob")
    assert bob.wrong_passwords == 31
    assert bob.last_wrong_password_at == world.clock.now()
    assert [o for _, o in _inbound(world)][-1] == "authentication failed for bob"
    table.read_all()
    counted = [m.subject for m in table.gm if "wrong passwords for bob" in m.subject]
    assert counted == [
        "[wp] GM alert: 3 wrong passwords for bob",
        "[wp] GM alert: 10 wrong passwords for bob",
        "[wp] GM alert: 30 wrong passwords for bob",
    ]
    told = next(m for m in table.gm if "30 wrong passwords" in m.subject)
    assert "pbem new-password wp bob" in told.flat
    assert "zzzz" not in " ".join(m.flat for m in table.gm)  # the wrong password never shown
    assert table.mails("ann", "press") == []

    shown = _pbem("show", "wp", "--config", world.config_path)
    assert shown.exit_code == 0, shown.stdout
    assert "Wrong passwords (mail from the seat's address, refused" in shown.stdout
    assert f"  bob: 31, the latest {world.clock.now():%Y-%m-%d %H:%M} UTC" in shown.stdout
    data = json.loads(_pbem("show", "wp", "--json", "--config", world.config_path).stdout)
    counts = {p["name"]: p["wrong_passwords"] for p in data["players"]}
    assert counts == {"ann": 0, "bob": 31, "cat": 0}
    status = _pbem("status", "--config", world.config_path)
    assert "wrong passwords: bob in wp: 31, the latest 2024-03-04T12:00:00+00:00" in status.stdout
    status_json = json.loads(_pbem("status", "--json", "--config", world.config_path).stdout)
    assert status_json["wrong_passwords"] == [
        {
            "game": "wp",
            "player": "bob",
            "wrong_passwords": 31,
            "last_wrong_password_at": "2024-03-04T12:00:00+00:00",
        }
    ]


def test_new_password_mails_the_seat_and_the_old_one_stops(tmp_path: Path) -> None:
    world, table = _quiet_table(tmp_path, "np")
    old = table["bob"].password
    line = world.gm(seatguard.reissue_password, "np", "bob")
    assert line == (
        "a new password for bob (seat 1) is mailed to bob@players.test; the old one no longer works"
    )
    table.read_all()
    (mail,) = [m for m in table.mails("bob") if "Your new password" in m.subject]
    new = GROUPED.search(mail.text)
    assert new is not None and new.group(0) != old
    hashed = world.player("np", "bob").secret_hash
    assert verify_password(new.group(0), hashed) and not verify_password(old, hashed)
    assert all(new.group(0) not in m.flat for n in ("ann", "cat") for m in table.mails(n))
    assert all(new.group(0) not in m.flat for m in table.gm)


def test_a_right_password_from_another_address_is_told_as_a_leak(tmp_path: Path) -> None:
    world, table = _quiet_table(tmp_path, "lk")
    before = len(world.log("lk"))
    password = table["bob"].password
    body = f"PASSWORD {password}\nPRESS TO ALL\nfrom bob\nENDPRESS"
    world.send("eve@elsewhere.test", body, "[lk] orders")
    world.poll()
    assert _inbound(world)[-1] == (
        "rejected",
        "the password of bob came from eve@elsewhere.test: leaked, nothing applied",
    )
    assert len(world.log("lk")) == before
    table.read_all()
    (warning,) = [m for m in table.mails("bob") if "leaked" in m.subject]
    assert "carried your password" in warning.flat and "eve@elsewhere.test" in warning.flat
    assert "pbem new-password lk bob" in warning.flat
    (note,) = [m for m in table.gm if "leaked" in m.subject]
    assert note.subject == "[lk] GM alert: The password of bob has leaked"
    assert "pbem new-password lk bob" in note.flat
    assert password not in warning.flat + note.flat
    assert world.take("eve@elsewhere.test") == []  # the sender learns nothing
    assert table.mails("ann", "press") == [] and table.mails("cat", "press") == []
    # a wrong password from a stranger is no leak, and costs the seat no count
    world.send("eve@elsewhere.test", "PASSWORD zzzz-zzzz-zzzz\nPRESS TO ALL\nx\nENDPRESS", "[lk] x")
    world.poll()
    assert _inbound(world)[-1] == ("rejected", "eve@elsewhere.test does not play in lk")
    assert world.player("lk", "bob").wrong_passwords == 0


def test_forged_wrong_passwords_do_not_silence_the_leak_warning(tmp_path: Path) -> None:
    """The hostile trial: mails forged in bob's name with wrong passwords spent
    bob's alert budget, and the warning that his real password had leaked was
    then dropped without a word. The leak warning has a budget of its own."""
    world, table = _quiet_table(tmp_path, "sl")
    budget = world.config.mail.alert_budget_per_hour
    for n in range(budget + 2):
        world.send(table["bob"].address, f"PASSWORD zzzz-zzzz-zzz{n % 10}\nSTATUS\n", "[sl] x")
    world.poll()
    table.read_all()
    body = f"PASSWORD {table['bob'].password}\nPRESS TO ALL\nhi\nENDPRESS"
    world.send("eve@elsewhere.test", body, "[sl] orders")
    world.poll()
    table.read_all()
    (warning,) = [
        m for m in table.mails("bob") if m.subject.startswith("[sl] Your password has leaked")
    ]
    assert "eve@elsewhere.test" in warning.flat


def test_a_mail_sent_again_under_a_new_message_id_is_already_applied(tmp_path: Path) -> None:
    world, table = _quiet_table(tmp_path, "ag")
    ann = table["ann"]
    body = "PRESS TO ALL\nPeace in our time.\nENDPRESS"
    ann.write(body)
    world.poll()
    world.advance(minutes=10)  # (at one time the outbox would keep one press of one text)
    ann.write(body)  # the same text, a new Message-ID
    ann.write("\n" + body.replace("\n", "  \n") + "\n\n")  # blanks a mail program adds
    world.poll()
    table.read_all()
    assert [m.untokened for m in table.mails("bob", "press")] == ["[ag] Press from ann"]
    assert [m.untokened for m in table.mails("cat", "press")] == ["[ag] Press from ann"]
    answers = [m for m in table.mails("ann") if m.kind != "press"]
    assert len(answers) == 3
    assert "Your press to ALL was relayed." in answers[0].flat
    for again in answers[1:]:
        assert "Already applied" in again.flat and "Nothing was applied again" in again.flat
    assert [o for _, o in _inbound(world)][-2:] == ["already applied", "already applied"]
    # other words are a new mail
    ann.write("PRESS TO ALL\nPeace, I said.\nENDPRESS")
    world.poll()
    table.read_all()
    assert len(table.mails("bob", "press")) == 2


def test_orders_sent_again_are_already_applied_not_played_twice(tmp_path: Path) -> None:
    world, table = _quiet_table(tmp_path, "ao")
    mover = table[table.mover()]
    state = world.state("ao")
    assert mover.bot is not None
    orders = mover.bot.write_turn(state)
    mover.write(orders)
    world.poll()
    log = world.log("ao")
    assert world.state("ao").turn == state.turn + 1
    mover.write(orders)
    world.poll()
    assert world.log("ao") == log
    table.read_all()
    last = table.mails(mover.name)[-1]
    assert "Already applied" in last.flat
    with world.session(write=False) as session:
        mine = session.exec(select(OrderEntry).where(OrderEntry.seat == mover.seat_no(state)))
        assert len(mine.all()) == 1


def test_the_same_text_in_the_seats_next_turn_is_new(tmp_path: Path) -> None:
    """Once the seat's next turn has begun, the same text is read again."""
    world, table = _quiet_table(tmp_path, "nt")
    ann = table["ann"]
    body = "PRESS TO bob\nStill friends?\nENDPRESS"
    ann.write(body)
    world.poll()
    for seat in table.seats.values():
        seat.auto = True
    start = world.state("nt").turn
    table.run(lambda: world.state("nt").turn >= start + 3 and table.mover() == "ann")
    table.silence()
    table.clear()
    world.advance(hours=1)  # (the outbox keeps one press of one text at one time)
    ann.write(body)
    world.poll()
    world.flush()  # the press, queued in this poll, is sent by the next (or now)
    table.read_all()
    assert [m.untokened for m in table.mails("bob", "press")] == ["[nt] Press from ann"]
    assert "Already applied" not in table.mails("ann")[-1].flat
    assert not [m for m in table.gm if "wrong passwords" in m.subject]
