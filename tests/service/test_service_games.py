"""The game service on a real database: passwords, turn tokens, setup orders that
wait, orders out of turn, RESIGN, and load() (latest snapshot + later log) against a
full rebuild from the log. The whole-game test runs on SQLite and PostgreSQL.

Games have fixed secrets and greedy TextBots, so every game here is the same on
every run; expected values are computed independently (HMAC, scrypt, or a
replay of the log by the pure replay module).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from pbem.orderlog import replay
from pbem.orders import TextBot
from pbem.rules.bots import make_bot
from pbem.rules.events import PlayerEliminated
from pbem.rules.state import GameState
from pbem.service.errors import ServiceError
from pbem.service.play.archive import export_record, import_record, replay_game, reveal
from pbem.service.play.games import (
    PlayerSpec,
    command,
    create_game,
    definition_of,
    find_game,
    load,
    log_of,
    parse_player,
    players_of,
    submit,
    to_entry,
)
from pbem.service.play.passwords import hash_password, turn_token, verify_password
from pbem.store import Game, OrderEntry, PendingOrders, Player, TurnResult, init_db, session_scope

SECRET = bytes(range(32))
NAMES = ["alice", "bob", "carol", "dave"]


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return init_db(f"sqlite:///{tmp_path / 'pbem.db'}")


def new_game(
    engine: Engine,
    players: int = 4,
    name: str = "g",
    secret: bytes = SECRET,
    dice_version: str = "v1",  # the hand-checked outcomes below were rolled with v1
) -> dict:
    specs = [PlayerSpec(n, f"{n}@example.org") for n in NAMES[:players]]
    with session_scope(engine) as session:
        created = create_game(session, name, specs, secret=secret, dice_version=dice_version)
        return created.passwords


def bots(players: int = 4) -> list[TextBot]:
    return [TextBot(make_bot("greedy", seat)) for seat in range(players)]


def current(engine: Engine, name: str = "g") -> GameState:
    with session_scope(engine, write=False) as session:
        return load(session, find_game(session, name)).state


def rebuilt_hash(session: Session, game: Game) -> str:
    """The state after the whole log, replayed from the start (no snapshot)."""
    entries = [to_entry(e) for e in log_of(session, game)]
    return replay.rebuild(definition_of(session, game), entries).state.state_hash()


def stored_hashes(session: Session, game: Game) -> list[str]:
    rows = session.exec(
        select(TurnResult).where(TurnResult.game_id == game.id).order_by(TurnResult.seq)
    )
    return [r.state_hash for r in rows]


def counts(session: Session, game: Game) -> tuple[int, int, int]:
    log = len(log_of(session, game))
    results = len(stored_hashes(session, game))
    pending = len(session.exec(select(PendingOrders).where(PendingOrders.game_id == game.id)).all())
    return log, results, pending


def play_setup(engine: Engine, writers: list[TextBot], name: str = "g", source: str = "gm") -> None:
    state = current(engine, name)
    for seat in state.order:
        with session_scope(engine) as session:
            game = find_game(session, name)
            text = writers[seat].write_setup(state, seat)
            assert submit(
                session, game, players_of(session, game)[seat], text, source=source
            ).accepted


def play_turn(engine: Engine, writers: list[TextBot], name: str = "g") -> GameState:
    with session_scope(engine) as session:
        game = find_game(session, name)
        state = load(session, game).state
        text = writers[state.current].write_turn(state)
        outcome = submit(session, game, players_of(session, game)[state.current], text)
        assert outcome.accepted, outcome.problems
        return outcome.steps[-1].state


# ---------------------------------------------------------------- passwords
def test_passwords_are_stored_only_as_scrypt_hashes(engine: Engine, tmp_path: Path) -> None:
    passwords = new_game(engine)
    assert list(passwords) == NAMES
    assert len(set(passwords.values())) == 4
    with session_scope(engine, write=False) as session:
        rows = players_of(session, find_game(session, "g"))
    for row in rows:
        password = passwords[row.name]
        assert re.fullmatch(
            r"[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}", password
        )
        match = re.fullmatch(
            r"scrypt-c\$16384\$8\$1\$([0-9a-f]{32})\$([0-9a-f]{64})", row.secret_hash
        )
        assert match, row.secret_hash
        salt, digest = bytes.fromhex(match.group(1)), match.group(2)
        # the hash is of the canonical form: the password without its hyphens
        plain = password.replace("-", "").encode()
        expected = hashlib.scrypt(plain, salt=salt, n=16384, r=8, p=1, dklen=32)
        assert expected.hex() == digest
        assert verify_password(password, row.secret_hash)
        neighbour = passwords[NAMES[(NAMES.index(row.name) + 1) % 4]]
        assert not verify_password(neighbour, row.secret_hash)
        assert not verify_password(password + "x", row.secret_hash)
    engine.dispose()  # checkpoint the WAL: every byte is in the database file now
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("pbem.db"))
    for password in passwords.values():
        assert password.encode() not in stored


def test_hash_password_salts_each_hash() -> None:
    first, second = hash_password("amber-pine-onyx-07"), hash_password("amber-pine-onyx-07")
    assert first != second
    assert verify_password("amber-pine-onyx-07", first)
    assert verify_password("amber-pine-onyx-07", second)


@pytest.mark.parametrize("stored", ["", "plain", "md5$1$2$3$00$00", "scrypt$16384$8$1$00"])
def test_malformed_stored_hash_never_verifies(stored: str) -> None:
    assert verify_password("anything", stored) is False


# -------------------------------------------------------------- turn tokens
def test_turn_tokens_differ_per_turn_and_seat() -> None:
    tokens = {
        (seat, turn): turn_token(SECRET, "world-1", seat, turn)
        for seat in range(6)
        for turn in range(1, 101)
    }
    assert len(set(tokens.values())) == len(tokens) == 600
    assert all(re.fullmatch(r"[0-9a-f]{10}", t) for t in tokens.values())
    expected = hmac.new(SECRET, b"token:world-1:2:17", hashlib.sha256).hexdigest()[:10]
    assert tokens[(2, 17)] == expected
    assert turn_token(SECRET, "world-2", 2, 17) != expected
    assert turn_token(bytes(32), "world-1", 2, 17) != expected


# --------------------------------------------------------------- the setup
def test_setup_orders_wait_for_everyone_and_a_resend_replaces(engine: Engine) -> None:
    new_game(engine)
    writers = bots()
    state = current(engine)
    order = list(state.order)
    first = order[0]
    texts = {seat: writers[seat].write_setup(state, seat) for seat in order}
    # another valid setup for the first player: the same armies, all on one territory
    own = sorted(state.board.territories[t].name for t in state.territories_of(first))
    total = state.players[first].to_place
    replacement = f"PLACE {total} {own[0]}\n"
    with session_scope(engine) as session:
        game = find_game(session, "g")
        players = players_of(session, game)
        sent = submit(session, game, players[first], texts[first])
        assert sent.accepted
        assert sent.waiting_for == [NAMES[s] for s in order[1:]]
        assert sent.message == "setup orders received; waiting for " + ", ".join(
            NAMES[s] for s in order[1:]
        )
        assert counts(session, game) == (0, 0, 1)
        again = submit(session, game, players[first], replacement)
        assert again.accepted
        assert again.canonical == f"PLACE {total} {own[0]}\n"
        assert again.message.startswith("replaces your earlier setup orders; waiting for ")
        assert counts(session, game) == (0, 0, 1)
        pending = session.exec(select(PendingOrders)).one()
        assert (pending.seat, pending.text) == (first, again.canonical)
        assert game.phase == "setup"
    for seat in order[1:-1]:
        with session_scope(engine) as session:
            game = find_game(session, "g")
            assert submit(session, game, players_of(session, game)[seat], texts[seat]).accepted
            assert counts(session, game)[:2] == (0, 0)
    with session_scope(engine) as session:
        game = find_game(session, "g")
        last = submit(session, game, players_of(session, game)[order[-1]], texts[order[-1]])
        assert last.message == "setup orders received; setup played"
        assert len(last.steps) == 1 and last.steps[0].turn == 0
        assert counts(session, game) == (4, 1, 0)
        log = log_of(session, game)
        assert [e.seat for e in log] == order
        assert [e.kind for e in log] == ["setup"] * 4
        assert log[0].text == again.canonical  # the replacement, not the first orders
        assert (game.phase, game.turn) == ("playing", 1)
        assert game.current_seat == last.steps[0].state.current
        # the replacement was played: every army the first player had is on own[0]
        state = load(session, game).state
        assert state.armies[state.board.territory(own[0])] == total + 1


def test_setup_log_entries_keep_who_sent_them(engine: Engine) -> None:
    """The log is the record of provenance: setup orders the GM typed are 'gm'
    entries, those that came by mail are 'mail' entries with their Message-ID."""
    new_game(engine)
    writers = bots()
    state = current(engine)
    order = list(state.order)
    for i, seat in enumerate(order):
        with session_scope(engine) as session:
            game = find_game(session, "g")
            player = players_of(session, game)[seat]
            text = writers[seat].write_setup(state, seat)
            if i == 0:
                outcome = submit(session, game, player, text, source="mail", message_id="<a@x>")
            else:
                outcome = submit(session, game, player, text, source="gm")
            assert outcome.accepted
    with session_scope(engine, write=False) as session:
        log = log_of(session, find_game(session, "g"))
    assert [(e.seat, e.source, e.message_id) for e in log] == [
        (order[0], "mail", "<a@x>"),
        *((seat, "gm", None) for seat in order[1:]),
    ]


def test_setup_orders_that_are_invalid_are_not_kept(engine: Engine) -> None:
    new_game(engine)
    with session_scope(engine) as session:
        game = find_game(session, "g")
        outcome = submit(session, game, players_of(session, game)[0], "PLACE 1 Atlantis\n")
        assert not outcome.accepted
        assert [p.line for p in outcome.problems] == [1]
        assert counts(session, game) == (0, 0, 0)


# ----------------------------------------------------------- out of turn
def test_orders_out_of_turn_are_refused_and_change_nothing(engine: Engine) -> None:
    new_game(engine)
    writers = bots()
    play_setup(engine, writers)
    play_turn(engine, writers)
    with session_scope(engine) as session:
        game = find_game(session, "g")
        state = load(session, game).state
        before = (counts(session, game), game.turn, game.current_seat, game.version)
        hashes = stored_hashes(session, game)
        to_move = state.current
        other = next(s for s in state.order if s != to_move)
        # orders that would be valid for the player to move, sent by another
        text = writers[to_move].write_turn(state)
        outcome = submit(session, game, players_of(session, game)[other], text)
        assert not outcome.accepted
        assert [p.message for p in outcome.problems] == [
            f"it is not your turn: {NAMES[to_move]} is to move"
        ]
        session.flush()
        assert (counts(session, game), game.turn, game.current_seat, game.version) == before
        assert stored_hashes(session, game) == hashes
        assert load(session, game).state.state_hash() == state.state_hash()


# ------------------------------------------------------------------ RESIGN
def test_resign_turns_the_seat_neutral_and_the_game_goes_on(engine: Engine) -> None:
    new_game(engine)
    writers = bots()
    play_setup(engine, writers)
    for _ in range(6):
        play_turn(engine, writers)
    before = current(engine)
    to_move = before.current
    leaver = next(s for s in before.order[::-1] if s != to_move)
    theirs = before.territories_of(leaver)
    assert theirs and before.neutral_seat is None
    with session_scope(engine) as session:
        game = find_game(session, "g")
        step = command(session, game, players_of(session, game)[leaver], "RESIGN")
    state = step.state
    neutral = state.neutral_seat
    assert neutral == 4 and state.players[4].name == "neutral"
    assert sorted(state.territories_of(neutral)) == sorted(theirs)
    assert state.territories_of(leaver) == []
    assert state.armies == before.armies  # the armies stay, under a neutral flag
    assert not state.players[leaver].alive and state.players[leaver].cards == []
    assert PlayerEliminated(leaver, neutral, 0) in step.events
    assert state.current == to_move and state.turn == before.turn  # not the leaver's turn
    with session_scope(engine) as session:
        game = find_game(session, "g")
        leaving = players_of(session, game)[leaver]
        assert leaving.status == "resigned"
        assert game.phase == "playing"
        published = definition_of(session, game).state_hash  # keyed: a new game
        assert published(load(session, game).state) == step.state_hash
        assert rebuilt_hash(session, game) == load(session, game).state.state_hash()
        assert stored_hashes(session, game)[-1] == step.state_hash
        log = log_of(session, game)
        assert (log[-1].kind, log[-1].seat, log[-1].text) == ("command", leaver, "RESIGN")
        with pytest.raises(ServiceError, match="alice|bob|carol|dave"):
            submit(session, game, leaving, "PLACE 1 Alaska\n")
    # the others play on to the end; the leaver never moves again
    movers = set()
    while state.phase != "over":
        movers.add(state.current)
        state = play_turn(engine, writers)
    assert leaver not in movers and neutral not in movers
    with session_scope(engine, write=False) as session:
        game = find_game(session, "g")
        final = load(session, game).state
        assert game.phase == "over" and game.winner_seat == final.winner
        assert final.winner not in (leaver, neutral)
        assert rebuilt_hash(session, game) == final.state_hash()
        assert replay_game(session, game).ok


def test_resign_of_the_player_to_move_passes_the_turn(engine: Engine) -> None:
    new_game(engine, players=3)
    writers = bots(3)
    play_setup(engine, writers)
    play_turn(engine, writers)
    before = current(engine)
    leaver = before.current
    following = before.order[(before.order.index(leaver) + 1) % 3]
    with session_scope(engine) as session:
        game = find_game(session, "g")
        step = command(session, game, players_of(session, game)[leaver], "RESIGN")
        assert step.state.current == following
        assert game.current_seat == following
        assert rebuilt_hash(session, game) == load(session, game).state.state_hash()


def test_resign_before_the_game_is_under_way_is_refused_and_changes_nothing(
    engine: Engine,
) -> None:
    new_game(engine)
    with session_scope(engine) as session:
        game = find_game(session, "g")
        with pytest.raises(ServiceError, match="under way"):
            command(session, game, players_of(session, game)[0], "RESIGN")
        assert counts(session, game) == (0, 0, 0)
        assert players_of(session, game)[0].status == "active"


# ----------------------------------------------------- load() == rebuild
def test_load_from_the_latest_snapshot_equals_a_full_rebuild(engine: Engine) -> None:
    """After every step, including a RESIGN mid-game: snapshot+tail == replay from scratch."""
    new_game(engine, players=3, secret=bytes([9]) * 32)
    writers = bots(3)
    play_setup(engine, writers)
    steps = 0
    while True:
        with session_scope(engine, write=False) as session:
            game = find_game(session, "g")
            loaded = load(session, game).state
            assert loaded.state_hash() == rebuilt_hash(session, game)
            published = definition_of(session, game).state_hash(loaded)  # keyed: a new game
            assert published == stored_hashes(session, game)[-1]
            assert (
                loaded.canonical_json()
                == replay.rebuild(
                    definition_of(session, game), [to_entry(e) for e in log_of(session, game)]
                ).state.canonical_json()
            )
        if loaded.phase == "over":
            break
        if steps == 8:
            with session_scope(engine) as session:
                game = find_game(session, "g")
                leaver = next(s for s in loaded.order if s != loaded.current)
                command(session, game, players_of(session, game)[leaver], "RESIGN")
        else:
            play_turn(engine, writers)
        steps += 1
    assert steps > 9


def test_load_plays_log_entries_after_the_latest_snapshot(engine: Engine) -> None:
    """The snapshot is a cache: with the latest one gone, load() replays the log tail."""
    new_game(engine)
    writers = bots()
    play_setup(engine, writers)
    for _ in range(3):
        play_turn(engine, writers)
    with session_scope(engine) as session:
        game = find_game(session, "g")
        expected = load(session, game).state.state_hash()
        latest = session.exec(
            select(TurnResult)
            .where(TurnResult.game_id == game.id)
            .order_by(
                TurnResult.seq.desc()  # type: ignore[attr-defined]
            )
        ).first()
        session.delete(latest)
        session.flush()
        assert stored_hashes(session, game)[-1] != expected
        assert load(session, game).state.state_hash() == expected


# ----------------------------------------------------------- create_game
@pytest.mark.parametrize(
    ("name", "specs", "message"),
    [
        ("bad name", NAMES[:3], "game name 'bad name': use letters, digits, - and _ only"),
        ("g", ["ann", "ann", "bob"], "game g has a player named ann already"),
        ("g", NAMES[:1], "these rules need 2 to 6 players, not 1"),
    ],
)
def test_create_game_refuses(engine: Engine, name: str, specs: list[str], message: str) -> None:
    players = [PlayerSpec(n, f"{i}@example.org") for i, n in enumerate(specs)]
    with pytest.raises(Exception, match=re.escape(message)):
        with session_scope(engine) as session:
            create_game(session, name, players)
    with session_scope(engine, write=False) as session:
        assert session.exec(select(Game)).all() == []
        assert session.exec(select(Player)).all() == []


def test_create_game_refuses_two_players_of_one_colour(engine: Engine) -> None:
    players = [PlayerSpec("ann", "a@x.org", "red"), PlayerSpec("bob", "b@x.org", "red")]
    with pytest.raises(ServiceError, match="two players have the colour red"):
        with session_scope(engine) as session:
            create_game(session, "g", players)


def test_a_colour_is_stored_in_the_maps_spelling(engine: Engine) -> None:
    """Issue 33, point 2: `pbem new -p ann:ann@x.org:Red` stores red, the
    spelling of the mission cards; "RED" for a second player is the same colour."""
    players = [parse_player("ann:a@x.org:Red"), parse_player("bob:b@x.org:Light Blue")]
    with pytest.raises(ServiceError) as refused:
        with session_scope(engine) as session:
            create_game(session, "g", players)
    assert str(refused.value) == (
        "no colour 'Light Blue' on map classic: the colours are "
        "red, blue, yellow, green, black, purple"
    )
    players = [parse_player("ann:a@x.org:Red"), parse_player("bob:b@x.org:BLUE")]
    with session_scope(engine) as session:
        create_game(session, "g", players)
        colours = [p.colour for p in players_of(session, find_game(session, "g"))]
    assert colours == ["red", "blue"]
    twice = [PlayerSpec("cat", "c@x.org", "Red"), PlayerSpec("dan", "d@x.org", "red")]
    with pytest.raises(ServiceError, match="two players have the colour red"):
        with session_scope(engine) as session:
            create_game(session, "h", twice)


def test_a_colour_asked_for_later_is_not_given_to_an_earlier_player(engine: Engine) -> None:
    """`pbem new -p ann:ann@x -p bob:bob@x:red`: ann gets the first colour nobody asked for."""
    players = [PlayerSpec("ann", "a@x.org"), PlayerSpec("bob", "b@x.org", "red")]
    with session_scope(engine) as session:
        create_game(session, "g", players)
        colours = [p.colour for p in players_of(session, find_game(session, "g"))]
    assert colours == ["blue", "red"]


# ------------------------------------------------- a whole game, both engines
def test_whole_game_through_the_service(db_url: str, tmp_path: Path) -> None:
    """Create, play to the end, replay, export, import elsewhere: the same hash chain."""
    engine = init_db(db_url)
    new_game(engine, players=4, name="world-1")
    writers = bots()
    play_setup(engine, writers, "world-1", source="mail")
    turns = 0
    state = current(engine, "world-1")
    while state.phase != "over":
        state = play_turn(engine, writers, "world-1")
        turns += 1
    with session_scope(engine) as session:
        game = find_game(session, "world-1")
        assert (game.phase, game.status, game.turn) == ("over", "finished", turns)
        assert game.secret_revealed
        report = replay_game(session, game)
        assert (report.ok, report.steps) == (True, turns + 1)
        chain = stored_hashes(session, game)
        record = export_record(session, game)
        statuses = sorted(p.status for p in players_of(session, game))
        assert statuses == ["active", "eliminated", "eliminated", "eliminated"]
        assert reveal(session, game) == SECRET.hex()
    assert f'[Secret "{SECRET.hex()}"]' in record
    other = init_db(f"sqlite:///{tmp_path / 'other.db'}")
    with session_scope(other) as session:
        imported, passwords = import_record(session, record)
        assert list(passwords) == NAMES
    with session_scope(other, write=False) as session:
        game = find_game(session, "world-1")
        assert stored_hashes(session, game) == chain
        assert replay_game(session, game).ok
        assert export_record(session, game) == record
    with session_scope(engine, write=False) as session:
        rows = session.exec(select(OrderEntry)).all()
        assert len(rows) == 4 + turns
        assert {p.game_id for p in session.exec(select(Player)).all()} == {rows[0].game_id}


def test_a_defend_standing_order_is_kept_across_turns_and_replays(engine: Engine) -> None:
    """Issue 14: DEFEND WITH 1 IN t, sent with a turn's orders, stays in the
    game's state (snapshot and log replay alike) until cleared."""
    new_game(engine, players=3)
    writers = bots(3)
    play_setup(engine, writers)
    state = current(engine)
    mover = state.current
    home = state.territories_of(mover)[0]
    name = state.board.territories[home].name
    with session_scope(engine) as session:
        game = find_game(session, "g")
        text = writers[mover].write_turn(state) + f"DEFEND WITH 1 IN {name}\n"
        outcome = submit(session, game, players_of(session, game)[mover], text)
        assert outcome.accepted, outcome.problems
    play_turn(engine, writers)  # the next player's turn: the order stays
    with session_scope(engine, write=False) as session:
        game = find_game(session, "g")
        loaded = load(session, game).state
        assert loaded.owner[home] == mover and loaded.defend_one == [home]
        assert loaded.state_hash() == rebuilt_hash(session, game)
        published = definition_of(session, game).state_hash(loaded)  # keyed: a new game
        assert published == stored_hashes(session, game)[-1]


