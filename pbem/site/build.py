"""Write the game site: an index of games; per game its standings, the map at every
turn, the turn log, press sent to all players, the deadline (also as a calendar file),
response times, and the game record once the game is over.

Only public facts: pages are rendered from the observer's view of each turn (the GM's
copy, which names no card drawn or taken and no mission), never an address, password or
turn token; the dice secret appears only once the game has revealed it. A test scans
every page for every private fact of a game.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from sqlmodel import Session, col, select

from pbem.orderlog import replay
from pbem.orderlog.replay import COMMAND
from pbem.paths import templates_dir
from pbem.report import context as rc
from pbem.report import fogview, ics, moving, teamview, turnview, views
from pbem.report.picture import map_picture
from pbem.report.textfmt import when
from pbem.rules import fog
from pbem.rules.eventcodec import event_from_dict
from pbem.rules.state import ENDED, SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.ops.stats import ResponseStats, duration, response_stats
from pbem.service.play import mailinfo
from pbem.service.play.archive import export_record
from pbem.service.play.games import definition_of, rerolls_of
from pbem.site.folders import folders
from pbem.store import Game, OrderEntry, PressRecord, TurnResult
from pbem.vocab import GamePhase, GameStatus


@dataclass(frozen=True)
class TurnPage:
    seq: int
    turn: int
    mover: str
    headline: list[str]
    sections: list[turnview.Section]
    picture: str | None  # file name of the map after the turn
    file: str  # turn-N.html for the first step of turn N, turn-N-K.html for its K-th


@dataclass(frozen=True)
class LogNote:
    """A step of the log that is no turn: a player resigned or was removed."""

    seq: int
    turn: int
    text: str  # "eve was removed by the GM."


@dataclass(frozen=True)
class PressItem:
    sender: str
    text: str


@dataclass
class GamePage:
    name: str
    slug: str
    title: str
    status: str
    turn: int
    board_title: str
    players: list[views.PlayerRow]
    deadline: str
    calendar: str | None
    turns: list[TurnPage] = field(default_factory=list)
    log: list[TurnPage | LogNote] = field(default_factory=list)  # turns and notes, in order
    press: list[PressItem] = field(default_factory=list)
    record: str | None = None
    start_picture: str | None = None
    current_picture: str | None = None  # the board now, once anything was played
    current_caption: str = ""
    stats: list[ResponseStats] = field(default_factory=list)
    commitment: str = ""
    secret: str | None = None
    rerolls: list[tuple[int, str]] = field(default_factory=list)  # (first turn, commitment)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(templates_dir() / "site")),
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["duration"] = duration
    env.filters["team_totals"] = views.team_totals
    env.tests["attack"] = lambda item: isinstance(item, turnview.AttackLine)
    env.tests["note"] = lambda item: isinstance(item, LogNote)
    return env


def build_site(session: Session, ctx: Context, out: Path) -> list[Path]:
    """Write every page under ``out`` (made if missing); the files written."""
    out.mkdir(parents=True, exist_ok=True)
    env = _environment()
    written: list[Path] = []
    pages = []
    games = list(session.exec(select(Game).order_by(col(Game.name))))
    folder_of = folders([g.name for g in games])
    for game in games:
        page = _game_page(session, ctx, game, folder_of[game.name], out, written)
        pages.append(page)
    css = out / "style.css"
    shutil.copyfile(templates_dir() / "site" / "style.css", css)
    written.append(css)
    _write(out / "index.html", env.get_template("index.html").render(games=pages, root=""), written)
    for page in pages:
        folder = out / page.slug
        _write(
            folder / "index.html",
            env.get_template("game.html").render(game=page, root="../"),
            written,
        )
        for old, new in _old_names(page.turns, folder):
            html = env.get_template("moved.html").render(game=page, target=new, root="../")
            _write(folder / old, html, written)
        for i, turn in enumerate(page.turns):
            previous = page.turns[i - 1] if i else None
            following = page.turns[i + 1] if i + 1 < len(page.turns) else None
            html = env.get_template("turn.html").render(
                game=page, turn=turn, previous=previous, following=following, root="../"
            )
            _write(folder / turn.file, html, written)
    return written


def _write(path: Path, text: str | bytes, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    written.append(path)


def _game_page(
    session: Session, ctx: Context, game: Game, slug: str, out: Path, written: list[Path]
) -> GamePage:
    folder = out / slug
    info = mailinfo.game_info(session, ctx, game)
    definition = definition_of(session, game)
    results = list(
        session.exec(
            select(TurnResult).where(TurnResult.game_id == game.id).order_by(col(TurnResult.seq))
        )
    )

    def state_of(row: TurnResult) -> GameState:
        return GameState.from_dict(
            json.loads(row.snapshot_json), definition.board, definition.options
        )

    states = [state_of(r) for r in results]
    now = states[-1] if states else None
    over = now is not None and now.phase == ENDED
    to_move = moving.next_seat(now) if now is not None else None
    page = GamePage(
        name=game.name,
        slug=slug,
        title=info.title,
        status=_status(game, now),
        turn=game.turn,
        board_title=definition.board.title,
        players=fogview.player_rows(  # under fog, no player's counts until the end
            views.player_rows(info, now, to_move), fogview.PUBLIC, fog.fogged(now)
        )
        if now is not None
        else [],
        deadline=when(game.deadline, info.timezone) if game.deadline and not over else "",
        calendar=None,
        commitment=game.commitment,
        secret=game.secret if game.secret_revealed else None,
        rerolls=[(first, made) for first, _, made in rerolls_of(session, game)],
        stats=response_stats(session, game),
    )
    if states:
        page.start_picture = _picture(
            info, states[0], [], f"{game.name}: the start", folder, "map-start.png", written, over
        )
    entries = {
        e.seq: e for e in session.exec(select(OrderEntry).where(OrderEntry.game_id == game.id))
    }
    kinds = {r.seq: entries[r.seq].kind if r.seq in entries else None for r in results}
    played = [i for i, r in enumerate(results) if kinds[r.seq] == replay.TURN]
    page.turns = _turn_pages(info, results, states, played, folder, written, over)
    notes = [_note(info, entries[r.seq]) for r in results if kinds[r.seq] == COMMAND]
    page.log = sorted([*page.turns, *notes], key=lambda item: item.seq)
    if now is not None and len(states) > 1:
        page.current_caption = _now_caption(game, now, page.turns)
        page.current_picture = _picture(
            info,
            now,
            [],
            f"{game.name}: {page.current_caption}",
            folder,
            "map-now.png",
            written,
            over,
        )
    if game.deadline is not None and not over and game.phase != GamePhase.OPEN:
        page.calendar = _calendar(ctx, game, now, to_move, folder, written)
    page.press = _public_press(session, game)
    if over:
        page.record = _record(session, game, page.slug, folder, written)
    return page


def _turn_pages(
    info: rc.GameInfo,
    results: list[TurnResult],
    states: list[GameState],
    played: list[int],
    folder: Path,
    written: list[Path],
    over: bool = False,
) -> list[TurnPage]:
    """Each played turn (``played``: the indexes of ``results`` that are turns, as
    for the mail and `pbem render`; a RESIGN or REMOVE is no turn) as its report
    tells it to an observer, with its picture.

    Pages and pictures are named by turn number (turn-1.html is turn 1); were a
    turn number ever played twice, its second page would be turn-N-2.html."""
    pages: list[TurnPage] = []
    steps: dict[int, int] = {}
    for i in played:
        row = results[i]
        if row.seat is None or row.turn <= 0 or i == 0:
            continue
        after, before = states[i], states[i - 1]
        events = tuple(event_from_dict(e) for e in json.loads(row.events_json))
        report = rc.TurnReport(
            info,
            row.turn,
            row.seat,
            events,
            before,
            after,
            row.state_hash,
            None,
            moving.next_seat(after),
        )
        report = fogview.public_turn(report, over)  # under fog: what all may see
        view = turnview.turn_view(report, fogview.PUBLIC if report.after is not after else None)
        steps[row.turn] = steps.get(row.turn, 0) + 1
        name = f"{row.turn}" if steps[row.turn] == 1 else f"{row.turn}-{steps[row.turn]}"
        picture = _picture(
            info,
            report.after,
            view.changed,
            f"{info.name}: after turn {row.turn}",
            folder,
            f"map-{name}.png",
            written,
            over,
        )
        pages.append(
            TurnPage(
                row.seq,
                row.turn,
                view.mover.name,
                view.headline,
                view.sections,
                picture,
                f"turn-{name}.html",
            )
        )
    return pages


def _note(info: rc.GameInfo, entry: OrderEntry) -> LogNote:
    """What the site says of a RESIGN or REMOVE: who left, and how."""
    name = next((p.name for p in info.players if p.seat == entry.seat), "a player")
    # (the log does not say whether the GM or the deadlines removed a player)
    word = entry.text.strip().split()[0].upper() if entry.text.strip() else ""
    how = "resigned" if word == "RESIGN" else "was removed"
    during = f" in turn {entry.turn}" if entry.turn > 0 else ""
    text = f"{name} {how}{during}; their territories are neutral now."
    return LogNote(entry.seq, entry.turn, text)


def _old_names(turns: list[TurnPage], folder: Path) -> list[tuple[str, str]]:
    """(old name, page) for each turn page whose name before issue 30 (turn-SEQ.html,
    by log position) is a page of ``folder`` already and no page's name now: a link
    kept from a site published before then leads to the same turn. A first
    publication has no such page, so no moved pages; an old name that is now another
    turn's page cannot lead there too (docs/GAME-MASTERS.md, "The game site")."""
    taken = {t.file for t in turns}
    return [
        (f"turn-{t.seq}.html", t.file)
        for t in turns
        if f"turn-{t.seq}.html" not in taken and (folder / f"turn-{t.seq}.html").is_file()
    ]


