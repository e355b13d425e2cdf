"""The fog audit: a fogged game of four, played by mail, every mail checked.

Four bot players play a seeded game with ``fog = true`` through the real mail
path (Maildir, ``run_cycle``) for three rounds. Every mail each player
receives (subject, plain text, HTML, the picture's data) is checked against
the territories that player may see when it was written
(``pbem.rules.fog``): a hidden territory's name may appear only as the
name of one of their own cards or in the orders they wrote themselves; the
picture must give every hidden territory no owner and no armies and every
seen one its true owner and armies; the players table and the legend must
give no other player's counts. The GM's copies see everything.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from pbem.orderlog.records import read_record, verify_record
from pbem.report import render
from pbem.rules import fog
from pbem.rules.state import ENDED, GameState
from pbem.service.play.archive import export_record, replay_game
from pbem.service.play.games import find_game
from pbem.service.play.history import render_turn
from pbem.service.play.loading import definition_of
from pbem.site import build, build_site
from pbem.store import TurnResult
from tests.longgame_helpers import SECRET, Mail, Table, World, new_table

PLAYERS = ["alice", "bob", "carol", "dave"]
FAKE_PNG = b"\x89PNG\r\n\x1a\nFOG-AUDIT"


def fake_picture(
    board: Any, owner: Sequence[int], armies: Sequence[int], sides: Sequence[Any], *rest: Any
) -> bytes:
    """The picture's data in place of its pixels: what it would draw."""
    legend = [[s.name, s.territories, s.armies] for s in sides]
    data = {"owner": list(owner), "armies": list(armies), "legend": legend}
    return FAKE_PNG + json.dumps(data).encode()


def picture_data(mail: Mail) -> list[dict[str, Any]]:
    out = []
    for part in mail.msg.walk():
        if part.get_content_type() == "image/png":
            raw = part.get_payload(decode=True)
            assert isinstance(raw, bytes) and raw.startswith(FAKE_PNG)
            out.append(json.loads(raw[len(FAKE_PNG) :]))
    return out


def texts(mail: Mail) -> str:
    """The subject and every text part, HTML unescaped and without tags."""
    parts = [mail.subject]
    for part in mail.msg.walk():
        if part.get_content_maintype() == "text":
            body = part.get_content()
            if part.get_content_subtype() == "html":
                body = html.unescape(re.sub(r"<[^>]+>", " ", body))
            parts.append(body)
    return " ".join(" ".join(p.split()) for p in parts)


def names_in(text: str, names: Sequence[str]) -> set[str]:
    """The names found in ``text`` as whole words (a longer name found is
    blanked first, so "East Africa" is not found inside another)."""
    found = set()
    for name in sorted(names, key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        if pattern.search(text):
            found.add(name)
            text = pattern.sub(" ", text)
    return found


def steps(world: World) -> list[tuple[int, int | None, GameState]]:
    """(turn, seat, state after) of every stored step of g1, in order (seat None:
    no turn, like the deal)."""
    with world.session(write=False) as session:
        game = find_game(session, "g1")
        definition = definition_of(session, game)
        rows = session.exec(
            select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq))
        )
        return [
            (
                r.turn,
                r.seat,
                GameState.from_dict(
                    json.loads(r.snapshot_json), definition.board, definition.options
                ),
            )
            for r in rows
        ]


def drawn(data: dict[str, Any], state: GameState, view: frozenset[int]) -> bool:
    """Whether the picture's data is ``state`` through ``view``, exactly: the
    true owner and armies in sight, no owner (HIDDEN) and no armies elsewhere."""
    return all(
        (data["owner"][t], data["armies"][t])
        == ((state.owner[t], state.armies[t]) if t in view else (fog.HIDDEN, 0))
        for t in range(len(state.owner))
    )


