"""Text layout helpers and the wording of turn events, with exact values."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from pbem.report import ErrorReply, Problem, render_error_reply, render_turn_report
from pbem.report.context import TurnReport
from pbem.report.textfmt import flow, table, two_columns, when, when_short, wrap_long
from pbem.report.turnview import turn_view
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    AttackSkipped,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    DefenceOrdered,
    FortifySkipped,
    MovedIn,
    PlaceSkipped,
    PlayerEliminated,
    Roll,
    TradeSkipped,
)
from pbem.testing.sample import play_sample


def test_table_aligns_columns() -> None:
    rows = [["alice", 12, 40], ["bob", 3, 7]]
    assert table(rows, "lrr", ["Player", "Terr", "Armies"]) == [
        "Player  Terr  Armies",
        "------  ----  ------",
        "alice     12      40",
        "bob        3       7",
    ]


def test_two_columns_side_by_side_and_fallback() -> None:
    blocks = [["A", " a1"], ["B", " b1", " b2"], ["C", " c1"]]
    assert two_columns(blocks, width=20) == [
        "A     C",
        " a1    c1",
        "",
        "B",
        " b1",
        " b2",
    ]
    assert two_columns([["A", " a1", " a2", " a3"], ["B"], ["C"]], width=20) == [
        "A     B",
        " a1",
        " a2   C",
        " a3",
    ]
    wide = [["x" * 40], ["y" * 40]]
    assert two_columns(wide) == ["x" * 40, "", "y" * 40]


def test_flow_never_breaks_a_piece() -> None:
    pieces = ["Head (9) -> Tail (3, bob):", "[6 5 2 v 4 3: 0/2]", "[6 5 2 v 4 3: 0/2]", "taken."]
    assert flow(pieces, "  ", "      ", width=50) == [
        "  Head (9) -> Tail (3, bob): [6 5 2 v 4 3: 0/2]",
        "      [6 5 2 v 4 3: 0/2] taken.",
    ]


def test_wrap_long_keeps_short_lines() -> None:
    text = "short line\n" + "word " * 30
    lines = wrap_long(text, width=40).splitlines()
    assert lines[0] == "short line"
    assert max(len(line) for line in lines) <= 40
    assert len(lines) == 5


def test_deadlines_in_the_games_time_zone() -> None:
    winter = datetime(2025, 3, 4, 17, 0, tzinfo=UTC)
    summer = datetime(2025, 7, 4, 16, 0, tzinfo=UTC)
    assert when(winter, "Europe/Paris") == "Tue 4 Mar 2025 18:00 CET (17:00 UTC)"
    assert when(summer, "Europe/Paris") == "Fri 4 Jul 2025 18:00 CEST (16:00 UTC)"
    assert when(winter, "UTC") == "Tue 4 Mar 2025 17:00 UTC"
    assert when(datetime(2025, 3, 4, 17, 0), "America/New_York") == (
        "Tue 4 Mar 2025 12:00 EST (17:00 UTC)"
    )
    assert when(None, "UTC") == "no deadline"
    assert when_short(winter, "Asia/Tokyo") == "Wed 5 Mar 02:00"


def crafted_report() -> TurnReport:
    """Turn 1 of the sample game with hand-written events of every kind."""
    sample = play_sample(seed=7, turns=1)
    report = sample.reports[0]
    me = report.seat  # p2, seat 1
    return replace(
        report,
        events=(
            CardsTraded(me, (0, 5, 42), 4, 1, ((0, 2),)),
            ArmiesPlaced(me, 0, 2),
            ArmiesPlaced(me, 23, 7),
            AttackSkipped(me, 10, 11, "source no longer yours"),
            AttackResolved(
                me,
                3,
                31,
                32,
                (Roll((6, 5, 2), (4, 3), 0, 2), Roll((3, 1), (5,), 1, 0), Roll((6, 2), (1,), 0, 1)),
                True,
                3,
                0,
                "conquered",
            ),
            PlayerEliminated(3, me, 2),
            CardsTaken(me, (7, 43), 3),
            MovedIn(me, 31, 32, 2, asked=5),
            FortifySkipped(me, 4, 5, "territory no longer yours"),
            DeckShuffled(30, reshuffle=True),
            CardDrawn(me, 12),
        ),
    )


def test_turn_events_as_the_mover_reads_them() -> None:
    report = crafted_report()
    view = turn_view(report, report.seat)
    items = {s.title: s.items for s in view.sections}
    assert items["Reinforcements"] == [
        "p2 receives 3 armies: 3 for 11 territories.",
        "p2 traded Alaska, Quebec and Wild (set 1) for 4 armies; +2 on Alaska for holding "
        "the card's territory.",
        "p2 placed 7 on Congo.",
    ]
    skipped, attack, out, took = items["Attacks"]
    assert skipped == "Brazil -> Peru: skipped, source no longer yours."
    assert attack.head == "Mongolia (4) -> Japan (3, p4):"
    assert attack.rolls == ("[6 5 2 v 4 3: 0/2]", "[3 1 v 5: 1/0]", "[6 2 v 1: 0/1]")
    assert attack.result == "taken (lost 1, killed 3), 2 moved in (asked 5)."
    assert out == "p4 is out: eliminated by p2, who takes 2 cards."
    assert took == "You took Eastern United States (cavalry), Wild."
    assert items["Fortify"] == ["Ontario -> Quebec: skipped, territory no longer yours."]
    assert items["Cards"] == [
        "The discards were shuffled into a new draw pile of 30 cards.",
        "You drew Argentina (infantry).",
    ]
    assert view.out == ["p4"]


def test_other_players_see_no_card_names() -> None:
    report = crafted_report()
    for viewer in (0, 2, 3, None):
        mail = render_turn_report(report, viewer)
        assert "You took" not in mail.text and "You drew" not in mail.text
        assert "p2 drew a card." in mail.text
        assert "Argentina (infantry)" not in mail.text
        assert "Eastern United States (cavalry)" not in mail.text


def test_error_reply_lists_every_problem_with_its_line_and_fix() -> None:
    mail = render_error_reply(
        ErrorReply(
            "alice@x.example",
            (
                Problem(
                    3,
                    "ATTACK Kamchatca -> Japan",
                    "Kamchatca: no such territory.",
                    "did you mean Kamchatka?",
                ),
                Problem(None, "", "The password is wrong."),
            ),
            original_subject="my orders",
        )
    )
    assert mail.subject == "[pbem] Not applied, 2 problems"  # never the sender's subject
    assert mail.recipient == "alice@x.example"
    assert (
        "Line 3: ATTACK Kamchatca -> Japan\n"
        "  Kamchatca: no such territory.\n"
        "  Fix: did you mean Kamchatka?\n"
        "\n"
        "The mail as a whole:\n"
        "  The password is wrong.\n"
    ) in mail.text


def test_html_escapes_what_players_write() -> None:
    from pbem.report import Press, render_press

    sample = play_sample(seed=7, turns=1)
    mail = render_press(Press(sample.game, 0, (1,), "<script>alert(1)</script> & co"), 1)
    assert "<script>" not in mail.html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in mail.html
    assert "<script>alert(1)</script> & co" in mail.text
    assert mail.subject == "[sim-7] Press from p1"
    assert "p1 writes to you:" in mail.text


def test_elimination_armies_skipped_place_and_standing_orders() -> None:
    """Issue 14: armies of an elimination's forced trade are placed by the
    player's PLACE after the ATTACK; a DEFEND order is shown to its player only."""
    sample = play_sample(seed=7, turns=1)
    report = sample.reports[0]
    me = report.seat  # p2, seat 1
    after = report.after.copy()
    after.owner[23] = me
    after.defend_one = [23]
    report = replace(
        report,
        after=after,
        events=(
            ArmiesPlaced(me, 23, 3),
            AttackResolved(me, 3, 31, 32, (Roll((6, 2), (1,), 0, 1),), True, 3, 0, "conquered"),
            PlayerEliminated(3, me, 3),
            CardsTraded(me, (0, 5, 42), 4, 1, (), forced=True),
            MovedIn(me, 31, 32, 2),
            ArmiesPlaced(me, 23, 4),
            PlaceSkipped(me, 0, 2, "no armies from an elimination"),
            DefenceOrdered(me, 23, 1),
        ),
    )
    items = {s.title: s.items for s in turn_view(report, me).sections}
    attacks = items["Attacks"]
    assert attacks[2:] == [
        "p2 traded Alaska, Quebec and Wild (set 1) for 4 armies.",
        "p2 placed 4 on Congo (armies of a forced trade).",
        "PLACE 2 Alaska: skipped, no armies from an elimination.",
    ]
    assert items["Fortify"] == [
        "No fortifying move.",
        "Standing order: you defend Congo with 1 die.",
    ]
    mine = render_turn_report(report, me).text
    assert "Your standing orders: DEFEND WITH 1 IN Congo." in mine
    for viewer in (0, 2, None):
        text = render_turn_report(report, viewer).text
        assert "DEFEND" not in text and "Standing order" not in text


def test_a_skipped_trade_after_an_attack_is_told() -> None:
    """Issue 33 (rules version 3): a TRADE after an ATTACK that no forced trade
    used is told in the attacks, as a skipped PLACE is."""
    sample = play_sample(seed=7, turns=1)
    report = sample.reports[0]
    me = report.seat
    reason = "no forced trade after an elimination used it"
    report = replace(report, events=(TradeSkipped(me, (0, 5, 42), reason),))
    items = {s.title: s.items for s in turn_view(report, me).sections}
    assert items["Attacks"] == [
        "TRADE Alaska, Quebec, Wild: skipped, no forced trade after an elimination used it."
    ]
