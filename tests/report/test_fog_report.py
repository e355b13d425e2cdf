"""A fogged player's copy of a turn report, with exact lines: the turn of
tests/report/test_report_text.py's crafted report, played under fog, read by
p1 (seat 0), who sees Alaska, Congo and Brazil of the territories it names
but not Peru, Mongolia, Japan, Ontario or Quebec."""

from __future__ import annotations

from dataclasses import replace

from pbem.report import render_turn_report
from pbem.report.context import TurnReport
from pbem.report.turnview import turn_view
from pbem.rules import fog
from tests.report.test_report_text import crafted_report

HIDDEN_NAMED = ("Peru", "Mongolia", "Japan", "Ontario", "Quebec")


def fogged_report() -> TurnReport:
    report = crafted_report()
    before, after = report.before.copy(), report.after.copy()
    for state in (before, after):
        state.options = replace(state.options, fog=True)
    return replace(report, before=before, after=after)


def test_a_fogged_players_turn_report() -> None:
    report = fogged_report()
    mail = render_turn_report(report, 0)
    view = turn_view(replace(report), 0)  # the unfogged telling, for contrast below
    assert any("Mongolia" in str(item) for s in view.sections for item in s.items)
    sections = {}
    current = ""
    for line in mail.text.splitlines():
        if line.startswith("---"):
            continue
        if line and not line.startswith(" "):
            current = line
            sections[current] = []
        elif line.strip():
            sections.setdefault(current, []).append(line.strip())
    assert sections["Reinforcements"] == [
        "p2 received their armies.",
        "p2 traded a set (set 1) for 4 armies.",
        "p2 placed 2 on Alaska and 7 on Congo in your sight.",
    ]
    assert sections["Attacks"] == ["p4 is out: eliminated by p2, who takes 2 cards."]
    assert sections["Fortify"] == ["No fortifying move in your sight."]
    assert sections["Cards"] == [
        "The discards were shuffled into a new draw pile of 30 cards.",
        "p2 drew a card.",
    ]
    for name in HIDDEN_NAMED:
        assert name not in mail.text and name not in mail.html and name not in mail.subject
    # the players table: another player's counts hidden, p1's own shown
    rows = [
        line.split()
        for line in mail.text.splitlines()
        if line[2:4] in ("p1", "p2") and line.split()[1] in ("red", "blue")
    ]
    assert rows[0][:6] == ["p2", "blue", "?", "?", "1", "?"]
    own = report.after.territory_count(0), report.after.army_count(0)
    assert rows[1][:4] == ["p1", "red", str(own[0]), str(own[1])]
    assert "State hash" not in mail.text and report.state_hash  # the GM's copy has one
    # p2 took Eastern United States and Japan, both out of p1's sight: not "took nothing"
    assert mail.subject == "[sim-7] Turn 1: p2 took nothing in sight, p4 is out. p4 to move"
    assert "p2 took no territory in your sight." in mail.text
    gm = render_turn_report(report, None)
    assert "p2 took Eastern United States and Japan" in gm.subject


def test_the_board_shows_only_the_turns_view_and_the_gm_sees_all() -> None:
    report = fogged_report()
    view = fog.turn_visible(report.before, report.after, 0)
    board = report.after.board
    mail = render_turn_report(report, 0)
    board_part = mail.text.split("The board after turn 1")[1].split("Players")[0]
    listed = {t.name for t in board.territories if f" {t.name} " in board_part}
    assert listed == {board.territories[t].name for t in view}
    assert len(view) == 24
    gm = render_turn_report(report, None)
    assert "Mongolia" in gm.text and "State hash after turn 1" in gm.text
    assert "p2 receives 3 armies: 3 for 11 territories." in gm.text


def test_no_digest_of_anothers_orders_under_fog() -> None:
    """Dice v2: a digest of another player's orders text could be tested against
    guessed orders; a SALT's digest and the reader's own stay."""
    inputs = (("p2", "orders", "aa" * 32), ("p3", "SALT", "bb" * 32), ("p1", "orders", "cc" * 32))
    report = replace(fogged_report(), dice_inputs=inputs)
    mine = render_turn_report(report, 0).text
    assert "aa" * 32 not in mine and "bb" * 32 in mine and "cc" * 32 in mine
    assert "aa" * 32 in render_turn_report(report, None).text
