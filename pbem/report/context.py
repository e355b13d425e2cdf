"""What the service hands the report layer: plain, read-only data.

The report layer renders mails from these and nothing else: it never touches
the database and never changes a game. Datetimes are UTC (naive ones are taken
as UTC); mails show them in the game's time zone.

Private things (a player's password, turn token, cards and mission) are only
ever rendered into the mail of the seat they belong to: every per-player mail
is rendered for one recipient seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pbem.rules.board import Board
from pbem.rules.events import Event
from pbem.rules.options import Options
from pbem.rules.state import GameState

# PlayerInfo.status values
PLAYING = "playing"
OUT = "out"  # eliminated by another player
RESIGNED = "resigned"
REMOVED = "removed"  # removed for missed turns
WINNER = "winner"


@dataclass(frozen=True)
class PlayerInfo:
    seat: int
    name: str
    colour: str
    address: str
    status: str = PLAYING
    holder: str = ""  # who holds the seat, when `pbem replace` gave it to another (a name)


@dataclass(frozen=True)
class GameInfo:
    """A game as its mails need it (the same for every mail of the game)."""

    name: str  # short name, in every subject: "[world-1] ..."
    title: str
    board: Board
    options: Options
    commitment: str  # SHA-256 of the secret, hex
    secret_hex: str | None  # None until the secret is revealed
    dice_version: str
    players: tuple[PlayerInfo, ...]  # by seat (no neutral)
    gm_address: str
    timezone: str  # an IANA name, e.g. "Europe/Paris"
    from_address: str
    preset: str = ""  # the rules preset the options started from, if any
    player_zones: tuple[tuple[int, str], ...] = ()  # (seat, IANA zone) of SET TIMEZONE
    # the commitment of the secret the dice come from now (`pbem rollback --reroll`
    # draws a new one); "": the game's own, ``commitment``
    dice_commitment: str = ""

    def zone_of(self, seat: int | None) -> str | None:
        """The player's own time zone, when they set one."""
        return next((zone for s, zone in self.player_zones if s == seat), None)

    def player(self, seat: int) -> PlayerInfo:
        for p in self.players:
            if p.seat == seat:
                return p
        raise KeyError(f"game {self.name} has no player in seat {seat}")

    def address_of(self, seat: int | None) -> str:
        """The recipient of a mail for ``seat``; None (an observer's copy) goes to the GM."""
        return self.gm_address if seat is None else self.player(seat).address


@dataclass(frozen=True)
class TurnReport:
    """One adjudicated turn: the events, and the state before and after.

    ``seat`` played the turn; the report is rendered once per recipient.
    ``before`` is the state at the start of the turn (reinforcements counted),
    ``after`` the state once the turn ended (the next player's turn begun).
    """

    game: GameInfo
    turn: int
    seat: int
    events: tuple[Event, ...]
    before: GameState
    after: GameState
    state_hash: str
    deadline: datetime | None  # the next player's deadline
    next_seat: int | None  # None when the game is over
    missed: bool = False  # no orders by the deadline: the default turn was played
    by_gm: bool = False  # the GM played the turn (pbem process, pbem adjudicate)
    # dice version 2: (player, "SALT" or "orders", hex SHA-256) of each contribution
    # mixed with the secret into this turn's dice, in the order they were mixed
    dice_inputs: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class SetupReport:
    """The setup played, told to every player when it ends: the opening's and
    every setup step's events in order (turn order, deal, draft picks or claims,
    placement, headquarters; a dealt mission is private), and the board as the
    first turn begins."""

    game: GameInfo
    events: tuple[Event, ...]
    state: GameState  # after the setup: the first turn begun
    state_hash: str
    deadline: datetime | None  # the first turn's
    step: int = 0  # the order-log entry that ended the setup (0: the deal itself)


@dataclass(frozen=True)
class GameStart:
    """The first mail of a game to one player (its setup phase may need orders)."""

    game: GameInfo
    state: GameState  # after the deal (or waiting for the draft)
    seat: int
    password: str
    deadline: datetime | None  # for the setup orders, when they are needed
    holder: str = ""  # set for a new player taking over the seat mid-game (`pbem replace`)
    turn: int = 0  # the turn the takeover counts from
    token: str = ""  # the seat's current token, for the subject (a reply to it is proven)


@dataclass(frozen=True)
class SetupPrompt:
    """A setup phase that needs every player's orders (draft, placement, HQ)."""

    game: GameInfo
    state: GameState
    seat: int
    deadline: datetime | None
    token: str = ""  # the seat's current token, for the subject


