"""Every mail of whole bot games: valid MIME, pictures linked, nothing private leaks.

Two games are played to the end (pbem.testing.sample): a classic domination game
and a secret-mission game. For every turn every kind of mail is rendered for
every recipient it can have, turned into MIME, serialised and parsed back.
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage

import pytest

from pbem.maps import builtin_map
from pbem.report import (
    ErrorReply,
    GameOver,
    GameStart,
    GmAlert,
    Help,
    Press,
    Problem,
    Receipt,
    Reminder,
    RenderedMail,
    SetupPrompt,
    Status,
    YourTurn,
    render_error_reply,
    render_game_over,
    render_game_start,
    render_gm_alert,
    render_help,
    render_press,
    render_receipt,
    render_reminder,
    render_setup_prompt,
    render_status,
    render_turn_report,
    render_your_turn,
    thread_root_id,
    to_mime,
)
from pbem.report.subjects import TOKEN_RE
from pbem.report.textfmt import WIDTH
from pbem.report.views import card_text, mission_text
from pbem.rules import opening
from pbem.rules.dice import DiceStream
from pbem.rules.events import CardDrawn, CardsTaken
from pbem.rules.options import Options
from pbem.rules.simulate import game_secret
from pbem.testing.sample import SampleGame, deadline, game_info, play_sample

HOST = "pbem.example"


def password(seat: int) -> str:
    return f"pw-horse-{seat}-battery"


def token(turn: int, seat: int) -> str:
    return f"tk{turn:04d}s{seat}z"


@dataclass
class Sent:
    """One outgoing mail, rendered for ``seat`` (None: the GM)."""

    seat: int | None
    rendered: RenderedMail
    raw: bytes
    parsed: EmailMessage
    own_cards: tuple[str, ...] | None = None  # the hand the mail must show, when it shows one
    drawn: tuple[str, ...] = ()  # cards the recipient may be told they drew or took
    reveals_mission_of: int | None = None  # the winner, once the game is over


@dataclass
class Outbox:
    mails: list[Sent] = field(default_factory=list)

    def add(self, seat: int | None, mail: RenderedMail, **facts: object) -> None:
        n = len(self.mails)
        msg = to_mime(
            mail,
            sender="pbem@pbem.example",
            recipient=mail.recipient,
            message_id=f"<m{n}@{HOST}>",
            references=(thread_root_id(mail.game or "none", seat, HOST),),
        )
        raw = msg.as_bytes()
        self.mails.append(Sent(seat, mail, raw, parse(raw), **facts))  # type: ignore[arg-type]


def hand(sample_state, seat: int) -> tuple[str, ...]:  # noqa: ANN001
    board = sample_state.board
    return tuple(card_text(board, c) for c in sorted(sample_state.players[seat].cards))


def all_mails(sample: SampleGame, seed: int) -> Outbox:
    box = Outbox()
    game, start = sample.game, sample.start
    seats = [p.seat for p in game.players]

    # Setup: a fresh game still waiting for the blind placement.
    setup_state, _ = opening.new_game(
        start.board,
        start.options,
        start.game,
        [(p.name, p.colour) for p in start.players if not p.neutral],
        DiceStream(game_secret(seed), start.game, "setup"),
    )
    setup_info = game_info(setup_state, seed)
    for seat in seats:
        box.add(
            seat,
            render_game_start(
                GameStart(setup_info, setup_state, seat, password(seat), deadline(0))
            ),
        )
        box.add(
            seat,
            render_setup_prompt(SetupPrompt(setup_info, setup_state, seat, deadline(0))),
            own_cards=hand(setup_state, seat),
        )
        box.add(seat, render_reminder(Reminder(setup_info, setup_state, seat, None, deadline(0))))
        box.add(seat, render_game_start(GameStart(game, start, seat, password(seat), None)))
    first = start.current
    box.add(
        first,
        render_your_turn(YourTurn(game, start, first, token(1, first), deadline(1))),
        own_cards=hand(start, first),
    )

    for report in sample.reports:
        after = report.after
        for seat in seats + [None]:
            drawn = tuple(
                card_text(after.board, e.card)
                for e in report.events
                if isinstance(e, CardDrawn) and e.seat == seat
            ) + tuple(
                card_text(after.board, c)
                for e in report.events
                if isinstance(e, CardsTaken) and e.seat == seat
                for c in e.cards
            )
            box.add(
                seat,
                render_turn_report(report, seat),
                own_cards=None if seat is None else hand(after, seat),
                drawn=drawn,
                reveals_mission_of=after.winner,
            )
        box.add(
            report.seat,
            render_receipt(
                Receipt(report.game, report.seat, report.turn, "PLACE 3 Alaska\nEND", True)
            ),
        )
        nxt = report.next_seat
        if nxt is not None:
            box.add(
                nxt,
                render_your_turn(
                    YourTurn(report.game, after, nxt, token(after.turn, nxt), report.deadline)
                ),
                own_cards=hand(after, nxt),
            )
            box.add(
                nxt,
                render_reminder(
                    Reminder(report.game, after, nxt, token(after.turn, nxt), report.deadline, 1, 3)
                ),
            )
        if report.turn % 10 == 1:
            for seat in seats + [None]:
                box.add(
                    seat,
                    render_status(Status(report.game, after, report.deadline), seat),
                    own_cards=None if seat is None else hand(after, seat),
                )

    final = sample.final
    for seat in seats + [None]:
        box.add(
            seat,
            render_game_over(GameOver(game, final, sample.out_turns), seat),
            reveals_mission_of=final.winner,
        )
    press = Press(game, 0, (1, 2), "Shall we share Asia?\nNo tricks.")
    for seat in (1, 2):
        box.add(seat, render_press(press, seat))
    box.add(3, render_press(Press(game, None, (3,), "I am watching you."), 3))
    box.add(
        0,
        render_error_reply(
            ErrorReply(
                game.player(0).address,
                (
                    Problem(
                        3,
                        "ATTACK Kamchatca -> Japan",
                        "Kamchatca: no such territory.",
                        "did you mean Kamchatka?",
                    ),
                    Problem(None, "", "The password is wrong."),
                ),
                game,
                0,
                "Re: [x] Your turn 3",
                3,
            )
        ),
    )
    box.add(
        None,
        render_error_reply(
            ErrorReply("stranger@else.example", (Problem(None, "", "No game named here."),))
        ),
    )
    box.add(0, render_help(Help(game.player(0).address, "GAME name\nPLACE n territory", game)))
    box.add(None, render_gm_alert(GmAlert("mail bounced", "alice's mail bounced twice.", game)))
    return box


# (goal, seed): short games (37 and 26 turns) so the suite stays fast
GAMES = [("domination", 4), ("mission", 7)]


@pytest.fixture(scope="module", params=GAMES, ids=[goal for goal, _ in GAMES])
def outbox(request: pytest.FixtureRequest) -> tuple[SampleGame, Outbox]:
    goal, seed = request.param
    sample = play_sample(
        seed=seed,
        players=4,
        turns=None,
        bot="greedy",
        board=builtin_map("classic"),
        options=Options(goal=goal),
    )
    assert sample.final.winner is not None
    if goal == "domination":  # the game exercises eliminations that hand over cards
        assert any(isinstance(e, CardsTaken) for r in sample.reports for e in r.events)
    return sample, all_mails(sample, seed)


def parse(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=policy.default)  # type: ignore[return-value]


def decoded(msg: EmailMessage) -> str:
    """The headers and every text part, decoded."""
    parts = [str(v) for v in msg.values()]
    parts += [p.get_content() for p in msg.walk() if p.get_content_maintype() == "text"]
    return "\n".join(parts)


def test_every_mail_parses_as_valid_mime(outbox: tuple[SampleGame, Outbox]) -> None:
    _, box = outbox
    assert len(box.mails) > 200
    for sent in box.mails:
        msg = sent.parsed
        for part in msg.walk():
            assert part.defects == [], (sent.rendered.subject, part.get_content_type())
        assert msg.get_content_type() == "multipart/alternative"
        kinds = [p.get_content_type() for p in msg.iter_parts()]
        if sent.rendered.images:
            assert kinds == ["text/plain", "multipart/related"]
            related = list(msg.iter_parts())[1]
            inner = [p.get_content_type() for p in related.iter_parts()]
            assert inner == ["text/html"] + ["image/png"] * len(sent.rendered.images)
        else:
            assert kinds == ["text/plain", "text/html"]
        assert msg["Auto-Submitted"] == "auto-generated"
        assert msg["To"] == sent.rendered.recipient
        assert thread_root_id(sent.rendered.game or "none", sent.seat, HOST) in msg["References"]
        assert msg.get_body(("plain",)).get_content() == sent.rendered.text


def test_every_cid_in_the_html_is_an_image_part(outbox: tuple[SampleGame, Outbox]) -> None:
    _, box = outbox
    pictures = 0
    for sent in box.mails:
        msg = sent.parsed
        html = msg.get_body(("html",)).get_content()
        cids = re.findall(r'src="cid:([^"]+)"', html)
        images = {
            p["Content-ID"].strip("<>"): p.get_content()
            for p in msg.walk()
            if p.get_content_type() == "image/png"
        }
        assert sorted(cids) == sorted(images)
        for cid in cids:
            assert images[cid][:8] == b"\x89PNG\r\n\x1a\n"
            assert len(images[cid]) < 60_000
        pictures += len(cids)
        assert "<script" not in html.lower()
        assert not re.search(r"""(src|href)=["'](https?:|//)""", html)
        assert "<style" not in html.lower()
    assert pictures > 80


