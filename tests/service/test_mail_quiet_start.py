"""A player's first mails, quiet and their own (issue 29, points 9 and 12).

Each test goes through the real mail path (the Maildir transport, `run_cycle`)
and reads the mails as the player gets them: the rules that apply to this
game only, examples on the player's own territories, what a CLAIM leaves to
the rules, an ABSENT that changed nothing, and who takes over a seat.
"""

from __future__ import annotations

from datetime import timedelta

from pbem.orders import parse_orders, validate_mail
from pbem.rules.actions import Attack, Fortify, Place, PlaceInitial
from pbem.rules.state import GameState
from pbem.service.play import gm, notify
from pbem.service.play.games import PlayerSpec, create_game
from tests.longgame_helpers import GM_ADDRESS, SECRET, Mail, Table, World, address_of, new_table

PLAYERS = ["alice", "bob", "carol"]

CLASSIC_FOR_THREE = """\
Rules in force (preset classic)
-------------------------------
- Territories are dealt at random from the shuffled territory cards.
- Initial armies are placed by all players at once, in secret.
- Card sets are worth 4, 6, 8, 10, 12, 15, then 5 more each, over all sets.
- Trading a card of an owned territory gives +2 armies there, once per turn.
- Traded cards go to the bottom of the draw pile.
- A player starting a turn with 5 or more cards must trade a set.
- At most 2 sets may be traded in one turn.
- After a conquest at least as many armies as dice in the last roll move in.
- One fortifying move per turn, to an adjacent own territory.
- Win by eliminating every other player.
- A defender rolls the most dice allowed (2, or 1 on one army), unless the
  owner's standing order DEFEND WITH 1 IN the territory says one die.
- Cards taken by eliminating a player that make 6 or more are traded at once
  down to 4 or fewer: the sets of the TRADE orders written after that ATTACK,
  else the set worth most to the player (its +2s counted); their armies are
  placed by PLACE orders written after that ATTACK (the rest on the territory
  taken last).
"""


def rules_block(mail: Mail) -> str:
    text = mail.text
    return text[text.index("Rules in force") : text.index("\nThe map: ")]


def with_preset(world: World, name: str, players: list[str], preset: str) -> Table:
    """A game of ``preset`` (blind placement, as the preset says), start mails read."""
    with world.session() as session:
        created = create_game(
            session, name, [PlayerSpec(p, address_of(p)) for p in players], preset=preset,
            gm_address=GM_ADDRESS, secret=SECRET, dice_version="v1",
        )  # fmt: skip
        notify.game_start(session, world.ctx, created.game, created.passwords)
    world.flush()
    table = Table(world, name, players)
    for player, password in created.passwords.items():
        table[player].password = password
    table.silence()
    table.read_all()
    return table


def seat_of(state: GameState, name: str) -> int:
    return next(i for i, p in enumerate(state.players) if p.name == name)


def examples_after(mail: Mail, lead: str, end: str) -> list[str]:
    """The example order lines (indented) of a mail between two sentences."""
    text = mail.text[mail.text.index(lead) : mail.text.index(end)]
    return [line.strip() for line in text.splitlines() if line.startswith("  ")]


