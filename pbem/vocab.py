"""The closed sets of names pbem uses for statuses, phases and outcomes.

Each is a StrEnum, so a value compares equal to its string (the database
keeps plain text) while the code names it, and a typo fails at import.
"""

from __future__ import annotations

from enum import StrEnum


class GamePhase(StrEnum):
    """Where a game stands in the service (``Game.phase``). The engine's state
    has its own, finer phase (rules/state.py: claim, place, hq, reinforce,
    attack, fortify, over); a game whose state is over is OVER here too."""

    OPEN = "open"  # waiting for players to JOIN by mail
    SETUP = "setup"  # the engine's setup phases (claim, place, hq)
    PLAYING = "playing"
    OVER = "over"


class GameStatus(StrEnum):
    """Whether the service runs a game's deadlines (``Game.status``)."""

    RUNNING = "running"
    PAUSED = "paused"  # by the GM: deadlines stop
    FINISHED = "finished"


class SeatStatus(StrEnum):
    """A player's standing in their game (``Player.status``)."""

    ACTIVE = "active"
    ELIMINATED = "eliminated"  # lost their last territory
    REMOVED = "removed"  # by the GM, or for missed turns
    RESIGNED = "resigned"


class SeatStanding(StrEnum):
    """How a seat is played now, as `pbem show` marks it (from ``SeatStatus``,
    the game's bot and autopilot seats, and the seat holder's absence)."""

    PLAYING = "playing"
    NEUTRAL = "neutral"  # the neutral armies' seat: no one plays it
    AUTOPILOT = "autopilot"  # removed during the setup: placed for, leaving when it ends;
    # in `pbem show --json`: standing "removed" and leaving_after_setup true
    BOT = "bot"  # removed, the greedy bot plays the seat
    ABSENT = "absent"  # an announced absence going on now
    REMOVED = "removed"  # by the GM, or for missed turns: territories neutral
    RESIGNED = "resigned"
    ELIMINATED = "eliminated"


class InboundStatus(StrEnum):
    """Where an inbound mail stands."""

    NEW = "new"  # rows written before claims existed (schema 0001)
    CLAIMED = "claimed"  # a worker holds it (or held it and failed: see attempts)
    PROCESSED = "processed"
    REJECTED = "rejected"
    DUPLICATE = "duplicate"
    HELD = "held"  # failed max_attempts times: moved to the held folder, the GM told

    @property
    def done(self) -> bool:
        """An outcome is committed: the mail only has to leave the inbox."""
        return self in (InboundStatus.PROCESSED, InboundStatus.REJECTED, InboundStatus.HELD)


class OutboxStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"  # refused for good (5xx): the GM has to look


class RawFormat(StrEnum):
    """How a stored mail's bytes are kept."""

    PLAIN = "plain"
    ZLIB = "zlib"
    PRUNED = "pruned"  # headers only, body dropped after the retention period


class Component(StrEnum):
    """The outside services a poll depends on; each can be out."""

    INBOX = "inbox"
    SMTP = "smtp"
    DATABASE = "database"


class NoticeKind(StrEnum):
    """What a notice tells (``Notice.kind``): one mail each, rendered after the
    decision's commit (pbem/service/tell/telling.py)."""

    REPORT = "report"  # a step's turn report, to a player or the GM
    GAME_OVER = "over"  # the end of the game, with its record
    YOUR_TURN = "turn"  # the next player's notice, with its token
    SETUP_PROMPT = "setup"  # a setup phase's prompt, to every player
    SETUP_REPORT = "setup-report"  # the setup played, to every player and the GM, when it ends
    GAME_START = "start"  # the first mail to a seat (or to its new holder)
    RECEIPT = "receipt"  # the orders of a mail taken (or checked, or held)
    ERRORS = "errors"  # the problems of a mail, nothing of it applied
    HELP = "help"  # the answer to HELP
    STATUS = "status"  # the answer to STATUS or MAP
    HISTORY = "history"  # the answer to HISTORY: a stored report, or what there is
    PRESS = "press"  # a relayed press message
    REMINDER = "reminder"  # a deadline comes
    ALERT = "alert"  # a note to every player or the GM (report/render gm_alert)
    LETTER = "letter"  # one of report/letters.py's prose letters
    RULES_CHANGED = "rules"  # `pbem upgrade-rules`: the game moves to newer rules, to every player


class LetterKind(StrEnum):
    """The X-Pbem-Kind of a letter rendered with the gm_alert templates
    (report/render.render_gm_alert): who it is for tells it, so a filter by kind
    never files a player's answer with the GM's alerts."""

    GM_ALERT = "gm_alert"  # mail to the GM: an alert, or the answer to GM commands
    ANSWER = "answer"  # to a player: the answer to their mail (a stale turn, a refusal)
    NOTICE = "notice"  # to a player, unasked: a missed turn, an announcement


class MailAuth(StrEnum):
    """How pbem logs in to one mail server (``[mail.imap] auth``, ``[mail.smtp] auth``)."""

    PASSWORD = "password"  # user + password (or an app password)
    OAUTH2 = "oauth2"  # user + an OAuth2 access token (SASL XOAUTH2)


class MailProblem(StrEnum):
    """What `pbem mail test` found wrong with one server, in the GM's words."""

    PORT = "port"  # nothing answers: wrong host or port, a firewall, the server down
    TLS = "tls"  # handshake failed, certificate refused, STARTTLS not offered
    BAD_PASSWORD = "bad-password"
    APP_PASSWORD = "app-password"  # the provider wants an app password
    OAUTH2_NEEDED = "oauth2-needed"  # the server takes OAuth2 only
    LOGIN_NEEDED = "login-needed"  # no usable OAuth2 login: run `pbem mail login`
    WRONG_PROTOCOL = "wrong-protocol"  # a server answered, in another protocol: the port
    NO_PASSWORD = "no-password"  # a password login without a password set
    OTHER = "other"


class Proof(StrEnum):
    """What proves a player's mail theirs (pbem/service/intake/proof.py)."""

    PASSWORD = "password"  # the seat's password
    TOKEN = "token"  # the current token of a mail pbem sent the seat
    TOKEN_WRONG_PASSWORD = "token, wrong password"  # the token, beside a wrong PASSWORD line
    NONE = "none"  # neither: the mail is not proven


class Refusal(StrEnum):
    """Why a mail in a player's name was refused as a possible impostor's."""

    WRONG_PASSWORD = "wrong password"
    FOREIGN_TOKEN = "foreign token"  # the token of no turn of this seat
