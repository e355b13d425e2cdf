"""`pbem upgrade-rules`: a GM moves a running game to newer rules, announced
and recorded (issue 31).

A game keeps the rules version it started with (``Options.rules_version``,
stored with its options) through every upgrade of pbem. The GM may move it
forward: the move is a log entry of kind "command" (``RULES n``, no seat), so a
replay from the order log, the store's and a record's alike, plays every
turn after it by the new rules and every turn before it by the old ones. The
game's stored options keep the version it started with; the state carries
the new one (``GameState.rules_upgraded_to``, in its snapshots and hashes).
Every player and the GM get a notice saying what changes.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from pbem.orderlog import replay
from pbem.rules.options import Options
from pbem.rules.ruleversions import RULES_VERSION, RULES_VERSIONS, rules_changes
from pbem.rules.state import SETUP_PHASES, GameState
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play import notices
from pbem.service.play.games import append_entry, load, log_of, players_of, store_result
from pbem.service.play.loading import stored_options
from pbem.service.play.mailinfo import epoch, game_info
from pbem.service.play.passwords import reply_token
from pbem.store import Game
from pbem.vocab import GamePhase, GameStatus, NoticeKind


def current_options(session: Session, game: Game) -> Options:
    """The rules a game plays now: its stored options, moved to the version of
    the last `pbem upgrade-rules` (an open game: its stored options)."""
    if game.phase == GamePhase.OPEN:
        return stored_options(game)
    return load(session, game).state.options


def _checked(session: Session, game: Game, to: int | None) -> tuple[replay.Game, int, int]:
    """The game now, its rules version and the one to move to; a move that cannot
    be is refused here, before anything changes."""
    if game.status == GameStatus.FINISHED or game.phase == GamePhase.OVER:
        raise ServiceError(
            f"game {game.name} is over: it keeps the rules it was played by "
            "(its record replays by them)"
        )
    if game.phase == GamePhase.OPEN:
        raise ServiceError(
            f"game {game.name} has not started: it waits for players to join; "
            "move its rules once it has started"
        )
    new = RULES_VERSION if to is None else to
    known = ", ".join(str(v) for v in RULES_VERSIONS)
    if new not in RULES_VERSIONS:
        raise ServiceError(
            f"rules version {new} is unknown to this pbem (it knows versions {known}; "
            f"the newest is {RULES_VERSION})"
        )
    loaded = load(session, game)
    old = loaded.state.options.rules_version
    if new == old:
        newest = " (the newest this pbem knows)" if new == RULES_VERSION else ""
        raise ServiceError(f"game {game.name} plays rules version {old} already{newest}")
    if new < old:
        raise ServiceError(
            f"game {game.name} plays rules version {old}: a game moves only to newer "
            f"rules, never back to version {new}"
        )
    return loaded, old, new


def undone_move(session: Session, game: Game, kept: int) -> str:
    """What a rollback that keeps the first ``kept`` log entries says of the
    GM's moves to newer rules it undoes ("" when none): the game plays the
    version it had before them again."""
    log = log_of(session, game)

    def moves(rows: list[Any]) -> list[str]:
        return [
            r.text.split()[-1]
            for r in rows
            if r.kind == replay.COMMAND and r.text.split()[:1] == [replay.RULES]
        ]

    moved = moves(log[kept:])
    if not moved:
        return ""
    before = moves(log[:kept])
    again = before[-1] if before else str(stored_options(game).rules_version)
    return (
        f"The GM's move to rules version {moved[-1]} is undone too: the game plays rules "
        f"version {again} again."
    )


def _changes(state: GameState, old: int, new: int) -> list[str]:
    """What the move changes for this game: the lines of RULES_CHANGES that
    concern its options and its number of players."""
    seated = sum(1 for p in state.players if not p.neutral)
    return rules_changes(old, new, state.options, seated)


def _when(state: GameState) -> str:
    return "from the setup on" if state.phase in SETUP_PHASES else f"from turn {state.turn} on"


def upgrade_question(session: Session, game: Game, to: int | None) -> str:
    """What `pbem upgrade-rules` without --yes prints: what would change, in
    words (refused as the move itself would be)."""
    loaded, old, new = _checked(session, game, to)
    state = loaded.state
    newest = " (the newest)" if new == RULES_VERSION else ""
    lines = [
        f"Game {game.name} plays rules version {old}. Moving it to version {new}{newest} "
        f"{_when(state)} changes:",
        *(f"  - {line}" for line in _changes(state, old, new)),
        "The turns already played keep the rules they were played by; the move is kept "
        "in the game's order log (and so in its record). Every player gets a notice "
        "saying so, with your --message if you give one.",
        f"Nothing changed yet: run `pbem upgrade-rules {game.name} --to {new} --yes` to do it.",
    ]
    return "\n".join(lines)


def upgrade_rules(
    session: Session, ctx: Context, game: Game, to: int | None, message: str | None = None
) -> str:
    """Move ``game`` to rules version ``to`` (default: the newest) from now on:
    the RULES entry logged and applied, every player and the GM told."""
    loaded, old, new = _checked(session, game, to)
    entry = replay.rules_entry(new, loaded.state.turn)
    try:
        step = replay.apply(loaded, entry, keep_before=True)
    except replay.ReplayError as exc:
        raise ServiceError(f"game {game.name} cannot move to rules version {new}: {exc}") from None
    assert step is not None  # a command always completes its step
    seq = append_entry(session, game, entry, None)
    if step.state.phase not in SETUP_PHASES:  # the setup's steps keep no snapshot
        store_result(session, game, step, seq, ctx.clock.now())
    told = _announce(session, ctx, game, step, seq, old, new, (message or "").strip())
    return (
        f"{game.name}: rules version {old} -> {new} {_when(step.state)} (order log entry "
        f"{seq}); {told} told"
    )


def _announce(
    session: Session,
    ctx: Context,
    game: Game,
    step: replay.Step,
    seq: int,
    old: int,
    new: int,
    message: str,
) -> str:
    """The notice to every player (whatever their seat's standing: the game's
    rules concern them all) and the GM's copy; who was told, in words."""
    info = game_info(session, ctx, game)
    common: dict[str, Any] = {
        "game": game,
        "step": seq,
        "info": info,
        "old": old,
        "new": new,
        "turn": step.state.turn,
        "changes": _changes(step.state, old, new),
        "message": message,
    }
    players = players_of(session, game)
    for p in players:
        about = ("rules", game.name, new, p.seat, p.address, *epoch(game))
        notices.add(session, ctx, NoticeKind.RULES_CHANGED, p.address, about=about,
                    seat=p.seat, token=reply_token(game, p.seat), **common)  # fmt: skip
    if info.gm_address:
        about = ("rules", game.name, new, "gm", *epoch(game))
        notices.add(session, ctx, NoticeKind.RULES_CHANGED, info.gm_address, about=about,
                    **common)  # fmt: skip
    count = f"{len(players)} player{'' if len(players) == 1 else 's'}"
    return count + (" and the GM" if info.gm_address else "")
