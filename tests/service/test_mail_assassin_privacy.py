"""An assassin game of four played through the real mail path (Maildir, polls)
to its end: each player's secret target appears only in their own mails (text
and HTML parts), never in another player's, the GM's copies, a subject or the
site while the game runs; the GM's removal of a player passes that player's
target to their hunter, told to the hunter alone; the game-over mail names
the targets; the record replays and verifies to the same hashes."""

from __future__ import annotations

import re
from pathlib import Path

from pbem.orderlog.records import read_record, verify_record
from pbem.rules import gametypes
from pbem.service.play import gm
from pbem.site import build_site
from tests.longgame_helpers import SECRET, Mail, World, new_table

PLAYERS = ["ann", "bob", "cat", "dan"]
TARGET = re.compile(r"secret target: (\w+)", re.IGNORECASE)


def _texts(mail: Mail) -> list[str]:
    """The plain text and the HTML part without its tags."""
    html = mail.msg.get_body(preferencelist=("html",))
    flat = re.sub(r"<[^>]+>", "", html.get_content()) if html is not None else ""
    return [mail.text, " ".join(flat.split())]


def _named_targets(mails: list[Mail]) -> set[str]:
    return {m for mail in mails for text in _texts(mail) for m in TARGET.findall(text)}


def test_each_target_is_only_in_its_own_players_mail(tmp_path: Path) -> None:
    world = World(tmp_path / "world")
    table = new_table(
        world, "hunt", PLAYERS, overrides={"placement": "auto", "goal": "assassin"}, seed=3
    )
    start = world.state("hunt")
    names = [p.name for p in start.players]
    first = {names[s]: names[start.targets[s]] for s in start.order}
    assert sorted(first) == sorted(PLAYERS) and sorted(first.values()) == sorted(PLAYERS)
    table.run(lambda: world.state("hunt").turn >= 6)
    # the GM removes the hunted of the first in turn order: the hunter inherits
    state = world.state("hunt")
    removed = state.targets[state.order[0]]
    hunter = gametypes.hunter_of(state, removed)
    assert hunter == state.order[0]
    inherited = names[state.targets[removed]]
    world.gm(gm.kick, "hunt", names[removed])
    assert names[world.state("hunt").targets[hunter]] == inherited
    table.run(lambda: world.state("hunt").turn >= 12 or world.state("hunt").phase == "over")
    site = tmp_path / "site-running"
    if world.state("hunt").phase != "over":
        with world.session(write=False) as session:
            build_site(session, world.ctx, site)
        pages = [p.read_text(errors="ignore") for p in site.rglob("*") if p.is_file()]
        assert pages and not [p for p in pages if "secret target" in p.lower()]
    table.run(lambda: world.state("hunt").phase == "over", limit=400)
    table.read_all()

    for name in PLAYERS:
        mails = table.mails(name)
        before_end = [m for m in mails if m.kind != "game_over"]
        expected = {first[name]} | ({inherited} if name == names[hunter] else set())
        seen = _named_targets(before_end)
        assert seen <= expected, (name, seen, expected)
        assert first[name] in seen  # told at the start
        for mail in mails:
            assert "target" not in mail.subject.lower(), mail
    hunter_mail = " ".join(
        " ".join(t.split()) for m in table.mails(names[hunter]) for t in _texts(m)
    )
    told = (
        f"Your new secret target: {inherited} (the target of {names[removed]}, who left the game)."
    )
    assert told in hunter_mail  # in the catch-up block of the hunter's next your-turn mail
    for name in PLAYERS:
        if name != names[hunter]:
            assert not any("new secret target" in m.text for m in table.mails(name)), name
    for mail in table.gm:  # the GM's observer copies: no target, the game over aside
        if mail.kind != "game_over":
            assert not _named_targets([mail]), mail
    over = world.state("hunt")
    assert over.phase == "over" and over.win_reason in ("assassin", "domination")
    ending = table.mails(PLAYERS[0], "game_over")[-1].flat
    assert "The secret targets at the end:" in ending
    assert f"{names[removed]} hunted" not in ending  # removed: their target was passed on
    text = world.replayed_record("hunt")
    report = verify_record(read_record(text), SECRET.hex())
    assert report.ok, report.message