@dataclass(frozen=True)
class YourTurn:
    game: GameInfo
    state: GameState  # the turn begun: reinforcements counted
    seat: int
    token: str  # the turn token, carried in the subject of the reply
    deadline: datetime | None
    since: tuple[str, ...] = ()  # what changed for this player since their last turn
    freestyle_round: int = 0  # freestyle: the round open to this player ("your move")


@dataclass(frozen=True)
class Reminder:
    game: GameInfo
    state: GameState
    seat: int
    token: str | None  # the seat's current token (None: none, the mail asks for a PASSWORD)
    deadline: datetime | None
    missed: int = 0  # turns missed so far (by the game's policy)
    missed_limit: int = 0  # removal after this many (0: never)
    grace_hours: float = 0.0  # the default is played this long after the deadline
    on_removal: str = "neutral"  # what removal does: "neutral" or "bot"


@dataclass(frozen=True)
class Receipt:
    """Orders accepted: the canonical text, as the order log stores it."""

    game: GameInfo
    seat: int
    turn: int
    orders_text: str
    adjudicated: bool  # True: played at once (the report follows); False: held
    check_only: bool = False  # a CHECK mail: validated, nothing applied
    forecast: tuple[str, ...] = ()  # the odds of orders not played yet (pbem.orders.forecast)
    setup: str = ""  # the setup phase the orders were for ("place"...); "" for a turn
    late: datetime | None = None  # the deadline they missed (accepted in the grace period)
    no_orders: bool = False  # only ABSENT, SET, RESIGN: what each did, in orders_text
    changed: bool = True  # False: every one of them asked for what was so already
    next_setup: bool = False  # setup orders: more setup orders are asked for before the report
    token: str = ""  # the seat's current token, for the subject (a reply to it is proven)
    freestyle_round: int = 0  # a CHECK between the turns of a freestyle round: that round


@dataclass(frozen=True)
class Problem:
    """One problem in a mail, formatted by the orders layer."""

    line_no: int | None  # None: about the mail as a whole
    line: str  # the line as written ("" when line_no is None)
    message: str
    fix: str = ""  # a suggestion, when there is one
    with_fix: str = ""  # what the line would still get wrong with that fix
    # > 0: no problem but a line that stands for this many problems not shown in
    # full (pbem.report.folding); its message names their lines
    more: int = 0


@dataclass(frozen=True)
class ErrorReply:
    """Nothing of a mail was applied: every problem, at once."""

    address: str
    problems: tuple[Problem, ...]
    game: GameInfo | None = None  # None when the mail named no known game
    seat: int | None = None
    original_subject: str = ""  # quoted in the body (never in the subject: it would grow)
    turn: int | None = None
    token: str = ""  # the seat's current token, for the subject
    check: bool = False  # the mail said CHECK: nothing would have been applied anyway
    freestyle_round: int = 0  # between the turns of a freestyle round: the round


@dataclass(frozen=True)
class GameOver:
    game: GameInfo  # with secret_hex revealed
    state: GameState  # the final state
    out_turns: dict[int, int] = field(default_factory=dict)  # seat -> turn they went out


@dataclass(frozen=True)
class GmAlert:
    subject: str
    text: str
    game: GameInfo | None = None
    address: str = ""  # defaults to the game's GM
    token: str = ""  # in a mail to a player: the seat's current token, for the subject
    answer: bool = False  # the answer to the GM's commands by mail: no "GM alert:"
    replies: bool = False  # to a player: answers their mail (kind "answer", else "notice")


@dataclass(frozen=True)
class RulesChange:
    """`pbem upgrade-rules`: the game plays rules version ``new`` (not ``old``)
    from turn ``turn`` on; what changes, one line each, and the GM's words."""

    game: GameInfo
    address: str
    old: int
    new: int
    turn: int
    changes: tuple[str, ...]
    message: str = ""
    token: str = ""  # to a player: the seat's current token, for the subject
    seat: int | None = None  # None: the GM's copy


@dataclass(frozen=True)
class Help:
    address: str
    text: str  # the order language, as the project documents it
    game: GameInfo | None = None
    examples: tuple[str, ...] = ()  # orders the asker could send now (views.example_orders)
    token: str = ""  # the seat's current token, for the subject
    title: str = "Help: the order language"  # the subject, after the [game] tag


@dataclass(frozen=True)
class Press:
    """A message between players, relayed by the GM."""

    game: GameInfo
    sender: int | None  # None: anonymous
    to: tuple[int, ...]  # the seats it was sent to
    text: str
    to_all: bool = False
    token: str = ""  # the recipient's current token, for the subject


@dataclass(frozen=True)
class Status:
    """The current board, whose turn, the deadline (STATUS and MAP commands)."""

    game: GameInfo
    state: GameState
    deadline: datetime | None
    token: str = ""  # the seat's current token, for the subject
