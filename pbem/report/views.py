"""From states and events to what a mail shows: sentences, rows and tables.

Everything a template prints is computed here, once for the text part and the
HTML part alike, so both always say the same. The viewer's seat decides the
private lines (their cards, what they drew, their mission); nothing private of
another seat ever enters a view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pbem.report import teamview
from pbem.report.context import GameInfo
from pbem.report.picture.colours import NEUTRAL, Side, colour_rgb, hex_colour, text_on
from pbem.report.textfmt import WIDTH, join_words, plural
from pbem.rules import gametypes
from pbem.rules.actions import Claim
from pbem.rules.board import Board
from pbem.rules.cards import all_sets, designs_of, mixed_sets, set_value
from pbem.rules.defaults import fit_to_cap, trade_bonus
from pbem.rules.engine import reinforcement_base
from pbem.rules.opening import neutral_share
from pbem.rules.state import CLAIM, ENDED, HQ, PLACE, SETUP_PHASES, GameState
from pbem.rules.victory import mission_of


# ----------------------------------------------------------------------- pieces
@dataclass(frozen=True)
class Who:
    """A seat as mails name it."""

    seat: int
    name: str
    colour: str
    hex: str  # the colour as drawn on the map
    ink: str  # black or white, to write on ``hex``


@dataclass(frozen=True)
class PlayerRow:
    who: Who
    territories: int | str  # str: "?", hidden by the fog of war
    armies: int | str
    cards: int
    continents: str
    next_armies: int | None  # None: out of the game
    to_move: bool
    status: str  # "", "out", "winner"
    holder: str = ""  # who holds the seat, when `pbem replace` gave it to another
    points: int | None = None  # terminator's points (public); None in other games
    team: str = ""  # team games: the seat's team letter ("A")

    @property
    def shown_name(self) -> str:
        """The seat's name, and its holder's when another holds it now."""
        return f"{self.who.name} (held by {self.holder})" if self.holder else self.who.name


@dataclass(frozen=True)
class BoardRow:
    name: str
    who: Who
    armies: int
    marks: str  # "*" changed hands this turn, "H" a headquarters


@dataclass(frozen=True)
class ContinentBlock:
    name: str
    bonus: int
    holder: Who | None
    rows: tuple[BoardRow, ...]

    @property
    def title(self) -> str:
        held = f": {self.holder.name}" if self.holder else ""
        return f"{self.name} (+{self.bonus}){held}"


@dataclass(frozen=True)
class Due:
    """The armies due at the start of a turn, before trades."""

    total: int
    territories: int
    base: int
    continents: tuple[tuple[str, int], ...]

    def sentence(self, name: str) -> str:
        """``alice receives 7 armies: 3 for 11 territories and 4 for ...``; name "You" works."""
        parts = [f"{self.base} for {plural(self.territories, 'territory', 'territories')}"]
        parts += [f"{bonus} for {continent}" for continent, bonus in self.continents]
        verb = "receive" if name == "You" else "receives"
        return f"{name} {verb} {plural(self.total, 'army', 'armies')}: {join_words(parts)}."


# -------------------------------------------------------------------- lookups
def who(game: GameInfo, state: GameState, seat: int) -> Who:
    player = state.players[seat]
    if player.neutral:
        rgb = NEUTRAL
        colour = "grey"
    else:
        try:
            colour = game.player(seat).colour
        except KeyError:
            colour = player.colour
        rgb = colour_rgb(colour or player.colour, seat)
    return Who(seat, player.name, colour, hex_colour(rgb), hex_colour(text_on(rgb)))


def sides(game: GameInfo, state: GameState) -> list[Side]:
    """The owners for the map picture, by seat."""
    out = []
    for seat, player in enumerate(state.players):
        rgb = NEUTRAL if player.neutral else colour_rgb(who(game, state, seat).colour, seat)
        team = teamview.team_letter(state, seat)  # team games: the legend names the team
        name = f"{player.name} (team {team})" if team else player.name
        out.append(Side(name, rgb, state.territory_count(seat), state.army_count(seat)))
    return out


def territory_name(board: Board, index: int) -> str:
    return board.territories[index].name


def card_text(board: Board, card: int) -> str:
    """``Kamchatka (cavalry)`` or ``Wild``."""
    if board.card_territory(card) is None:
        return "Wild"
    return f"{board.card_name(card)} ({board.card_design(card)})"


def hand_text(board: Board, cards: Sequence[int]) -> str:
    if not cards:
        return "none"
    return ", ".join(card_text(board, c) for c in sorted(cards))


def continent_short(board: Board, index: int) -> str:
    """The shortest alias of three letters or more, else the name."""
    continent = board.continents[index]
    fitting = [a for a in continent.aliases if len(a) >= 3]
    return min(fitting, key=len) if fitting else continent.name


def due(state: GameState, seat: int) -> Due:
    """Armies at the start of ``seat``'s turn on this board (cards not counted)."""
    territories = state.territory_count(seat)
    base = reinforcement_base(territories)
    held = tuple(
        (state.board.continents[c].name, state.board.continents[c].bonus)
        for c in state.continents_held(seat)
    )
    return Due(base + sum(b for _, b in held), territories, base, held)


