"""A player's first three turns without a fight: issue 29's acceptance test.

A new game on the README's defaults (the territories dealt, the armies placed
blind: the setup is one PLACE mail from each player) is played through the
real mail path (the local Maildir transport, `run_cycle`) by three people:

- alice, careful: replies to the mail that asks for her orders, with orders
  that are right;
- bob, hurried: replies to whatever mail is newest in his mailbox, never
  writes a PASSWORD line, and his first mail of each turn (the setup's too)
  has two mistakes, all in that one mail; then he replies with the fix;
- carol, a prose writer: a greeting and a signature around right orders,
  replying to the start mail for the setup, then to "Your turn".

Each sends no more mails than that (alice and carol one a turn, bob two), every
mistaken mail gets exactly one reply naming all its problems in line order, and
the GM gets no alert: only the setup report and the turn reports.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from pbem.report.subjects import TOKEN_RE
from pbem.service.play.passwords import turn_token
from tests.longgame_helpers import Mail, Seat, Table, World, new_table

PLAYERS = ["alice", "bob", "carol"]
TYPO = "ATACK Alaska Kamchatka"
GREETING = "Hello GM,\n\nhere are my orders.\n\n"
SIGNATURE = "\nThanks, and good luck to all!\n\n-- \nCarol\n"


def mistaken(orders: str) -> str:
    """The hurried mail: one army too many on the first PLACE, a misspelt order below."""
    more = re.sub(r"^PLACE (\d+)", lambda m: f"PLACE {int(m[1]) + 1}", orders, count=1, flags=re.M)
    assert more != orders, orders
    return more + TYPO + "\n"


def expected_problems(body: str, due: int, setup: bool) -> str:
    """The two problems of a mistaken mail, as the reply lists them, in line order."""
    lines = body.splitlines()
    place = next(i for i, line in enumerate(lines, 1) if line.startswith("PLACE "))
    typo = lines.index(TYPO) + 1
    assert place < typo
    return (
        f"Line {place}: {' '.join(lines[place - 1].split())} "
        f"PLACE orders place {due + 1} armies; {due} are due{'' if setup else ' this turn'} "
        f"Line {typo}: {TYPO} ATACK: no such order; did you mean ATTACK? Fix: ATTACK "
        "With that fix: Kamchatka: expected -> after Alaska"  # told now, not in a third mail
    )


def token(world: World, name: str, turn: int) -> str:
    seat = next(p.seat for p in world.players("g1") if p.name == name)
    return turn_token(bytes.fromhex(world.game("g1").secret), "g1", seat, turn)


class Players:
    """The three people, what each sent in which turn (0: the setup), and what
    came back to each mail."""

    def __init__(self, world: World, table: Table) -> None:
        self.world, self.table = world, table
        self.sent: dict[str, Counter[int]] = {name: Counter() for name in PLAYERS}
        self.problem_replies: list[Mail] = []
        self.replied_to: dict[str, list[str]] = {name: [] for name in PLAYERS}  # kinds

    def send(self, seat: Seat, to: Mail, body: str) -> str:
        assert "PASSWORD" not in body
        self.sent[seat.name][self.world.game("g1").turn] += 1
        self.replied_to[seat.name].append(to.kind)
        return seat.reply(to, body)

    def answers_to(self, seat: Seat, message_id: str) -> list[Mail]:
        """The new mail of ``seat`` (everyone reads theirs), checked to answer
        ``message_id`` when it is a receipt or a problem reply."""
        new = self.table.read_all()[seat.name]
        answers = [m for m in new if m.kind in ("receipt", "error_reply")]
        assert [str(m.msg["In-Reply-To"]) for m in answers] == [message_id], new
        return new

    def orders(self, seat: Seat) -> str:
        state = self.world.state("g1")
        assert seat.bot is not None
        if state.phase == "place":
            return seat.bot.write_setup(state, seat.seat_no(state))
        return seat.bot.write_turn(state)

    def hurried(self, bob: Seat, due: int) -> None:
        """bob's two mails: the mistaken one, the fix; each a reply to his newest mail."""
        body = mistaken(self.orders(bob))
        sent = self.send(bob, bob.received[-1], body)
        self.world.poll()
        (reply,) = self.answers_to(bob, sent)  # one reply, and nothing else
        assert reply.kind == "error_reply", reply
        assert reply.subject == self.answer_subject("Not applied, 2 problems", bob)
        problems = reply.flat.split("send the whole mail again. ", 1)[1].split(" --")[0]
        assert problems == expected_problems(body, due, self.world.game("g1").turn == 0)
        self.problem_replies.append(reply)
        fixed = self.send(bob, bob.received[-1], self.orders(bob))
        self.world.poll()
        self.answers_to(bob, fixed)

    def answer_subject(self, what: str, seat: Seat) -> str:
        turn = self.world.game("g1").turn
        when = "setup orders" if turn == 0 else f"turn {turn}"
        return f"[g1] {what}: {when} (token {token(self.world, seat.name, turn)})"


