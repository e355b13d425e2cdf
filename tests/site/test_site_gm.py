"""The game site as a GM publishes it with `pbem site` (issue 30, point 6): turn
pages named by turn number, the board now and at the start on the game's page,
the deadline of a game still in its setup in the calendar, and the pages of a
site published before (named by log position) leading to the same turns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import select
from typer.testing import CliRunner, Result

from pbem.cli import app
from pbem.store import Game, init_db, session_scope

RUNNER = CliRunner()
PLAYERS = [x for n in ("alice", "bob", "carol") for x in ("-p", f"{n}:{n}@example.org")]
PNG = b"\x89PNG\r\n\x1a\n"


def ok(*args: str) -> Result:
    result = RUNNER.invoke(app, list(args))
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """g1 in its setup (a draft of territories), g2 with three turns played."""
    folder = tmp_path_factory.mktemp("gm-site")
    mp = pytest.MonkeyPatch()
    mp.chdir(folder)
    mp.setenv("HOME", str(folder))  # no ~/.config/pbem/pbem.toml
    for name in ("PBEM_CONFIG", "PBEM_DATABASE_URL", "PBEM_NOW"):
        mp.delenv(name, raising=False)
    try:
        ok("init")
        ok("new", "g1", "-o", "claim=draft", *PLAYERS)
        ok("new", "g2", *PLAYERS)
        assert "default setup orders" in ok("process", "g2").stdout
        for turn in (1, 2, 3):
            assert f"g2: turn {turn} played by the GM" in ok("process", "g2").stdout
        assert ok("site", "out").stdout.startswith("wrote ")
        # a site written before issue 30: turn pages named by log position
        for seq in (4, 5, 6):
            old = folder / "old" / "g2" / f"turn-{seq}.html"
            old.parent.mkdir(parents=True, exist_ok=True)
            old.write_text("<h1>an old page</h1>", encoding="utf-8")
        assert ok("site", "old").stdout.startswith("wrote ")
    finally:
        mp.undo()
    return folder


def test_turn_pages_are_named_by_turn_number(site: Path) -> None:
    g2 = site / "out" / "g2"
    index = (g2 / "index.html").read_text(encoding="utf-8")
    for turn in (1, 2, 3):  # who moves in which turn is drawn: read from the page
        page = (g2 / f"turn-{turn}.html").read_text(encoding="utf-8")
        found = re.search(rf"<h1>Turn {turn}: (alice|bob|carol)</h1>", page)
        assert found, page
        assert f'src="map-{turn}.png"' in page
        assert (g2 / f"map-{turn}.png").read_bytes()[:8] == PNG
        assert f'<a href="turn-{turn}.html">Turn {turn}, {found.group(1)}</a>' in index
    assert 'href="turn-2.html">turn 2 &rarr;</a>' in (g2 / "turn-1.html").read_text()


def test_a_first_publication_has_no_moved_pages(site: Path) -> None:
    g2 = site / "out" / "g2"
    assert sorted(p.name for p in g2.glob("turn-*.html")) == [
        "turn-1.html",
        "turn-2.html",
        "turn-3.html",
    ]
    for page in site.glob("out/*/*.html"):
        assert "http-equiv" not in page.read_text(encoding="utf-8"), page


def test_a_link_to_a_page_named_by_log_position_leads_to_its_turn(site: Path) -> None:
    # turn 1 is the 4th step of the log (three setup steps first): it was turn-4.html
    g2 = site / "old" / "g2"
    for seq, turn in ((4, 1), (5, 2), (6, 3)):
        moved = (g2 / f"turn-{seq}.html").read_text(encoding="utf-8")
        assert f'<meta http-equiv="refresh" content="0; url=turn-{turn}.html">' in moved
        assert f'<a href="turn-{turn}.html">Go to the turn</a>' in moved
    assert not (g2 / "turn-7.html").exists()


def test_the_game_page_shows_the_board_now_and_at_the_start(site: Path) -> None:
    g2 = site / "out" / "g2"
    index = (g2 / "index.html").read_text(encoding="utf-8")
    assert "<h2>The board now, after turn 3</h2>" in index
    assert '<img class="map" src="map-now.png" alt="The map of g2: now, after turn 3">' in index
    assert '<img class="map" src="map-start.png" alt="The map at the start of g2">' in index
    assert index.index("map-now.png") < index.index("<h2>Standings</h2>")
    assert (g2 / "map-now.png").read_bytes()[:8] == PNG
    assert (g2 / "map-now.png").read_bytes() != (g2 / "map-start.png").read_bytes()


def test_a_game_in_its_setup_has_its_deadline_in_the_calendar(site: Path) -> None:
    engine = init_db(f"sqlite:///{site / 'var' / 'pbem.db'}")
    with session_scope(engine, write=False) as session:
        deadline = session.exec(select(Game).where(Game.name == "g1")).one().deadline
    assert deadline is not None
    g1 = site / "out" / "g1"
    index = (g1 / "index.html").read_text(encoding="utf-8")
    assert "Status: <b>setting up</b>." in index
    assert '(<a href="deadline.ics">add to your calendar</a>)' in index
    ics = (g1 / "deadline.ics").read_bytes().decode("utf-8").split("\r\n")
    assert "UID:pbem-g1-turn0-all@localhost" in ics
    assert f"DTEND:{deadline:%Y%m%dT%H%M%SZ}" in ics
    assert "SUMMARY:[g1] orders due for setup (every player)" in ics
    assert re.fullmatch(r"DTSTART:\d{8}T\d{6}Z", ics[ics.index("BEGIN:VEVENT") + 3])


def test_a_removal_is_a_note_not_a_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kick in the setup and one in the game: the index says who left; the turn
    pages are the turns the mail and `pbem render` know, by the same numbers."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("PBEM_CONFIG", "PBEM_DATABASE_URL", "PBEM_NOW"):
        monkeypatch.delenv(name, raising=False)
    ok("init")
    ok("new", "g3", *PLAYERS, "-p", "dan:dan@example.org")
    ok("kick", "g3", "dan")  # in the setup
    ok("process", "g3")
    for _ in range(2):
        ok("process", "g3")
    ok("kick", "g3", "bob")  # in the game
    ok("process", "g3")
    ok("site", "out")
    g3 = tmp_path / "out" / "g3"
    index = (g3 / "index.html").read_text(encoding="utf-8")
    notes = re.findall(
        r'<li class="note">(\w+) was removed in turn \d+; their territories are neutral now.</li>',
        index,
    )
    assert sorted(notes) == ["bob", "dan"], index
    turns = re.findall(r'<a href="turn-(\d+).html">Turn \1, (alice|bob|carol|dan)</a>', index)
    assert len(turns) == 3, index  # three turns played: no page for a removal
    pages = sorted(p.name for p in g3.glob("turn-*.html"))
    assert pages == sorted(f"turn-{turn}.html" for turn, _ in turns), pages
    for turn, mover in turns:
        page = (g3 / f"turn-{turn}.html").read_text(encoding="utf-8")
        assert f"<h1>Turn {turn}: {mover}</h1>" in page
        rendered = ok("render", "g3", "--turn", turn).stdout  # the mail's numbers
        assert f"Turn {turn}" in rendered and mover in rendered
    assert "left the game" not in "".join(p.read_text() for p in g3.glob("turn-*.html"))
