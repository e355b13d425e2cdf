"""Rule options: one typed, frozen object with the names of RULES.md.

A game stores its options; presets in ``config/rules/*.toml`` bundle them and
any single option can be overridden on top of a preset. Unknown names,
values of the wrong type and impossible combinations are refused with a
message that says which option and why.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Final

from pbem.rules.board import by_fields
from pbem.rules.errors import OptionsError
from pbem.rules.optionwords import (
    CARD_REROLL_V1,
    CARD_REROLL_V3,
    COMMANDER_V3,
    FIXED_RULES,
    FIXED_RULES_V1,
    FIXED_RULES_V2,
    GOAL_NAMES,
    MAX_ARMIES_V2,
    MAX_TURNS_TERMINATOR,
    NEUTRAL_DEFENCE,
    WORDS,
)
from pbem.rules.ruleversions import (
    BEFORE_OPTION,
    RULES_VERSION,
    RULES_VERSIONS,
    stored_rules_version,
)
from pbem.rules.teamrules import TEAM_SIZES, check_team_players

# option name -> allowed values (for the string-valued options)
CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "claim": ("deal", "draft", "turns"),
    "placement": ("blind", "auto"),
    "card_values": ("escalating", "linear", "fixed", "none"),
    "territory_bonus": ("once", "per_card", "per_set"),
    "traded_cards": ("bottom", "discard", "removed"),
    "move_in": ("dice", "survivors"),
    "fortify": ("adjacent", "chained", "unlimited", "none", "parachute"),
    # game types (online settings): assassin and terminator are goals too
    "goal": ("domination", "capital", "mission", "assassin", "terminator"),
    "mission_win": ("at_once", "own_turn"),
    "mission_deck": ("rulebook", "extended"),
    # play order (online settings): freestyle is rules/freestyle.py
    "play_order": ("sequential", "freestyle"),
}


# Options of the online settings, written to stored options and records only when
# not at their default (the value here): games and records that do not use them
# stay byte for byte as before (Options.to_dict).
QUIET_DEFAULTS: Final[dict[str, Any]] = {
    "fog": False,
    "team_size": 0,
    "card_value_cap": 0,
    "trench": False,
    "play_order": "sequential",
}


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
    # fog of war (online settings)
    fog: bool = False
    # teams (online settings): 0 no teams; 2 doubles, 3 triples (rules/teams.py)
    team_size: int = 0
    # spoils, parachute and trench (online settings)
    card_value_cap: int = 0  # escalating/linear sets worth at most this (0: no cap)
    trench: bool = False  # a territory taken this turn may not attack this turn
    # play order (online settings): "freestyle": each round, every player moves
    # once, in the order their orders arrive (rules/freestyle.py)
    play_order: str = "sequential"

    def __reduce__(self) -> tuple[Any, ...]:
        return by_fields(self)

    def __post_init__(self) -> None:
        _check_types({f.name: getattr(self, f.name) for f in fields(self)})
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
        if self.goal in ("capital", "assassin", "terminator") and self.max_players < 3:
            raise OptionsError(f"{GOAL_NAMES[self.goal]} needs 3 or more players")
        if self.goal == "terminator" and self.max_turns == 0:
            raise OptionsError(
                "goal = terminator needs a round limit: set max_turns to the number of "
                "rounds (e.g. max_turns = 20)"
            )
        self._check_teams()
        self._check_online()
        bonus = self.territory_bonus in ("per_card", "per_set")
        if self.card_values == "none" and (self.card_reroll or bonus):
            raise OptionsError(
                "card_values = none leaves no cards for card_reroll or "
                f"territory_bonus = {self.territory_bonus}"
            )

    def _check_teams(self) -> None:
        """Teams of 2 or 3 in games of domination (teams.TEAM_SIZES)."""
        if self.team_size not in TEAM_SIZES:
            raise OptionsError(
                "option team_size must be 0 (no teams), 2 (doubles) or 3 (triples), not "
                f"{self.team_size} (quadruples need 8 players; pbem seats at most 6)"
            )
        if self.team_size and self.goal != "domination":
            raise OptionsError(f"team games are played for domination, not goal = {self.goal}")
        if self.team_size and self.max_players < 2 * self.team_size:
            raise OptionsError(
                f"team_size = {self.team_size} needs max_players of {2 * self.team_size} or more"
            )

    def _check_online(self) -> None:
        """The card value cap caps values that rise: not fixed ones, not none."""
        cap = self.card_value_cap
        if cap and self.card_values not in ("escalating", "linear"):
            raise OptionsError(
                f"option card_value_cap caps escalating or linear card values, "
                f"not card_values = {self.card_values} (set card_value_cap = 0)"
            )
        if cap < 0 or 0 < cap < 4:
            raise OptionsError(
                "option card_value_cap must be 0 (no cap) or at least 4 (the first set's value)"
            )

    # -- construction ----------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "options") -> Options:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise OptionsError(f"{source}: unknown option {unknown[0]!r}")
        _check_types(data)  # before the values reach typed fields (compiled: 1 for true)
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
        _check_types(overrides)
        return replace(self, **overrides)

    def to_dict(self) -> dict[str, Any]:
        """The options as stored and recorded; an option of QUIET_DEFAULTS at its
        default is left out, so games and records written before it existed
        (and their hashes) stay byte for byte the same."""
        return {
            k: v
            for k, v in asdict(self).items()
            if k not in QUIET_DEFAULTS or v != QUIET_DEFAULTS[k]
        }

    def check_players(self, count: int) -> None:
        """Refuse a player count the options do not allow (a team game's first: its
        words say why, "doubles needs at least two teams")."""
        check_team_players(self.team_size, count)
        if not self.min_players <= count <= self.max_players:
            raise OptionsError(
                f"these rules need {self.min_players} to {self.max_players} players, not {count}"
            )
        if self.goal != "domination" and count < 3:
            raise OptionsError(f"{GOAL_NAMES[self.goal]} needs 3 or more players, not {count}")

    def applies(self, name: str, players: int | None = None) -> bool:
        """Whether option ``name`` tells a player anything about a game of these
        options with ``players`` players (None: a preset, any count it allows).

        Left out: an extra rule that is off (re-rolls, commander, an army cap,
        a turn limit, a card value cap, trench warfare), an option read only
        under another option's value (the card options without cards, the
        mission and Capital Risk options under another goal), the two-player
        neutral in a game of more players, and, in a game, its limits on the
        number of players."""
        cards = self.card_values != "none"
        if name in ("card_reroll", "commander"):
            return bool(getattr(self, name)) and (cards or name == "commander")
        if name in ("max_armies", "max_turns"):
            return bool(getattr(self, name) != 0)
        if name in ("card_value_cap", "trench"):
            return bool(getattr(self, name))
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
        if name == "team_size":
            return self.team_size != 0
        if name == "goal":  # a team game's own line says how a team wins
            return not self.team_size
        if name == "rules_version":
            return self.rules_version != RULES_VERSION
        if name == "fog":
            return self.fog
        if name == "play_order":
            return self.play_order != "sequential"
        return True

    def describe(self, players: int | None = None) -> list[str]:
        """The options in force, one sentence each, for people: those that
        apply (``applies``) to a game of ``players`` players (None: a preset)."""
        lines = []
        for f in fields(self):
            if not self.applies(f.name, players) or f.name == "card_value_cap":
                continue
            value = getattr(self, f.name)
            words = WORDS[f.name]
            if f.name == "card_reroll" and value and self.rules_version == 1:
                lines.append(CARD_REROLL_V1)
            elif f.name == "card_reroll" and value and self.rules_version >= 3:
                lines.append(CARD_REROLL_V3)
            elif f.name == "commander" and value and self.rules_version >= 3:
                lines.append(COMMANDER_V3)
            elif f.name == "max_turns" and self.goal == "terminator":
                lines.append(MAX_TURNS_TERMINATOR.format(value))
            elif f.name == "max_armies" and self.rules_version <= 2:
                lines.append(MAX_ARMIES_V2.format(value))
            elif isinstance(words, dict):
                lines.append(words[value])
            else:
                lines.append(words.format(value))
            if f.name == "card_values" and self.card_value_cap:  # the cap, next to its values
                lines.append(str(WORDS["card_value_cap"]).format(self.card_value_cap))
            if f.name == "neutral" and value and self.rules_version >= 3:
                lines[-1] += " " + NEUTRAL_DEFENCE  # one line: the neutral's rules
        fixed = {1: FIXED_RULES_V1, 2: FIXED_RULES_V2}.get(self.rules_version, FIXED_RULES)
        return lines + list(fixed if self.card_values != "none" else fixed[:1])


def _check_types(values: dict[str, Any]) -> None:
    """Refuse a value of the wrong type for its option, naming both. Run on the
    raw values too: the compiled dataclass would store true as 1 in a whole
    number's field before __post_init__ could see it."""
    kinds = {f.name: f.type for f in fields(Options)}
    for name, value in values.items():
        kind = kinds[name]
        if kind in ("int", int) and (isinstance(value, bool) or not isinstance(value, int)):
            raise OptionsError(f"option {name} must be a whole number, not {value!r}")
        if kind in ("bool", bool) and not isinstance(value, bool):
            raise OptionsError(f"option {name} must be true or false, not {value!r}")
        if kind in ("str", str) and value not in CHOICES[name]:
            allowed = ", ".join(CHOICES[name])
            raise OptionsError(f"option {name} must be one of {allowed}, not {value!r}")


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