class Audit:
    """What each player may see, and the check of one mail."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.sent: dict[str, list[str]] = {name: [] for name in PLAYERS}
        self.cards: dict[str, set[int]] = {name: set() for name in PLAYERS}
        self.checked = 0
        self.received: dict[str, list[Mail]] = {name: [] for name in PLAYERS}
        self.rows = 0  # players table rows seen
        self.examples = 0  # HELP mails with example orders
        # the views of the turn reports a player got since their last turn: the
        # your-turn mail's "since your last turn" repeats what they told
        self.told: dict[str, set[int]] = {name: set() for name in PLAYERS}

    def seen_cards(self, state: GameState) -> None:
        for player in state.players:
            if player.name in self.cards:
                self.cards[player.name].update(player.cards)

    def check(self, name: str, mail: Mail, states: list[GameState]) -> None:
        """``states``: those the mail may be written from, the newest first (the
        state before the poll that sent it and every step stored in it)."""
        self.received[name].append(mail)
        now = states[0]
        seat = next(i for i, p in enumerate(now.players) if p.name == name)
        board = now.board
        if now.phase == ENDED:
            return  # the final board is shown to all
        if mail.kind == "turn_report":  # its turn's states, stored
            turn = int(re.match(r"\[g1\] Turn (\d+):", mail.subject)[1])  # type: ignore[index]
            stored = steps(self.world)
            i = next(i for i, (t, s, _) in enumerate(stored) if t == turn and s is not None)
            before, after = stored[i - 1][2], stored[i][2]
            view = fog.sight(before, seat) | fog.sight(after, seat)
            self.told[name] |= view
            boards = [(after, view)]
        else:
            boards = [(state, fog.sight(state, seat)) for state in states]
            view = frozenset().union(*(seen for _, seen in boards))
        own_words = " ".join(self.sent[name])
        allowed = set(view)
        if mail.kind == "your_turn":  # "since your last turn": what their reports told
            allowed |= self.told[name]
            self.told[name] = set()
        allowed |= {t.index for t in board.territories if t.name in own_words}
        allowed |= {t for c in self.cards[name] if (t := board.card_territory(c)) is not None}
        hidden = [t.name for t in board.territories if t.index not in allowed]
        assert hidden, "a fogged game hides something from everyone"
        every = [t.name for t in board.territories]
        text = texts(mail)
        if mail.kind == "help":  # the map's reference (every name, static) is exempt
            assert "THE ORDER LANGUAGE" in mail.text
            text = mail.subject + " " + mail.text.split("THE ORDER LANGUAGE")[0]
            self.examples += "For example, on your own territories" in text
        leaked = names_in(text, every)
        assert not leaked & set(hidden), (name, mail, sorted(leaked & set(hidden)), mail.text)
        for data in picture_data(mail):
            assert any(drawn(data, state, seen) for state, seen in boards), (name, mail)
            for legend_name, _terr, armies in data["legend"]:
                assert legend_name == name or armies == -1, (name, mail, data["legend"])
        colours = {p.name: p.colour for p in self.world.players("g1")}
        for line in mail.text.splitlines():  # the players table: no count of another's
            cells = line.replace(">", " ").split()
            if len(cells) >= 6 and cells[0] in colours and cells[1] == colours[cells[0]]:
                self.rows += 1
                if cells[0] != name:
                    assert cells[2:4] == ["?", "?"], (name, mail, line)
        assert "State hash" not in texts(mail), (name, mail)
        assert not re.search(r"it is \w+'s", texts(mail)), (name, mail)  # no owner named
        self.checked += 1


def test_fog_audit_of_every_mail_in_a_game_of_four(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audit = play_audited(tmp_path, monkeypatch, fog_on=True)
    assert audit.checked >= 4 * 12 and audit.rows > 100 and audit.examples == 1
    # the site: the public view, what every player sees of the board: nothing
    monkeypatch.setattr(build, "map_picture", fake_picture)
    with audit.world.session() as session:
        written = build_site(session, audit.world.ctx, tmp_path / "site")
        # the record and the replay see everything, fog named in the options
        game = find_game(session, "g1")
        assert replay_game(session, game).ok
        text = export_record(session, game, with_secret=True, force=True)
        # `pbem render --turn 3 --as alice` is alice's copy; without --as, the GM's
        as_alice = render_turn(session, audit.world.ctx, game, 3, 0)
        as_gm = render_turn(session, audit.world.ctx, game, 3, None)
    mailed = next(m for m in audit.received["alice"] if m.subject.startswith("[g1] Turn 3:"))
    assert as_alice.text == mailed.text
    setup = next(m for m in audit.received["alice"] if m.kind == "setup_report")
    assert "Only the placements in your sight are listed (fog of war)." in setup.text
    assert "in your sight" not in as_gm.text  # the GM's copy tells the whole turn
    assert "State hash" in as_gm.text and "State hash" not in as_alice.text
    assert '\\"fog\\": true' in text
    assert verify_record(read_record(text), SECRET.hex()).ok
    board = audit.world.state("g1").board
    every = [t.name for t in board.territories]
    pages = [p for p in written if p.suffix == ".html"]
    pictures = [p for p in written if p.suffix == ".png"]
    assert len(pages) > 12 and len(pictures) > 12
    for page in pages:
        text = html.unescape(re.sub(r"<[^>]+>", " ", page.read_text()))
        assert not names_in(text, every), (page.name, sorted(names_in(text, every)))
        assert not re.search(r"\b\d+ terr", text), page.name
        assert "your sight" not in text, page.name  # a public page has no "you"
    assert any("in public view" in p.read_text() for p in pages)
    for picture in pictures:
        data = json.loads(picture.read_bytes()[len(FAKE_PNG) :])
        assert set(data["owner"]) == {fog.HIDDEN} and set(data["armies"]) == {0}
        assert {armies for _, _, armies in data["legend"]} == {-1}


def test_fog_audit_of_a_freestyle_game_of_four(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fog with freestyle: every player's "your move" mail, every turn report
    read as the others move, the round's notes: nothing outside their sight."""
    audit = play_audited(tmp_path, monkeypatch, fog_on=True, play_order="freestyle")
    assert audit.checked >= 4 * 12 and audit.rows > 100
    rounds = [m for m in audit.received["alice"] if m.kind == "your_turn"]
    assert len(rounds) >= 3 and all("Your move in round" in m.subject for m in rounds)


