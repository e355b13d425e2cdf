"""Plain views of maps, rules and games for the command line (text and JSON)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pbem.report import moving
from pbem.rules import gametypes, teams
from pbem.rules.board import Board
from pbem.rules.engine import reinforcement_base
from pbem.rules.freestyle import waiting_for
from pbem.rules.options import Options
from pbem.rules.state import ENDED, ROUND, GameState
from pbem.rules.victory import mission_of
from pbem.store import Game


def map_to_json(board: Board) -> dict[str, Any]:
    return {
        "name": board.name,
        "title": board.title,
        "territories": [
            {
                "name": t.name,
                "continent": board.continents[t.continent].name,
                "aliases": list(t.aliases),
                "neighbours": [board.territories[n].name for n in t.neighbours],
                "card": t.card,
            }
            for t in board.territories
        ],
        "continents": [
            {
                "name": c.name,
                "bonus": c.bonus,
                "territories": [board.territories[t].name for t in c.territories],
            }
            for c in board.continents
        ],
        "edges": [[board.territories[a].name, board.territories[b].name] for a, b in board.edges()],
        "one_way": [
            [board.territories[a].name, board.territories[b].name] for a, b in board.one_way
        ],
        "cards": len(board.deck_cards()),
        "missions": [m.text for m in board.missions],
    }


def describe_map(board: Board) -> str:
    lines = [
        f"{board.title} ({board.name}): {len(board.territories)} territories, "
        f"{len(board.continents)} continents, {len(board.edges())} edges, "
        f"{len(board.deck_cards())} cards",
    ]
    if board.one_way:
        names = board.names()
        lines.append("one-way: " + ", ".join(f"{names[a]} -> {names[b]}" for a, b in board.one_way))
    for c in board.continents:
        lines.append("")
        lines.append(f"{c.name} (+{c.bonus})")
        for t in c.territories:
            terr = board.territories[t]
            aliases = f" [{', '.join(terr.aliases)}]" if terr.aliases else ""
            borders = ", ".join(board.territories[n].name for n in terr.neighbours)
            lines.append(f"  {terr.name}{aliases}: {borders}")
    return "\n".join(lines)


def describe_options(options: Options, title: str, players: int | None = None) -> str:
    """The rules in words: those that apply with ``players`` players (None: a preset)."""
    return "\n".join([title, *(f"- {line}" for line in options.describe(players))])


def game_to_json(state: GameState, info: dict[str, Any]) -> dict[str, Any]:
    board = state.board
    return {
        **info,
        "turn": state.turn,
        "phase": state.phase,
        "to_move": state.players[state.current].name if state.current >= 0 else None,
        "still_to_move": [state.players[s].name for s in waiting_for(state)],  # freestyle
        "winner": state.players[state.winner].name if state.winner is not None else None,
        "online_settings": online_settings(state),
        "players": [
            {
                "name": p.name,
                "colour": p.colour,
                "alive": p.alive,
                "neutral": p.neutral,
                "territories": state.territory_count(seat),
                "armies": state.army_count(seat),
                "cards": len(p.cards),
                # private: `pbem show` is the GM's view, never mailed
                "hand": [board.card_name(c) for c in p.cards],
                "mission": _mission_text(state, seat),
                "team": teams.team_of(state, seat),  # 0 for team A; None without teams
                "points": gametypes.points_shown(state, seat),  # terminator; None in other games
            }
            for seat, p in enumerate(state.players)
        ],
        "board": {
            t.name: {
                "owner": state.players[state.owner[t.index]].name
                if state.owner[t.index] >= 0
                else None,
                "armies": state.armies[t.index],
            }
            for t in board.territories
        },
    }


def online_settings(state: GameState) -> list[str]:
    """The online settings a GM must know at a glance (`pbem show`): fog, the
    teams, trench, freestyle; `pbem rules GAME` says every rule in full."""
    words = ""
    if state.options.team_size:
        count = teams.team_count(state)
        words = "teams: " + "; ".join(teams.team_label(state, t) for t in range(count))
    return _settings_said(state.options, words)


def _settings_said(options: Options, team_words: str) -> list[str]:
    """The lines of ``online_settings`` and ``open_settings``, in one order; the
    teams in the caller's words (a game open for JOIN has no seats yet)."""
    said = []
    if options.fog:
        said.append("fog of war (players see only their part of the board; you see all)")
    if team_words:
        said.append(team_words)
    if options.trench:
        said.append("trench warfare")
    if options.play_order == "freestyle":
        said.append("freestyle (each round every player moves once, in the order mails arrive)")
    return said


def _mission_text(state: GameState, seat: int) -> str | None:
    """The secret mission, or in assassin the secret target (the GM sees all)."""
    mission = mission_of(state, seat)
    if mission is not None:
        return mission.text
    target = gametypes.target_of(state, seat)
    if target is not None and state.players[seat].alive:
        return f"secret target {state.players[target].name}"
    return None