def test_text_parts_fit_78_columns(outbox: tuple[SampleGame, Outbox]) -> None:
    _, box = outbox
    for sent in box.mails:
        long = [line for line in sent.rendered.text.splitlines() if len(line) > WIDTH]
        assert long == [], sent.rendered.subject
        assert len(sent.rendered.subject) <= 78


def test_no_mail_carries_another_players_secrets(outbox: tuple[SampleGame, Outbox]) -> None:
    sample, box = outbox
    seats = [p.seat for p in sample.game.players]
    # every mission a seat had: the card dealt, and "24 territories" if it fell back
    missions = {
        s: {mission_text(state, s) for state in (sample.start, sample.final)} - {""} for s in seats
    }
    if sample.game.options.goal == "mission":
        assert all(missions.values())
    checked_hands = 0
    for sent in box.mails:
        text = decoded(sent.parsed)
        flat = " ".join(text.split())
        for other in seats:
            if other == sent.seat:
                continue
            assert password(other) not in text
            assert not re.search(rf"tk\d{{4}}s{other}z", text)
            mine = missions[sent.seat] if sent.seat is not None else set()
            for theirs in missions[other]:
                same = any(theirs.startswith(m) or m.startswith(theirs) for m in mine)
                if not same and sent.reveals_mission_of != other:
                    assert theirs not in text, (sent.rendered.subject, sent.seat, other)
        # Whatever "Your cards" says is the recipient's own hand, and only theirs.
        for count, listed in re.findall(r"Your cards \((\d+)\): (.*?)\.", flat):
            assert sent.own_cards is not None, sent.rendered.subject
            assert int(count) == len(sent.own_cards)
            assert listed == (", ".join(sent.own_cards) or "none")
            checked_hands += 1
        for phrase in re.findall(r"You (?:drew|took) (.*?)\.", flat):
            for card in re.split(r", | and ", phrase):
                assert card in sent.drawn, (sent.rendered.subject, sent.seat, card)
        if sent.seat is None:
            assert "Your cards" not in text and "Your secret mission" not in text
    assert checked_hands > 80


