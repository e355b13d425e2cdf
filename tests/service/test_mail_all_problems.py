"""Issue 29, points 1 and 8, through the real mail path (the local Maildir
transport, as tests/service/test_mail_people.py): one reply names every problem
of a mail, each with its line, in line order, so that the second mail is the one
that is played; a greeting below CHECK is never told to be HELP.
"""

from __future__ import annotations

from pbem.orders.errors import closest, territory_candidates
from pbem.rules.state import GameState
from tests.longgame_helpers import Mail, World, new_table

PLAYERS = ["ann", "bob", "cat"]


def quiet_game(tmp_path, name: str):  # noqa: ANN001, ANN201
    """A game whose players write only what the test says; the one to move."""
    world = World(tmp_path)
    table = new_table(world, name, PLAYERS)
    table.silence()
    table.read_all()
    return world, table, table[table.mover()]


class Places:
    """Territories of the position for the mail's mistakes and their fixes."""

    def __init__(self, state: GameState) -> None:
        board, owner, seat = state.board, state.owner, state.current
        names = [t.name for t in board.territories]

        def near(t: int, mine: bool) -> list[int]:
            return [n for n in board.territories[t].neighbours if (owner[n] == seat) == mine]

        mine = [t for t in range(len(names)) if owner[t] == seat]
        theirs = [t for t in range(len(names)) if owner[t] != seat]
        # the attack of the corrected mail, and a fortify from its base
        self.base = next(t for t in mine if near(t, mine=False) and near(t, mine=True))
        self.enemy = near(self.base, mine=False)[0]
        self.friend = near(self.base, mine=True)[0]
        # an attack from a foreign territory to a foreign neighbour, and another
        # foreign territory for the fortify
        self.foreign = next(t for t in theirs if near(t, mine=False))
        self.foreign_to = near(self.foreign, mine=False)[0]
        self.elsewhere = next(t for t in theirs if t not in (self.foreign, self.foreign_to))
        self.owner_of = {t: state.players[owner[t]].name for t in theirs}
        self.names = names
        # one of the player's territories whose name, misspelt, has one likely fix
        candidates = territory_candidates(board)
        self.defended = next(
            t for t in mine if closest(names[t] + names[t][-1], candidates) == [names[t]]
        )

    def __getitem__(self, territory: int) -> str:
        return self.names[territory]


def listed(reply: Mail) -> str:
    """The reply's list of problems, blanks and line ends as one blank each."""
    flat = reply.flat
    for intro_end in ("send the whole mail again. ", "(or with CHECK to check again). "):
        if intro_end in flat:  # a mail of orders; a mail that asked for a CHECK
            start = flat.index(intro_end) + len(intro_end)
            return flat[start : flat.index(" -- ")]
    raise AssertionError(f"not a problem reply: {flat[:200]}")


def test_every_problem_in_one_reply_in_line_order_then_the_fixed_mail_is_played(
    tmp_path,  # noqa: ANN001
) -> None:
    world, table, mover = quiet_game(tmp_path, "all")
    state = world.state("all")
    p = Places(state)
    due, turn = state.reinforcements, state.turn
    assert due < 57 and not state.must_trade
    base, defended = p[p.base], p[p.defended]
    misspelt = defended + defended[-1]  # "Alaskaa"
    body = (
        f"TURN {turn}\n"
        f"ATACK {base} -> {p[p.enemy]}\n"
        f"PLACE 57 {base}\n"
        f"ATTACK {p[p.foreign]} -> {p[p.foreign_to]}\n"
        f"FORTIFY 1 {base} -> {p[p.elsewhere]}\n"
        f"DEFEND WITH 1 IN {misspelt}\n"
    )
    mover.reply(mover.latest("your_turn"), body)
    world.poll()
    answers = mover.read()
    assert [m.kind for m in answers] == ["error_reply"]
    lines = body.split("\n")
    assert listed(answers[0]) == " ".join(
        [
            f"Line 2: {lines[1]} ATACK: no such order; did you mean ATTACK? Fix: ATTACK",
            f"Line 3: {lines[2]} PLACE must come before ATTACK: line 2 is to be an ATTACK,",
            "so move this line above it",
            f"Line 3: {lines[2]} PLACE orders place 57 armies; {due} are due this turn",
            f"Line 4: {lines[3]} {p[p.foreign]} is not yours; it is {p.owner_of[p.foreign]}'s,",
            "and no earlier ATTACK takes it",
            f"Line 5: {lines[4]} {p[p.elsewhere]} is not yours; it is",
            f"{p.owner_of[p.elsewhere]}'s",
            f"Line 6: {lines[5]} {misspelt}: no such territory; did you mean {defended}?",
            f"Fix: {defended}",
        ]
    )
    assert "Your mail was not applied: 6 problems" in answers[0].flat
    assert world.game("all").turn == turn  # nothing applied
    fixed = (
        f"TURN {turn}\n"
        f"PLACE {due} {base}\n"
        f"ATTACK {base} -> {p[p.enemy]}\n"
        f"FORTIFY 1 {base} -> {p[p.friend]}\n"
        f"DEFEND WITH 1 IN {defended}\n"
    )
    mover.reply(answers[0], fixed)  # the reply keeps the turn token
    world.poll()
    assert [m.kind for m in mover.read()] == ["turn_report", "receipt"]
    assert world.game("all").turn == turn + 1  # the second mail was played