def describe_game(state: GameState, info: dict[str, Any]) -> str:
    board = state.board
    lines = [f"Game {info['name']} on {board.title}: {info.get('status', '')}, phase {state.phase}"]
    deadline = info.get("deadline_text") or info.get("deadline")
    if state.phase == ENDED and state.winner is not None:
        lines.append(f"Won by {state.players[state.winner].name} ({state.win_reason})")
    elif state.current >= 0 or state.phase == ROUND:
        lines.append(
            f"Turn {state.turn}: {moving.to_move(state)}"
            + (f", deadline {deadline}" if deadline else "")
        )
    elif "setup_awaited" in info:  # a setup phase: everyone's orders are due
        sent, awaited = info.get("setup_sent") or [], info["setup_awaited"]
        told = f"orders sent by {', '.join(sent)}; " if sent else "no orders sent yet; "
        told += f"awaited from {', '.join(awaited)}" if awaited else "none awaited"
        lines.append(
            f"Setup ({state.phase}): {told}" + (f"; deadline {deadline}" if deadline else "")
        )
    elif deadline:  # a setup phase: everyone's orders are due
        lines.append(f"Setup ({state.phase}): every player's orders due, deadline {deadline}")
    lines += [f"Online settings: {x}" for x in online_settings(state)]
    lines.append("")
    lines.append(f"{'player':<14}{'colour':<9}{'terr':>5}{'armies':>8}{'cards':>7}  next")
    marks = info.get("marks", {})  # seat: how it is played, when not as usual
    for seat, p in enumerate(state.players):
        territories = state.territory_count(seat)
        bonus = sum(board.continents[c].bonus for c in state.continents_held(seat))
        due = reinforcement_base(territories) + bonus if p.alive and not p.neutral else 0
        mark = marks.get(seat) or ("" if p.alive else "out")
        points = gametypes.points_shown(state, seat)
        if points is not None:
            mark = ", ".join(x for x in (mark, f"{points} point{'' if points == 1 else 's'}") if x)
        status = f"  ({mark})" if mark else ""
        lines.append(
            f"{p.name:<14}{p.colour:<9}{territories:>5}{state.army_count(seat):>8}"
            f"{len(p.cards):>7}  {due:>4}{status}"
        )
    lines.append(
        "(next: armies due at the start of the next turn for what is held now; trades add more)"
    )
    private = [
        (p.name, [board.card_name(c) for c in p.cards], _mission_text(state, seat))
        for seat, p in enumerate(state.players)
        if not p.neutral and (p.cards or _mission_text(state, seat))
    ]
    if private:
        lines += ["", "Hands and missions (the GM's view: private to each player)"]
        for name, hand, mission in private:
            lines.append(f"  {name}: {', '.join(hand) or 'no cards'}")
            if mission:
                lines.append(f"  {'':<{len(name)}}  mission: {mission}")
    for c in board.continents:
        lines.append("")
        lines.append(f"{c.name} (+{c.bonus})")
        for t in c.territories:
            owner = state.owner[t]
            name = state.players[owner].name if owner >= 0 else "-"
            lines.append(f"  {board.territories[t].name:<24}{name:<14}{state.armies[t]:>4}")
    return "\n".join(lines)


def seat_security(
    players: list[tuple[int, str, int, datetime | None]],
    data: dict[str, Any],
) -> list[str]:
    """Wrong passwords per seat, (seat, name, count, latest), into ``data``'s
    players (``wrong_passwords``, ``last_wrong_password_at``) and as text lines
    for `pbem show`. Counted by pbem.service.intake.seatguard."""
    by_seat = {seat: (count, latest) for seat, _, count, latest in players}
    for seat, entry in enumerate(data.get("players", [])):
        count, latest = by_seat.get(seat, (0, None))
        entry["wrong_passwords"] = count
        entry["last_wrong_password_at"] = latest.isoformat() if latest else None
    wrong = [(name, count, latest) for _, name, count, latest in players if count]
    if not wrong:
        return ["Wrong passwords: none"]
    lines = [
        "Wrong passwords (mail from the seat's address, refused; each one alerts the GM, "
        "within the hourly alert budget, and the count is told at the 3rd, 10th, 30th...)"
    ]
    for name, count, latest in wrong:
        when = f", the latest {latest:%Y-%m-%d %H:%M} UTC" if latest else ""
        lines.append(f"  {name}: {count}{when}")
    return lines


def open_settings(row: Game) -> list[str]:
    """The online settings of a game open for JOIN: as ``online_settings``, the
    teams by the names the GM's teams reserve, or by seat in joining order."""
    from pbem.rules.teamrules import team_name
    from pbem.service.play.loading import stored_options
    from pbem.service.play.teamplay import reserved_names

    options = stored_options(row)
    size = options.team_size
    names = reserved_names(row)
    words = ""
    if size and names:
        teams = [names[i : i + size] for i in range(0, len(names), size)]
        words = (
            "teams: "
            + "; ".join(f"{team_name(t)} ({', '.join(m)})" for t, m in enumerate(teams))
            + " (they JOIN under these names)"
        )
    elif size:
        from pbem.service.intake.joining import seats

        blocks = [
            f"{team_name(t)} seats {t * size + 1}-{t * size + size}"
            for t in range(seats(row) // size)
        ]
        words = f"teams by seat, in joining order: {', '.join(blocks)}"
    return _settings_said(options, words)
