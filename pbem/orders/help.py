"""The HELP reply: the order language, written from the grammar table the parser uses."""

from __future__ import annotations

import textwrap

from pbem.orders import grammar as g
from pbem.orders.lexer import ARROWS, COMMENT, MAX_DIGITS, QUOTE
from pbem.rules.board import Board

_WIDTH = 76


def example_names(board: Board) -> dict[str, str]:
    """Three territories a, b, c of the map with a next to b and b next to c."""
    territories = board.territories
    for a in territories:
        for b in a.neighbours:
            for c in territories[b].neighbours:
                if c != a.index:
                    return {"a": a.name, "b": territories[b].name, "c": territories[c].name}
    raise ValueError(f"map {board.name} has no three territories in a row")


def examples(board: Board) -> list[tuple[g.OrderDef, str]]:
    """Every example of the grammar table, with the map's territory names filled in."""
    names = example_names(board)
    return [(d, example.format(**names)) for d in g.ORDER_DEFS for example in d.examples]


def _para(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent=indent, subsequent_indent=indent)


def help_text(board: Board) -> str:
    """The reference of the order language, with this map's names and aliases."""
    out = ["THE ORDER LANGUAGE", ""]
    out += _para(
        "A mail is applied completely or not at all: if anything in it is wrong, nothing "
        "is applied and the reply lists every problem with its line.",
        "",
    )
    out += ["", "Writing orders"]
    rules = [
        "One order per line. Keywords are case-insensitive; extra blanks are fine.",
        f"{COMMENT} starts a comment to the end of the line; blank lines are ignored.",
        f"Lines starting with {QUOTE} (quoted text) are ignored.",
        f"A line {g.END}, or a signature line '-- ', ends the orders; the rest of the "
        f"mail is ignored. If a line {g.ORDERS} is present, everything above it is "
        "ignored too, so a greeting can go there.",
        "Territory names are the map's names or aliases (listed below), in any case, "
        "with any run of blanks, - or _ as one blank. Nothing else matches: no "
        "abbreviations of your own, no guessing.",
        f"Numbers are whole numbers of at most {MAX_DIGITS} digits.",
        f"The arrow is written {ARROWS[0]} ({ARROWS[1]} is read as one too).",
    ]
    for rule in rules:
        out += _bullet(rule)
    names = example_names(board)
    for section, title in g.SECTIONS.items():
        out += ["", title]
        for definition in (d for d in g.ORDER_DEFS if d.section == section):
            out.append("")
            out += textwrap.wrap(
                definition.syntax, _WIDTH, initial_indent="  ", subsequent_indent="    "
            )
            out += _para(definition.summary, "      ")
            for example in definition.examples:
                lines = example.format(**names).split("\n")
                out.append(f"      e.g.  {lines[0]}")
                out += [f"            {line}" for line in lines[1:]]
    out += ["", f"Territories of {board.title} (name: aliases)", ""]
    for t in sorted(board.territories, key=lambda t: t.name):
        aliases = f": {', '.join(t.aliases)}" if t.aliases else ""
        out.append(f"  {t.name}{aliases}")
    return "\n".join(out) + "\n"


def _bullet(text: str) -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent="  - ", subsequent_indent="    ")
