"""Orders against a game's state, before any die is rolled: every problem, or none.
Setup orders are checked by setupcheck.py; a whole mail (its TURN guard, then
its orders) by mailorders.py.

What can be known before the dice is checked here (ORDERS.md): whose turn
it is, cards held and sets, the armies due, ownership at the start of the
turn (plus territories an earlier ATTACK of the same orders takes),
adjacency, fortify limits. What depends on the dice is left to turnplan,
which skips or clamps and reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pbem.orders import teamcheck, v3checks
from pbem.orders.cardcheck import held_set
from pbem.orders.errors import (
    OrderProblem,
    OrdersError,
    not_yours,
    one_of,
    problem_at,
    whole_problem,
)
from pbem.orders.linereader import not_adjacent
from pbem.orders.model import TURN_KEYWORDS, Order
from pbem.orders.setupcheck import turn_gate
from pbem.rules import engine
from pbem.rules.actions import (
    AmountKind,
    Attack,
    Defend,
    Fortify,
    Place,
    PlaceInitial,
    Trade,
    TurnAction,
    UntilKind,
)
from pbem.rules.cards import designs_of, set_value
from pbem.rules.defence import NO_DEFEND_IN_V1, defends_neutral
from pbem.rules.online import moves_allowed, path_needed, trench_message, trenched
from pbem.rules.state import ROUND, GameState


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _armies(n: int) -> str:
    return _plural(n, "army").replace("armys", "armies")


# ---------------------------------------------------------------------- turn
class _TurnCheck:
    """Walks a turn's orders in the order written, as turnplan will run them."""

    def __init__(self, state: GameState, seat: int) -> None:
        self.state = state
        self.seat = seat
        self.problems: list[OrderProblem] = []
        self.actions: list[TurnAction] = []  # the orders' actions, wild cards resolved
        self.hand = list(state.players[seat].cards)  # cards not yet in a TRADE
        self.traded_on: dict[int, int] = {}  # card -> line of the TRADE that uses it
        self.trades = 0
        self.values: list[int] = []  # armies of each valid set, in order
        self.due_known = True  # False once a TRADE is wrong: the armies due are unknown
        self.unread: frozenset[str] = frozenset()  # what unreadable lines may have been
        self.unread_lines: tuple[tuple[int, str], ...] = ()  # ParsedMail.unread
        self.placed = 0
        self.place_orders: list[Order] = []
        self.bonus_taken = state.bonus_taken
        self.upper = list(state.armies)  # most armies a territory can hold when its order runs
        self.unknown: set[int] = set()  # territories whose armies depend on the dice
        self.taken: set[int] = set()  # targets of earlier attacks
        self.fortifies = 0
        self.stage = 0  # index in TURN_KEYWORDS of the latest order kind seen
        # PLACE after an ATTACK places an elimination's armies (rules version 2);
        # under version 1 those armies went on the territory taken last, and a
        # PLACE after an ATTACK is out of order, as pbem 95b4065 read it
        self.elimination_places = state.options.rules_version >= 2
        # rules version 3: PLACE under max_armies, TRADE after ATTACK (v3checks)
        self.version3 = v3checks.version3(state)
        self.bonus_on: dict[int, int] = {}  # territory -> the +2s of the turn's trades
        self.hand_at_attack = -1  # cards held when the first ATTACK runs
        self.victims: list[int] = []  # owners of the territories ATTACKs aim at

    def run(self, orders: Sequence[Order]) -> None:
        attack_rank, place_rank = _RANK[Attack], _RANK[Place]
        first_unread = self.unread_lines[0][0] if self.unread_lines else 1 << 62
        for order in orders:
            action = order.action
            rank = _RANK.get(type(action))
            if rank is None:  # DEFEND, a setup order, PlaceInitial: the general path
                self.general(order)
                continue
            if order.line > first_unread and rank >= self.stage and self.after_unread(order, rank):
                continue
            # a TRADE, PLACE, ATTACK or FORTIFY (most orders): as in general(), by type
            if rank == place_rank and self.stage == attack_rank and self.elimination_places:
                self.place_after_attack(order, action)  # type: ignore[arg-type]
                continue
            after = self.stage == attack_rank or (
                order.line > first_unread and "ATTACK" in self.unread  # a line to be one
            )
            if rank == 0 and self.version3 and after:
                self.trade_after_attack(order, action)  # type: ignore[arg-type]
                continue
            if rank < self.stage:
                later = one_of(list(TURN_KEYWORDS[rank + 1 : TURN_KEYWORDS.index("DEFEND")]), "and")
                self.problems.append(problem_at(order, f"{order.keyword} must come before {later}"))
            elif rank > self.stage:
                self.stage = rank
            _CHECKS[rank](self, order, action)
        self.finish()

    def after_unread(self, order: Order, rank: int) -> bool:
        """An order below an unreadable line that is, or is told to be, an order
        that must come after it (``ATACK`` above a ``PLACE``): the fix of that line
        would put this one out of place, so the reply says so now. But a PLACE
        below it when a PLACE was read above it is the PLACE of an elimination's
        trades, which only the dice decide: not checked (True: skip it)."""
        for line, keyword in self.unread_lines:
            if line >= order.line:
                return False
            later = _RANK_OF_KEYWORD.get(keyword)
            if later is None or later <= rank:
                continue
            if (
                isinstance(order.action, Place)
                and later == _RANK[Attack]
                and self.place_orders
                and self.elimination_places
            ):
                self.unknown.update(t for _, t in order.action.placements)
                self.actions.append(order.action)
                return True
            article = "an" if keyword[0] in "AEIOU" else "a"
            message = f"{order.keyword} must come before {keyword}: line {line} is to be"
            message += f" {article} {keyword}, so move this line above it"
            self.problems.append(problem_at(order, message))
            return False
        return False

    def general(self, order: Order) -> None:
        """One order of any kind, in the order written."""
        action = order.action
        if isinstance(action, PlaceInitial):
            action = Place(action.placements)
        if isinstance(action, Defend):  # a standing order: anywhere in the turn
            self.defend(order, action)
            return
        if not isinstance(action, Trade | Place | Attack | Fortify):
            self.problems.append(
                problem_at(order, f"{order.keyword} is a setup order; the game is under way")
            )
            return
        if (
            isinstance(action, Place)
            and self.stage == TURN_KEYWORDS.index("ATTACK")
            and self.elimination_places
        ):
            self.place_after_attack(order, action)  # armies of an elimination's trades
            return
        rank = TURN_KEYWORDS.index(order.keyword)
        if rank < self.stage:
            later = one_of(list(TURN_KEYWORDS[rank + 1 : TURN_KEYWORDS.index("DEFEND")]), "and")
            self.problems.append(problem_at(order, f"{order.keyword} must come before {later}"))
        self.stage = max(self.stage, rank)
        if isinstance(action, Trade):
            self.trade(order, action)
        elif isinstance(action, Place):
            self.place(order, action)
        elif isinstance(action, Attack):
            self.attack(order, action)
        else:
            self.fortify(order, action)

    # -- trades ------------------------------------------------------------------
    def trade(self, order: Order, action: Trade) -> None:
        state, board = self.state, self.state.board
        options = state.options
        self.trades += 1
        if options.card_values == "none":
            self.problems.append(problem_at(order, "these rules use no cards"))
            self.due_known = False
            return
        if self.trades > options.max_trades:
            message = f"at most {_plural(options.max_trades, 'set')} may be traded in a turn"
            self.problems.append(problem_at(order, message))
            self.due_known = False
            return
        resolved = self.held_set(order, action)
        if resolved is None:
            self.due_known = False
            return
        number = state.sets_traded + len(self.values) + 1
        self.values.append(set_value(options, number, designs_of(board, resolved)))
        bonus_here = False
        for card in resolved:  # the +2 bonus, as engine.trade_set places it
            territory = board.card_territory(card)
            if territory is None or state.owner[territory] != self.seat:
                continue
            if options.territory_bonus == "per_set" and bonus_here:
                break
            bonus_here = True
            if options.territory_bonus == "once":
                if self.bonus_taken:
                    break
                self.bonus_taken = True
            self.upper[territory] += 2
            self.bonus_on[territory] = self.bonus_on.get(territory, 0) + 2
        self.actions.append(Trade((resolved[0], resolved[1], resolved[2])))

    def trade_after_attack(self, order: Order, action: Trade) -> None:
        """Rules version 3: a TRADE after an ATTACK names a set of the trade an
        elimination forces (attacking.forced_trades); it must be held, be a set,
        and such a trade must be possible."""
        hand = self.hand_at_attack if self.hand_at_attack >= 0 else len(self.hand)
        problem = v3checks.no_forced_trade(self.state, hand, self.victims)
        if problem is not None and self.stage == _RANK[Attack]:
            self.problems.append(problem_at(order, problem))
            return
        resolved = self.held_set(order, action)
        if resolved is not None:
            self.actions.append(Trade((resolved[0], resolved[1], resolved[2])))

    def held_set(self, order: Order, action: Trade) -> list[int] | None:
        """The cards of a TRADE, wilds resolved, taken out of the hand; None (and
        the problems told) when they are not held or not a set."""
        resolved, self.hand, problems = held_set(
            self.state, self.seat, self.hand, self.traded_on, order, action
        )
        self.problems += problems
        for card in resolved or ():
            self.traded_on[card] = order.line
        return resolved

    # -- placement ---------------------------------------------------------------
    def place(self, order: Order, action: Place) -> None:
        self.place_orders.append(order)
        for i, (armies, territory) in enumerate(action.placements):
            self.placed += armies  # counted as written, so a wrong name is one problem
            if not teamcheck.friendly(self.state, self.seat, territory):  # or a teammate's
                name = self.state.board.territories[territory].name
                self.problems.append(problem_at(order, not_yours(self.state, territory), i, name))
            elif armies < 1:
                self.problems.append(problem_at(order, "armies to place must be at least 1", i))
            else:
                if self.version3:  # rules version 3 refuses a PLACE over max_armies
                    message = v3checks.over_cap(
                        self.state, self.seat, self.upper, territory, armies
                    )
                    if message is not None:
                        name = self.state.board.territories[territory].name
                        self.problems.append(problem_at(order, message, i, name))
                self.upper[territory] += armies
        self.actions.append(action)

    def place_after_attack(self, order: Order, action: Place) -> None:
        """PLACE after an ATTACK: armies only an elimination can give, so their
        number is not checked; the territories must be the player's by then."""
        for i, (armies, territory) in enumerate(action.placements):
            if not teamcheck.placeable(self.state, self.seat, territory, self.taken):
                name = self.state.board.territories[territory].name
                message = f"{not_yours(self.state, territory)}, and no earlier ATTACK takes it"
                self.problems.append(problem_at(order, message, i, name))
            elif armies < 1:
                self.problems.append(problem_at(order, "armies to place must be at least 1", i))
            self.unknown.add(territory)
        self.actions.append(action)

    def defend(self, order: Order, action: Defend) -> None:
        if self.state.options.rules_version == 1:  # no DEFEND in rules version 1
            self.problems.append(problem_at(order, NO_DEFEND_IN_V1))
            self.actions.append(action)
            return
        # version 3, two players: a neutral territory, by the player who rolls for it
        neutral = defends_neutral(self.state, action.territory)
        if not self._mine(action.territory) and not neutral:
            name = self.state.board.territories[action.territory].name
            message = f"{not_yours(self.state, action.territory)}, and no earlier ATTACK takes it"
            self.problems.append(problem_at(order, message, 0, name))
        if action.dice not in (1, 2):
            self.problems.append(problem_at(order, "a defender rolls 1 or 2 dice"))
        self.actions.append(action)

    # -- attacks -----------------------------------------------------------------
    def _mine(self, territory: int) -> bool:
        return self.state.owner[territory] == self.seat or territory in self.taken

    def _trenched(self, source: int) -> bool:
        """Trench warfare: taken this turn, or by an earlier ATTACK of these orders."""
        return source in self.taken or trenched(self.state, source)

    def attack(self, order: Order, action: Attack) -> None:
        state = self.state
        source, target = action.source, action.target
        seat, owner = self.seat, state.owner
        until, move = action.until, action.move
        if not (  # the attack of most turns: none of the problems below, told at once
            source != target
            and state.board.adjacent(source, target)
            and (owner[source] == seat or source in self.taken)
            and (source in self.unknown or self.upper[source] >= 2)
            and owner[target] != seat
            and not teamcheck.is_teammate(state, seat, owner[target])
            and 1 <= action.dice <= 3
            and (not action.reroll or state.options.card_reroll)
            and not action.commander
            and (until.kind == UntilKind.CONQUERED or until.n >= 1)
            and (move.n >= 1 or move.kind not in (AmountKind.N, AmountKind.ALL_BUT))
            and not (state.options.trench and self._trenched(source))
        ):
            self.attack_problems(order, action)
        if self.version3:  # who a forced trade's cards may come from (trade_after_attack)
            if self.hand_at_attack < 0:
                self.hand_at_attack = len(self.hand)
            if owner[target] != seat:
                self.victims.append(owner[target])
        self.taken.add(target)
        self.unknown.add(target)
        self.actions.append(action)

    def attack_problems(self, order: Order, action: Attack) -> None:
        """Every problem of an ATTACK, in the order they are told."""
        state, board = self.state, self.state.board
        source, target = action.source, action.target
        source_name = board.territories[source].name
        target_name = board.territories[target].name
        if source == target:
            message = f"{source_name} -> {source_name}: a territory cannot attack itself"
            self.problems.append(problem_at(order, message, 0, source_name))
        elif not board.adjacent(source, target):
            self.problems.append(
                problem_at(order, not_adjacent(board, source, target), 1, target_name)
            )
        if not self._mine(source):
            message = f"{not_yours(state, source)}, and no earlier ATTACK takes it"
            self.problems.append(problem_at(order, message, 0, source_name))
        elif source not in self.unknown and self.upper[source] < 2:
            message = f"{source_name} has {_armies(self.upper[source])}; an attack needs at least 2"
            self.problems.append(problem_at(order, message, 0, source_name))
        if state.options.trench and self._mine(source) and self._trenched(source):
            message = trench_message(source_name, earlier=source in self.taken)
            self.problems.append(problem_at(order, message, 0, source_name))
        if state.owner[target] == self.seat:
            self.problems.append(
                problem_at(order, f"{target_name} is already yours", 1, target_name)
            )
        self.problems += teamcheck.attack_problems(state, self.seat, order, target, self.taken)
        if not 1 <= action.dice <= 3:
            self.problems.append(problem_at(order, "an attacker rolls 1 to 3 dice"))
        if action.reroll and not state.options.card_reroll:
            self.problems.append(problem_at(order, "REROLL: these rules have no card re-roll"))
        if action.commander:
            problem = v3checks.commander_problem(state.options)
            if problem is not None:
                self.problems.append(problem_at(order, problem))
        if action.until.kind != UntilKind.CONQUERED and action.until.n < 1:
            self.problems.append(problem_at(order, "UNTIL needs at least 1"))
        if action.move.kind in (AmountKind.N, AmountKind.ALL_BUT) and action.move.n < 1:
            self.problems.append(problem_at(order, "armies to move must be at least 1"))

    # -- fortify -----------------------------------------------------------------
    def fortify(self, order: Order, action: Fortify) -> None:
        state, board = self.state, self.state.board
        rule = state.options.fortify
        self.fortifies += 1
        if rule == "none":
            self.problems.append(problem_at(order, "these rules allow no FORTIFY"))
            return
        if self.fortifies > moves_allowed(state.options):
            self.problems.append(problem_at(order, "only one FORTIFY is allowed in a turn"))
            return
        source, target = action.source, action.target
        names = board.territories
        if self._into_teammate(order, action):
            return
        for item, territory in ((1, source), (2, target)):
            if not self._mine(territory):
                self.problems.append(
                    problem_at(order, not_yours(state, territory), item, names[territory].name)
                )
        if source == target:
            name = names[source].name
            message = f"{name} -> {name}: FORTIFY needs two different territories"
            self.problems.append(problem_at(order, message, 1, names[source].name))
        elif self._mine(source) and self._mine(target):
            if rule == "adjacent" and not board.adjacent(source, target):
                message = not_adjacent(board, source, target)
                self.problems.append(problem_at(order, message, 2, names[target].name))
            elif path_needed(state.options) and not self._chain(source, target):
                message = (
                    f"no chain of your territories joins {names[source].name} "
                    f"and {names[target].name}"
                )
                self.problems.append(problem_at(order, message, 2, names[target].name))
        self._check_amount(order, action)
        self.unknown.update((source, target))
        self.actions.append(action)

    def _into_teammate(self, order: Order, action: Fortify) -> bool:
        """A FORTIFY into a teammate's territory (team games), checked: True when it is one."""
        found = teamcheck.fortify_problems(self.state, self.seat, order, self._mine, action)
        if found is not None:
            self.problems += found
            self._check_amount(order, action)
            self.unknown.update((action.source, action.target))
            self.actions.append(action)
        return found is not None

    def _chain(self, source: int, target: int) -> bool:
        seen = {source}
        frontier = [source]
        territories = self.state.board.territories
        while frontier:
            here = frontier.pop()
            if here == target:
                return True
            for n in territories[here].neighbours:
                if n not in seen and self._mine(n):
                    seen.add(n)
                    frontier.append(n)
        return False

    def _check_amount(self, order: Order, action: Fortify) -> None:
        amount = action.amount
        if amount.kind == AmountKind.MIN or (
            amount.kind in (AmountKind.N, AmountKind.ALL_BUT) and amount.n < 1
        ):
            self.problems.append(problem_at(order, "armies to move must be at least 1", 0))
            return
        source = action.source
        if source in self.unknown:
            return
        name = self.state.board.territories[source].name
        bound = self.upper[source]
        available = bound - 1
        if available < 1:
            message = f"{name} has {_armies(bound)}; none can move"
        elif amount.kind == AmountKind.N and amount.n > available:
            message = f"{name} has {bound} armies; at most {available} can move"
        elif amount.kind == AmountKind.ALL_BUT and available - amount.n < 1:
            message = f"{name} has {bound} armies; ALL BUT {amount.n} leaves none to move"
        else:
            return
        self.problems.append(problem_at(order, message, 1, name))

    # -- the whole turn ------------------------------------------------------------
    def finish(self) -> None:
        """The checks of the whole turn: a forced trade, the armies due. An
        unreadable line that may have been a TRADE leaves both unknown; one that
        may have been a PLACE leaves only too many armies certain."""
        state, unread = self.state, self.unread
        if "TRADE" in unread:
            return
        if state.must_trade and self.trades == 0:
            held = len(state.players[self.seat].cards)
            message = f"you hold {held} cards, so you must trade a set this turn (TRADE)"
            self.problems.append(OrderProblem(0, 0, "", message))
        if not self.due_known:
            return
        due = state.reinforcements + sum(self.values)
        room = v3checks.room_for_due(state, self.seat, self.bonus_on) if self.version3 else due
        if room < due:  # rules version 3: what no territory can hold is lost
            self.due_with_room(due, room)
            return
        if not self.place_orders:
            if due > 0 and "PLACE" not in unread:
                message = f"no PLACE order: {due} armies must be placed this turn"
                self.problems.append(OrderProblem(0, 0, "", message))
            return
        if "PLACE" in unread:  # its armies (at least 1) would only add to these
            if self.placed > due:
                message = (
                    f"the PLACE orders that could be read place {self.placed} armies; "
                    f"{due} are due this turn"
                )
                self.problems.append(problem_at(self.place_orders[0], message))
            return
        if self.placed != due:
            message = f"PLACE orders place {self.placed} armies; {due} are due this turn"
            if self.values:
                sets = " + ".join(str(v) for v in self.values)
                what = "set" if len(self.values) == 1 else "sets"
                message += f" ({state.reinforcements} + {sets} for the traded {what})"
            self.problems.append(problem_at(self.place_orders[0], message))

    def due_with_room(self, due: int, room: int) -> None:
        """Rules version 3: the player's territories cannot hold the ``due``
        armies under max_armies; the PLACE orders must fill them (``room``), and
        the rest are lost."""
        if self.placed == room or ("PLACE" in self.unread and self.placed <= room):
            return
        message = v3checks.due_past_room(self.placed, due, room, self.state.options.max_armies)
        if self.place_orders:
            self.problems.append(problem_at(self.place_orders[0], message))
        else:
            self.problems.append(OrderProblem(0, 0, "", "no PLACE order: " + message[13:]))


