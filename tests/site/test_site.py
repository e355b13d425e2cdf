"""The static game site: what it shows, that no page holds a private fact, and that a
real headless Chromium loads every page with its links, pictures and no console error."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sqlmodel import select

from pbem.report import views
from pbem.rules.eventcodec import event_from_dict
from pbem.rules.events import CardDrawn, CardsTaken
from pbem.service.play.games import find_game, load, players_of
from pbem.service.play.passwords import turn_token
from pbem.site import build_site
from pbem.store import TurnResult
from tests.longgame_helpers import GAME_ADDRESS, GM_ADDRESS, Table, World, new_table

PLAYERS = ["ann", "bob", "cat"]
TIMING = {"turn_hours": 48, "grace_hours": 24, "reminder_hours": [24]}
PUBLIC_PRESS = "Peace in the north, friends"
PRIVATE_PRESS = "Bob, attack Ann next turn and I will leave Ural to you"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[World, Path, dict[str, dict[str, str]]]:
    """Two games: ``war`` (secret missions) running, ``brief`` over (one round)."""
    folder = tmp_path_factory.mktemp("site")
    world = World(folder / "world")
    passwords = world.create(
        "war",
        PLAYERS,
        settings=TIMING,
        overrides={"placement": "auto", "goal": "mission"},
        secret=bytes([9]) * 32,  # not the other game's, which is published at its end
    )
    war = Table(world, "war", PLAYERS)
    for name, seat in war.seats.items():
        seat.password = passwords[name]
    war.run(lambda: world.state("war").turn >= 2)
    war.read_all()
    war["cat"].write(f"PRESS TO ALL\n{PUBLIC_PRESS}\nENDPRESS")
    war["cat"].write(f"PRESS TO bob\n{PRIVATE_PRESS}\nENDPRESS")
    world.poll()
    war.run(lambda: world.state("war").turn >= 6)
    brief = new_table(
        world,
        "brief",
        PLAYERS,
        settings=TIMING,
        overrides={"placement": "auto", "max_turns": "1"},
        seed=21,
    )
    brief.run(lambda: world.state("brief").phase == "over")
    passwords = {
        "war": {n: s.password for n, s in war.seats.items()},
        "brief": {n: s.password for n, s in brief.seats.items()},
    }
    out = folder / "out"
    with world.session(write=False) as session:
        build_site(session, world.ctx, out)
    return world, out, passwords


def private_facts(world: World, game: str, passwords: dict[str, str]) -> dict[str, str]:
    """Every fact only one player (or nobody, before the end) may know."""
    facts: dict[str, str] = {}
    with world.session(write=False) as session:
        row = find_game(session, game)
        state = load(session, row).state
        for p in players_of(session, row):
            facts[f"address of {p.name}"] = p.address
            facts[f"password of {p.name}"] = passwords[p.name]
            for turn in range(0, state.turn + 2):
                token = turn_token(bytes.fromhex(row.secret), row.name, p.seat, turn)
                facts[f"token of {p.name} for turn {turn}"] = token
            hand = state.players[p.seat].cards
            if len(hand) >= 2:
                facts[f"hand of {p.name}"] = views.hand_text(state.board, hand)
            mission = views.mission_text(state, p.seat)
            if mission:
                facts[f"mission of {p.name}"] = mission
        for r in session.exec(select(TurnResult).where(TurnResult.game_id == row.id)):
            for e in map(event_from_dict, __import__("json").loads(r.events_json)):
                if isinstance(e, CardDrawn):
                    facts[f"card drawn at {r.seq}"] = "drew " + views.card_text(state.board, e.card)
                if isinstance(e, CardsTaken):
                    facts[f"cards taken at {r.seq}"] = views.hand_text(state.board, e.cards)
        if not row.secret_revealed:
            facts["dice secret"] = row.secret
        facts["GM address"] = GM_ADDRESS
    facts["private press"] = PRIVATE_PRESS
    return facts


def test_no_page_holds_a_private_fact(site) -> None:
    world, out, passwords = site
    files = [p for p in out.rglob("*") if p.suffix in (".html", ".ics", ".css")]
    assert len(files) > 10
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    for game in ("war", "brief"):
        facts = private_facts(world, game, passwords[game])
        assert any(k.startswith("mission of") for k in facts) == (game == "war")
        for what, fact in facts.items():
            for path, text in texts.items():
                assert fact.lower() not in text.lower(), f"{what} on {path.relative_to(out)}"
    assert all(GAME_ADDRESS not in t for t in texts.values())


def test_what_the_pages_show(site) -> None:
    world, out, _ = site
    index = (out / "index.html").read_text()
    assert 'href="war/index.html"' in index and 'href="brief/index.html"' in index
    war = (out / "war" / "index.html").read_text()
    with world.session(write=False) as session:
        row = find_game(session, "war")
        steps = [
            (r.seq, r.turn)
            for r in session.exec(
                select(TurnResult).where(TurnResult.game_id == row.id).order_by(TurnResult.seq)
            )
            if r.seat is not None and r.turn > 0
        ]
        state = load(session, row).state
    seen: dict[int, int] = {}
    for _, turn in steps:  # a page and a map per turn played, named by turn number
        seen[turn] = seen.get(turn, 0) + 1
        name = f"{turn}" if seen[turn] == 1 else f"{turn}-{seen[turn]}"
        assert f'href="turn-{name}.html"' in war
        assert (out / "war" / f"map-{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="map-{name}.png"' in (out / "war" / f"turn-{name}.html").read_text()
    assert 'src="map-now.png"' in war and 'src="map-start.png"' in war
    assert PUBLIC_PRESS in war and war.count(PUBLIC_PRESS) == 1  # once, not once per player
    assert f"turn {state.turn}: {state.players[state.current].name} to move" in war
    assert 'href="deadline.ics"' in war
    ics = (out / "war" / "deadline.ics").read_text()
    deadline = world.game("war").deadline
    assert f"DTEND:{deadline:%Y%m%dT%H%M%SZ}" in ics.replace("\r\n", "\n")
    for name in PLAYERS:
        assert f"<tr><td>{name}</td>" in war  # response times
    brief = (out / "brief" / "index.html").read_text()
    assert 'href="brief.pgn"' in brief and "deadline.ics" not in brief
    record = (out / "brief" / "brief.pgn").read_text()
    assert world.game("brief").secret in record  # published at the end
    assert "over: won by" in brief


# ---------------------------------------------------------------- the browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Logged(SimpleHTTPRequestHandler):
    requests: list[tuple[str, int]]

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.requests.append((self.path, int(code)))

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (scripts/install-system-deps.sh installs it)",
)
def test_every_page_in_headless_chromium(site, tmp_path) -> None:
    _, out, _ = site
    requests: list[tuple[str, int]] = []
    handler = type("Handler", (_Logged,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = sorted(str(p.relative_to(out)) for p in out.rglob("*.html"))
    try:
        for page in pages:
            dom, console = _load(base + page, tmp_path)
            assert "<h1>" in dom and "</html>" in dom, page
            assert console == [], f"{page}: {console}"
            for link in re.findall(r'(?:href|src)="([^"#:]+)"', dom):
                target = (out / page).parent / link
                assert target.resolve().is_file(), f"{page}: {link} leads nowhere"
    finally:
        server.shutdown()
        server.server_close()
    failed = [(path, code) for path, code in requests if code not in (200, 304)]
    assert failed == []
    fetched = {path for path, _ in requests}
    for png in out.rglob("*.png"):  # every picture was loaded by some page
        assert "/" + str(png.relative_to(out)) in fetched
    assert "/style.css" in fetched


def _load(url: str, tmp_path: Path) -> tuple[str, list[str]]:
    """The DOM after load, and the console's errors (Chromium logs them to stderr)."""
    profile = tmp_path / "profile"
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [
        line
        for line in done.stderr.splitlines()
        if "CONSOLE" in line or "Failed to load resource" in line or "Uncaught" in line
    ]
    return done.stdout, console
