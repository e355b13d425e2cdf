"""The order language's words and its table of orders: one definition per order.

The parser dispatches on this table and the HELP reply is written from it,
so the reference a player gets is the language the parser accepts; a test
parses every example below. Examples are templates: ``{a}``, ``{b}`` and
``{c}`` are three territories of the game's map, ``{a}`` next to ``{b}``
and ``{b}`` next to ``{c}``.
"""

from __future__ import annotations

from dataclasses import dataclass

# Words inside orders (keywords are case-insensitive; these are the canonical spellings).
WITH = "WITH"
DICE = ("DICE", "DIE")
UNTIL = "UNTIL"
CONQUERED = "CONQUERED"
LEFT = "LEFT"
ROLLS = ("ROLLS", "ROLL")
MOVE = "MOVE"
ALL = "ALL"
TEAM = "TEAM"  # PRESS TO TEAM: the sender's teammates (team games)
BUT = "BUT"
MIN = "MIN"
WILD = "WILD"
TO = "TO"
AS = "AS"
FROM = "FROM"
ENDPRESS = "ENDPRESS"
REROLL = "REROLL"
COMMANDER = "COMMANDER"
IN = "IN"
ORDERS = "ORDERS"
END = "END"

ATTACK_CLAUSES = (WITH, UNTIL, MOVE, REROLL, COMMANDER)

HEADER = "header"
TURN = "turn"
SETUP = "setup"
COMMAND = "command"

SECTIONS = {
    HEADER: "Header lines (any order, before the orders)",
    TURN: "Turn orders (the player whose turn it is)",
    SETUP: "Setup orders (before the first turn, all players at once)",
    COMMAND: "Commands (any player, at any time)",
}


@dataclass(frozen=True)
class OrderDef:
    keyword: str
    section: str
    syntax: str
    summary: str
    examples: tuple[str, ...]