def round_of(before: GameState) -> int:
    """The round a turn was played in, from the state at its start: the engine's
    ``round`` counts the rounds begun, and the last seat's turn ends by beginning
    the next one (so the state after turn 3 of three players says round 2). Seats
    out of the game and the neutral take no turn and count for nothing."""
    return before.round


def conquered(before: GameState, after: GameState) -> list[int]:
    """Territories that changed hands between two states."""
    return [t for t, (a, b) in enumerate(zip(before.owner, after.owner, strict=True)) if a != b]


def target_text(state: GameState, seat: int | None) -> str:
    """Assassin: the name of the player ``seat`` hunts now ("" in other games).
    Private to ``seat``, like the mission: only ever in that player's own copy."""
    target = gametypes.target_of(state, seat)
    if target is None or seat is None or not state.players[seat].alive:
        return ""
    player = state.players[target]
    return f"{player.name} ({player.colour})" if player.colour else player.name


def mission_text(state: GameState, seat: int | None) -> str:
    if seat is None:
        return ""
    mission = mission_of(state, seat)
    return mission.text if mission else ""


# ------------------------------------------------------------------ the board
def player_rows(game: GameInfo, state: GameState, to_move: int | None) -> list[PlayerRow]:
    rows = []
    board = state.board
    for seat in state.order + [s for s in range(len(state.players)) if s not in state.order]:
        player = state.players[seat]
        if player.neutral and not state.territory_count(seat):
            continue
        held = state.continents_held(seat)
        names = [continent_short(board, c) for c in held]
        continents = ", ".join(names) if len(", ".join(names)) <= 16 else f"{len(held)} cont."
        alive = player.alive and not player.neutral
        won = teamview.won(state, seat)  # (team games: every player of the winning team)
        status = "winner" if won else ("" if player.alive else "out")
        rows.append(
            PlayerRow(
                who=who(game, state, seat),
                territories=state.territory_count(seat),
                armies=state.army_count(seat),
                cards=len(player.cards),
                continents=continents or "-",
                next_armies=due(state, seat).total if alive and state.phase != ENDED else None,
                to_move=seat == to_move,
                status=status,
                holder=next((p.holder for p in game.players if p.seat == seat), ""),
                points=gametypes.points_shown(state, seat),
                team=teamview.team_letter(state, seat),
            )
        )
    return rows


def player_table(rows: Sequence[PlayerRow]) -> tuple[list[str], list[list[str]], str]:
    """Header, cells and alignment of the players table (the text part's columns);
    team games add a Team column after the colour, terminator the points."""
    header = ["  Player", "Colour", "Terr", "Armies", "Cards", "Continents", "Next"]
    align = "llrrrlr"
    scored = any(r.points is not None for r in rows)
    teamed = any(r.team for r in rows)
    cells = []
    for r in rows:
        row = [
            ("> " if r.to_move else "  ") + r.shown_name,
            r.who.colour,
            str(r.territories),
            str(r.armies),
            str(r.cards),
            r.continents,
            str(r.next_armies) if r.next_armies is not None else r.status or "-",
        ]
        if teamed:
            row.insert(2, r.team)
        if scored:
            row.append(str(r.points) if r.points is not None else "-")
        cells.append(row)
    if teamed:
        header.insert(2, "Team")
        align = "lll" + align[2:]
    if scored:
        header.append("Points")
        align += "r"
    return header, cells, align