# The turn orders read most, by their action's exact type: their rank in
# TURN_KEYWORDS (the order they must come in) and their check.
_KINDS: tuple[tuple[type, str], ...] = (
    (Trade, "TRADE"),
    (Place, "PLACE"),
    (Attack, "ATTACK"),
    (Fortify, "FORTIFY"),
)
_RANK: dict[type, int] = {kind: TURN_KEYWORDS.index(keyword) for kind, keyword in _KINDS}
_RANK_OF_KEYWORD: dict[str, int] = {keyword: _RANK[kind] for kind, keyword in _KINDS}
_CHECKS: dict[int, Callable[[_TurnCheck, Order, Any], None]] = {
    _RANK[Trade]: _TurnCheck.trade,
    _RANK[Place]: _TurnCheck.place,
    _RANK[Attack]: _TurnCheck.attack,
    _RANK[Fortify]: _TurnCheck.fortify,
}


def validate_turn(
    state: GameState,
    seat: int,
    orders: Sequence[Order],
    unread: Sequence[tuple[int, str]] = (),
) -> list[OrderProblem]:
    """Every problem with ``seat``'s turn orders in ``state`` (empty: they can run).

    Pass every order of the mail (``ParsedMail.orders``) so that setup orders
    sent during play are reported too. ``unread``: the orders the mail's
    unreadable lines, each with the order it was or may have been
    (``ParsedMail.unread``); the lines that were read are checked in turn as
    always, and the checks of the whole turn that those could change (armies due,
    a forced trade) are left out.
    """
    return checked_turn(state, seat, orders, unread)[0]


def checked_turn(
    state: GameState,
    seat: int,
    orders: Sequence[Order],
    unread: Sequence[tuple[int, str]] = (),
) -> tuple[list[OrderProblem], list[TurnAction]]:
    """``validate_turn``'s problems and, when there are none, ``turn_actions``'s
    actions, from one walk over the orders (a replay needs both for every turn)."""
    orders = list(orders)
    gate = turn_gate(state, seat)
    if gate is not None:
        return [whole_problem(gate, orders)], []
    if state.phase == ROUND:  # freestyle: checked as the seat's turn would begin now
        state = engine.turn_of(state, seat)
    check = _TurnCheck(state, seat)
    if unread:
        check.unread_lines = tuple(unread)
        check.unread = frozenset(keyword for _, keyword in unread if keyword)
    check.run(orders)
    return check.problems, check.actions


def turn_actions(state: GameState, orders: Sequence[Order]) -> list[TurnAction]:
    """The actions the current player's orders mean, wild cards resolved to the
    wilds the player holds; OrdersError if they do not validate."""
    problems, actions = checked_turn(state, state.current, orders)
    if problems:
        raise OrdersError(problems)
    return actions
