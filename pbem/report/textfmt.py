"""Plain-text layout for mails: 78 columns, aligned tables, dates in the game's zone.

The text part of every mail must read well on its own in any mail client, so
everything here counts characters and never produces a line over ``WIDTH``
(except a single word longer than that, which cannot be broken).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

WIDTH = 78


def wrap(text: str, width: int = WIDTH, indent: str = "", subsequent: str | None = None) -> str:
    """Wrap a paragraph; ``subsequent`` indents the continuation lines."""
    return textwrap.fill(
        " ".join(text.split()),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent if subsequent is None else subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def wrap_long(text: str, width: int = WIDTH) -> str:
    """Keep a person's line breaks; wrap only the lines that are too long."""
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip())]
        out.append(wrap(line, width, lead))
    return "\n".join(out)


def flow(pieces: Sequence[str], first: str, rest: str, width: int = WIDTH) -> list[str]:
    """Lay pieces (never broken) out after ``first`` and on lines indented by ``rest``."""
    lines: list[str] = []
    line = first
    fresh = True  # nothing placed on this line yet
    for piece in pieces:
        gap = "" if fresh else " "
        if not fresh and len(line) + len(gap) + len(piece) > width:
            lines.append(line)
            line, gap = rest, ""
        line += gap + piece
        fresh = False
    lines.append(line)
    return lines


def table(
    rows: Sequence[Sequence[object]], align: str, header: Sequence[str] | None = None, gap: int = 2
) -> list[str]:
    """Aligned columns. ``align`` has one letter per column: ``l`` or ``r``."""
    cells = [[str(c) for c in row] for row in ([header] if header else []) + list(rows)]
    if not cells:
        return []
    widths = [max(len(row[i]) for row in cells) for i in range(len(align))]
    out = []
    for row in cells:
        parts = [
            cell.ljust(w) if a == "l" else cell.rjust(w)
            for cell, w, a in zip(row, widths, align, strict=True)
        ]
        out.append((" " * gap).join(parts).rstrip())
    if header:
        out.insert(1, (" " * gap).join("-" * w for w in widths))
    return out


def two_columns(blocks: Sequence[list[str]], width: int = WIDTH, gap: int = 3) -> list[str]:
    """Blocks of lines side by side in two columns when they fit, else one after another.

    Blocks are never split; they are cut into two runs, in order, so that the
    taller column is as short as it can be.
    """
    spaced = [block + [""] for block in blocks]
    column = max((len(line) for block in blocks for line in block), default=0)
    if 2 * column + gap > width or len(blocks) < 2:
        return [line for block in spaced for line in block][:-1]
    heights = [len(b) for b in spaced]

    def balance(k: int) -> tuple[int, bool]:  # the taller column; then prefer a taller left
        left, right = sum(heights[:k]), sum(heights[k:])
        return max(left, right), left < right

    split = min(range(1, len(spaced)), key=balance)
    left = [line for block in spaced[:split] for line in block]
    right = [line for block in spaced[split:] for line in block]
    lines = []
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        lines.append((a.ljust(column + gap) + b).rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return lines


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def when(moment: datetime | None, tz: str, own: str | None = None) -> str:
    """A deadline as people read it: ``Tue 4 Mar 2025 18:00 CET (17:00 UTC)``,
    and in the reader's own zone when they set one: ``; for you Tue 4 Mar 12:00 EST``."""
    if moment is None:
        return "no deadline"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    local = moment.astimezone(zone(tz))
    text = f"{local:%a} {local.day} {local:%b %Y %H:%M} {local.tzname()}"
    if local.utcoffset() != utc.utcoffset():
        text += f" ({utc:%H:%M} UTC)"
    if own and own != tz:
        mine = moment.astimezone(zone(own))
        text += f"; for you {mine:%a} {mine.day} {mine:%b %H:%M} {mine.tzname()}"
    return text


def when_short(moment: datetime | None, tz: str) -> str:
    """A deadline for a subject line: ``Tue 4 Mar 18:00``."""
    if moment is None:
        return "no deadline"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(zone(tz))
    return f"{local:%a} {local.day} {local:%b %H:%M}"


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def join_words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def plural_hours(hours: float) -> str:
    """ "1 hour", "2.5 hours": hours as a setting gives them."""
    shown = f"{hours:g}"
    return f"{shown} hour" if shown == "1" else f"{shown} hours"
