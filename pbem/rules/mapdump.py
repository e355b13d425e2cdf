"""The TOML map format, written: a Board back as the text mapformat.py reads
(parse_map(dump_map(b)) == b), for imported maps and the map files pbem writes."""

from __future__ import annotations

from typing import Any

from pbem.rules.board import Board, MissionKind


def dump_map(board: Board) -> str:
    """The TOML text of a board, in the documented format: parse_map(dump_map(b)) == b."""
    names = board.names()
    lines = [
        f"name = {_toml(board.name)}",
        f"title = {_toml(board.title)}",
        f"wilds = {board.wilds}",
        f"colours = {_toml(list(board.colours))}",
    ]
    if board.wrap_edges:
        pairs = [[names[a], names[b]] for a, b in board.wrap_edges]
        lines.append(f"wrap_edges = {_toml(pairs)}")
    if board.one_way:
        pairs = [[names[a], names[b]] for a, b in board.one_way]
        lines.append(f"one_way = {_toml(pairs)}")
    if board.picture is not None:
        lines += ["", "[picture]", f"width = {board.picture[0]}", f"height = {board.picture[1]}"]
        if board.image:
            lines.append(f"image = {_toml(board.image)}")
        if board.colour_map:
            lines.append(f"colour_map = {_toml(board.colour_map)}")
    for c in board.continents:
        lines += ["", "[[continents]]", f"name = {_toml(c.name)}", f"bonus = {c.bonus}"]
        if c.aliases:
            lines.append(f"aliases = {_toml(list(c.aliases))}")
    for t in board.territories:
        lines += ["", "[[territories]]", f"name = {_toml(t.name)}"]
        lines.append(f"continent = {_toml(board.continents[t.continent].name)}")
        if t.aliases:
            lines.append(f"aliases = {_toml(list(t.aliases))}")
        lines.append(f"card = {_toml(t.card)}")
        if t.pos is not None:
            lines.append(f"pos = {_toml(list(t.pos))}")
        lines.append(f"neighbours = {_toml([names[n] for n in t.neighbours])}")
    for m in board.missions:
        lines += ["", "[[missions]]", f"id = {_toml(m.id)}", f"text = {_toml(m.text)}"]
        lines.append(f"kind = {_toml(m.kind)}")
        if m.kind == MissionKind.TERRITORIES:
            lines += [f"count = {m.count}", f"min_armies = {m.min_armies}"]
        elif m.kind == MissionKind.CONTINENTS:
            chosen = [board.continents[c].name for c in m.continents]
            lines += [f"continents = {_toml(chosen)}", f"extra_continents = {m.extra_continents}"]
        else:
            lines.append(f"colour = {_toml(m.colour)}")
            if m.count:
                lines += [f"count = {m.count}", f"min_armies = {m.min_armies}"]
        if m.extended:
            lines.append("extended = true")
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    """A TOML value for the strings, integers and lists that maps hold."""
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)
