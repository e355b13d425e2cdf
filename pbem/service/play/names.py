"""The one check of every name and address that comes in: `pbem new`, JOIN by
mail, `pbem replace`.

A player's address becomes a mail recipient (and, with the Maildir transport,
a folder name); a game's name becomes the [tag] of every subject and the
name of files and site folders; a player's name is read back in orders
(PRESS TO name) and printed in every report. So each is checked where it
enters, with a message that names the refused value, and nothing later
needs to cope with `a@b,c@d`, a path or a line break.
"""

from __future__ import annotations

import re

from sqlalchemy import func
from sqlmodel import Session, select

from pbem.service.errors import ServiceError
from pbem.store import Game

MAX_GAME_NAME = 40  # a subject tag [name] and a file name carry it whole
MAX_PLAYER_NAME = 20
MAX_ADDRESS = 254  # RFC 5321: the longest forward path
MAX_LOCAL_PART = 64
RESERVED_PLAYER_NAMES = frozenset({"ALL", "NEUTRAL", "GM", "TEAM"})  # words of PRESS TO and reports
SHOWN = 60  # characters of a refused value quoted in a message

# The subject tag of pbem/service/intake/mailflow.py is [A-Za-z0-9_-]+; a leading
# letter or digit keeps a name from reading as a command-line option (-x).
GAME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
PLAYER_NAME = re.compile(r"[A-Za-z0-9_-]+")
# An unquoted local part (RFC 5322 dot-atom) without '/' and '\' (a Maildir
# folder is named by the address), and a domain of LDH labels.
_ATOM = r"[A-Za-z0-9!#$%&'*+=?^_`{|}~-]+"
LOCAL_PART = re.compile(rf"{_ATOM}(?:\.{_ATOM})*")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
DOMAIN = re.compile(rf"{_LABEL}(?:\.{_LABEL})+|localhost")


class BadName(ServiceError):
    """A name or address refused where it comes in; the message names the value."""


def shown(value: str) -> str:
    """The value as a message quotes it: repr (so CR, LF and NUL show), capped."""
    if len(value) > SHOWN:
        return repr(value[:SHOWN]) + f"... ({len(value)} characters)"
    return repr(value)


def address_problem(address: str) -> str | None:
    """Why ``address`` cannot be a player's or the GM's address, or None.

    Exactly one plain address: ``local@domain.tld`` (or ``@localhost``), no
    display name, no list, no spaces or control characters, no path."""
    value = address.strip()
    if not value:
        return "a mail address is needed, not an empty text"
    if len(value) > MAX_ADDRESS:
        return f"{shown(value)} is not a mail address: longer than {MAX_ADDRESS} characters"
    if any(c.isspace() or not c.isprintable() for c in value):
        return f"{shown(value)} is not a mail address: it holds a space or a control character"
    if value.count("@") != 1:
        many = "several @ (one address only)" if "@" in value else "no @"
        return f"{shown(value)} is not a mail address: {many}"
    local, domain = value.split("@")
    if not local:
        return f"{shown(value)} is not a mail address: nothing before the @"
    if not domain:
        return f"{shown(value)} is not a mail address: no domain after the @"
    if len(local) > MAX_LOCAL_PART or not LOCAL_PART.fullmatch(local):
        return (
            f"{shown(value)} is not a mail address: the part before the @ may hold "
            "letters, digits, dots (not two in a row, not first or last) and !#$%&'*+=?^_`{|}~-"
        )
    if not DOMAIN.fullmatch(domain.lower()):
        return (
            f"{shown(value)} is not a mail address: the domain must be like example.org "
            "(letters, digits and - between dots)"
        )
    return None


def check_address(address: str) -> str:
    """The address as stored (trimmed, lower case), or BadName saying why not."""
    problem = address_problem(address)
    if problem is not None:
        raise BadName(problem)
    return address.strip().lower()


def player_name_problem(name: str, label: str = "player name") -> str | None:
    """Why ``name`` cannot name a seat, or None. ``label`` starts the message."""
    if not name:
        return f"{label} is empty: use letters, digits, - and _"
    if not PLAYER_NAME.fullmatch(name):
        return f"{label} {shown(name)}: use letters, digits, - and _ only"
    if len(name) > MAX_PLAYER_NAME:
        return f"{label} {shown(name)} is too long: at most {MAX_PLAYER_NAME} characters"
    if name.upper() in RESERVED_PLAYER_NAMES:
        return f"{label} {name} is reserved; pick another"
    return None


def check_player_name(name: str, label: str = "player name") -> str:
    """The name, trimmed, or BadName saying why it cannot name a seat."""
    name = name.strip()
    problem = player_name_problem(name, label)
    if problem is not None:
        raise BadName(problem)
    return name


def game_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a new game, or None (the name alone; see
    ``check_game_name`` for the collision with games already stored)."""
    if not name or not GAME_NAME.fullmatch(name):
        return (
            f"game name {shown(name)}: use letters, digits, - and _ only "
            "(A-Z, a-z, 0-9; starting with a letter or digit)"
        )
    if len(name) > MAX_GAME_NAME:
        return f"game name {shown(name)} is too long: at most {MAX_GAME_NAME} characters"
    return None


def check_game_name(session: Session, name: str) -> str:
    """A new game's name, or BadName: a name the subject tag, file names
    and site folders carry as is, and no other game's name in another case
    (on a case-insensitive disk `World-1` and `world-1` would share files).
    Games stored before this check keep their names: only new ones are checked."""
    problem = game_name_problem(name)
    if problem is not None:
        raise BadName(problem)
    clash = session.exec(select(Game.name).where(func.lower(Game.name) == name.lower())).first()
    if clash is not None:
        if clash == name:
            raise BadName(f"a game named {name!r} exists already")
        raise BadName(
            f"game name {name!r}: a game named {clash!r} exists already (names differing "
            "only in case would share a subject tag and files)"
        )
    return name


def name_from_address(address: str) -> str:
    """A newcomer's name when none is given (`pbem replace` without --name):
    the part of the address before the @, cut to what a player's name may
    hold (``dave.smith@x.org`` -> ``dave-smith``); "newcomer" if nothing is left."""
    local = address.split("@", 1)[0]
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", local).strip("-")[:MAX_PLAYER_NAME].strip("-")
    if not name or name.upper() in RESERVED_PLAYER_NAMES:
        return "newcomer"
    return name
