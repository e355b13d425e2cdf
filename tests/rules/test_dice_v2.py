"""Dice version 2 (docs/DICE.md): the vectors of the spec, the players' contributions
(SALT or orders) in the dice, games choosing their version, records of both versions
verified by `pbem verify` and by the independent scripts/verify_dice.py alike."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pbem.maps import builtin_map
from pbem.maps.presets import load_preset, preset_names
from pbem.orderlog import replay
from pbem.orderlog.records import Record, read_record, verify_record, write_record
from pbem.orders import OrdersError, parse_orders, render_orders
from pbem.paths import maps_dir, presets_dir
from pbem.report import render
from pbem.rules import engine, freestyle
from pbem.rules.bots import make_bot
from pbem.rules.dice import (
    DICE_V1,
    DICE_V2,
    DiceStream,
    DiceStreamV2,
    commitment,
    contribution,
    make_stream,
    stream_key,
)
from pbem.rules.mapformat import parse_map
from pbem.rules.state import ENDED, ROUND, SETUP_PHASES
from pbem.service.play.games import PlayerSpec, create_game, find_game, log_of, players_of, submit
from pbem.store import init_db, session_scope
from pbem.testing.sample import play_sample

SECRET = bytes(range(32))
GAME = "world-1"
SALTED = "PLACE 3 Alaska\nATTACK Alaska -> Kamchatka\nSALT my lucky socks 1987"
PLAIN = "PLACE 3 Alaska\nATTACK Alaska -> Kamchatka"
ROOT = Path(__file__).parents[2]
VERIFY_DICE = ROOT / "scripts" / "verify_dice.py"

# The vectors of docs/DICE.md, section "Vectors (v2)".
C_SALTED = "c9180f699b3a8a442e4464eb46c253e8bb7a230d8f49578d854295a5b1af73c4"
C_PLAIN = "6317c9aba07135bcaacda016d00ed07486960a7b3bc2cec25c3320f929fb4cb5"
VECTORS = [
    (
        "turn:1",
        (C_SALTED,),
        "a1af6a2828931a751d39afad97246944a8e34444aa8bf3e82b518622973151cb",
        "cf2cf7feae22afe91ed33c144b8a24d15995c6bd34f4913ac4307baa6338a2a5",
        "3 2 1 6 2 5 1 6 2 3 5 3 3 4 4 6 3 6 4 5",
    ),
    (
        "turn:1",
        (C_PLAIN,),
        "8367f11f97d99cf39ae741579a0f740c04f9c5233f70c76598f5e3b5c3905b53",
        "3734c545a9d1a1298270221a949e8a58712e9f83ca8950195742f07c3181835c",
        "2 2 3 5 6 4 5 3 6 3 3 2 4 5 4 1 2 4 2 6",
    ),
    (
        "setup",
        (),
        "147ea0380854de3660ef457ce97ae3a5cfd418383ca69c5e66ef0ce6fea9d7b1",
        "a57c543781ecca6d30476b07de945734b6be68517e1f03d2a9c7cc115c88dfa1",
        "6 2 6 3 6 5 2 4 5 6 2 6 3 6 1 5 6 2 4 3",
    ),
    (
        "setup:place",
        (C_SALTED, C_PLAIN),
        "61397b277f61359d9d3080904a7287779de9aa1c1859921928a4c9239ad8e3a0",
        "abc694d91a66726beb5e6b0752e49659754e7ff589cdf078f9c20610d7251b56",
        "6 2 6 4 4 1 1 3 4 6 1 5 5 6 2 1 5 1 3 2",
    ),
]


# ----------------------------------------------------------------- the vectors
def test_contributions_are_the_hash_of_the_salt_or_of_the_orders() -> None:
    assert contribution(SALTED).hex() == C_SALTED
    assert C_SALTED == hashlib.sha256(b"my lucky socks 1987").hexdigest()
    assert contribution(PLAIN).hex() == C_PLAIN
    assert C_PLAIN == hashlib.sha256(PLAIN.encode()).hexdigest()
    assert contribution(PLAIN + "\n") == contribution("\n" + PLAIN)  # line feeds at the ends


@pytest.mark.parametrize(("label", "contribs", "key", "first32", "dice"), VECTORS)
def test_v2_vectors(label: str, contribs: tuple, key: str, first32: str, dice: str) -> None:
    hashes = tuple(bytes.fromhex(c) for c in contribs)
    stream = DiceStreamV2(SECRET, GAME, label, hashes)
    assert stream.key.hex() == key
    assert stream_key(SECRET, GAME, label, hashes).hex() == key
    assert stream.read(32).hex() == first32
    rolled = DiceStreamV2(SECRET, GAME, label, hashes)
    assert rolled.roll(20) == [int(d) for d in dice.split()]
    assert rolled.position == 80  # no draw of these vectors is rejected


@pytest.mark.parametrize(("label", "contribs", "key", "first32", "dice"), VECTORS)
def test_v2_vectors_from_the_spec_text(
    label: str, contribs: tuple, key: str, first32: str, dice: str
) -> None:
    """A naive implementation written from docs/DICE.md gives the same vectors."""
    message = b"pbem-dice-v2\x00" + GAME.encode() + b"\x00" + label.encode() + b"\x00"
    message += len(contribs).to_bytes(4, "big") + b"".join(bytes.fromhex(c) for c in contribs)
    naive_key = hashlib.blake2b(message, key=SECRET, digest_size=32).digest()
    assert naive_key.hex() == key
    data = hashlib.shake_256(naive_key).digest(80)
    assert data[:32].hex() == first32
    words = [int.from_bytes(data[i : i + 4], "big") for i in range(0, 80, 4)]
    assert all(w < 2**32 - 4 for w in words)
    assert " ".join(str(w % 6 + 1) for w in words) == dice


def test_v2_stream_is_one_shake_output_across_refills() -> None:
    hashes = (bytes.fromhex(C_SALTED),)
    stream = DiceStreamV2(SECRET, GAME, "turn:1", hashes)
    key = stream_key(SECRET, GAME, "turn:1", hashes)
    got = b"".join(stream.read(n) for n in (3, 509, 1, 700, 2000, 5))
    assert got == hashlib.shake_256(key).digest(3218)


def test_v2_shuffle_vector() -> None:
    stream = DiceStreamV2(SECRET, GAME, "turn:1", (bytes.fromhex(C_SALTED),))
    items = list(range(10))
    stream.shuffle(items)
    assert (items, stream.position) == ([0, 5, 3, 9, 6, 1, 7, 8, 4, 2], 36)


def test_a_changed_contribution_changes_the_dice() -> None:
    salted = make_stream(DICE_V2, SECRET, GAME, "turn:1", (contribution(SALTED),)).roll(20)
    plain = make_stream(DICE_V2, SECRET, GAME, "turn:1", (contribution(PLAIN),)).roll(20)
    other = SALTED.replace("1987", "1988")
    moved = make_stream(DICE_V2, SECRET, GAME, "turn:1", (contribution(other),)).roll(20)
    assert len({tuple(salted), tuple(plain), tuple(moved)}) == 3
    # the order of two contributions matters too
    both = (contribution(SALTED), contribution(PLAIN))
    one = make_stream(DICE_V2, SECRET, GAME, "setup:place", both).roll(20)
    two = make_stream(DICE_V2, SECRET, GAME, "setup:place", both[::-1]).roll(20)
    assert one != two


def test_v1_streams_are_unchanged_and_ignore_contributions() -> None:
    v1 = make_stream(DICE_V1, SECRET, GAME, "turn:1", (contribution(SALTED),))
    assert type(v1) is DiceStream
    assert v1.roll(20) == [5, 6, 2, 2, 3, 6, 6, 6, 6, 2, 3, 5, 4, 2, 2, 1, 4, 1, 6, 6]


def test_bad_contributions_and_versions_are_refused() -> None:
    with pytest.raises(ValueError, match="32-byte hash"):
        DiceStreamV2(SECRET, GAME, "turn:1", (b"short",))
    with pytest.raises(ValueError, match="unknown dice version 'pbem-dice-v3'"):
        make_stream("pbem-dice-v3", SECRET, GAME, "turn:1")


# ------------------------------------------------------------ the SALT line
def test_salt_stands_anywhere_and_keeps_its_words() -> None:
    board = builtin_map("classic")
    mail = parse_orders("PLACE 3 Alaska\nSALT  my   lucky socks # a comment\n", board)
    assert mail.salt is not None and mail.salt.value == "my lucky socks"
    assert len(mail.orders) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SALT a\nSALT b", "SALT is given twice (first on line 1)"),
        ("SALT " + "x" * 201, "a SALT is at most 200 characters long"),
    ],
)
def test_bad_salts_are_explained(text: str, message: str) -> None:
    with pytest.raises(OrdersError) as caught:
        parse_orders(text, builtin_map("classic"))
    assert [p.message for p in caught.value.problems] == [message]


# --------------------------------------------------------- games and reports
def test_new_games_default_to_v2_and_the_salt_keys_the_turn(tmp_path: Path) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    specs = [PlayerSpec(n, f"{n}@example.org") for n in ("ann", "bob", "cat")]
    with session_scope(engine) as session:
        v2 = create_game(session, "g2", specs, overrides={"placement": "auto"}, secret=SECRET)
        v1 = create_game(
            session, "g1", specs, overrides={"placement": "auto"}, secret=SECRET, dice_version="v1"
        )
        assert (v2.game.dice_version, v1.game.dice_version) == (DICE_V2, DICE_V1)
    with session_scope(engine) as session:
        game = find_game(session, "g2")
        player = players_of(session, game)[game.current_seat or 0]
        from pbem.service.play.games import load

        state = load(session, game).state
        orders = render_orders(make_bot("greedy", 1).plan_turn(state), state.board)
        outcome = submit(session, game, player, "SALT  blue  moon\n" + orders, source="mail")
        assert outcome.accepted, outcome.problems
        assert outcome.canonical.endswith("\nSALT blue moon")
        (step,) = outcome.steps
        salt_hash = hashlib.sha256(b"blue moon").hexdigest()
        assert step.contributions == ((player.seat, salt_hash),)
        assert log_of(session, game)[-1].text == outcome.canonical


def test_the_turn_report_names_the_contributions() -> None:
    sample = play_sample(turns=1)
    report = sample.reports[0]
    digest = hashlib.sha256(b"blue moon").hexdigest()
    report = replace(
        report,
        game=replace(report.game, dice_version=DICE_V2),
        dice_inputs=(("alice", "SALT", digest),),
    )
    text = render.render_turn_report(report, 0).text
    assert "The dice of this turn (pbem-dice-v2) mix the game's secret with:" in text
    assert f"  alice's SALT, SHA-256:\n    {digest}\n" in text
    assert "mix the game's secret" not in render.render_turn_report(sample.reports[0], 0).text


# ---------------------------------------------------------- whole bot games
def bot_game(preset: str, version: str, seed: int = 3) -> Record:
    """A whole game of greedy bots under ``preset``, logged as the service logs it;
    every third turn carries a SALT."""
    options = load_preset(preset)
    map_name = "classic"
    map_text = (maps_dir() / f"{map_name}.toml").read_text(encoding="utf-8")
    board = parse_map(map_text, map_name)
    count = max(options.min_players, 3) if options.max_players != 2 else 2
    players = [
        (n, c)
        for n, c in zip(
            ("ann", "bob", "cat", "dan", "eve", "fay"),
            ("red", "blue", "yellow", "green", "black", "purple"),
            strict=False,
        )
    ][:count]
    name = f"{preset}-{version[-2:]}"
    definition = replay.GameDefinition(name, board, options, tuple(players), SECRET, version)
    played, _ = replay.start(definition)
    bots = [make_bot("greedy", seed + seat) for seat in range(count)]
    entries: list[replay.Entry] = []
    hashes: list[str | None] = []

    def log(entry: replay.Entry) -> None:
        step = replay.apply(played, entry)
        entries.append(entry)
        hashes.append(step.state_hash if step else None)

    while played.state.phase in SETUP_PHASES:
        state = played.state
        for seat in list(state.order):
            text = render_orders(bots[seat].plan_setup(state, seat), board)
            log(replay.Entry("setup", seat, text + f"\nSALT setup {seat}", 0, "mail"))
    while played.state.phase != ENDED and played.state.turn < 400:
        state = played.state
        if state.phase == ROUND:  # freestyle: the first still to move "arrives" first
            state = engine.turn_of(state, freestyle.waiting_for(state)[0])
        text = render_orders(bots[state.current].plan_turn(state), board)
        if state.turn % 3 == 0:
            text += f"\nSALT turn {state.turn}"
        log(replay.Entry("turn", state.current, text, state.turn, "mail"))
    final = played.state
    record = Record(
        game=name,
        map_name=map_name,
        map_text=map_text,
        options=options,
        players=players,
        commitment=commitment(SECRET),
        entries=entries,
        hashes=hashes,
        secret_hex=SECRET.hex(),
        result=final.players[final.winner].name if final.winner is not None else "",
        preset=preset,
        dice_version=version,
    )
    from pbem.orderlog.records import draws_of

    record.draws = draws_of(record, SECRET)
    return record


def independent(text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "game.pgn"
    path.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", str(VERIFY_DICE), str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("preset", preset_names(presets_dir()))
def test_independent_verifier_agrees_with_pbem_verify(preset: str, tmp_path: Path) -> None:
    record = bot_game(preset, DICE_V2)
    text = write_record(record)
    assert f'[DiceVersion "{DICE_V2}"]' in text
    again = read_record(text)
    assert again.dice_version == DICE_V2 and again.draws == record.draws
    report = verify_record(again, SECRET.hex())
    assert report.ok, report.message
    checked = independent(text, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    total = sum(len(s.draws) for s in record.draws)
    assert checked.stdout == (
        f"ok: {len(record.draws)} streams, {total} draws, every one as {DICE_V2} gives it\n"
    )
    # a SALT changed after the fact: both refuse the record
    turn = next(i for i, e in enumerate(record.entries) if "SALT turn" in e.text)
    forged = text.replace(record.entries[turn].text, record.entries[turn].text + "x", 1)
    assert not verify_record(read_record(forged), SECRET.hex()).ok
    assert independent(forged, tmp_path).returncode == 1


def test_a_v1_record_still_verifies_both_ways(tmp_path: Path) -> None:
    record = bot_game("classic", DICE_V1)
    text = write_record(record)
    assert f'[DiceVersion "{DICE_V1}"]' in text
    assert verify_record(read_record(text), SECRET.hex()).ok
    assert independent(text, tmp_path).returncode == 0
    # one die changed in the draws: both name the difference
    section = next(s for s in record.draws if s.label.startswith("turn:") and s.draws)
    n, r = section.draws[0]
    section.draws[0] = (n, (r + 1) % n)
    forged = write_record(record)
    report = verify_record(read_record(forged), SECRET.hex())
    assert report.message == f"the draws of {section.label} differ from the secret's at draw 1"
    checked = independent(forged, tmp_path)
    assert checked.returncode == 1
    assert checked.stdout.startswith(f"FAILED: {section.label}: draw 1 is ")


def test_a_salt_by_mail_reaches_the_log_the_receipt_and_every_report(tmp_path: Path) -> None:
    """Through the real mail path (Maildir spool, pbem poll): the mover's SALT is logged,
    echoed to the mover only, and every turn report names its hash."""
    from tests.longgame_helpers import Table, World

    world = World(tmp_path)
    names = ["ann", "bob", "cat"]
    world.create("salty", names, dice_version="v2")
    table = Table(world, "salty", names)
    table.silence()
    table.read_all()
    mover = table[table.mover()]
    state = world.state("salty")
    assert mover.bot is not None
    orders = mover.bot.write_turn(state)
    mover.reply(mover.latest("your_turn"), orders + "\nSALT  blue   moon # mine")
    world.poll()
    table.read_all()
    assert world.log("salty")[-1].text.endswith("\nSALT blue moon")
    (receipt,) = table.mails(mover.name, "receipt")
    assert "SALT blue moon" in receipt.text
    digest = hashlib.sha256(b"blue moon").hexdigest()
    for name in names:
        (report,) = table.mails(name, "turn_report")
        assert "The dice of this turn (pbem-dice-v2) mix the game's secret with:" in report.text
        assert f"  {mover.name}'s SALT, SHA-256:\n    {digest}\n" in report.text
        if name != mover.name:
            assert "blue moon" not in report.text
    assert world.game("salty").dice_version == DICE_V2


def test_a_v2_record_imports_replays_and_exports_bit_for_bit(tmp_path: Path) -> None:
    from pbem.service.play.archive import export_record, import_record, replay_game

    text = write_record(bot_game("classic", DICE_V2, seed=5))
    engine = init_db(f"sqlite:///{tmp_path / 'pbem.db'}")
    with session_scope(engine) as session:
        game, _ = import_record(session, text, source="v2.pgn")
        assert game.dice_version == DICE_V2
    with session_scope(engine, write=False) as session:
        game = find_game(session, "classic-v2")
        report = replay_game(session, game)
        assert report.ok, report.message
        assert export_record(session, game) == text


def test_independent_verifier_answers_a_bad_secret_without_a_traceback(tmp_path: Path) -> None:
    text = (ROOT / "tests" / "data" / "records" / "greedy-seed5-v2.pgn").read_text()
    path = tmp_path / "g2.pgn"
    path.write_text(
        "".join(x for x in text.splitlines(keepends=True) if not x.startswith("[Secret ")),
        encoding="utf-8",
    )
    for secret, problem in (
        ("00", "the secret is 1 bytes; a pbem-dice-v2 secret is exactly 32 bytes (64 hex digits)"),
        ("zz", "the secret is not hexadecimal"),
    ):
        done = subprocess.run(
            [sys.executable, "-I", str(VERIFY_DICE), str(path), "--secret", secret],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert (done.returncode, done.stdout, done.stderr) == (1, f"FAILED: {problem}\n", "")
