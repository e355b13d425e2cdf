"""Is a map fair? Bot games on it, the share of wins per seat, and a chart.

A seat is a place in the turn order (first to play, second, ...): the engine
draws the order at random, so a map that favours the first player shows up
here and not in the players' names.  Each share has its 95% Wilson score
interval, which stays inside 0..1 and is honest for small counts:

    centre = (p + z²/2n) / (1 + z²/n),  half = z √(p(1-p)/n + z²/4n²) / (1 + z²/n)

with p the share of the n finished games, z = 1.96.  Games stopped by the
turn cap have no winner and are counted apart.

In a team game (``team_size``) the wins are tallied by team as well: the
turn order alternates teams (``teams.interleave``), so with T teams the
players at turn-order places k, k+T, k+2T, ... are one team, "team k" here
(team 1 plays first).  A team's win counts once for its team and once for
the seat of the player named winner (the team's first survivor by seat).
"""

from __future__ import annotations

import io
import math
import multiprocessing
from dataclasses import dataclass
from typing import Any

from pbem.rules import teams
from pbem.rules.board import Board
from pbem.rules.bots import make_bot
from pbem.rules.dice import DiceStream
from pbem.rules.options import Options
from pbem.rules.simulate import DEFAULT_CAP, begin_next, game_secret, setup_game
from pbem.rules.state import ENDED, GameState
from pbem.rules.turnplan import play_turn

Z95 = 1.959964


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``wins`` out of ``games`` (0, 1 when no games)."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class GameOutcome:
    seed: int
    seat: int | None  # the winner's place in the turn order (0: first), None when capped
    turns: int  # player-turns
    team: int | None = None  # team games: the winning team's place in the turn order (0: first)


@dataclass
class Balance:
    """The outcome of ``games`` bot games on one map."""

    map_title: str
    players: int
    bot: str
    seed: int
    outcomes: list[GameOutcome]
    team_size: int = 0  # 0: no teams; else the wins are tallied by team too

    @property
    def teams(self) -> int:
        """How many teams (0 without teams)."""
        return self.players // self.team_size if self.team_size else 0

    @property
    def games(self) -> int:
        return len(self.outcomes)

    @property
    def finished(self) -> int:
        return sum(1 for o in self.outcomes if o.seat is not None)

    def wins(self) -> list[int]:
        counts = [0] * self.players
        for o in self.outcomes:
            if o.seat is not None:
                counts[o.seat] += 1
        return counts

    def average_turns(self) -> float:
        done = [o.turns for o in self.outcomes if o.seat is not None]
        return sum(done) / len(done) if done else 0.0

    def team_wins(self) -> list[int]:
        """Wins by team, the team playing first first (empty without teams)."""
        counts = [0] * self.teams
        for o in self.outcomes:
            if o.team is not None and self.teams:
                counts[o.team] += 1
        return counts

    def rows(self) -> list[tuple[int, int, float, float, float]]:
        """(seat, wins, share, low, high) for each seat, first to play first."""
        return self._shares(self.wins())

    def team_rows(self) -> list[tuple[int, int, float, float, float]]:
        """(team, wins, share, low, high) for each team, the team playing first first."""
        return self._shares(self.team_wins())

    def _shares(self, wins: list[int]) -> list[tuple[int, int, float, float, float]]:
        out = []
        for place, won in enumerate(wins):
            low, high = wilson(won, self.finished)
            share = won / self.finished if self.finished else 0.0
            out.append((place + 1, won, share, low, high))
        return out

    def fair(self) -> bool:
        """Does every seat's interval hold the fair share 1/players (and, in a team
        game, every team's the fair share 1/teams)?"""
        fair_share = 1 / self.players
        seats = all(low <= fair_share <= high for _, _, _, low, high in self.rows())
        return seats and self.teams_fair()

    def teams_fair(self) -> bool:
        """Every team's interval holds 1/teams (True without teams)."""
        if not self.teams:
            return True
        share = 1 / self.teams
        return all(low <= share <= high for _, _, _, low, high in self.team_rows())

    def describe(self) -> str:
        lines = [
            f"{self.map_title}: {self.games} games of {self.players} {self.bot} bots "
            f"(seeds {self.seed}..{self.seed + self.games - 1})",
            f"finished: {self.finished}, stopped by the turn cap: {self.games - self.finished}",
            f"average game length: {self.average_turns():.1f} player-turns "
            f"({self.average_turns() / self.players:.1f} rounds)",
            "",
            "seat (turn order)   wins   share   95% interval (Wilson)",
        ]
        for seat, won, share, low, high in self.rows():
            lines.append(
                f"{seat:>4}               {won:>4}   {share:6.1%}   {low:6.1%} .. {high:6.1%}"
            )
        lines.extend(self._team_lines())
        lines.append("")
        fair = 1 / self.players
        verdict = (
            f"every interval holds the fair share {fair:.1%}"
            if self.fair()
            else f"some seat's interval misses the fair share {fair:.1%}: the map may favour "
            "a seat (or play more games)"
        )
        lines.append(verdict)
        if self.teams:
            lines.append(
                f"teams: every interval holds the fair share {1 / self.teams:.1%}"
                if self.teams_fair()
                else f"teams: some team's interval misses the fair share {1 / self.teams:.1%}"
            )
        return "\n".join(lines)

    def _team_lines(self) -> list[str]:
        """The wins by team (none without teams): team k is the players at turn-order
        places k, k+T, ... (the turn order alternates teams)."""
        if not self.teams:
            return []
        lines = [
            "",
            f"team (turn order; teams of {self.team_size}, a team's win counted once)",
            "team  seats          wins   share   95% interval (Wilson)",
        ]
        for team, won, share, low, high in self.team_rows():
            places = ", ".join(str(p) for p in range(team, self.players + 1, self.teams))
            lines.append(
                f"{team:>4}  {places:<13} {won:>4}   {share:6.1%}   {low:6.1%} .. {high:6.1%}"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "map": self.map_title,
            "players": self.players,
            "bot": self.bot,
            "seed": self.seed,
            "games": self.games,
            "finished": self.finished,
            "average_turns": round(self.average_turns(), 1),
            "seats": [
                {
                    "seat": seat,
                    "wins": won,
                    "share": round(share, 4),
                    "low": round(low, 4),
                    "high": round(high, 4),
                }
                for seat, won, share, low, high in self.rows()
            ],
            "fair": self.fair(),
            **self._teams_json(),
        }

    def _teams_json(self) -> dict[str, Any]:
        if not self.teams:
            return {}
        return {
            "team_size": self.team_size,
            "teams": [
                {
                    "team": team,
                    "seats": list(range(team, self.players + 1, self.teams)),
                    "wins": won,
                    "share": round(share, 4),
                    "low": round(low, 4),
                    "high": round(high, 4),
                }
                for team, won, share, low, high in self.team_rows()
            ],
        }