def _now_caption(game: Game, now: GameState, turns: list[TurnPage]) -> str:
    if now.phase == ENDED:
        return "the end"
    if now.phase in SETUP_PHASES:
        return f"now, setting up ({now.phase})"
    return f"now, after turn {turns[-1].turn}" if turns else "now"


def _calendar(
    ctx: Context,
    game: Game,
    now: GameState | None,
    to_move: int | None,
    folder: Path,
    written: list[Path],
) -> str:
    """The next deadline as an iCalendar file beside the page; its name. In the
    setup every player's orders are due: turn 0, one entry for everybody."""
    assert game.deadline is not None
    if now is None or to_move is None:
        due = ics.Deadline(game.name, 0, "every player", game.deadline)
    else:
        due = ics.Deadline(game.name, now.turn, now.players[to_move].name, game.deadline)
    text = ics.calendar([due], mailinfo.host_of(ctx), ctx.clock.now())
    _write(folder / "deadline.ics", text, written)
    return "deadline.ics"


def _record(session: Session, game: Game, slug: str, folder: Path, written: list[Path]) -> str:
    """The finished game's record beside the page; its name."""
    record = export_record(session, game, with_secret=game.secret_revealed)
    name = f"{slug}.pgn"
    _write(folder / name, record, written)
    return name