# ------------------------------------------------------------ Rules in force
def test_a_three_player_classic_start_states_only_its_rules(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = with_preset(world, "three", PLAYERS, "classic")
    start = table.mails("alice", "game_start")[0]
    assert rules_block(start) == CLASSIC_FOR_THREE
    for word in ("mission", "headquarters", "HQ", "neutral", "At least", "players."):
        assert word not in rules_block(start), word


def test_a_secret_mission_start_states_the_missions(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = with_preset(world, "secret", PLAYERS, "secret-mission")
    block = rules_block(table.mails("bob", "game_start")[0])
    assert block.startswith("Rules in force (preset secret-mission)\n")
    assert "- Win by completing your secret mission.\n" in block
    assert (
        "- A secret mission wins the moment it is complete, whoever's action completed\n  it.\n"
    ) in block
    assert "- The mission deck is the rulebooks' 12 cards;" in block
    assert "neutral" not in block and "headquarters" not in block


def test_a_two_player_start_states_the_neutral(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = with_preset(world, "duo", ["alice", "bob"], "classic")
    block = rules_block(table.mails("alice", "game_start")[0])
    assert (
        "- A two-player game adds a neutral army that never attacks (40 armies each);\n"
        "  its territories are dealt at random (with a draft, its third is dealt\n"
    ) in block
    # rules version 3 (issue 33): who may give DEFEND for a neutral territory
    assert (
        "(with a draft, its third is dealt first). With two players, the player who "
        "rolls for the neutral (the attacker's opponent) may order DEFEND WITH 1 IN a "
        "neutral territory."
    ) in " ".join(block.split())
    assert "At least 2 players" not in block and "mission" not in block


# ------------------------------------------------------------ example orders
def test_the_start_mail_examples_are_alices_own_and_valid(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = with_preset(world, "mine", PLAYERS, "classic")
    state = world.state("mine")
    seat = seat_of(state, "alice")
    start = table.mails("alice", "game_start")[0]
    lines = examples_after(start, "What to do now", "Deadline:")
    assert len(lines) == 1 and lines[0].startswith("PLACE ")
    parsed = parse_orders("\n".join(lines), state.board)
    assert validate_mail(state, seat, parsed) == []
    (order,) = parsed.setup_orders
    assert isinstance(order.action, PlaceInitial)
    placements = order.action.placements
    assert len(placements) == 2  # split over two of her territories
    assert {state.owner[t] for _, t in placements} == {seat}
    assert sum(n for n, _ in placements) == state.players[seat].to_place == 21
    # the setup prompt's HELP answer gives her the same example
    table["alice"].write("HELP")
    world.poll()
    (answer,) = [m for m in table["alice"].read() if m.kind == "help"]
    assert answer.text.startswith(
        "For example, on your own territories in mine as the board stands now:\n\n"
        f"  {lines[0]}\n\nYour games here: [mine]."
    )
    assert (
        "Your games here: [mine]. A mail to one names it in its subject, like [mine], or in "
        "a line GAME mine. THE ORDER LANGUAGE "
    ) in answer.flat


def test_the_two_player_examples_place_the_neutral_on_neutral_land(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = with_preset(world, "two", ["alice", "bob"], "classic")
    state = world.state("two")
    seat = seat_of(state, "alice")
    lines = examples_after(table.mails("alice", "game_start")[0], "What to do now", "Deadline:")
    assert [line.split()[0] for line in lines] == ["PLACE", "NEUTRAL"]
    assert validate_mail(state, seat, parse_orders("\n".join(lines), state.board)) == []


def test_the_your_turn_examples_are_alices_own_and_valid(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "turn", PLAYERS)  # placement automatic: play begins at once
    table.run(lambda: table.mover() == "alice" and world.state("turn").turn > 1)
    table.silence()
    table.read_all()
    state = world.state("turn")  # as alice's notice showed it: nobody played since
    seat = seat_of(state, "alice")
    notice = table.mails("alice", "your_turn")[-1]
    assert notice.subject.startswith(f"[turn] Your turn {state.turn} ")
    lines = examples_after(notice, "for example:", "Send HELP")
    parsed = parse_orders("\n".join(lines), state.board)
    assert validate_mail(state, seat, parsed) == []
    actions = [o.action for o in parsed.turn_orders]
    assert [type(a) for a in actions] == [Place, Attack, Fortify]
    place, attack, fortify = actions
    assert isinstance(place, Place) and isinstance(attack, Attack)
    assert isinstance(fortify, Fortify)
    assert len(place.placements) == 2
    assert sum(n for n, _ in place.placements) == state.reinforcements
    named = [t for _, t in place.placements] + [attack.source, fortify.source, fortify.target]
    assert {state.owner[t] for t in named} == {seat}  # only the attack's target is not hers
    assert state.owner[attack.target] != seat
    assert attack.target in state.board.territories[attack.source].neighbours
    assert fortify.target in state.board.territories[fortify.source].neighbours


# ------------------------------------------------------- ABSENT, takeovers
def test_an_absent_sent_twice_is_answered_that_nothing_changed(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "abs", PLAYERS, settings={"absence_days_per_year": 10})
    table.silence()
    table.read_all()
    alice = table["alice"]
    alice.write("ABSENT FROM 2024-03-10 TO 2024-03-12")
    world.poll()
    first = alice.read()
    assert [m.untokened for m in first] == ["[abs] Noted"]
    assert "Your mail had no orders; this is what it did: Absence noted from 2024-03-10 to " in (
        first[0].flat
    )
    assert world.player("abs", "alice").absence_days_used == 3

    alice.write("ABSENT FROM 2024-03-10 TO 2024-03-12")  # the very same mail again
    world.poll()
    copy = alice.read()
    assert [m.kind for m in copy] == ["error_reply"]
    assert "Already applied: this mail says what your last mail said" in copy[0].flat

    alice.write("# back on the 13th\nABSENT FROM 2024-03-11 TO 2024-03-12")  # inside it
    world.poll()
    second = alice.read()
    assert [(m.kind, m.untokened) for m in second] == [("receipt", "[abs] Nothing changed")]
    assert second[0].text.split("\n\n")[:3] == "\n\n".join(
        [
            "Nothing changed\n===============\n\n"
            "Thank you, alice. Your mail had no orders; it changed nothing:\n\n"
            "  You were already marked absent from 2024-03-11 to 2024-03-12 in abs (noted:\n"
            "    2024-03-10 to 2024-03-12); nothing changed."
        ]
    ).split("\n\n")
    assert "Orders accepted" not in second[0].text
    assert world.player("abs", "alice").absence_days_used == 3


def test_a_set_mail_that_is_set_already_changed_nothing(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "set", PLAYERS)
    table.silence()
    table.read_all()
    bob = table["bob"]
    bob.write("SET MAIL DIGEST")
    world.poll()
    assert [m.untokened for m in bob.read()] == ["[set] Noted"]
    bob.write("set mail digest")
    world.poll()
    again = bob.read()
    assert [m.untokened for m in again] == ["[set] Nothing changed"]
    assert "Your mail is set to DIGEST already; nothing changed." in again[0].flat


def test_the_takeover_notice_names_the_newcomer_and_the_seat(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "take", PLAYERS)
    table.silence()
    table.read_all()
    state = world.state("take")
    turn = state.turn
    world.gm(gm.replace, "take", "carol", "dave@players.test")  # no --name: the address's
    notice = [m for m in table["alice"].read() if "takes over" in m.subject]
    assert [m.untokened for m in notice] == ["[take] A new player takes over carol's seat"]
    assert (
        f"dave takes over the seat of carol from turn {turn} on; the seat keeps its name, "
        "carol, and its former player no longer plays it." in notice[0].flat
    )
    welcome = [m for m in world.take("dave@players.test") if m.kind == "game_start"]
    assert len(welcome) == 1
    assert f"Welcome, dave. From turn {turn} on you play the seat of carol" in welcome[0].flat
    assert world.holders("take")[-1][1:3] == ("dave", "dave@players.test")


def test_a_newcomer_named_like_the_seat_is_not_read_as_its_old_player(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "same", PLAYERS)
    table.silence()
    table.read_all()
    world.gm(gm.replace, "same", "carol", "carol@elsewhere.test")
    notice = [m for m in table["bob"].read() if "takes over" in m.subject]
    assert len(notice) == 1
    assert "A new player, also called carol, takes over the seat of carol from turn" in (
        notice[0].flat
    )
    assert "carol takes over the seat of carol" not in notice[0].flat


# ------------------------------------------------------------------- CLAIM
def test_a_claim_answer_says_how_the_rest_are_chosen(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "draft", PLAYERS, overrides={"claim": "draft", "placement": "auto"})
    table.silence()
    table.read_all()
    state = world.state("draft")
    alice = table["alice"]
    picks = 14  # 42 territories, 3 players
    alice.write("CLAIM Alaska, Japan, Peru")
    world.poll()
    receipt = [m for m in alice.read() if m.kind == "receipt"]
    assert len(receipt) == 1
    assert state.owner.count(-1) == 42
    assert (
        "  CLAIM Alaska, Japan, Peru\n\n"
        "  # You listed 3 of the 42 free territories and get 14 in the draft, one pick\n"
        "    each round in turn order: each pick takes the first territory on your list\n"
        "    still free; the other 11 (or more, if others take yours first) are each\n"
        "    the first free territory in map order when its pick comes.\n"
    ) in receipt[0].text
    assert f"get {picks} in the draft" in receipt[0].flat
    # and so it is: at the deadline the silent players get the default (empty lists)
    deadline = world.game("draft").deadline
    assert deadline is not None
    world.poll_until(deadline + timedelta(hours=30), every_hours=6)
    after = world.state("draft")
    seat = next(i for i, p in enumerate(after.players) if p.name == "alice")
    names = [after.board.territories[t].name for t in after.territories_of(seat)]
    assert len(names) == picks and {"Alaska", "Japan", "Peru"} <= set(names)
