"""Seats changing hands and the welcome mail (issue 13): `pbem replace` and
the Capital Risk headquarters, played through the real mail path (Maildir)."""

from __future__ import annotations

import re

from pbem.rules.state import SETUP_PHASES
from pbem.service.play import gm
from tests.longgame_helpers import GM_ADDRESS, Mail, World, address_of, new_table

PLAYERS = ["ann", "bob", "cat"]
NEWCOMER = "dan@players.test"
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def addresses_in(mail: Mail) -> set[str]:
    """Every mail address in the mail's text parts and headers but To and From."""
    msg = mail.msg
    body = "\n".join(
        str(part.get_content()) for part in msg.walk() if part.get_content_maintype() == "text"
    )
    headers = "\n".join(f"{k}: {v}" for k, v in msg.items() if k not in ("To", "From"))
    found = set(ADDRESS.findall(body + "\n" + headers))
    # pbem's own Message-IDs and address are at game.test; the GM's is not ours
    return {a for a in found if not a.endswith("@game.test") or a == GM_ADDRESS}


def test_replace_welcomes_the_newcomer_and_leaks_no_address(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "rep", PLAYERS, overrides={"placement": "auto", "goal": "mission"})
    # Bots play until the one to move holds a card: the welcome must show it.
    table.run(lambda: bool(world.state("rep").players[world.state("rep").current].cards))
    table.silence()
    table.clear()
    state = world.state("rep")
    seat = state.current
    name = state.players[seat].name
    line = world.gm(gm.replace, "rep", name, NEWCOMER, "dan")
    password = re.search(r"password (\S+);", line)
    assert password is not None
    mails = world.take(NEWCOMER)
    assert [m.kind for m in mails] == ["game_start", "your_turn", "notice"]  # + the news
    welcome = mails[0]
    assert (
        welcome.untokened
        == f"[rep] Welcome: you take over the seat of {name} from turn {state.turn}"
    )
    flat = welcome.flat
    assert f"Welcome, dan. From turn {state.turn} on you play the seat of {name}" in flat
    assert f"Your password: {password.group(1)}" in flat
    from pbem.report.views import hand_text, mission_text

    cards = state.players[seat].cards
    assert f"Your cards ({len(cards)}): {hand_text(state.board, cards)}." in flat
    assert " ".join(f"Your secret mission: {mission_text(state, seat)}".split()) in flat
    assert f"It is your turn now (turn {state.turn})" in flat
    deadline = world.game("rep").deadline
    assert deadline is not None
    assert f"Deadline: {deadline:%a} {deadline.day} {deadline:%b %Y %H:%M} UTC." in flat
    assert "The game rep begins" not in welcome.text
    # No mail of the replacement shows an address but its recipient's own.
    table.read_all()
    for player in PLAYERS:
        for mail in table.mails(player):
            assert addresses_in(mail) <= {address_of(player)}, (player, mail)
    for mail in mails:
        assert addresses_in(mail) <= {NEWCOMER}, mail
    told = [m for m in table.mails(next(p for p in PLAYERS if p != name))]
    assert [m.untokened for m in told] == [f"[rep] A new player takes over {name}'s seat"]
    assert (
        f"dan takes over the seat of {name} from turn {state.turn} on; the seat keeps "
        f"its name, {name}, and its former player no longer plays it." in told[0].flat
    )
    gm_mail = [m for m in table.gm if "handed over" in m.subject]
    assert len(gm_mail) == 1
    assert f"dan <{NEWCOMER}> from turn {state.turn} on, after {address_of(name)}" in (
        gm_mail[0].flat
    )
    assert all(
        addresses_in(m) - {NEWCOMER, address_of(name), GM_ADDRESS} == set() for m in table.gm
    )


def test_capital_welcome_names_the_headquarters(tmp_path) -> None:  # noqa: ANN001
    world = World(tmp_path)
    table = new_table(world, "cap", PLAYERS, overrides={"placement": "auto", "goal": "capital"})
    table.read_all()
    start = table.mails("ann", "game_start")[0]
    assert (
        "Your headquarters: not chosen yet. You choose it among your territories in the "
        "setup (see What to do now)" in start.flat
    )
    table.run(lambda: world.state("cap").phase not in SETUP_PHASES)
    state = world.state("cap")
    waiting = next(s for s in range(3) if s != state.current)
    name = state.players[waiting].name
    hq = state.board.territories[state.players[waiting].hq].name
    world.gm(gm.replace, "cap", name, NEWCOMER, "dan")
    welcome = [m for m in world.take(NEWCOMER) if m.kind == "game_start"]
    assert len(welcome) == 1
    assert f"Your headquarters: {hq}. Hold every headquarters at once to win" in welcome[0].flat
    mover = state.players[state.current].name
    assert f"Nothing yet: {mover} is to move." in welcome[0].flat