ORDER_DEFS: tuple[OrderDef, ...] = (
    OrderDef(
        "GAME",
        HEADER,
        "GAME name",
        "Which game the mail is for; the subject may say [name] instead.",
        ("GAME world-1",),
    ),
    OrderDef(
        "TURN",
        HEADER,
        "TURN n",
        "Optional guard: the orders are refused unless the game is at turn n "
        "(in a freestyle game: in round n).",
        ("TURN 14",),
    ),
    OrderDef(
        "PASSWORD",
        HEADER,
        "PASSWORD word",
        "Your password (one word). A reply to the game's turn notice needs none.",
        ("PASSWORD correct-horse-battery",),
    ),
    OrderDef(
        "SALT",
        HEADER,
        "SALT anything",
        "Optional, and may stand anywhere in the mail: your share in this turn's dice "
        "(any text to the end of the line). In games with dice version 2 the dice mix the "
        "game's secret with it, or, without a SALT, with your orders; so neither the GM "
        "nor anyone else can choose your dice.",
        ("SALT my lucky socks 1987",),
    ),
    OrderDef(
        "TRADE",
        TURN,
        "TRADE card, card, card",
        "Trade a set of three cards for armies, before PLACE. A card is a territory name "
        "or WILD. Up to the number of sets the rules allow in a turn; required when the "
        "rules force a trade. The +2 bonus for an owned territory on a traded card is "
        "placed on that territory automatically. A TRADE written after an ATTACK chooses "
        "the sets you trade at once when an elimination leaves you 6 or more cards (rules "
        "version 3): cards you hold, tried in the order written; without one (or past "
        "them) the set worth most to you, its +2s counted, then fewer wilds, then map "
        "order. Its armies are placed by the PLACE orders after it.",
        (
            "TRADE {a}, {b}, Wild",
            "TRADE {a}, {c}, Wild   # below an ATTACK: if it eliminates a player",
        ),
    ),
    OrderDef(
        "PLACE",
        TURN,
        "PLACE n territory, n territory, ...",
        "Place new armies on your territories, before attacking. The PLACE orders together "
        "place exactly the armies due this turn (territories, continents and trades). "
        "A PLACE written after an ATTACK places the armies of the sets an elimination makes "
        "you trade at once (6 or more cards); without one it is skipped, and armies no PLACE "
        "places go on the territory taken last (then on your others with room). Under a "
        "max_armies cap (expert rules, rules version 3) a PLACE over it is refused; armies "
        "are lost only when none of your territories has room.",
        ("PLACE 5 {a}", "PLACE 2 {b}, 1 {c}"),
    ),
    OrderDef(
        "ATTACK",
        TURN,
        "ATTACK from -> to [WITH n DICE] [UNTIL CONQUERED | UNTIL n LEFT | UNTIL n ROLLS] "
        "[MOVE n | MOVE ALL | MOVE ALL BUT n | MOVE MIN] [REROLL] [COMMANDER]",
        "Attack an adjacent territory, rolling until it falls or the attack cannot go on. "
        "WITH n DICE: at most n dice per roll (default 3; WITH 1 DIE is fine too). "
        "UNTIL n LEFT: stop before a roll when 'from' has n or fewer armies; UNTIL n "
        "ROLLS: at most n rolls (UNTIL 1 ROLL is fine too); UNTIL CONQUERED is the "
        "default. MOVE: armies moved in after a conquest (ALL: all but one; MIN, the "
        "default: the fewest the rules allow); clamped to what the rules allow. REROLL "
        "(expert rules): when you hold the card of 'from' or 'to', re-roll your lowest "
        "losing die on a roll that loses one, when re-rolling it gains armies on average "
        "(rules version 2: on every such roll; without REROLL there is none). COMMANDER "
        "(expert rules, rules version 3): your commander, once a turn, turns one die into "
        "a 6 on the first roll of this attack where that wins a comparison; with no "
        "COMMANDER in your orders, on the turn's first roll of 3 dice where it wins one. "
        "Attacks run in the order written; one that has become impossible is "
        "skipped and reported. Under trench warfare (option trench) a territory taken "
        "this turn may not attack again this turn: an ATTACK from the territory an "
        "earlier ATTACK takes is refused.",
        (
            "ATTACK {a} -> {b}",
            "ATTACK {a} -> {b} UNTIL 4 LEFT MOVE ALL",
            "ATTACK {b} -> {c} WITH 2 DICE UNTIL 3 ROLLS",
        ),
    ),
    OrderDef(
        "DEFEND",
        TURN,
        "DEFEND WITH 1|2 IN territory",
        "A standing order for when others attack your territory: WITH 1, roll one die in "
        "its defence from now on; WITH 2 (the default: the most the rules allow) clears "
        "it. Write it with your turn's orders, anywhere among them. It lasts until you "
        "change it or lose the territory, and is shown only to you. With two players "
        "you roll for the neutral when the other player attacks it, so you may give it for "
        "a neutral territory too: it counts against the other player's attacks (games of "
        "rules version 3).",
        ("DEFEND WITH 1 IN {a}", "DEFEND WITH 2 IN {a}"),
    ),
    OrderDef(
        "FORTIFY",
        TURN,
        "FORTIFY n|ALL|ALL BUT n from -> to",
        "Move armies between two of your territories after the attacks (ALL: all but one). "
        "The rules say whether they must be adjacent, joined by your territories, or any "
        "two of yours (parachute), and how many moves a turn allows. One army always "
        "stays behind.",
        ("FORTIFY 4 {b} -> {c}", "FORTIFY ALL BUT 2 {b} -> {c}"),
    ),
    OrderDef(
        "CLAIM",
        SETUP,
        "CLAIM territory, territory, ...",
        "Draft: your preference list, best first. When it runs out you get the first free "
        "territory in map order.",
        ("CLAIM {a}, {b}, {c}",),
    ),
    OrderDef(
        "PLACE",
        SETUP,
        "PLACE n territory, n territory, ...",
        "Initial placement: all your remaining initial armies at once, on your territories.",
        ("PLACE 3 {a}, 2 {b}",),
    ),
    OrderDef(
        "NEUTRAL",
        SETUP,
        "NEUTRAL n territory, n territory, ...",
        "Two-player game: your share of the neutral armies, on neutral territories.",
        ("NEUTRAL 2 {a}, 1 {c}",),
    ),
    OrderDef(
        "HQ",
        SETUP,
        "HQ territory",
        "Capital Risk: your headquarters, one of your territories (secret until all chose).",
        ("HQ {a}",),
    ),
    OrderDef(
        "STATUS",
        COMMAND,
        "STATUS",
        "The current board, whose turn it is and the deadline (sent to you only).",
        ("STATUS",),
    ),
    OrderDef("MAP", COMMAND, "MAP", "The map picture again.", ("MAP",)),
    OrderDef(
        "HISTORY",
        COMMAND,
        "HISTORY [n]",
        "The report of turn n again; without n, the list of turns.",
        ("HISTORY 12", "HISTORY"),
    ),
    OrderDef("HELP", COMMAND, "HELP", "This reference.", ("HELP",)),
    OrderDef(
        "CHECK",
        COMMAND,
        "CHECK",
        "Check the orders in this mail and reply; nothing is applied.",
        ("CHECK",),
    ),
    OrderDef(
        "PRESS",
        COMMAND,
        "PRESS TO name|ALL|TEAM",
        "A message relayed to one player, to all, or (team games) to your teammates: the "
        "lines after it, kept exactly as written, up to a line ENDPRESS.",
        ("PRESS TO carol\nShall we leave each other alone this turn?\nENDPRESS",),
    ),
    OrderDef(
        "RESIGN",
        COMMAND,
        "RESIGN",
        "Leave the game; needs the password even on a reply.",
        ("RESIGN",),
    ),
    OrderDef(
        "JOIN",
        COMMAND,
        "JOIN game AS name",
        "Ask to join an open game under a player name.",
        ("JOIN world-2 AS alice",),
    ),
    OrderDef(
        "CONFIRM",
        COMMAND,
        "CONFIRM token",
        "Confirm a request with the token the game mailed to you.",
        ("CONFIRM 7f3a9c",),
    ),
    OrderDef(
        "ABSENT",
        COMMAND,
        "ABSENT FROM yyyy-mm-dd TO yyyy-mm-dd",
        "Announce an absence, both days included; the game's policy says what it changes.",
        ("ABSENT FROM 2025-07-01 TO 2025-07-14",),
    ),
    OrderDef(
        "SET",
        COMMAND,
        "SET MAIL EVERY|MYTURN|DIGEST  or  SET TIMEZONE zone",
        "MAIL: which mail you get: EVERY turn report; MYTURN, only the reports of your "
        "own turns (your turn mail still says what changed); DIGEST, your own turns and "
        "one mail a day with the other turns. TIMEZONE: deadlines are also shown in your "
        "own time zone (a name such as Europe/Paris; UTC to stop).",
        ("SET MAIL DIGEST", "SET TIMEZONE Europe/Paris"),
    ),
)
MAIL_MODES = ("EVERY", "MYTURN", "DIGEST")

KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys(d.keyword for d in ORDER_DEFS))

# The keywords a misspelt one may be told to be ("did you mean PLACE?"): the orders
# only. A header, a request or an envelope word (GAME, PASSWORD, HELP, CHECK, JOIN,
# RESIGN, ABSENT, ...) is never proposed: following the fix would change what the
# mail is (a greeting "Hello!" made into HELP turns the orders into a request).
SUGGESTED_KEYWORDS: tuple[str, ...] = tuple(
    dict.fromkeys(d.keyword for d in ORDER_DEFS if d.section in (TURN, SETUP))
)
