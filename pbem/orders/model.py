"""What a parsed mail holds: header fields, orders with their positions, commands, press.

An order wraps the rules action it means (pbem.rules.actions) with where it
was written, so validation can point at the line. Cards named ``Wild`` stay
symbolic (``WILD_CARD``) until validation picks the wild cards the player
holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date

from pbem.rules.actions import (
    Attack,
    Claim,
    Defend,
    Fortify,
    Headquarters,
    Place,
    PlaceInitial,
    PlaceNeutral,
    SetupAction,
    Trade,
    TurnAction,
)

WILD_CARD = -1  # a card written "Wild": whichever wild card the player holds

TURN_KEYWORDS = ("TRADE", "PLACE", "ATTACK", "FORTIFY", "DEFEND")  # DEFEND: anywhere
SETUP_KEYWORDS = ("CLAIM", "PLACE", "NEUTRAL", "HQ")

_KEYWORD_OF: dict[type, str] = {
    Trade: "TRADE",
    Place: "PLACE",
    Attack: "ATTACK",
    Fortify: "FORTIFY",
    Defend: "DEFEND",
    Claim: "CLAIM",
    PlaceInitial: "PLACE",
    PlaceNeutral: "NEUTRAL",
    Headquarters: "HQ",
}


def keyword_of(action: TurnAction | SetupAction) -> str:
    return _KEYWORD_OF[type(action)]


@dataclass(frozen=True, slots=True)
class Order:
    """One order line. ``PLACE`` parses to a turn ``Place``; ``as_setup`` gives
    the ``PlaceInitial`` it means while the game is being set up."""

    action: TurnAction | SetupAction
    line: int  # 1-based line in the mail (0: not from a mail)
    column: int  # column of the keyword
    text: str  # the source line as written
    items: tuple[int, ...] = ()  # column of each part, in the action's order (see parser)

    @property
    def keyword(self) -> str:
        return keyword_of(self.action)

    def as_setup(self) -> Order:
        if isinstance(self.action, Place):
            return replace(self, action=PlaceInitial(self.action.placements))
        return self

    def item_column(self, i: int) -> int:
        return self.items[i] if i < len(self.items) else self.column


@dataclass(frozen=True, slots=True)
class Header:
    value: str | int
    line: int
    column: int  # column of the value


# ----------------------------------------------------------------- commands
@dataclass(frozen=True, slots=True)
class Command:
    line: int
    column: int
    text: str


@dataclass(frozen=True, slots=True)
class Status(Command):
    pass


@dataclass(frozen=True, slots=True)
class ShowMap(Command):
    pass


@dataclass(frozen=True, slots=True)
class History(Command):
    turn: int | None = None  # None: the list of turns


@dataclass(frozen=True, slots=True)
class Help(Command):
    pass


@dataclass(frozen=True, slots=True)
class Check(Command):
    pass


@dataclass(frozen=True, slots=True)
class Resign(Command):
    pass


@dataclass(frozen=True, slots=True)
class Join(Command):
    game: str = ""
    player: str = ""


@dataclass(frozen=True, slots=True)
class Confirm(Command):
    token: str = ""


@dataclass(frozen=True, slots=True)
class Absent(Command):
    start: date = date.min
    end: date = date.min


@dataclass(frozen=True, slots=True)
class SetMail(Command):
    """SET MAIL: which mail this player gets (every, myturn or digest)."""

    mode: str = "every"


@dataclass(frozen=True, slots=True)
class SetTimezone(Command):
    """SET TIMEZONE: deadlines also in this player's own zone (an IANA name)."""

    zone: str = "UTC"


@dataclass(frozen=True, slots=True)
class Press:
    """A message to relay: ``recipient`` is a player's name or ``ALL``."""

    recipient: str
    body: str  # the lines between PRESS and ENDPRESS, verbatim
    line: int
    column: int
    text: str

    @property
    def to_all(self) -> bool:
        return self.recipient == "ALL"

    @property
    def to_team(self) -> bool:
        """PRESS TO TEAM: the sender's teammates still in the game (team games)."""
        return self.recipient == "TEAM"


@dataclass
class ParsedMail:
    game: Header | None = None
    turn: Header | None = None
    password: Header | None = None
    salt: Header | None = None  # SALT: the player's contribution to the dice (v2)
    orders: list[Order] = field(default_factory=list)  # every order, as written
    commands: list[Command] = field(default_factory=list)
    press: list[Press] = field(default_factory=list)
    check: bool = False  # CHECK: validate and reply, apply nothing
    # Lines before the first order and after the last that are plainly not
    # orders (greetings, sign-offs): (line, text), ignored and said so.
    ignored: list[tuple[int, str]] = field(default_factory=list)
    # Only in the partial mail of an OrdersError: its unreadable lines, each with
    # the order it was or is told to be, (line, keyword): ("ATACK ..." may be an
    # ATTACK; "Hello!" none, ""; a PRESS without its ENDPRESS hides the rest of
    # the mail: any order). Validation of the lines that were read leaves out the
    # totals these could change, and says where they would stand (validate.py).
    unread: tuple[tuple[int, str], ...] = ()

    @property
    def unread_orders(self) -> frozenset[str]:
        """The orders the unreadable lines were or may have been."""
        return frozenset(keyword for _, keyword in self.unread if keyword)

    @property
    def turn_orders(self) -> list[Order]:
        return [o for o in self.orders if o.keyword in TURN_KEYWORDS]

    @property
    def setup_orders(self) -> list[Order]:
        return [o.as_setup() for o in self.orders if o.keyword in SETUP_KEYWORDS]