def team_totals(rows: Sequence[PlayerRow]) -> str:
    """Team games: "Teams: team A 15 territories, 39 armies; ...", said under the
    players table of every mail and page ("" without teams, and under fog, where
    the others' counts are unknown and a total would give them away)."""
    letters = sorted({r.team for r in rows if r.team})
    if not letters or any(isinstance(r.territories, str) for r in rows):
        return ""
    parts = [
        f"team {t} {sum(int(r.territories) for r in rows if r.team == t)} territories, "
        f"{sum(int(r.armies) for r in rows if r.team == t)} armies"
        for t in letters
    ]
    return f"Teams: {'; '.join(parts)}."


def team_standing(rows: Sequence[PlayerRow]) -> list[str]:
    """The text part's lines of ``team_totals``, after the players table."""
    totals = team_totals(rows)
    return ["", totals] if totals else []


def board_blocks(
    game: GameInfo, state: GameState, changed: Sequence[int] = ()
) -> list[ContinentBlock]:
    board = state.board
    hqs = {p.hq for p in state.players if p.hq is not None and state.phase not in (HQ,)}
    blocks = []
    for continent in board.continents:
        holders = {state.owner[t] for t in continent.territories}
        holder = next(iter(holders)) if len(holders) == 1 else None
        rows = []
        for t in continent.territories:
            marks = ("*" if t in changed else "") + ("H" if t in hqs else "")
            owner = state.owner[t]
            rows.append(
                BoardRow(
                    territory_name(board, t),
                    who(game, state, owner) if owner >= 0 else _nobody(),
                    state.armies[t],
                    marks,
                )
            )
        blocks.append(
            ContinentBlock(
                continent.name,
                continent.bonus,
                who(game, state, holder) if holder is not None and holder >= 0 else None,
                tuple(rows),
            )
        )
    return blocks


def _nobody() -> Who:
    return Who(-1, "-", "", hex_colour(NEUTRAL), "#000000")


def board_block_lines(block: ContinentBlock, name_width: int, owner_width: int) -> list[str]:
    lines = [block.title]
    for r in block.rows:
        marks = f" {r.marks}" if r.marks else ""
        lines.append(
            f" {r.name.ljust(name_width)} {r.who.name.ljust(owner_width)} {r.armies:>3}{marks}"
        )
    return lines


# ----------------------------------------------------------------- your turn
@dataclass(frozen=True)
class SetView:
    cards: str
    value: int


def sets_view(state: GameState, seat: int) -> list[SetView]:
    """The sets in ``seat``'s hand and what the next trade would give."""
    if state.options.card_values == "none":
        return []
    board = state.board
    number = state.sets_traded + 1
    return [
        SetView(
            ", ".join(board.card_name(c) for c in combo),
            set_value(state.options, number, designs_of(board, combo)),
        )
        for combo in all_sets(board, state.players[seat].cards, mixed_sets(state.options))
    ]


def draft_picks(state: GameState, seat: int) -> tuple[int, int]:
    """(free territories, how many of them ``seat`` gets) in a draft: picks go
    round by round in turn order until none is free (pbem.rules.opening)."""
    free = state.owner.count(-1)
    takers = len(state.order)
    place = state.order.index(seat) if seat in state.order else takers
    return free, free // takers + (1 if place < free % takers else 0)


def claim_rest(state: GameState, seat: int, actions: Sequence[object]) -> str:
    """What a CLAIM leaves to the rules: how the territories it does not
    list are chosen ("" when ``actions`` hold no CLAIM or it is no claim phase)."""
    listed = {t for a in actions if isinstance(a, Claim) for t in a.territories}
    if state.phase != CLAIM or not any(isinstance(a, Claim) for a in actions):
        return ""
    if state.options.claim == "turns":
        return (
            "This round you take the first territory on your list still free when your "
            "turn in the round comes; if none on it is free, the first free territory "
            "in map order."
        )
    free, picks = draft_picks(state, seat)
    rest = picks - len(listed)
    others = (
        f"the other {rest} (or more, if others take yours first) are each"
        if rest > 0
        else "once none on it is free, each pick is"
    )
    return (
        f"You listed {len(listed)} of the {free} free territories and get {picks} in the "
        "draft, one pick each round in turn order: each pick takes the first territory "
        f"on your list still free; {others} the first free territory in map order "
        "when its pick comes."
    )