def test_claim_turns_takes_one_round_of_mail_per_territory_each(engine: Engine) -> None:
    """claim = turns: every round waits for every player's CLAIM, takes one
    territory each, and the game asks again (one prompt per round) until the
    42 territories are taken; the log replays to the same state."""
    from pbem.service.play.notify import _setup_round

    specs = [PlayerSpec(n, f"{n}@example.org") for n in NAMES[:3]]
    with session_scope(engine) as session:
        create_game(session, "g", specs, secret=SECRET, overrides={"claim": "turns"})
    rounds, seen = 0, set()
    while (state := current(engine)).phase == "claim":
        seen.add(_setup_round(state))
        for seat in state.order:
            with session_scope(engine) as session:
                game = find_game(session, "g")
                outcome = submit(session, game, players_of(session, game)[seat], "CLAIM Alaska\n")
                assert outcome.accepted, outcome.problems
        rounds += 1
    assert rounds == 14 and len(seen) == 14  # 42, 39, ..., 3 territories free
    assert state.phase == "place" and state.owner[0] == state.order[0]
    assert sorted(state.owner.count(s) for s in range(3)) == [14, 14, 14]
    with session_scope(engine, write=False) as session:
        game = find_game(session, "g")
        assert rebuilt_hash(session, game) == load(session, game).state.state_hash()
