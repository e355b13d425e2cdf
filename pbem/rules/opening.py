"""The opening of a game: seats and turn order, the deal or the claims, the
initial placement, Capital Risk's headquarters, then the first turn.

Like the rest of the turn machine (pbem.rules.engine), every function takes
the state (changed in place) and the inputs of one step, returns its events,
and raises RulesError naming the rule before it changes anything.
"""

from __future__ import annotations

from pbem.rules import freestyle, gametypes, teams, victory
from pbem.rules.armies import RULEBOOK, check_setup, starting_armies
from pbem.rules.board import Board
from pbem.rules.engine import (
    NEUTRAL_NAME,
    ShuffleStream,
    add_armies,
    begin_turn,
    check_goal,
    check_territory,
    expect_phase,
    territory_name,
)
from pbem.rules.errors import RulesError
from pbem.rules.events import (
    ArmiesPlaced,
    Event,
    HeadquartersChosen,
    MissionDealt,
    TerritoriesDealt,
    TerritoryClaimed,
    TurnOrderDrawn,
)
from pbem.rules.options import Options
from pbem.rules.state import (
    CLAIM,
    HQ,
    PLACE,
    GameState,
    Player,
)


def new_game(
    board: Board,
    options: Options,
    game: str,
    players: list[tuple[str, str]],
    rng: ShuffleStream,
) -> tuple[GameState, list[Event]]:
    """Seat the players (name, colour), draw the turn order, deal or open the draft.

    Uses the ``setup`` stream, in this order: turn order, missions (or the
    assassin targets), the deal,
    the draw pile, and auto placement when no player input is needed first.
    """
    options.check_players(len(players))
    if options.rules_version >= 2:  # rules version 1 started any game it was given
        check_setup(options, board, len(players))
    names = [name for name, _ in players]
    if len(set(names)) != len(names):
        raise RulesError("setup", "two players have the same name")
    if options.rules_version >= 3:
        # version 3: colours in the map's spelling ("Red" is red), so that the
        # mission deck and the destroy missions find them; versions 1 and 2 kept
        # the colours as given (a capitalised one matched no mission card)
        players = [(name, player_colour(board, colour)) for name, colour in players]
    colours = [colour for _, colour in players if colour]
    if len(set(colours)) != len(colours):
        raise RulesError("setup", "two players have the same colour")
    seats = [Player(name=name, colour=colour) for name, colour in players]
    use_neutral = options.neutral and len(players) == 2
    if use_neutral:
        seats.append(Player(name=NEUTRAL_NAME, neutral=True))
    n_terr = len(board.territories)
    state = GameState(
        board=board,
        options=options,
        game=game,
        players=seats,
        owner=[-1] * n_terr,
        armies=[0] * n_terr,
        phase=CLAIM,
    )
    events: list[Event] = []

    order = list(range(len(players)))
    rng.shuffle(order)
    order = teams.interleave(order, options.team_size)  # teams alternate (no die)
    state.order = order
    events.append(TurnOrderDrawn(tuple(order)))

    if options.goal == "mission":
        events += _deal_missions(state, rng)
    elif options.goal == gametypes.ASSASSIN:
        events += gametypes.deal_targets(state, rng)

    if options.rules_version == 1:
        # rules version 1: the rulebook's numbers on every map (armies.RULEBOOK)
        start = RULEBOOK[len(players)]
    else:  # version 2: scaled to the map's territories
        start = starting_armies(len(players), n_terr)
    for seat in order:
        seats[seat].to_place = start
    if use_neutral:
        seats[-1].to_place = start

    if options.card_values != "none":
        state.deck = board.deck_cards()
        rng.shuffle(state.deck)

    if options.claim == "deal":
        events += _deal(state, rng)
        events += _after_claims(state, rng)
    elif use_neutral and options.rules_version >= 2:
        # version 2 deals the neutral's third before a draft; version 1 lets the
        # neutral draft too (claim_draft), taking the first free territory each pick
        events += _deal_neutral(state, rng)
    return state, events


def player_colour(board: Board, text: str) -> str:
    """A player's colour in the map's spelling ("" stays: no colour); a colour
    the map does not offer is refused, naming those it does."""
    if not text:
        return ""
    colour = board.colour_of(text)
    if colour is None:
        known = ", ".join(board.palette())
        raise RulesError("colours", f"{text!r} is not a colour of this map (known: {known})")
    return colour


