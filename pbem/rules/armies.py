"""Starting armies that fit the map, and the check that a game can be set up.

The rulebooks give 40 (two players, and the neutral), 35, 30, 25 and 20
armies for 2 to 6 players on the 42 territories of the classic map. On
another map pbem scales them by the number of territories, as Domination
and Conquer Club scale theirs:

    armies = ceil(rulebook(players) x territories / 42)

so the classic map keeps the rulebook's numbers exactly, a 110-territory
map with 3 players gives 92 each, a 12-territory one 10. The product
rulebook(p) x p is at least 80 for every p, so every player always has at
least one army for each territory the deal gives them.
"""

from __future__ import annotations

from math import ceil
from typing import Final

from pbem.rules.board import Board
from pbem.rules.errors import RulesError
from pbem.rules.options import Options

RULEBOOK: Final = {2: 40, 3: 35, 4: 30, 5: 25, 6: 20}
CLASSIC_TERRITORIES: Final = 42


def starting_armies(players: int, territories: int) -> int:
    """Initial armies of each player (and of the neutral in a two-player game)."""
    return ceil(RULEBOOK[players] * territories / CLASSIC_TERRITORIES)


def check_setup(options: Options, board: Board, players: int) -> None:
    """Refuse, with the reason, a game that could not get through its setup."""
    seats = players + (1 if options.neutral and players == 2 else 0)
    territories = len(board.territories)
    if territories < seats:
        raise RulesError(
            "setup",
            f"map {board.name} has {territories} territories, too few for {seats} "
            "seats (each needs at least one)",
        )
    armies = starting_armies(players, territories)
    fewest = territories // seats  # the smallest holding the deal can give
    if options.max_armies and armies > options.max_armies * fewest:
        raise RulesError(
            "setup",
            f"with max_armies = {options.max_armies}, {armies} starting armies do not fit "
            f"on the {fewest} {'territory' if fewest == 1 else 'territories'} a player may "
            f"get on map {board.name}",
        )