def test_a_greeting_below_check_is_not_made_a_help_request(tmp_path) -> None:  # noqa: ANN001
    """Issue 29, point 8: "Hello!" between CHECK and an order is a problem, but its
    fix is not HELP (following it would make the mail a HELP request)."""
    world, table, mover = quiet_game(tmp_path, "hello")
    state = world.state("hello")
    base = Places(state)[Places(state).base]
    body = f"CHECK\nHello!\nPLACE {state.reinforcements} {base}\n"
    mover.reply(mover.latest("your_turn"), body)
    world.poll()
    answers = mover.read()
    assert [m.kind for m in answers] == ["error_reply"]  # no HELP text sent
    assert listed(answers[0]) == "Line 2: Hello! Hello!: no such order"
    assert "HELP" not in listed(answers[0])
    assert world.game("hello").turn == state.turn


def test_a_fixed_line_is_checked_too_so_following_every_fix_is_played(
    tmp_path,  # noqa: ANN001
) -> None:
    """The player trial: a misspelt name whose one fix still gives a wrong line
    is told in the same reply ("With that fix: ..."), so the second mail, with
    every fix, is the one that is played."""
    world, table, mover = quiet_game(tmp_path, "fixed")
    state = world.state("fixed")
    p = Places(state)
    board, owner, seat = state.board, state.owner, state.current
    due, turn = state.reinforcements, state.turn
    candidates = territory_candidates(board)
    weak = next(
        t
        for t in range(len(p.names))
        if owner[t] == seat
        and state.armies[t] == 1
        and any(owner[n] != seat for n in board.territories[t].neighbours)
        and closest(p[t] + p[t][-1], candidates) == [p[t]]
    )
    weak_to = next(n for n in board.territories[weak].neighbours if owner[n] != seat)
    foreign = next(t for t in range(len(p.names)) if owner[t] != seat and t != p.enemy)
    foreign_to = next(n for n in board.territories[foreign].neighbours if owner[n] != seat)
    base, enemy, misspelt = p[p.base], p[p.enemy], p[weak] + p[weak][-1]
    body = (
        f"TURN {turn}\n"
        f"PLACE {due + 3} {base}\n"
        f"ATACK {base} -> {enemy}\n"
        f"ATTACK {misspelt} -> {p[weak_to]}\n"
        f"ATTACK {p[foreign]} -> {p[foreign_to]}\n"
    )
    mover.reply(mover.latest("your_turn"), body)
    world.poll()
    answers = mover.read()
    assert [m.kind for m in answers] == ["error_reply"]
    lines = body.split("\n")
    expected = (
        f"Line 2: {lines[1]} PLACE orders place {due + 3} armies; {due} are due this turn "
        f"Line 3: {lines[2]} ATACK: no such order; did you mean ATTACK? Fix: ATTACK "
        f"Line 4: {lines[3]} {misspelt}: no such territory; did you mean {p[weak]}? "
        f"Fix: {p[weak]} With that fix: {p[weak]} has 1 army; an attack needs at least 2 "
        f"Line 5: {lines[4]} {p[foreign]} is not yours; it is {p.owner_of[foreign]}'s, "
        "and no earlier ATTACK takes it"
    )
    assert listed(answers[0]) == " ".join(expected.split())
    fixed = f"TURN {turn}\nPLACE {due} {base}\nATTACK {base} -> {enemy}\n"
    mover.reply(answers[0], fixed)
    world.poll()
    assert [m.kind for m in mover.read()] == ["turn_report", "receipt"]
    assert world.game("fixed").turn == turn + 1  # two mails, not three