def _deal_neutral(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Two-player draft: the neutral's third (14 of 42) is dealt from the
    shuffled territory cards, as the rulebook deals its pile, before the two
    players draft the rest."""
    seat = state.neutral_seat
    assert seat is not None
    cards = list(range(len(state.board.territories)))
    rng.shuffle(cards)
    share = sorted(cards[: len(cards) // 3])
    for territory in share:
        _occupy(state, seat, territory)
    return [TerritoriesDealt(seat, tuple(share))]


def _deal_missions(state: GameState, rng: ShuffleStream) -> list[Event]:
    board = state.board
    colours = {p.colour for p in state.players if not p.neutral}
    deck = victory.mission_deck(board, state.options, colours)
    if len(deck) < len(state.order):
        raise RulesError("secret missions", f"map {board.name} has too few missions")
    rng.shuffle(deck)
    events: list[Event] = []
    for seat in state.order:
        mission = deck.pop(0)
        player = state.players[seat]
        player.mission = mission
        player.mission_fallback = board.missions[mission].colour == player.colour != ""
        events.append(MissionDealt(seat, mission, player.mission_fallback))
    return events


def _deal(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Deal the territory cards (wilds out) round robin, first in turn order first."""
    cards = list(range(len(state.board.territories)))
    rng.shuffle(cards)
    takers = list(state.order)
    if state.neutral_seat is not None:
        takers.append(state.neutral_seat)
    dealt: dict[int, list[int]] = {seat: [] for seat in takers}
    for i, territory in enumerate(cards):
        seat = takers[i % len(takers)]
        dealt[seat].append(territory)
        _occupy(state, seat, territory)
    return [TerritoriesDealt(seat, tuple(sorted(dealt[seat]))) for seat in takers]


def _occupy(state: GameState, seat: int, territory: int) -> None:
    state.owner[territory] = seat
    state.armies[territory] = 1
    state.players[seat].to_place -= 1


def claim_draft(state: GameState, claims: dict[int, list[int]]) -> list[Event]:
    """Draft: picks in turn order, one per round, each the first free on its list."""
    expect_phase(state, CLAIM, "draft")
    missing = [s for s in state.order if s not in claims]
    if missing:
        raise RulesError("draft", f"no preference list from {state.players[missing[0]].name}")
    for prefs in claims.values():
        for t in prefs:
            check_territory(state, t, "draft")
    free = [t for t in range(len(state.board.territories)) if state.owner[t] < 0]
    events: list[Event] = []
    takers = list(state.order)  # a two-player game's neutral was dealt its share
    if state.neutral_seat is not None and state.options.rules_version == 1:
        takers.append(state.neutral_seat)  # rules version 1: the neutral drafts, in last place
    i = 0
    while free:
        seat = takers[i % len(takers)]
        prefs = claims.get(seat, [])
        pick = next((t for t in prefs if state.owner[t] < 0), free[0])
        free.remove(pick)
        _occupy(state, seat, pick)
        events.append(TerritoryClaimed(seat, pick))
        i += 1
    return events


def claim_round(state: GameState, claims: dict[int, list[int]]) -> list[Event]:
    """claim = turns: one round of claiming in turn (the rulebook's "take turns
    placing one army on an unoccupied territory", one mail per round). In turn
    order each player takes the first free territory on their list (none free
    on it: the first free in map order); the CLAIM phase lasts until every
    territory is taken (then after_draft)."""
    expect_phase(state, CLAIM, "claim")
    missing = [s for s in state.order if s not in claims]
    if missing:
        raise RulesError("claim", f"no CLAIM from {state.players[missing[0]].name}")
    for prefs in claims.values():
        for t in prefs:
            check_territory(state, t, "claim")
    events: list[Event] = []
    for seat in state.order:
        free = [t for t in range(len(state.owner)) if state.owner[t] < 0]
        if not free:
            break
        pick = next((t for t in claims[seat] if state.owner[t] < 0), free[0])
        _occupy(state, seat, pick)
        events.append(TerritoryClaimed(seat, pick))
    return events


def claims_done(state: GameState) -> bool:
    return all(o >= 0 for o in state.owner)


def after_draft(state: GameState, rng: ShuffleStream) -> list[Event]:
    """Continue the setup once the draft is done (auto placement uses ``rng``)."""
    return _after_claims(state, rng)


def _after_claims(state: GameState, rng: ShuffleStream) -> list[Event]:
    if state.options.placement == "auto":
        events = _auto_place(state, rng)
        return events + _after_placement(state)
    state.phase = PLACE
    return []


def _auto_place(state: GameState, rng: ShuffleStream) -> list[Event]:
    """One army at a time, in turn order, each on a territory drawn at random
    (among those below max_armies; an army with no room left is lost)."""
    counts = [0] * len(state.owner)
    placers = list(state.order)
    if state.neutral_seat is not None:
        placers.append(state.neutral_seat)
    cap = state.options.max_armies
    while any(state.players[s].to_place > 0 for s in placers):
        for seat in placers:
            player = state.players[seat]
            if player.to_place <= 0:
                continue
            player.to_place -= 1
            own = [t for t in state.territories_of(seat) if not cap or state.armies[t] < cap]
            if not own:
                continue
            territory = own[rng.uniform(len(own))]
            counts[territory] += 1
            state.armies[territory] += 1
    return [ArmiesPlaced(state.owner[t], t, n) for t, n in enumerate(counts) if n > 0]


def place_initial(
    state: GameState,
    placements: dict[int, list[tuple[int, int]]],
    neutral: dict[int, list[tuple[int, int]]] | None = None,
) -> list[Event]:
    """Blind placement: every player's (territory, armies) at once.

    In the two-player game each player also places half of the neutral's
    remaining armies on neutral territories (``neutral``).
    """
    expect_phase(state, PLACE, "placement")
    neutral = neutral or {}
    neutral_seat = state.neutral_seat
    for seat in state.order:
        player = state.players[seat]
        if seat not in placements:
            raise RulesError("placement", f"no initial placement from {player.name}")
        _check_setup_placement(state, seat, placements[seat], player.to_place, seat, "PLACE")
        if neutral_seat is not None:
            share = _neutral_share(state, seat)
            _check_setup_placement(
                state, seat, neutral.get(seat, []), share, neutral_seat, "NEUTRAL"
            )
    events: list[Event] = []
    for seat in state.order:
        for territory, armies in placements[seat]:
            state.armies[territory] += armies
            events.append(ArmiesPlaced(seat, territory, armies))
        state.players[seat].to_place = 0
        if neutral_seat is not None:
            # both players may place on one neutral territory: over max_armies is lost
            for territory, armies in neutral.get(seat, []):
                lost = add_armies(state, territory, armies)
                events.append(ArmiesPlaced(neutral_seat, territory, armies - lost, lost))
    if neutral_seat is not None:
        state.players[neutral_seat].to_place = 0
    return events + _after_placement(state)


def _neutral_share(state: GameState, seat: int) -> int:
    """The neutral's remaining armies split between the two players, the first
    in turn order taking the odd one."""
    remaining = state.players[state.neutral_seat].to_place  # type: ignore[index]
    first = state.order[0] == seat
    return remaining - remaining // 2 if first else remaining // 2


def neutral_share(state: GameState, seat: int) -> int:
    return _neutral_share(state, seat) if state.neutral_seat is not None else 0


def _check_setup_placement(
    state: GameState, seat: int, items: list[tuple[int, int]], due: int, owner: int, order: str
) -> None:
    name = state.players[seat].name
    total = 0
    added: dict[int, int] = {}
    cap = state.options.max_armies
    for territory, armies in items:
        if not 0 <= territory < len(state.owner) or state.owner[territory] != owner:
            whose = "neutral" if owner == state.neutral_seat else name
            where = territory_name(state, territory)
            raise RulesError("placement", f"{order}: {where} is not {whose}'s")
        if armies < 1:
            raise RulesError("placement", f"{order}: armies must be positive")
        added[territory] = added.get(territory, 0) + armies
        if cap and state.armies[territory] + added[territory] > cap:
            where = territory_name(state, territory)
            raise RulesError("max armies", f"{order}: {where} would hold more than {cap} armies")
        total += armies
    if total != due:
        raise RulesError("placement", f"{order}: {name} must place {due} armies, not {total}")


def _after_placement(state: GameState) -> list[Event]:
    if state.options.goal == "capital":
        state.phase = HQ
        return []
    return start_play(state)


def choose_headquarters(state: GameState, hqs: dict[int, int]) -> list[Event]:
    """Capital Risk: every player's HQ at once (hidden until all chose); their
    cards leave the deck for the game."""
    expect_phase(state, HQ, "headquarters")
    for seat in state.order:
        if seat not in hqs:
            raise RulesError("headquarters", f"no HQ from {state.players[seat].name}")
        check_territory(state, hqs[seat], "headquarters")
        if state.owner[hqs[seat]] != seat:
            name = state.board.territories[hqs[seat]].name
            raise RulesError("headquarters", f"{name} is not {state.players[seat].name}'s")
    events: list[Event] = []
    for seat in state.order:
        territory = hqs[seat]
        state.players[seat].hq = territory
        if territory in state.deck:
            state.deck.remove(territory)
            state.removed_cards.append(territory)
        events.append(HeadquartersChosen(seat, territory))
    return events + start_play(state)


def start_play(state: GameState) -> list[Event]:
    if freestyle.is_freestyle(state.options):  # round 1 opens: anyone may move first
        return freestyle.open_first_round(state) + check_goal(state)
    state.turn = 0
    state.round = 1
    state.current = state.order[0]
    events = begin_turn(state)
    return events + check_goal(state)  # a dealt mission may be complete already
