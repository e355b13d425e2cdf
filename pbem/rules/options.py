"""Rule options: one typed, frozen object with the names of RULES.md.

A game stores its options; presets in ``config/rules/*.toml`` bundle them and
any single option can be overridden on top of a preset. Unknown names,
values of the wrong type and impossible combinations are refused with a
message that says which option and why.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Final, NamedTuple

from pbem.rules.board import by_fields
from pbem.rules.errors import OptionsError

# option name -> allowed values (for the string-valued options)
CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "claim": ("deal", "draft", "turns"),
    "placement": ("blind", "auto"),
    "card_values": ("escalating", "linear", "fixed", "none"),
    "territory_bonus": ("once", "per_card", "per_set"),
    "traded_cards": ("bottom", "discard", "removed"),
    "move_in": ("dice", "survivors"),
    "fortify": ("adjacent", "chained", "unlimited", "none"),
    "goal": ("domination", "capital", "mission"),
    "mission_win": ("at_once", "own_turn"),
    "mission_deck": ("rulebook", "extended"),
}

# One sentence per option, used by `pbem rules` and the game-start mail.
WORDS: Final[dict[str, dict[Any, str] | str]] = {
    "claim": {
        "deal": "Territories are dealt at random from the shuffled territory cards.",
        "draft": "Territories are drafted from each player's preference list, in turn order.",
        "turns": (
            "Territories are claimed in turn, one each per round of mail: the first free "
            "territory on each player's list, in turn order."
        ),
    },
    "placement": {
        "blind": "Initial armies are placed by all players at once, in secret.",
        "auto": "Initial armies are spread at random, one at a time, in turn order.",
    },
    "card_values": {
        "escalating": "Card sets are worth 4, 6, 8, 10, 12, 15, then 5 more each, over all sets.",
        "linear": "Card sets are worth 4, 5, 6, ... counted over all sets traded.",
        "fixed": (
            "Card sets are worth 4 (three infantry), 6 (three cavalry), 8 (three artillery); "
            "a wild stands for any one type."
        ),
        "none": "No cards are used.",
    },
    "territory_bonus": {
        "once": "Trading a card of an owned territory gives +2 armies there, once per turn.",
        "per_card": "Every traded card of an owned territory gives +2 armies there.",
        "per_set": (
            "Every traded set with a card of an owned territory gives +2 armies there "
            "(on the first such card as the trade lists them), with no limit per turn."
        ),
    },
    "traded_cards": {
        "bottom": "Traded cards go to the bottom of the draw pile.",
        "discard": "Traded cards are discarded; discards are reshuffled when the pile runs out.",
        "removed": "Traded cards leave the game; once the draw pile is empty no card is drawn.",
    },
    "fixed_mixed_set": {
        True: "With fixed card values, one card of each type is a set too, worth 10.",
        False: "With fixed card values, one card of each type is not a set.",
    },
    "forced_trade_at": "A player starting a turn with {} or more cards must trade a set.",
    "max_trades": "At most {} sets may be traded in one turn.",
    "move_in": {
        "dice": "After a conquest at least as many armies as dice in the last roll move in.",
        "survivors": "After a conquest the surviving attacking armies of the last roll move in.",
    },
    "fortify": {
        "adjacent": "One fortifying move per turn, to an adjacent own territory.",
        "chained": "One fortifying move per turn, along a chain of own territories.",
        "unlimited": "Any number of fortifying moves, along chains of own territories.",
        "none": "No fortifying moves.",
    },
    "max_armies": (
        "A territory holds at most {} armies: a PLACE over it is refused, and armies are "
        "lost only when no territory of the player has room; moves stop at it."
    ),
    "card_reroll": {
        True: (
            "An attacker holding the card of either territory may re-roll one lost die "
            "per roll (ATTACK ... REROLL)."
        ),
        False: "No card re-rolls.",
    },
    "commander": {
        True: "Once per turn one attacking die of a roll counts as a 6.",
        False: "No commander.",
    },
    "goal": {
        "domination": "Win by eliminating every other player.",
        "capital": "Win by holding every headquarters at once.",
        "mission": "Win by completing your secret mission.",
    },
    "mission_win": {
        "at_once": (
            "A secret mission wins the moment it is complete, whoever's action completed it."
        ),
        "own_turn": (
            "A secret mission completed on another player's turn wins at the start "
            "of its holder's next turn."
        ),
    },
    "mission_deck": {
        "rulebook": (
            "The mission deck is the rulebooks' 12 cards; destroy cards of colours not "
            "in play are removed."
        ),
        "extended": (
            "The mission deck adds the older European cards (two continents and one more "
            "of your choice) to the rulebooks' 12."
        ),
    },
    "capitals_to_win": {
        True: "Capital Risk, shortened: hold your own HQ and 2 (4 players) or 3 (5-6) others.",
        False: "Capital Risk needs every headquarters.",
    },
    "neutral": {
        True: (
            "A two-player game adds a neutral army that never attacks (40 armies each); "
            "its territories are dealt at random (with a draft, its third is dealt first)."
        ),
        False: "A two-player game has no neutral army.",
    },
    "max_turns": (
        "The game ends after {} rounds of turns; most territories, then armies, "
        "then turn order wins."
    ),
    "min_players": "At least {} players.",
    "rules_version": (
        "The game plays pbem's rules version {}, kept from its start (docs/RECORDS.md "
        "says what later versions changed)."
    ),
    "max_players": "At most {} players.",
}

# The rules version new games play. A change of the engine's behaviour that
# is not a new option raises it, keeps the old behaviour under the old number
# and says what changed in docs/RECORDS.md; a game keeps the version it
# started with (stored in its options, and so in its records).
RULES_VERSION: Final = 3
RULES_VERSIONS: Final = (1, 2, 3)


# What each rules version changed compared with the one before, one line per
# change, in words a GM and the players understand: `pbem upgrade-rules` prints
# the lines between a game's version and the new one, and the notice to the
# players quotes them. A new version adds its entry here (and its paragraph
# under "## Rules versions" in docs/RECORDS.md).
class RulesChange(NamedTuple):
    """One line of what a rules version changed; ``option``: the option whose
    ``Options.applies`` decides whether a game is concerned ("": every game)."""

    text: str
    option: str = ""


RULES_CHANGES: Final[dict[int, tuple[RulesChange, ...]]] = {
    2: (
        RulesChange("Version 2 (pbem of 22 November 2026): the rulebooks read to the letter."),
        RulesChange(
            "A destroy mission is completed by whoever takes the target's last armies; only "
            "a target removed from the game (resigned, or removed by the GM) turns it into "
            "'occupy 24 territories'.",
            "mission_win",
        ),
        RulesChange(
            "Card re-rolls happen only on ATTACK ... REROLL (they were automatic).",
            "card_reroll",
        ),
        RulesChange(
            "Cards taken by eliminating a player that make 6 or more are traded at once down "
            "to 4 or fewer; their armies are placed by the PLACE orders written after that "
            "ATTACK (the rest on the territory taken last), no longer all at once on the "
            "territory taken last.",
            "forced_trade_at",
        ),
        RulesChange(
            "A defender may roll one die: the standing order DEFEND WITH 1 IN territory "
            "(DEFEND WITH 2 IN territory clears it)."
        ),
        RulesChange(
            "With two players and a draft, the neutral's third of the territories is dealt "
            "first; the players then draft the rest (the neutral drafted too).",
            "neutral",
        ),
        RulesChange(
            "Starting armies scale with the map's size (the same numbers on the classic map)."
        ),
    ),
    3: (
        RulesChange(
            "Version 3 (pbem of 28 November 2026): what an audit against the rulebooks found."
        ),
        RulesChange(
            "ATTACK ... REROLL re-rolls the lowest losing die only when re-rolling it gains "
            "armies on average (it was re-rolled on every roll that lost one).",
            "card_reroll",
        ),
        RulesChange(
            "The commander is used on the attack whose order says COMMANDER; without one, on "
            "the turn's first roll of 3 dice where it wins a comparison (it was the turn's "
            "first roll where it won one, even a one-die probe).",
            "commander",
        ),
        RulesChange(
            "Army cap (max_armies): a PLACE over it is refused, naming the room left; armies "
            "are lost only when no territory of the player has room (a missed turn's, a bot's "
            "and an elimination's armies go where there is room).",
            "max_armies",
        ),
        RulesChange(
            "The forced trade after an elimination is the player's: the TRADE orders written "
            "after that ATTACK choose the sets; without them the set worth most to the player, "
            "its +2 territory bonuses counted (no longer the most on its face); the same for "
            "the forced trade of a missed turn.",
            "forced_trade_at",
        ),
        RulesChange(
            "Player colours are read in the map's spelling ('Red' is red), so the destroy "
            "missions of colours typed with a capital are dealt; a colour the map does not "
            "have is refused (at the start of a game: a running game keeps its deal).",
            "mission_deck",
        ),
        RulesChange(
            "With two players, the player who rolls for the neutral (the attacker's opponent) "
            "may give DEFEND WITH 1 IN a neutral territory: the neutral then rolls one die "
            "against the other player's attacks there.",
            "neutral",
        ),
    ),
}


def rules_changes(
    old: int, new: int, options: Options | None = None, players: int | None = None
) -> list[str]:
    """The lines of RULES_CHANGES from version ``old`` (excluded) to ``new``; with
    ``options`` (and ``players``), only those that concern such a game (the
    version's first line, saying which version, always)."""
    return [
        change.text
        for v in range(old + 1, new + 1)
        for i, change in enumerate(RULES_CHANGES.get(v, ()))
        if i == 0 or options is None or not change.option or options.applies(change.option, players)
    ]


# What an option that a stored game or record does not name reads as: the
# behaviour of pbem before the option existed (not today's default, which
# would change a running game's rules under its players). Options added with
# a default that is the old behaviour need no entry. rules_version itself is
# read by stored_rules_version.
BEFORE_OPTION: Final[dict[str, Any]] = {
    # fixed values of pbem 95b4065: one of each is a set, worth 10
    "fixed_mixed_set": True,
    # a mission was won the moment it was complete, whoever's turn it was
    "mission_win": "at_once",
    # every mission of the map was dealt (the classic map's 14 then)
    "mission_deck": "extended",
}

# Rules every preset plays (no option changes them), said after the options.
FIXED_RULES: Final[tuple[str, ...]] = (
    "A defender rolls the most dice allowed (2, or 1 on one army), unless the owner's "
    "standing order DEFEND WITH 1 IN the territory says one die.",
    "Cards taken by eliminating a player that make 6 or more are traded at once down to "
    "4 or fewer: the sets of the TRADE orders written after that ATTACK, else the set "
    "worth most to the player (its +2s counted); their armies are placed by PLACE orders "
    "written after that ATTACK (the rest on the territory taken last).",
)

# What rules version 2 (issue 14) did instead (issue 33 changed them): the
# forced trade chosen by face value, and armies over max_armies lost.
FIXED_RULES_V2: Final[tuple[str, ...]] = (
    FIXED_RULES[0],
    "Cards taken by eliminating a player that make 6 or more are traded at once down to "
    "4 or fewer; their armies are placed by PLACE orders written after that ATTACK "
    "(the rest on the territory taken last).",
)
MAX_ARMIES_V2: Final = (
    "A territory holds at most {} armies; armies placed over it are lost, moves stop at it."
)

# Rules version 3 and later, with two players and the neutral.
NEUTRAL_DEFENCE: Final = (
    "With two players, the player who rolls for the neutral (the attacker's opponent) may "
    "order DEFEND WITH 1 IN a neutral territory."
)

# What rules version 1 (pbem 95b4065) did instead, said to the players of its
# games: no DEFEND, elimination armies on the territory taken last, and an
# automatic card re-roll.
FIXED_RULES_V1: Final[tuple[str, ...]] = (
    "A defender rolls the most dice allowed (2, or 1 on one army).",
    "Cards taken by eliminating a player that make 6 or more are traded at once down to "
    "4 or fewer; their armies are placed on the territory taken last.",
)
CARD_REROLL_V1: Final = (
    "An attacker holding the card of either territory re-rolls one lost die per roll."
)

# What rules version 3 (issue 33) says of the expert options instead of WORDS
# (the sentences of WORDS are those of versions 2, and 1 for the commander).
CARD_REROLL_V3: Final = (
    "An attacker holding the card of either territory may ask (ATTACK ... REROLL) to "
    "re-roll the lowest die that lost a comparison, which is done only when re-rolling "
    "it gains armies on average."
)
COMMANDER_V3: Final = (
    "Once per turn one attacking die of a roll counts as a 6: on the first roll of the "
    "attack written ATTACK ... COMMANDER where that wins a comparison; with no such "
    "order, on the turn's first roll of 3 attacking dice where it wins one."
)


@dataclass(frozen=True)
class Options:
    claim: str = "deal"
    placement: str = "blind"
    card_values: str = "escalating"
    fixed_mixed_set: bool = False
    territory_bonus: str = "once"
    traded_cards: str = "bottom"
    forced_trade_at: int = 5
    max_trades: int = 2
    move_in: str = "dice"
    fortify: str = "adjacent"
    max_armies: int = 0
    card_reroll: bool = False
    commander: bool = False
    goal: str = "domination"
    mission_win: str = "at_once"
    mission_deck: str = "rulebook"
    capitals_to_win: bool = False
    neutral: bool = True
    max_turns: int = 0
    min_players: int = 2
    max_players: int = 6
    rules_version: int = RULES_VERSION

    def __reduce__(self) -> tuple[Any, ...]:
        return by_fields(self)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            expected = bool if f.type in ("bool", bool) else int if f.type in ("int", int) else str
            if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise OptionsError(f"option {f.name} must be a whole number, not {value!r}")
            if expected is bool and not isinstance(value, bool):
                raise OptionsError(f"option {f.name} must be true or false, not {value!r}")
            if expected is str and value not in CHOICES[f.name]:
                allowed = ", ".join(CHOICES[f.name])
                raise OptionsError(f"option {f.name} must be one of {allowed}, not {value!r}")
        self._check_combinations()

    def _check_combinations(self) -> None:
        if self.rules_version not in RULES_VERSIONS:
            known = ", ".join(str(v) for v in RULES_VERSIONS)
            raise OptionsError(
                f"option rules_version must be one of {known}, not {self.rules_version!r} "
                "(a record or game from a newer pbem: upgrade pbem to read it)"
            )
        if self.forced_trade_at < 3:
            raise OptionsError("option forced_trade_at must be 3 or more")
        if self.max_trades < 1:
            raise OptionsError("option max_trades must be 1 or more")
        if self.max_armies < 0 or self.max_turns < 0:
            raise OptionsError("options max_armies and max_turns cannot be negative")
        if 0 < self.max_armies < 4:
            raise OptionsError("option max_armies must be 0 (no limit) or at least 4")
        if not 2 <= self.min_players <= self.max_players <= 6:
            raise OptionsError("players: need 2 <= min_players <= max_players <= 6")
        if self.capitals_to_win and self.goal != "capital":
            raise OptionsError("option capitals_to_win needs goal = capital")
        if self.goal == "capital" and self.max_players < 3:
            raise OptionsError("Capital Risk needs 3 or more players")
        bonus = self.territory_bonus in ("per_card", "per_set")
        if self.card_values == "none" and (self.card_reroll or bonus):
            raise OptionsError(
                "card_values = none leaves no cards for card_reroll or "
                f"territory_bonus = {self.territory_bonus}"
            )

    # -- construction ----------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "options") -> Options:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise OptionsError(f"{source}: unknown option {unknown[0]!r}")
        return cls(**data)

    @classmethod
    def from_stored(cls, data: dict[str, Any], source: str = "options") -> Options:
        """Options as a game or record stored them: a name it does not carry
        reads as the behaviour before that option existed (BEFORE_OPTION), so
        an upgrade of pbem never changes the rules of a stored game."""
        missing = {k: v for k, v in BEFORE_OPTION.items() if k not in data}
        version = {"rules_version": stored_rules_version(data)}
        return cls.from_dict({**data, **missing, **version}, source=source)

    def with_overrides(self, overrides: dict[str, Any], source: str = "options") -> Options:
        names = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise OptionsError(f"{source}: unknown option {unknown[0]!r}")
        return replace(self, **overrides)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def check_players(self, count: int) -> None:
        """Refuse a player count the options do not allow."""
        if not self.min_players <= count <= self.max_players:
            raise OptionsError(
                f"these rules need {self.min_players} to {self.max_players} players, not {count}"
            )
        if self.goal != "domination" and count < 3:
            goal = "Capital Risk" if self.goal == "capital" else "Secret Mission"
            raise OptionsError(f"{goal} needs 3 or more players, not {count}")

    def applies(self, name: str, players: int | None = None) -> bool:
        """Whether option ``name`` tells a player anything about a game of these
        options with ``players`` players (None: a preset, any count it allows).

        Left out: an extra rule that is off (re-rolls, commander, an army cap,
        a turn limit), an option read only under another option's value (the
        card options without cards, the mission and Capital Risk options
        under another goal), the two-player neutral in a game of more players,
        and, in a game, its limits on the number of players."""
        cards = self.card_values != "none"
        if name in ("card_reroll", "commander"):
            return bool(getattr(self, name)) and (cards or name == "commander")
        if name in ("max_armies", "max_turns"):
            return bool(getattr(self, name) != 0)
        if name == "fixed_mixed_set":
            return self.card_values == "fixed"
        if name in ("territory_bonus", "traded_cards", "forced_trade_at", "max_trades"):
            return cards
        if name in ("mission_win", "mission_deck"):
            return self.goal == "mission"
        if name == "capitals_to_win":
            return self.goal == "capital"
        if name == "neutral":
            return players == 2 if players is not None else self.min_players == 2
        if name in ("min_players", "max_players"):
            return players is None
        if name == "rules_version":
            return self.rules_version != RULES_VERSION
        return True

    def describe(self, players: int | None = None) -> list[str]:
        """The options in force, one sentence each, for people: those that
        apply (``applies``) to a game of ``players`` players (None: a preset)."""
        lines = []
        for f in fields(self):
            if not self.applies(f.name, players):
                continue
            value = getattr(self, f.name)
            words = WORDS[f.name]
            if f.name == "card_reroll" and value and self.rules_version == 1:
                lines.append(CARD_REROLL_V1)
            elif f.name == "card_reroll" and value and self.rules_version >= 3:
                lines.append(CARD_REROLL_V3)
            elif f.name == "commander" and value and self.rules_version >= 3:
                lines.append(COMMANDER_V3)
            elif f.name == "max_armies" and self.rules_version <= 2:
                lines.append(MAX_ARMIES_V2.format(value))
            elif isinstance(words, dict):
                lines.append(words[value])
            else:
                lines.append(words.format(value))
            if f.name == "neutral" and value and self.rules_version >= 3:
                lines[-1] += " " + NEUTRAL_DEFENCE  # one line: the neutral's rules
        fixed = {1: FIXED_RULES_V1, 2: FIXED_RULES_V2}.get(self.rules_version, FIXED_RULES)
        return lines + list(fixed if self.card_values != "none" else fixed[:1])


def stored_rules_version(data: dict[str, Any]) -> int:
    """The rules version of stored options. Options stored before the version
    was (pbem before 2026-11-28) carry none: those that name mission_win were
    written by the rules of version 2 (issue 14 added both), the others by
    version 1."""
    if "rules_version" in data:
        return int(data["rules_version"])
    return 2 if "mission_win" in data else 1


def parse_value(name: str, text: str) -> Any:
    """Turn a command-line ``K=V`` value into the option's type."""
    kinds = {f.name: f.type for f in fields(Options)}
    if name not in kinds:
        raise OptionsError(f"unknown option {name!r}")
    kind = kinds[name]
    if kind in ("bool", bool):
        low = text.strip().lower()
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise OptionsError(f"option {name} must be true or false, not {text!r}")
    if kind in ("int", int):
        try:
            return int(text)
        except ValueError:
            raise OptionsError(f"option {name} must be a whole number, not {text!r}") from None
    return text.strip()


def preset_options(text: str, source: str) -> Options:
    """A preset file's text (``config/rules/NAME.toml``: a table ``[options]``
    over the defaults) as options; ``source`` names the file in errors. The
    file is read by pbem.maps.presets: this layer does no I/O."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OptionsError(f"{source}: not valid TOML: {exc}") from None
    table = data.get("options", {})
    if not isinstance(table, dict):
        raise OptionsError(f"{source}: options: must be a table")
    try:
        return Options.from_dict(table, source=source)
    except OptionsError as exc:
        raise OptionsError(f"{source}: {exc}") from None
    except TypeError as exc:
        raise OptionsError(f"{source}: {exc}") from None


def preset_text_description(text: str) -> str:
    """The ``description`` line of a preset file's text."""
    return str(tomllib.loads(text).get("description", ""))
