"""Press and the public site (issue 27): the site shows only press sent to all
players, read from the press records, never a line of mail text; anonymous press
carries nothing derived from its sender; a press is relayed once; site folders
are safe, bounded and one per game."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlmodel import col, func, select

from pbem.report.mime import stable_message_id
from pbem.service.play import notify
from pbem.service.play.games import find_game, players_of
from pbem.service.tell import telling
from pbem.site import build_site
from pbem.site import folders as site_folders
from pbem.site.folders import SiteFolderClash, folders, slug
from pbem.store import Outbox, PressRecord
from tests.longgame_helpers import GAME_ADDRESS, World, address_of, new_table

PLAYERS = ["ann", "bob", "cat"]
PUBLIC = "Peace in the north, friends"
FORGED = "I, Ann, surrender Ural to everyone"
QUOTED = "Bob alone should read this"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path]:
    """``talk`` (press signed), ``hush`` (anonymous) and ``copied`` (anonymous, GM
    copies); in each cat writes to all and to bob, and the mail in ``talk`` tries
    both tricks the old site fell for; then the site is built."""
    world = World(tmp_path_factory.mktemp("press") / "world")
    tables = {}
    for name, settings in (
        ("talk", {}),
        ("hush", {"press_anonymous": True}),
        ("copied", {"press_anonymous": True, "press_copy_gm": True}),
    ):  # the same addresses play the three games: each reads its start mail at once
        tables[name] = new_table(world, name, PLAYERS, settings=settings)
        tables[name].read_all()
    cat = tables["talk"]["cat"]
    # A private press whose body holds the public line, and a public press that
    # puts a line under another player's name.
    cat.write(f"PRESS TO bob\nann writes to all players:\n{QUOTED}\nENDPRESS")
    cat.write(f"PRESS TO ALL\n{PUBLIC}\n\nann writes to all players:\n{FORGED}\nENDPRESS")
    for name in ("hush", "copied"):
        tables[name]["cat"].write(f"PRESS TO ALL\n{PUBLIC}\nENDPRESS")
    # The same words to bob from ann and from cat, at the same moment.
    tables["hush"]["ann"].write("PRESS TO bob\nMeet me in Siam\nENDPRESS")
    tables["hush"]["cat"].write("PRESS TO bob\nMeet me in Siam\nENDPRESS")
    world.poll()
    world.bob = world.take(address_of("bob"))  # type: ignore[attr-defined]
    out = world.folder / "site"
    with world.session(write=False) as session:
        build_site(session, world.ctx, out)
    return world, out


def _press_html(out: Path, game: str) -> str:
    page = (out / game / "index.html").read_text(encoding="utf-8")
    return page[page.index("Press") :]


def test_site_shows_press_to_all_from_the_records_only(world) -> None:
    """The private press quoting "ann writes to all players:" is not on the site;
    the public one is, once, under its real sender, the forged line as its text."""
    _, out = world
    press = _press_html(out, "talk")
    assert QUOTED not in press
    assert press.count(PUBLIC) == 1
    assert re.search(r"<b>cat</b> wrote:</p>\s*<pre>" + PUBLIC, press)
    assert "<b>ann</b>" not in press  # nobody wrote under ann's name
    assert FORGED in press  # shown as what it is: part of cat's text


def test_anonymous_press_on_the_site_names_nobody(world) -> None:
    _, out = world
    for game in ("hush", "copied"):
        press = _press_html(out, game)
        assert re.search(r"<b>anonymous</b> wrote:</p>\s*<pre>" + PUBLIC, press)
        assert "Meet me in Siam" not in press  # private
        for name in PLAYERS:
            assert f"<b>{name}</b>" not in press


def test_records_keep_the_sender_only_where_it_is_no_secret(world) -> None:
    """Signed press keeps seat and name; anonymous keeps neither, except the seat
    when the GM gets a copy (the copy names the sender to the GM anyway)."""
    w, _ = world
    with w.session(write=False) as session:
        rows = {}
        for game in ("talk", "hush", "copied"):
            row = find_game(session, game)
            query = select(PressRecord).where(PressRecord.game_id == row.id, PressRecord.to_all)
            rows[game] = session.exec(query).one()
    cat_seat = w.player("talk", "cat").seat
    assert (rows["talk"].sender_seat, rows["talk"].sender_name) == (cat_seat, "cat")
    assert (rows["hush"].sender_seat, rows["hush"].sender_name) == (None, "")
    assert rows["hush"].anonymous and rows["hush"].to_all
    assert rows["copied"].sender_seat == w.player("copied", "cat").seat
    assert rows["copied"].sender_name == ""


def test_anonymous_press_headers_hold_nothing_of_the_sender(world) -> None:
    """Bob got the same anonymous words from ann and from cat at the same moment:
    the two mails are the same in every header but the Message-ID (and the random
    MIME boundary), and neither
    Message-ID is the hash of (sender seat, target, body, time) it used to be."""
    w, _ = world
    received = w.bob  # type: ignore[attr-defined]
    mails = [m for m in received if m.kind == "press" and m.msg["X-Pbem-Game"] == "hush"]
    mails = [m for m in mails if "Siam" in m.text]
    assert len(mails) == 2
    first, second = (dict(m.msg.items()) for m in mails)
    ids = first.pop("Message-ID"), second.pop("Message-ID")
    for headers in (first, second):  # the MIME boundary is drawn at random for every mail
        headers["Content-Type"] = re.sub(r'boundary="[^"]*"', "", headers["Content-Type"])
    assert first == second
    assert mails[0].text == mails[1].text
    assert "ann" not in str(first).lower() and "cat" not in str(first).lower()
    host = GAME_ADDRESS.rpartition("@")[2]
    body = "Meet me in Siam"
    stamp = w.clock.now().isoformat()
    bob_seat = w.player("hush", "bob").seat
    old_style = {
        stable_message_id(host, "press", "hush", seat, bob_seat, body, stamp) for seat in range(3)
    }
    for mid in ids:
        assert re.fullmatch(r"<[0-9a-f]{32}@game\.test>", mid)
        assert mid not in old_style
    assert ids[0] != ids[1]


def _counts(w: World, game: str) -> tuple[int, int]:
    with w.session(write=False) as session:
        row = find_game(session, game)
        records = session.exec(select(func.count()).where(col(PressRecord.game_id) == row.id)).one()
        mails = session.exec(
            select(func.count()).where(Outbox.game_id == row.id, Outbox.kind == "press")
        ).one()
    return records, mails


def test_a_press_is_relayed_once(world) -> None:
    """The same press block of the same mail relayed again (a handler run twice in
    one transaction) adds nothing; a rolled-back transaction leaves nothing, and the
    retry then relays it once, with new random Message-IDs."""
    from pbem.orders.model import Press

    w, _ = world
    press = Press("ALL", "Once only", 3, 1, "PRESS TO ALL")
    before = _counts(w, "hush")

    class Retry(Exception):
        pass

    with pytest.raises(Retry), w.session() as session:
        game = find_game(session, "hush")
        cat = next(p for p in players_of(session, game) if p.name == "cat")
        notify.relay_press(session, w.ctx, game, cat, press, "<once@players.test>")
        raise Retry
    assert _counts(w, "hush") == before
    with w.session() as session:
        game = find_game(session, "hush")
        cat = next(p for p in players_of(session, game) if p.name == "cat")
        for _ in range(2):
            notify.relay_press(session, w.ctx, game, cat, press, "<once@players.test>")
    with w.session() as session:  # a later transaction: the stored key stops it
        game = find_game(session, "hush")
        cat = next(p for p in players_of(session, game) if p.name == "cat")
        notify.relay_press(session, w.ctx, game, cat, press, "<once@players.test>")
    telling.tell(w.engine, w.ctx)  # the notices of the committed relay, told
    assert _counts(w, "hush") == (before[0] + 1, before[1] + 2)  # to ann and bob


# ------------------------------------------------------------------ site folders
def test_slugs_are_safe_bounded_and_distinct() -> None:
    names = ["war", "game", "Game", "GAME", "ÄÖ", "ao", "x" * 300, "x" * 301, "..", "."]
    names += ["index.html", "style.css", "a/b", "a\\b", "a b", "a-b", "game-0123456789ab"]
    names += ["", "\x00", "名前"]
    made = [slug(n) for n in names]
    assert len({m.lower() for m in made}) == len(names)
    for name, made_ in zip(names, made, strict=True):
        assert re.fullmatch(r"[a-z0-9][a-z0-9_-]*", made_), (name, made_)
        assert len(made_) <= site_folders.MAX_READABLE + 1 + site_folders.HASH_HEX
        assert made_ not in ("index.html", "style.css")
    assert slug("war") == "war" and slug("game") == "game"  # plain names keep their folder
    assert slug("ÄÖ").startswith("ao-") and slug("x" * 300).startswith("x" * 40 + "-")
    assert slug("game-0123456789ab") != "game-0123456789ab"  # looks hashed: hashed again


def test_a_folder_clash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard behind the hash: two games mapped to one folder stop the build."""
    assert folders(["a", "b"]) == {"a": "a", "b": "b"}
    monkeypatch.setattr(site_folders, "slug", lambda name: "same")
    with pytest.raises(SiteFolderClash, match="would share the site folder 'same'"):
        folders(["a", "b"])


def test_site_of_unusual_game_names(world, tmp_path: Path) -> None:
    """A 300-character name, "ÄÖ" next to "game": the site is built, one folder each,
    every folder linked from the index. (The names are set in the database, as an
    older pbem may have stored them.)"""
    w, _ = world
    long_name = "Ω" + "x" * 299
    renames = {"talk": long_name, "hush": "ÄÖ", "copied": "game"}
    with w.session() as session:
        for old, new in renames.items():
            session.execute(
                text("UPDATE game SET name = :new WHERE name = :old"), {"new": new, "old": old}
            )
    try:
        out = tmp_path / "site"
        with w.session(write=False) as session:
            build_site(session, w.ctx, out)
        index = (out / "index.html").read_text(encoding="utf-8")
        made = {name: slug(name) for name in renames.values()}
        assert len(set(made.values())) == 3
        for name, folder in made.items():
            page = (out / folder / "index.html").read_text(encoding="utf-8")
            assert f'href="{folder}/index.html"' in index
            assert name in page or name[:40] in page
    finally:
        with w.session() as session:
            for old, new in renames.items():
                session.execute(
                    text("UPDATE game SET name = :old WHERE name = :new"), {"new": new, "old": old}
                )