def play_one(
    board: Board, options: Options, players: int, seed: int, bot: str, cap: int
) -> GameOutcome:
    """One bot game; who won, by place in the turn order."""
    kinds = bot.split(",")
    bots = [make_bot(kinds[seat % len(kinds)], seed * 10 + seat) for seat in range(players)]
    state = setup_game(board, options, players, seed, bots)
    secret = game_secret(seed)
    while state.phase != ENDED and state.turn <= cap:
        if not begin_next(state, secret):  # freestyle: the first to "arrive" moves
            break
        rng = DiceStream(secret, state.game, f"turn:{state.turn}")
        play_turn(state, bots[state.current].plan_turn(state), rng)
    if state.phase != ENDED or state.winner is None:
        return GameOutcome(seed, None, state.turn)
    place = state.order.index(state.winner)
    return GameOutcome(seed, place, state.turn, _team_place(state, place))


def _team_place(state: GameState, place: int) -> int | None:
    """The winner's team by its place in the turn order (0: the team playing
    first), None without teams. The turn order alternates the teams."""
    count = teams.team_count(state)
    return place % count if count else None


def _play(job: tuple[Board, Options, int, int, str, int]) -> GameOutcome:
    return play_one(*job)


def balance(
    board: Board,
    options: Options,
    players: int,
    games: int,
    seed: int = 1,
    bot: str = "greedy",
    workers: int = 1,
    cap: int = DEFAULT_CAP,
) -> Balance:
    """Play ``games`` games (seeds ``seed`` ..) and count the wins by seat."""
    if games < 1:
        raise ValueError("play at least one game")
    options.check_players(players)
    for kind in bot.split(","):
        make_bot(kind, 0)  # an unknown bot fails here, before any game
    jobs = [(board, options, players, seed + i, bot, cap) for i in range(games)]
    if workers <= 1 or games == 1:
        outcomes = [_play(job) for job in jobs]
    else:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        with context.Pool(min(workers, games)) as pool:
            outcomes = pool.map(_play, jobs)
    return Balance(board.title, players, bot, seed, outcomes, options.team_size)


# -- the chart ------------------------------------------------------------------------
def chart_png(result: Balance, width: int = 560, height: int = 320) -> bytes:
    """A bar per seat (its share of wins) with its 95% interval and the fair share."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=13)
    left, right, top, bottom = 56, width - 16, 40, height - 44
    draw.text(
        (left, 10),
        f"{result.map_title}: wins by seat, {result.finished} of {result.games} games",
        fill=(20, 20, 20),
        font=font,
    )
    top_share = max([0.5] + [high for *_, high in result.rows()])
    top_share = min(1.0, math.ceil(top_share * 10) / 10)

    def y_of(share: float) -> float:
        return bottom - (bottom - top) * share / top_share

    for tick in range(0, int(round(top_share * 10)) + 1):
        share = tick / 10
        y = y_of(share)
        draw.line([(left, y), (right, y)], fill=(225, 225, 225))
        draw.text((left - 8, y), f"{share:.0%}", fill=(80, 80, 80), font=font, anchor="rm")
    draw.line([(left, top), (left, bottom), (right, bottom)], fill=(60, 60, 60))
    slot = (right - left) / result.players
    for seat, _, share, low, high in result.rows():
        x0 = left + slot * (seat - 1) + slot * 0.2
        x1 = left + slot * seat - slot * 0.2
        draw.rectangle((x0, y_of(share), x1, bottom), fill=(38, 84, 196))
        middle = (x0 + x1) / 2
        draw.line([(middle, y_of(low)), (middle, y_of(high))], fill=(20, 20, 20), width=2)
        for end in (low, high):
            draw.line(
                [(middle - 6, y_of(end)), (middle + 6, y_of(end))], fill=(20, 20, 20), width=2
            )
        draw.text((middle, bottom + 6), f"seat {seat}", fill=(20, 20, 20), font=font, anchor="mt")
    fair = y_of(1 / result.players)
    draw.line([(left, fair), (right, fair)], fill=(204, 40, 40), width=2)
    draw.text((right, fair - 4), "fair share", fill=(204, 40, 40), font=font, anchor="rb")
    draw.text(
        (left, height - 20),
        f"bars: share of wins; lines: 95% Wilson intervals; "
        f"average {result.average_turns():.0f} player-turns a game",
        fill=(80, 80, 80),
        font=font,
    )
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()
