"""From states and events to what a mail shows: sentences, rows and tables.

Everything a template prints is computed here, once for the text part and the
HTML part alike, so both always say the same. The viewer's seat decides the
private lines (their cards, what they drew, their mission); nothing private of
another seat ever enters a view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pbem.report.context import GameInfo, TurnReport
from pbem.report.picture.colours import NEUTRAL, Side, colour_rgb, hex_colour, text_on
from pbem.report.textfmt import join_words, plural
from pbem.rules.board import Board
from pbem.rules.cards import all_sets, designs_of, mixed_sets, set_value
from pbem.rules.engine import reinforcement_base
from pbem.rules.events import (
    ArmiesPlaced,
    AttackResolved,
    AttackSkipped,
    CardDrawn,
    CardsTaken,
    CardsTraded,
    DeckShuffled,
    DefenceOrdered,
    Fortified,
    FortifySkipped,
    GameWon,
    MovedIn,
    PlaceSkipped,
    PlayerEliminated,
    Roll,
)
from pbem.rules.opening import neutral_share
from pbem.rules.state import CLAIM, ENDED, HQ, PLACE, GameState
from pbem.rules.victory import mission_of

ROLL_KEY = "each roll: [attacker v defender dice: armies lost by attacker/defender]"
STOPS = {
    "exhausted": "failed, {source} down to {left}",
    "until_left": "stopped with {left} left on {source}",
    "max_rolls": "stopped after {rolls}",
}
WIN_REASONS = {
    "domination": "by eliminating every other player",
    "capitals": "by holding the headquarters",
    "mission": "by completing a secret mission",
    "max_turns": "on the turn limit: most territories",
}


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
    territories: int
    armies: int
    cards: int
    continents: str
    next_armies: int | None  # None: out of the game
    to_move: bool
    status: str  # "", "out", "winner"


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
class AttackLine:
    head: str  # "Kamchatka (7) -> Japan (3, bob)"
    rolls: tuple[str, ...]  # "[6 5 2 v 4 3: 0/2]"
    result: str
    conquered: bool


@dataclass
class Section:
    title: str
    items: list[str | AttackLine] = field(default_factory=list)
    note: str = ""  # a key printed under the title


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
        out.append(Side(player.name, rgb, state.territory_count(seat), state.army_count(seat)))
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


def conquered(before: GameState, after: GameState) -> list[int]:
    """Territories that changed hands between two states."""
    return [t for t, (a, b) in enumerate(zip(before.owner, after.owner, strict=True)) if a != b]


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
        status = "winner" if state.winner == seat else ("" if player.alive else "out")
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
            )
        )
    return rows


def player_table(rows: Sequence[PlayerRow]) -> tuple[list[str], list[list[str]], str]:
    """Header, cells and alignment of the players table (the text part's columns)."""
    header = ["  Player", "Colour", "Terr", "Armies", "Cards", "Continents", "Next"]
    cells = []
    for r in rows:
        cells.append(
            [
                ("> " if r.to_move else "  ") + r.who.name,
                r.who.colour,
                str(r.territories),
                str(r.armies),
                str(r.cards),
                r.continents,
                str(r.next_armies) if r.next_armies is not None else r.status or "-",
            ]
        )
    return header, cells, "llrrrlr"


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


# --------------------------------------------------------------------- a turn
@dataclass
class TurnView:
    mover: Who
    headline: list[str]
    sections: list[Section]
    changed: list[int]
    conquests: list[str]
    out: list[str]
    continents_taken: list[str]
    winner: Who | None
    win_text: str
    private: list[str]  # the viewer's own lines (cards drawn or taken)


def turn_view(report: TurnReport, viewer: int | None) -> TurnView:
    """What happened in a turn, as ``viewer`` may see it."""
    game, before, after = report.game, report.before, report.after
    board = after.board
    name = after.players[report.seat].name
    mover = who(game, after, report.seat)
    changed = conquered(before, after)

    reinforce = Section("Reinforcements")
    attacks = Section("Attacks", note=ROLL_KEY)
    fortify = Section("Fortify")
    cards = Section("Cards")
    private: list[str] = []
    if report.missed:
        reinforce.items.append(
            f"{name} sent no orders in time: the default turn was played (forced trades, "
            "armies spread on the borders, no attacks, no fortify)."
        )
    start = due(before, report.seat)
    reinforce.items.append(start.sentence(name))
    if before.must_trade:
        reinforce.items.append(
            f"{name} held {len(before.players[report.seat].cards)} cards and had to trade a set."
        )

    placed: list[str] = []
    out: list[str] = []
    winner: Who | None = None
    win_text = ""
    last_attack: list[AttackLine] = []
    standing: list[str] = []  # the viewer's own DEFEND orders of this turn
    events = list(report.events)
    i = 0
    while i < len(events):
        event = events[i]
        i += 1
        if isinstance(event, CardsTraded):
            bonus_places = len(event.bonus) + (1 if event.forced else 0)
            extra = [e for e in events[i : i + bonus_places] if isinstance(e, ArmiesPlaced)]
            i += len(extra)
            line = _trade_line(board, after, event, extra)
            (attacks if event.forced else reinforce).items.append(line)
        elif isinstance(event, ArmiesPlaced):
            lost = f" ({event.lost} lost over the cap)" if event.lost else ""
            where = f"{event.armies} on {territory_name(board, event.territory)}{lost}"
            if last_attack or attacks.items:  # after an elimination's forced trade
                attacks.items.append(f"{name} placed {where} (armies of a forced trade).")
            else:
                placed.append(where)
        elif isinstance(event, PlaceSkipped):
            attacks.items.append(
                f"PLACE {event.armies} {territory_name(board, event.territory)}: skipped, "
                f"{event.reason}."
            )
        elif isinstance(event, DefenceOrdered):
            if viewer == event.seat:
                dice = "1 die" if event.dice == 1 else "the most dice allowed"
                line = (
                    f"Standing order: you defend {territory_name(board, event.territory)} "
                    f"with {dice}."
                )
                standing.append(line)
                private.append(line)
        elif isinstance(event, AttackResolved):
            attack = _attack_line(game, after, event)
            attacks.items.append(attack)
            last_attack = [attack]
        elif isinstance(event, MovedIn):
            if last_attack:
                index = attacks.items.index(last_attack[0])
                attacks.items[index] = _with_move(board, last_attack[0], event)
                last_attack = []
        elif isinstance(event, AttackSkipped):
            attacks.items.append(
                f"{territory_name(board, event.source)} -> {territory_name(board, event.target)}:"
                f" skipped, {event.reason}."
            )
        elif isinstance(event, PlayerEliminated):
            loser = after.players[event.seat].name
            out.append(loser)
            if after.players[event.by].neutral:
                attacks.items.append(f"{loser} left the game: their territories are now neutral.")
            else:
                taken = (
                    f", who takes {plural(event.cards_taken, 'card')}" if event.cards_taken else ""
                )
                by = after.players[event.by].name
                attacks.items.append(f"{loser} is out: eliminated by {by}{taken}.")
        elif isinstance(event, CardsTaken):
            if viewer == event.seat:
                line = f"You took {hand_text(board, event.cards)}."
                attacks.items.append(line)
                private.append(line)
        elif isinstance(event, Fortified):
            asked = f" (asked {event.asked})" if event.asked is not None else ""
            lost = f" ({event.lost} lost over the cap)" if event.lost else ""
            fortify.items.append(
                f"{name} moved {plural(event.armies, 'army', 'armies')} from "
                f"{territory_name(board, event.source)} to "
                f"{territory_name(board, event.target)}{asked}{lost}."
            )
        elif isinstance(event, FortifySkipped):
            fortify.items.append(
                f"{territory_name(board, event.source)} -> {territory_name(board, event.target)}:"
                f" skipped, {event.reason}."
            )
        elif isinstance(event, CardDrawn):
            if viewer == event.seat:
                line = f"You drew {card_text(board, event.card)}."
                cards.items.append(line)
                private.append(line)
            else:
                cards.items.append(f"{after.players[event.seat].name} drew a card.")
        elif isinstance(event, DeckShuffled):
            cards.items.append(
                f"The discards were shuffled into a new draw pile of {event.size} cards."
            )
        elif isinstance(event, GameWon):
            winner = who(game, after, event.seat)
            win_text = _win_text(after, event)
    if placed:
        reinforce.items.append(f"{name} placed {join_words(placed)}.")
    if not [x for x in attacks.items if isinstance(x, AttackLine)]:
        attacks.note = ""
        if not attacks.items:
            attacks.items.append(f"{name} did not attack.")
    if not fortify.items:
        fortify.items.append("No fortifying move.")
    fortify.items += standing
    if not cards.items:
        cards.items.append("No card drawn (no territory taken).")

    conquests = [territory_name(board, t) for t in changed if after.owner[t] == report.seat]
    gained, lost_continents = _continent_changes(before, after)
    taken_continents = [board.continents[c].name for s, c in gained if s == report.seat]
    headline = _headline(after, report.seat, conquests, out, gained, lost_continents)
    if winner is not None:
        headline.append(f"{winner.name} wins the game {win_text}!")
    sections = [reinforce, attacks, fortify, cards]
    return TurnView(
        mover,
        headline,
        sections,
        changed,
        conquests,
        out,
        taken_continents,
        winner,
        win_text,
        private,
    )


def _trade_line(
    board: Board, state: GameState, event: CardsTraded, placed: list[ArmiesPlaced]
) -> str:
    name = state.players[event.seat].name
    names = join_words([board.card_name(c) for c in event.cards])
    line = f"{name} traded {names} (set {event.set_number}) for {event.value} armies"
    if event.bonus:
        bonus = join_words(
            [f"+{armies} on {territory_name(board, t)}" for t, armies in event.bonus]
        )
        line += f"; {bonus} for holding the card's territory"
    if event.forced and placed:
        where = territory_name(board, placed[-1].territory)
        line = f"{line}, placed on {where} (a forced trade after an elimination)"
    return line + "."


def _dice(roll: Roll) -> str:
    a = " ".join(str(d) for d in roll.attacker)
    d = " ".join(str(d) for d in roll.defender)
    extra = ""
    if roll.rerolled:
        extra += f" reroll {roll.rerolled[0]}>{roll.rerolled[1]}"
    if roll.commander:
        extra += f" commander {roll.commander[0]}>6"
    return f"[{a} v {d}: {roll.attacker_losses}/{roll.defender_losses}{extra}]"


def _attack_line(game: GameInfo, state: GameState, event: AttackResolved) -> AttackLine:
    board = state.board
    lost = sum(r.attacker_losses for r in event.rolls)
    killed = sum(r.defender_losses for r in event.rolls)
    source = territory_name(board, event.source)
    target = territory_name(board, event.target)
    defender = state.players[event.defender].name
    head = (
        f"{source} ({event.attacker_left + lost}) -> "
        f"{target} ({event.defender_left + killed}, {defender}):"
    )
    rolls = tuple(_dice(r) for r in event.rolls)
    if event.conquered:
        result = "taken"
    else:
        result = STOPS.get(event.stop, "stopped").format(
            source=source, left=event.attacker_left, rolls=plural(len(event.rolls), "roll")
        )
    result += f" (lost {lost}, killed {killed})."
    return AttackLine(head, rolls, result, event.conquered)


def _with_move(board: Board, line: AttackLine, event: MovedIn) -> AttackLine:
    moved = f"{event.armies} moved in"
    if event.asked is not None:
        moved += f" (asked {event.asked})"
    if event.lost:
        moved += f" ({event.lost} lost over the cap)"
    result = line.result[:-1] + f", {moved}."
    return AttackLine(line.head, line.rolls, result, line.conquered)


def _win_text(state: GameState, event: GameWon) -> str:
    text = WIN_REASONS.get(event.reason, event.reason)
    if event.detail:
        text += f" ({event.detail})"
    return text


def _continent_changes(
    before: GameState, after: GameState
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(seat, continent) pairs gained and lost between two states."""
    gained, lost = [], []
    for seat in range(len(after.players)):
        was = set(before.continents_held(seat)) if seat < len(before.players) else set()
        now = set(after.continents_held(seat))
        gained += [(seat, c) for c in sorted(now - was)]
        lost += [(seat, c) for c in sorted(was - now)]
    return gained, lost


def _headline(
    state: GameState,
    seat: int,
    conquests: list[str],
    out: list[str],
    gained: list[tuple[int, int]],
    lost: list[tuple[int, int]],
) -> list[str]:
    board = state.board
    name = state.players[seat].name
    lines = []
    if conquests:
        if len(conquests) <= 4:
            lines.append(f"{name} took {join_words(conquests)}.")
        else:
            lines.append(f"{name} took {len(conquests)} territories.")
    else:
        lines.append(f"{name} took no territory.")
    for s in sorted({s for s, _ in gained}):
        held = [board.continents[c] for g, c in gained if g == s]
        names = join_words([f"{c.name} (+{c.bonus})" for c in held])
        lines.append(f"{state.players[s].name} now holds {names}.")
    for s in sorted({s for s, _ in lost}):
        names = join_words([board.continents[c].name for g, c in lost if g == s])
        lines.append(f"{state.players[s].name} lost {names}.")
    if out:
        lines.append(f"{join_words(out)} {'is' if len(out) == 1 else 'are'} out.")
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


def setup_task(state: GameState, seat: int) -> list[str]:
    """What a setup phase asks of ``seat``, in sentences (empty once play began)."""
    player = state.players[seat]
    if state.phase == CLAIM and state.options.claim == "turns":
        free = state.owner.count(-1)
        lines = [
            "Territories are claimed in turn, one each round. Send your preference list, "
            "best first, on one line:",
            "  CLAIM Alaska, Kamchatka, Japan, ...",
            "This round, in turn order, each player takes the first free territory on their "
            "list (none free on it: the first free territory in map order). "
            f"{plural(free, 'territory is', 'territories are')} still free.",
        ]
    elif state.phase == CLAIM:
        lines = [
            "Territories are drafted: send your preference list, best first, on one line:",
            "  CLAIM Alaska, Kamchatka, Japan, ...",
            "Picks are made in turn order, one territory each round, each taking the first "
            "free territory on your list (a list that runs out takes the first free "
            "territory in map order).",
        ]
        neutral = state.neutral_seat
        if neutral is not None and neutral in state.owner:
            held = state.owner.count(neutral)
            lines.append(
                f"The neutral army's {plural(held, 'territory', 'territories')} were dealt "
                "at random before the draft; they are not free."
            )
    if state.phase == CLAIM:
        return lines
    if state.phase == PLACE:
        lines = [
            f"Place your {plural(player.to_place, 'initial army', 'initial armies')} on your "
            "territories, all in one PLACE line (placed by everyone at once):",
            "  PLACE 3 Alaska, 2 Japan, ...",
        ]
        share = neutral_share(state, seat)
        if share:
            lines.append(
                f"You also place {plural(share, 'neutral army', 'neutral armies')} on neutral "
                "territories, in one NEUTRAL line:"
            )
            lines.append("  NEUTRAL 2 Peru, 1 Egypt, ...")
        return lines
    if state.phase == HQ:
        return [
            "Choose your headquarters among your territories (kept secret until all chose):",
            "  HQ Ontario",
        ]
    return []
