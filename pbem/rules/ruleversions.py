"""Rules versions: which engine behaviour a stored game plays, and what each
version changed (docs/RECORDS.md, "Rules versions").

A game keeps the version it started with; these tables are read by the
option loader (a stored game without a version), `pbem upgrade-rules` and its
notice to the players.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NamedTuple

if TYPE_CHECKING:
    from pbem.rules.options import Options

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

def stored_rules_version(data: dict[str, Any]) -> int:
    """The rules version of stored options. Options stored before the version
    was (pbem before 2026-11-28) carry none: those that name mission_win were
    written by the rules of version 2 (issue 14 added both), the others by
    version 1."""
    if "rules_version" in data:
        return int(data["rules_version"])
    return 2 if "mission_win" in data else 1
