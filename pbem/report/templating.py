"""The mail templates: the jinja2 environment, its filters, and one mail from a
template's name and its context.

Each mail is two templates, ``templates/mail/KIND.txt`` (plain text, 78
columns, complete on its own) and ``KIND.html`` (inline styles only, no
external resources, the map picture by Content-ID); the filters here turn
``views``'s rows and ``turnview``'s lines into the text part's columns.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from pbem.paths import templates_dir
from pbem.report import turnview, views
from pbem.report.bytecode import bytecode_cache
from pbem.report.context import GameInfo
from pbem.report.mime import RenderedMail
from pbem.report.shared import shared, shared_as
from pbem.report.textfmt import (
    WIDTH,
    flow,
    join_words,
    plural,
    table,
    two_columns,
    wrap,
    wrap_long,
)

NO_PICTURE = "There is no picture for this map (it has no territory positions)."


# ------------------------------------------------------------------ templates
def _item_text(item: str | turnview.AttackLine) -> str:
    if isinstance(item, turnview.AttackLine):
        result = [item.result] if len(item.result) <= WIDTH - 6 else item.result.split()
        return "\n".join(flow([item.head, *item.rolls, *result], "  ", "      "))
    return wrap(item, indent="  ", subsequent="    ")


def _board_text(blocks: list[views.ContinentBlock]) -> str:
    return shared(_board_text_of, blocks)


def _board_text_of(blocks: list[views.ContinentBlock]) -> str:
    name_width = max(len(r.name) for b in blocks for r in b.rows)
    owner_width = max(len(r.who.name) for b in blocks for r in b.rows)
    lines = [views.board_block_lines(b, name_width, owner_width) for b in blocks]
    return "\n".join(two_columns(lines))


def _players_text(rows: list[views.PlayerRow]) -> str:
    return shared(_players_text_of, rows)


def _players_text_of(rows: list[views.PlayerRow]) -> str:
    header, cells, align = views.player_table(rows)
    return "\n".join(table(cells, align, header) + views.team_standing(rows))


def _table_text(rows: list[list[Any]], align: str, header: list[str] | None = None) -> str:
    return "\n".join(table(rows, align, header))


def _once(name: str, macro: Any, *args: Any) -> Any:
    """``{{ once("board", m.board, blocks, marks_key) }}``: a macro's HTML that every
    reader of a turn shares, rendered once per render_once scope."""
    return shared_as(("macro", name), macro, *args)


def _underline(text: str, char: str = "-") -> str:
    return f"{text}\n{char * min(len(text), WIDTH)}"


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The templates' environment, built once: filters, globals, compiled templates kept."""
    escaped = ("html",)
    compiled_in = {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True}
    env = Environment(
        loader=FileSystemLoader(str(templates_dir() / "mail")),
        autoescape=select_autoescape(enabled_extensions=escaped, default_for_string=False),
        undefined=StrictUndefined,
        bytecode_cache=bytecode_cache({**compiled_in, "autoescape": escaped}),
        **compiled_in,  # type: ignore[arg-type]
    )
    env.filters.update(
        wrap=wrap,
        wrap_long=wrap_long,
        item_text=_item_text,
        board_text=_board_text,
        players_text=_players_text,
        team_totals=views.team_totals,
        table_text=_table_text,
        underline=_underline,
        plural=plural,
        join_words=join_words,
    )
    env.globals.update(AttackLine=turnview.AttackLine, NO_PICTURE=NO_PICTURE, WIDTH=WIDTH)
    env.globals["once"] = _once
    env.tests["attack"] = lambda item: isinstance(item, turnview.AttackLine)
    return env


_BLANKS = re.compile(r"\n{3,}")


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip("\n") + "\n"


def render_pair(kind: str, context: dict[str, Any]) -> tuple[str, str]:
    """The text part (tidied: no trailing blanks, no runs of blank lines) and the HTML."""
    env = environment()
    text = env.get_template(f"{kind}.txt").render(**context)
    html = env.get_template(f"{kind}.html").render(**context)
    return _tidy(text), html


def template_mail(
    kind: str,
    subject: str,
    recipient: str,
    context: dict[str, Any],
    game: GameInfo | None,
    images: dict[str, bytes] | None = None,
) -> RenderedMail:
    """The mail ``kind`` (templates ``KIND.txt`` and ``KIND.html``) with ``context``."""
    text, html = render_pair(kind, {"kind": kind, "game": game, "subject": subject, **context})
    return RenderedMail(
        subject=subject,
        text=text,
        html=html,
        images=images or {},
        recipient=recipient,
        kind=kind,
        game=game.name if game else "",
    )
