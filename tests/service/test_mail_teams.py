"""Team games through the real mail path (Maildir, run_cycle): the start mail
names your team, PRESS TO TEAM reaches the teammates only, a player kicked by
the GM hands territories and cards to the teammate, and a doubles game of
bots by mail ends with a team, replayed and verified from its record."""

from __future__ import annotations

from pbem.orderlog.records import read_record, verify_record
from pbem.service.play import gm
from pbem.site import build_site
from pbem.store.pending import notices_pending
from tests.longgame_helpers import SECRET, World, new_table

PLAYERS = ["ann", "bob", "cat", "dan"]  # seats 1-2 team A, 3-4 team B
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24, 6]}
DOUBLES = {"placement": "auto", "team_size": "2"}


def test_the_start_mail_names_your_team_and_press_to_team_reaches_only_it(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "tm", PLAYERS, settings={**TIMING}, overrides=DOUBLES)
    table.silence()
    table.read_all()
    start = table["cat"].latest("game_start").flat
    assert "You play in team B with dan: you may PLACE on their territories" in start
    assert "PRESS TO TEAM writes to them alone." in start
    assert "Doubles: teams of 2 by seat (seats 1-2 team A, 3-4 team B, ...)" in start
    table.step()
    table.clear()

    table["ann"].write("PRESS TO TEAM\nLet us hold North America.\nENDPRESS")
    world.poll()
    table.read_all()
    press = table.mails("bob", "press")
    assert [m.untokened for m in press] == ["[tm] Press from ann"]
    assert "Let us hold North America." in press[0].flat
    assert table.mails("cat") == [] and table.mails("dan") == []
    assert "Your press to TEAM was relayed." in table.mails("ann")[0].flat
    table.clear()

    world.gm(gm.kick, "tm", "bob")  # bob removed: ann alone in team A
    table.clear()
    table["ann"].write("PRESS TO TEAM\nAnyone?\nENDPRESS")
    world.poll()
    table.read_all()
    notes = [m.flat for m in table.mails("ann")]
    assert any(
        "Your press to TEAM was not relayed: PRESS TO TEAM: nobody else of your team A "
        "is in the game" in n
        for n in notes
    ), notes
    assert all(table.mails(n, "press") == [] for n in PLAYERS)


def test_a_kicked_players_armies_and_cards_go_to_the_teammate(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "tk", PLAYERS, settings={**TIMING}, overrides=DOUBLES)
    table.run(lambda: world.game("tk").turn >= 5)
    before = world.state("tk")
    dan_lands = before.territories_of(3)
    cards = list(before.players[3].cards) + list(before.players[2].cards)
    world.gm(gm.kick, "tk", "dan")
    after = world.state("tk")
    assert not after.players[3].alive and after.neutral_seat is None
    assert all(after.owner[t] == 2 for t in dan_lands)
    assert sorted(after.players[2].cards) == sorted(cards)
    assert after.territory_count(2) == before.territory_count(2) + len(dan_lands)


def test_a_doubles_game_of_bots_by_mail_ends_with_a_team_and_verifies(tmp_path) -> None:
    world = World(tmp_path)
    table = new_table(world, "td", PLAYERS, settings={**TIMING}, overrides=DOUBLES)
    table.run(lambda: world.state("td").winner is not None, limit=600)
    state = world.state("td")
    assert state.win_reason == "team"
    assert (state.players[state.winner].name, state.turn) == ("cat", 70)  # team B: cat, dan
    winners = {s for s in range(4) if s // 2 == state.winner // 2}
    table.read_all()
    over = table.mails("ann", "game_over")
    assert [m.untokened for m in over] == ["[td] Game over: team B (cat, dan) wins after 70 turns"]
    assert "with their team: every other team is out" in over[0].flat
    text = world.replayed_record("td")
    record = read_record(text)
    assert record.options.team_size == 2
    report = verify_record(record, SECRET.hex())
    assert report.ok, report.message
    assert winners == {state.winner, state.winner ^ 1}


def test_a_fogged_doubles_game_mails_every_player_their_reports(tmp_path) -> None:
    """Fog and teams together: every mail with the players table is rendered and
    sent (the HTML's team totals summed the fog's '?' and no game-start or turn
    report went out), with no team totals, and the site is built."""
    world = World(tmp_path)
    fogged = {**DOUBLES, "fog": "true"}
    table = new_table(world, "tf", PLAYERS, settings={**TIMING}, overrides=fogged)
    table.run(lambda: world.game("tf").turn >= 6)
    assert not notices_pending(world.engine)  # every decided mail was told
    table.read_all()
    for name in PLAYERS:
        assert len(table.mails(name, "game_start")) == 1, name
        reports = table.mails(name, "turn_report")
        assert len(reports) >= 4, name
        assert all("Teams: team" not in m.flat for m in reports), name
    with world.session(write=False) as session:
        pages = build_site(session, world.ctx, tmp_path / "site")
    assert any(p.name == "index.html" for p in pages)