def test_the_audit_finds_the_board_in_a_game_without_fog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit is strict: the same game without fog fails it at the first
    mail that shows the board."""
    with pytest.raises(AssertionError, match="game_start"):
        play_audited(tmp_path, monkeypatch, fog_on=False)


def ask_the_board(table: Table, now: GameState) -> bool:
    """A player not to move asks for STATUS, HISTORY 2 and HELP, and sends
    orders naming two territories out of their sight (each its own mail)."""
    seat = next(i for i in now.order if i != now.current)
    board = now.board
    hidden = [t.name for t in board.territories if t.index not in fog.sight(now, seat)]
    player = table[now.players[seat].name]
    for body in ("STATUS", "HISTORY 2", "HELP", f"CHECK\nFORTIFY 1 {hidden[0]} -> {hidden[1]}"):
        player.write(body)
    return True


def play_audited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fog_on: bool, **more: str
) -> Audit:
    """Three rounds of a seeded game of four by mail, every mail audited
    (``more``: other options, e.g. freestyle)."""
    monkeypatch.setattr(render, "map_picture", fake_picture)
    world = World(tmp_path)
    overrides = {"placement": "blind", "fog": str(fog_on).lower(), **more}
    table = new_table(world, "g1", PLAYERS, overrides=overrides, seed=5)
    audit = Audit(world)
    original = world.send

    def send(sender: str, body: str, *args: Any, **kwargs: Any) -> str:
        audit.sent[sender.split("@")[0]].append(body)
        return original(sender, body, *args, **kwargs)

    world.send = send  # type: ignore[method-assign]
    before = [world.state("g1")]
    done = len(steps(world))
    kinds: set[str] = set()
    asked = False
    for _ in range(60):
        new = table.read_all()
        stored = steps(world)
        states = [state for _, _, state in reversed(stored[done:])] + before
        done = len(stored)
        for state in states:
            audit.seen_cards(state)
        for name, mails in new.items():
            for mail in mails:
                kinds.add(mail.kind)
                audit.check(name, mail, states)
        now = states[0]
        if now.turn > 12 or now.phase == ENDED:
            break
        if now.turn >= 6 and not asked:  # (freestyle: several turns a poll)
            asked = ask_the_board(table, now)
        for seat in table.seats.values():
            seat.answer()
        before = [now]
        world.poll()
    gm_reports = [m for m in table.gm if m.kind == "turn_report"]
    assert world.state("g1").turn > 12
    told = {"game_start", "setup_report", "your_turn", "turn_report", "receipt", "status"}
    assert told | {"help", "error_reply"} <= kinds, kinds
    # the GM's copy sees the whole board, state hash included
    assert gm_reports and all("State hash" in texts(m) for m in gm_reports)
    return audit
