"""What each option value says to people: one sentence each, for `pbem rules`,
the game-start mail and the rules-version notices.

Kept apart from the Options dataclass (pbem/rules/options.py) because the words
grow with every option and every rules version, the checks do not.
"""

from __future__ import annotations

from typing import Any, Final

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
        "parachute": (
            "One fortifying move per turn, between any two own territories (parachute: "
            "no path needed)."
        ),
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
        "assassin": (
            "Assassin: each player has a secret target (all targets form one circle); "
            "you win the moment your target is eliminated, by anyone; the target of a "
            "player who resigns or is removed passes to the player who hunted them."
        ),
        "terminator": (
            "Terminator: 1 point for each player you eliminate; the game ends at the "
            "round limit or when one player is left."
        ),
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
    "fog": {
        True: (
            "Fog of war: you see owners and armies only of your territories and those "
            "next to them, and only what happens there; the whole board is shown when "
            "the game ends."
        ),
        False: "No fog of war: the whole board is shown to all.",
    },
    # teams (online settings)
    "team_size": {
        0: "No teams: every player for themselves.",
        2: (
            "Doubles: teams of 2 by seat (seats 1-2 team A, 3-4 team B, ...), teams take "
            "turns alternately; you may PLACE on a teammate's territory and FORTIFY from "
            "yours into a teammate's adjacent one, never ATTACK a teammate; a team wins "
            "together when every other team is out (not every other player); a removed "
            "player's territories and cards go to their first surviving teammate; "
            "PRESS TO TEAM reaches your team."
        ),
        3: (
            "Triples: teams of 3 by seat (seats 1-3 team A, 4-6 team B), teams take "
            "turns alternately; you may PLACE on a teammate's territory and FORTIFY from "
            "yours into a teammate's adjacent one, never ATTACK a teammate; a team wins "
            "together when every other team is out (not every other player); a removed "
            "player's territories and cards go to their first surviving teammate; "
            "PRESS TO TEAM reaches your team."
        ),
    },
    # spoils, parachute and trench (online settings)
    "card_value_cap": (
        "Capped escalation: no card set is worth more than {} armies; the values rise "
        "to the cap and stay there."
    ),
    "trench": {
        True: (
            "Trench warfare: a territory taken this turn may not attack again this turn "
            "(one territory's advance per turn from each front)."
        ),
        False: "A territory taken this turn may attack on at once.",
    },
    # play order (online settings)
    "play_order": {
        "sequential": "Players take their turns one after another, in turn order.",
        "freestyle": (
            "Freestyle: each round, every player moves once, in the order their orders "
            "arrive (each mail is played on the board as it stands then); the round ends "
            "when all have moved or at its deadline, where a missed turn is played by "
            "the missed-turn rule."
        ),
    },
}

# The game types' names in messages (options errors, "needs 3 or more players").
GOAL_NAMES: Final[dict[str, str]] = {
    "domination": "Domination",
    "capital": "Capital Risk",
    "mission": "Secret Mission",
    "assassin": "Assassin",
    "terminator": "Terminator",
}

# max_turns under goal = terminator: the points decide first.
MAX_TURNS_TERMINATOR: Final = (
    "The game ends after {} rounds of turns; of the players still in the game, most "
    "points wins, then most territories, then most armies, then the earlier in turn order."
)

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