def setup_continues(state: GameState) -> bool:
    """Whether another setup phase, or round of claims, follows the one ``state``
    is in before the first turn (else its orders end the setup)."""
    options = state.options
    if state.phase == CLAIM:
        if options.claim == "turns" and state.owner.count(-1) > len(state.order):
            return True
        return options.placement != "auto" or options.goal == "capital"
    if state.phase == PLACE:
        return options.goal == "capital"
    return False


def setup_task(state: GameState, seat: int) -> list[str]:
    """What a setup phase asks of ``seat``, in sentences (empty once play began);
    the example lines (indented) are orders ``seat`` could send now."""
    example = [f"  {line}" for line in setup_examples(state, seat)]
    if state.phase == CLAIM and state.options.claim == "turns":
        free = state.owner.count(-1)
        return [
            "Territories are claimed in turn, one each round. Send your preference list, "
            "best first, on one line, for example:",
            *example,
            "This round, in turn order, each player takes the first free territory on their "
            "list (none free on it: the first free territory in map order). "
            f"{plural(free, 'territory is', 'territories are')} still free.",
        ]
    if state.phase == CLAIM:
        free, picks = draft_picks(state, seat)
        lines = [
            "Territories are drafted: send your preference list, best first, on one line, "
            "for example:",
            *example,
            "Picks are made in turn order, one territory each round, each taking the first "
            "free territory on your list (a list that runs out takes the first free "
            f"territory in map order). You get {picks} of the {free} free territories.",
        ]
        neutral = state.neutral_seat
        if neutral is not None and neutral in state.owner:
            held = state.owner.count(neutral)
            lines.append(
                f"The neutral army's {plural(held, 'territory', 'territories')} were dealt "
                "at random before the draft; they are not free."
            )
        return lines
    if state.phase == PLACE:
        player = state.players[seat]
        lines = [
            f"Place your {plural(player.to_place, 'initial army', 'initial armies')} on your "
            "territories, all in one PLACE line (placed by everyone at once), for example:",
            *example[:1],
        ]
        share = neutral_share(state, seat)
        if share:
            lines.append(
                f"You also place {plural(share, 'neutral army', 'neutral armies')} on neutral "
                "territories, in one NEUTRAL line:"
            )
            lines += example[1:]
        return lines
    if state.phase == HQ:
        return [
            "Choose your headquarters among your territories (kept secret until all chose), "
            "for example:",
            *example,
        ]
    return []


# ---------------------------------------------------------- example orders
# Orders a player could send now, on their own territories, picked in map
# order (never by chance): the examples of the setup prompts, the turn
# notice and HELP. The generic ones (pbem.orders.help) are for strangers.
def _spread(state: GameState, keyword: str, armies: int, territories: Sequence[int]) -> str:
    """``PLACE 3 Alaska, 2 Alberta``: ``armies`` over the first two of ``territories``."""
    names = [state.board.territories[t].name for t in territories[:2]]
    if len(names) < 2 or armies < 2:
        return f"{keyword} {armies} {names[0]}"
    return f"{keyword} {armies - armies // 2} {names[0]}, {armies // 2} {names[1]}"


def setup_examples(state: GameState, seat: int) -> list[str]:
    """Setup orders ``seat`` could send in this phase, on this board."""
    board, own = state.board, state.territories_of(seat)
    if state.phase == CLAIM:  # up to three free ones, on one line of the mail
        names = [board.territories[t].name for t, owner in enumerate(state.owner) if owner < 0]
        shown = next(
            (names[:n] for n in (3, 2) if len("  CLAIM " + ", ".join(names[:n])) <= WIDTH),
            names[:1],
        )
        return ["CLAIM " + ", ".join(shown)] if shown else []
    if state.phase == PLACE and own and state.players[seat].to_place > 0:
        lines = [_spread(state, "PLACE", state.players[seat].to_place, own)]
        share, neutral = neutral_share(state, seat), state.neutral_seat
        if share and neutral is not None:
            lines.append(_spread(state, "NEUTRAL", share, state.territories_of(neutral)))
        return lines
    if state.phase == HQ and own:
        return [f"HQ {board.territories[own[0]].name}"]
    return []