def _status(game: Game, state: GameState | None) -> str:
    if state is None:
        if game.phase == GamePhase.SETUP:  # before the deal (a draft of territories)
            return "setting up"
        return "waiting for players"
    if state.phase == ENDED:
        if state.winner is not None:
            return f"over: won by {teamview.winners(state)} ({state.win_reason})"
        return "over"
    if game.status == GameStatus.PAUSED:
        return "paused by the game master"
    if state.phase in SETUP_PHASES:
        return f"setting up ({state.phase})"
    return f"turn {state.turn}: {moving.to_move(state)}"


def _picture(
    info: rc.GameInfo,
    state: GameState,
    changed: list[int],
    caption: str,
    folder: Path,
    name: str,
    written: list[Path],
    over: bool = False,
) -> str | None:
    if not over:  # under fog, no territory shown until the end
        state = fogview.public_state(state)
    legend = views.sides(info, state)
    legend = legend if over else fogview.sides(legend, state, fogview.PUBLIC)
    png = map_picture(state.board, state.owner, state.armies, legend, changed, caption)
    if png is None:
        return None
    _write(folder / name, png, written)
    return name


def _public_press(session: Session, game: Game) -> list[PressItem]:
    """Press sent to all players, from the press records (notify.relay_press), in the
    order relayed; never parsed from mail text, which any sender writes. Press
    relayed before the records existed (migration 0006) is not shown."""
    query = (
        select(PressRecord)
        .where(PressRecord.game_id == game.id, col(PressRecord.to_all).is_(True))
        .order_by(col(PressRecord.id))
    )
    return [
        PressItem("anonymous" if row.anonymous else row.sender_name, row.body)
        for row in session.exec(query)
    ]
