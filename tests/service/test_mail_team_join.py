"""A team game open for JOIN, through the real mail path (Maildir, run_cycle):
players JOIN and CONFIRM by mail; with team_size alone the teams are the seats
in joining order (blocks), with the GM's teams (`pbem new --open --teams`) the
names are reserved and the players are seated team after team when it fills."""

from __future__ import annotations

import re

from sqlmodel import select

from pbem.rules import teams
from pbem.service.play.games import create_game
from pbem.store import SeatHolder
from tests.longgame_helpers import GM_ADDRESS, SECRET, World

DOUBLES = {"placement": "auto", "team_size": "2"}


def join(world: World, game: str, name: str) -> list[str]:
    """``name`` joins ``game`` by mail (JOIN, then CONFIRM of the mailed token);
    the answers' texts."""
    address = f"{name}@players.test"
    world.send(address, f"JOIN {game} AS {name}\n")
    world.poll()
    asked = world.take(address)
    token = re.search(r"CONFIRM (\w+)", asked[-1].text)
    if token is None:
        return [m.text for m in asked]
    world.send(address, f"CONFIRM {token.group(1)}\n", f"Re: {asked[-1].subject}")
    world.poll()
    return [m.text for m in world.take(address)]


def test_an_open_doubles_game_seats_its_teams_by_joining_order(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    world.open_game("jd", 4, overrides=DOUBLES)
    answers = {n: join(world, "jd", n) for n in ("dan", "ann", "cat")}
    said = {n: " ".join(a[0].split()) for n, a in answers.items()}
    assert "You have seat 1 of 4 in jd as dan, in team A." in said["dan"]
    assert "You have seat 2 of 4 in jd as ann, in team A." in said["ann"]
    assert "You have seat 3 of 4 in jd as cat, in team B." in said["cat"]
    join(world, "jd", "bob")  # the last seat: the game deals
    state = world.state("jd")
    assert [p.name for p in state.players] == ["dan", "ann", "cat", "bob"]
    assert [teams.team_of(state, s) for s in range(4)] == [0, 0, 1, 1]
    assert teams.team_label(state, 1) == "team B (cat, bob)"
    start = world.take("cat@players.test")
    text = " ".join(next(m for m in start if "PASSWORD" in m.text.upper()).text.split())
    assert "You play in team B with bob" in text


def test_the_gms_teams_reserve_the_names_and_seat_the_teams(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    with world.session() as session:
        create_game(
            session, "jt", [], overrides=DOUBLES, gm_address=GM_ADDRESS, secret=SECRET,
            open_seats=4, dice_version="v1", open_teams="ann, cat / bob,dan",
        )  # fmt: skip
    refused = join(world, "jt", "eve")
    assert "JOIN jt AS eve: the seats of jt are for the GM's teams (ann,cat / bob,dan): " in (
        " ".join(refused[0].split())
    )
    assert "join as one of ann, cat, bob, dan." in " ".join(refused[0].split())
    said = {n: " ".join(join(world, "jt", n)[0].split()) for n in ("dan", "ann", "bob")}
    assert "You have seat 1 of 4 in jt as dan, in team B." in said["dan"]
    assert "You have seat 2 of 4 in jt as ann, in team A." in said["ann"]
    join(world, "jt", "Cat")  # names match whatever the case; the seat takes the GM's
    state = world.state("jt")
    assert [p.name for p in state.players] == ["ann", "cat", "bob", "dan"]
    assert [teams.team_of(state, s) for s in range(4)] == [0, 0, 1, 1]
    assert sorted(state.order) == [0, 1, 2, 3]
    with world.session(write=False) as session:
        holders = {h.name: h.seat for h in session.exec(select(SeatHolder))}
    assert holders == {"ann": 0, "cat": 1, "bob": 2, "dan": 3}  # the seats' holders too
    record = world.replayed_record("jt")  # replays from the order log, stored turns matched
    assert [line for line in record.splitlines() if line.startswith("[Player ")] == [
        '[Player "0 ann blue"]',  # colours as they joined: dan red, ann blue, bob yellow
        '[Player "1 cat green"]',
        '[Player "2 bob yellow"]',
        '[Player "3 dan red"]',
    ]


def test_seating_the_gms_teams_keeps_the_seats_unique_on_both_engines(db_url: str) -> None:
    """The players are moved to their team's seats through negative seats, so the
    (game, seat) uniqueness holds at every flush, on SQLite and PostgreSQL."""
    from pbem.service.play.games import PlayerSpec, load, seat_player, start_game
    from pbem.service.play.loading import find_game
    from pbem.service.play.teamplay import seat_by_teams
    from pbem.store import init_db, session_scope

    engine = init_db(db_url)
    with session_scope(engine) as session:
        create_game(
            session, "jt", [], overrides=DOUBLES, secret=SECRET, open_seats=4,
            dice_version="v1", open_teams="ann,cat / bob,dan",
        )  # fmt: skip
    with session_scope(engine) as session:
        game = find_game(session, "jt")
        for name in ("dan", "bob", "cat", "ann"):  # the reverse of the teams' order
            seat_player(session, game, PlayerSpec(name, f"{name}@players.test"))
        seat_by_teams(session, game)
        start_game(session, game)
    with session_scope(engine, write=False) as session:
        state = load(session, find_game(session, "jt")).state
        holders = sorted((h.seat, h.name) for h in session.exec(select(SeatHolder)))
    assert [p.name for p in state.players] == ["ann", "cat", "bob", "dan"]
    assert holders == [(0, "ann"), (1, "cat"), (2, "bob"), (3, "dan")]