def test_a_new_players_first_three_turns_hurried_and_with_mistakes(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = new_table(world, "g1", PLAYERS, overrides={})
    table.silence()
    people = Players(world, table)
    alice, bob, carol = (table[name] for name in PLAYERS)
    table.read_all()
    assert world.state("g1").phase == "place"
    for seat in (alice, bob, carol):
        (start,) = seat.received
        assert start.kind == "game_start"
        assert TOKEN_RE.search(start.subject)[1] == token(world, seat.name, 0)  # type: ignore[index]
        assert (
            "A reply to any mail of this game needs no password (its subject carries your "
            "token); a new mail to the game needs a line PASSWORD followed by it." in start.flat
        )
    # the setup: alice and carol answer the start mail; bob's newest mail is it too
    due = 35 - 14  # the armies of a 3-player game, one on each of 14 territories already
    for seat, body in ((alice, people.orders(alice)), (carol, prose(people.orders(carol)))):
        sent = people.send(seat, seat.latest("game_start"), body)
        world.poll()
        (receipt,) = people.answers_to(seat, sent)
        assert receipt.subject.startswith("[g1] Setup orders accepted (placement) (token ")
    people.hurried(bob, due)
    state = world.state("g1")
    assert state.phase not in ("place", "claim") and world.game("g1").turn == 1
    for seat in (alice, bob, carol):
        (report,) = table.mails(seat.name, "setup_report")
        first = state.players[state.current].name
        assert report.subject == (
            f"[g1] The setup is done: {first} plays turn 1 (token {token(world, seat.name, 1)})"
        )
    # three rounds: every player's first three turns
    for turn in range(1, 10):
        table.read_all()
        seat = table[table.mover()]
        assert TOKEN_RE.search(seat.latest("your_turn").subject)[1] == token(  # type: ignore[index]
            world, seat.name, turn
        )
        if seat is bob:
            people.hurried(bob, world.state("g1").reinforcements)
        else:
            body = people.orders(seat)
            body = prose(body) if seat is carol else body
            sent = people.send(seat, seat.latest("your_turn"), body)
            world.poll()
            got = people.answers_to(seat, sent)
            assert [m.kind for m in got] == ["turn_report", "receipt"], got
        assert world.game("g1").turn == turn + 1
    table.read_all()
    order = turns_of(world)
    for name in PLAYERS:
        mails = 2 if name == "bob" else 1
        assert dict(people.sent[name]) == {0: mails, **{t: mails for t in order[name]}}, name
    assert len(people.problem_replies) == 4  # bob's setup and his three turns
    # what each replied to: bob to his newest mail, the game-start mail in the setup
    # (before the tokens of issue 29 it carried none: refused) and then to the answer
    asked = ["game_start", "your_turn", "your_turn", "your_turn"]
    hurried = ["game_start", "error_reply"] + ["your_turn", "error_reply"] * 3
    assert people.replied_to == {"alice": asked, "bob": hurried, "carol": asked}
    # every mail a player got carries a token of their own seat (of its time)
    for seat in (alice, bob, carol):
        own = {token(world, seat.name, t) for t in range(11)}
        for mail in seat.received:
            found = TOKEN_RE.search(mail.subject)
            assert found is not None and found[1] in own, (seat.name, mail)
    # the GM: the setup report and nine turn reports, no alert of any kind
    assert [m.kind for m in table.gm] == ["setup_report"] + ["turn_report"] * 9
    for mail in table.gm:
        assert TOKEN_RE.search(mail.subject) is None, mail.subject


def prose(orders: str) -> str:
    return GREETING + orders + SIGNATURE


def turns_of(world: World) -> dict[str, list[int]]:
    """The turns each player played (1 to 9), from the order of play."""
    state = world.state("g1")
    order = [state.players[s].name for s in state.order]
    return {name: [t for t in range(1, 10) if order[(t - 1) % 3] == name] for name in PLAYERS}


def test_a_reply_to_the_report_before_your_turn_is_played_an_older_one_is_over(
    tmp_path: Path,
) -> None:
    """The turn report of the turn before theirs comes just before a player's
    "Your turn": a reply to it carries the current token and is played. A reply
    to a report of a turn that is over is answered with where the game is now."""
    world = World(tmp_path)
    table = new_table(world, "g1", PLAYERS)
    table.silence()
    table.read_all()
    first = table[table.mover()]
    first.reply(first.latest("your_turn"), first.bot.write_turn(world.state("g1")))  # type: ignore[union-attr]
    world.poll()
    table.read_all()
    second = table[table.mover()]
    (report,) = table.mails(second.name, "turn_report")
    assert [m.kind for m in second.received[-2:]] == ["turn_report", "your_turn"]
    assert report.subject.endswith(f"to move (token {token(world, second.name, 2)})")
    second.reply(report, second.bot.write_turn(world.state("g1")))  # type: ignore[union-attr]
    world.poll()
    assert [m.kind for m in table.read_all()[second.name]] == ["turn_report", "receipt"]
    assert world.game("g1").turn == 3
    third = table[table.mover()]
    old = table.mails(third.name, "turn_report")[0]  # the report of turn 1, told in turn 2
    third.reply(old, third.bot.write_turn(world.state("g1")))  # type: ignore[union-attr]
    world.poll()
    (answer,) = table.read_all()[third.name]
    current = token(world, third.name, 3)
    assert answer.subject == f"[g1] Turn 2 is over: your turn is 3 (token {current})"
    assert answer.flat.startswith(
        "Turn 2 is over: your turn is 3 ============================== Turn 2 is over; "
        "your current turn is 3. Nothing in your mail was applied: it answers a mail of "
        "the game from then. Reply to this mail with your orders for turn 3 (its subject "
        "carries your current token). --"
    ), answer.flat
    third.reply(answer, third.bot.write_turn(world.state("g1")))  # type: ignore[union-attr]
    world.poll()
    assert [m.kind for m in table.read_all()[third.name]] == ["turn_report", "receipt"]
    assert world.game("g1").turn == 4
    assert table.gm and all(m.kind == "turn_report" for m in table.gm), table.gm