def turn_examples(state: GameState, seat: int) -> list[str]:
    """Orders for ``seat``'s turn on this board: a forced trade, the armies due
    split over two of their territories, an attack from the strongest one on
    a border (2 armies or more once placed) on its weakest enemy neighbour,
    and a fortifying move between two adjacent territories of theirs."""
    board, own = state.board, state.territories_of(seat)
    if not own:
        return []
    moving = state.current == seat
    armies = state.reinforcements if moving else due(state, seat).total
    lines = []
    sets = sets_view(state, seat)
    if moving and sets and state.must_trade:
        lines.append(f"TRADE {sets[0].cards}")
        armies += sets[0].value
    front = [t for t in own if any(state.owner[n] != seat for n in board.territories[t].neighbours)]
    base = max(front or own, key=lambda t: (state.armies[t], -t))
    pairs = [
        (a, b)
        for a in own
        if a != base
        for b in board.territories[a].neighbours
        if state.owner[b] == seat
    ]
    second = pairs[0][0] if pairs else next((t for t in own if t != base), None)
    if state.options.max_armies and state.options.rules_version >= 3:
        # rules version 3 refuses a PLACE over the cap: what falls over goes
        # where there is room, as a missed turn's (defaults.fit_to_cap)
        hand = state.players[seat].cards
        traded = all_sets(state.board, hand, mixed_sets(state.options))[:1] if lines else []
        lines += _capped_place(state, seat, armies, base, second, front, traded)
    else:
        lines.append(_spread(state, "PLACE", armies, [base] if second is None else [base, second]))
    enemy = [n for n in board.territories[base].neighbours if state.owner[n] != seat]
    if enemy:
        weakest = min(enemy, key=lambda n: (state.armies[n], n))
        lines.append(f"ATTACK {board.territories[base].name} -> {board.territories[weakest].name}")
    if pairs and state.options.fortify != "none":
        source, target = pairs[0]  # source is second: it has what it had and armies // 2
        if state.armies[source] + armies // 2 >= 2:
            lines.append(
                f"FORTIFY 1 {board.territories[source].name} -> {board.territories[target].name}"
            )
    return lines


def _capped_place(
    state: GameState,
    seat: int,
    armies: int,
    base: int,
    second: int | None,
    front: list[int],
    traded: list[tuple[int, int, int]],
) -> list[str]:
    """The example PLACE under max_armies (rules version 3): the split of _spread,
    kept under the cap; none when no territory has room."""
    split = (
        [(armies, base)]
        if second is None or armies < 2
        else [
            (armies - armies // 2, base),
            (armies // 2, second),
        ]
    )
    bonus = trade_bonus(state, seat, traded)
    placed = fit_to_cap(state, seat, tuple(split), front, bonus)
    if not placed:
        return []
    names = state.board.territories
    return ["PLACE " + ", ".join(f"{n} {names[t].name}" for n, t in placed)]


def example_orders(state: GameState, seat: int) -> list[str]:
    """The orders ``seat`` could send now: setup orders, or those of a turn."""
    if state.phase in SETUP_PHASES:
        return setup_examples(state, seat)
    return [] if state.phase == ENDED else turn_examples(state, seat)


def order_note(placement: str, play_order: str = "sequential") -> str:
    """What the turn order decides: in blind placement everyone places at once,
    so the first only plays first; in freestyle the mails decide who moves first."""
    if play_order == "freestyle":
        first = "The first in this order places first. " if placement != "blind" else ""
        return (
            f"{first}Each round everyone moves once, in the order the mails arrive "
            "(freestyle): this order only breaks ties and orders the turns missed at a deadline."
        )
    if placement == "blind":
        return "The first in this order plays first."
    return "The first in this order places first and plays first."