def test_token_is_in_the_your_turn_subject_only_for_its_player(
    outbox: tuple[SampleGame, Outbox],
) -> None:
    sample, box = outbox
    notices = [s for s in box.mails if s.rendered.kind == "your_turn"]
    assert len(notices) == len(sample.reports)
    for sent in notices:
        found = TOKEN_RE.search(sent.rendered.subject)
        assert found is not None
        assert re.fullmatch(rf"tk\d{{4}}s{sent.seat}z", found[1])
        assert sent.rendered.recipient == sample.game.player(sent.seat).address


def test_mime_headers_thread_each_players_game() -> None:
    mail = RenderedMail(
        "[g] Turn 1: a took nothing. b to move",
        "text\n",
        "<p>x</p>",
        recipient="a@x.example",
        kind="turn_report",
        game="g",
    )
    root = thread_root_id("world-1", 2, "pbem.example")
    assert root == "<game-world-1-seat-2@pbem.example>"
    msg = to_mime(
        mail,
        sender="pbem@pbem.example",
        recipient="a@x.example",
        message_id="turn-1.seat-2@pbem.example",
        in_reply_to="<orders-1@x.example>",
        references=(root,),
        extra_headers={"X-Loop": "pbem"},
    )
    parsed = parse(msg.as_bytes())
    assert parsed["Message-ID"] == "<turn-1.seat-2@pbem.example>"
    assert parsed["In-Reply-To"] == "<orders-1@x.example>"
    assert parsed["References"] == f"{root} <orders-1@x.example>"
    assert parsed["Auto-Submitted"] == "auto-generated"
    assert parsed["X-Loop"] == "pbem"
    assert parsed["X-Pbem-Kind"] == "turn_report"
    assert parsed.get_content_type() == "multipart/alternative"


def test_turn_subject_reads_well() -> None:
    from pbem.report.subjects import turn_subject

    assert (
        turn_subject("world-1", 14, "alice", ["Kamchatka"], [], ["bob"], "carol", None)
        == "[world-1] Turn 14: alice took Kamchatka, bob is out. carol to move"
    )
    many = [f"Territory Number {i}" for i in range(9)]
    assert (
        turn_subject("world-1", 14, "alice", many[:3], ["Asia"], [], "carol", None)
        == "[world-1] Turn 14: alice took 3 territories, holds Asia. carol to move"
    )
    assert (
        turn_subject("world-1", 14, "alice", many, ["Asia"], ["bob", "dave"], "carol", None)
        == "[world-1] Turn 14: alice took 9 territories, 2 players out. carol to move"
    )
    assert (
        turn_subject("world-1", 90, "alice", ["Peru"], [], ["bob"], None, "alice")
        == "[world-1] Turn 90: alice took Peru, bob is out. alice wins!"
    )
