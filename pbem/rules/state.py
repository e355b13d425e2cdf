"""Game state as plain data, its canonical serialisation, and its hash.

The engine changes a state in place (fast, and simple to read); whoever needs
the state before a step keeps ``state.copy()``. Everything here is ints,
lists and strings, so the canonical JSON (and so the hash) is the same on
every machine and under every PYTHONHASHSEED.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final

from pbem.rules.board import Board
from pbem.rules.options import Options


class EnginePhase(StrEnum):
    """Where the engine's turn machine stands (``GameState.phase``).

    Not the game's phase of the service (open, setup, playing, over: the
    stored row): the engine's last phase is ``ENDED``, the board decided.
    The value stays the text "over", which the canonical state and its hash
    have always held.
    """

    CLAIM = "claim"  # draft: waiting for every player's preference list
    PLACE = "place"  # blind placement: waiting for every player's initial armies
    HQ = "hq"  # Capital Risk: waiting for every player's headquarters
    REINFORCE = "reinforce"
    ATTACK = "attack"
    FORTIFY = "fortify"
    # freestyle (play_order = freestyle): between turns, waiting for any player
    # yet to move in this round (rules/freestyle.py)
    ROUND = "round"
    ENDED = "over"  # someone won: no turn follows

    def __repr__(self) -> str:  # the plain text's repr: reprs (and digests of them) unchanged
        return repr(self.value)


CLAIM: Final[EnginePhase] = EnginePhase.CLAIM
PLACE: Final[EnginePhase] = EnginePhase.PLACE
HQ: Final[EnginePhase] = EnginePhase.HQ
REINFORCE: Final[EnginePhase] = EnginePhase.REINFORCE
ATTACK: Final[EnginePhase] = EnginePhase.ATTACK
FORTIFY: Final[EnginePhase] = EnginePhase.FORTIFY
ROUND: Final[EnginePhase] = EnginePhase.ROUND
ENDED: Final[EnginePhase] = EnginePhase.ENDED

SETUP_PHASES: Final = (CLAIM, PLACE, HQ)

_GRAPHS: Final[dict[int, tuple[Board, tuple[tuple[int, ...], ...]]]] = {}


def neighbours_of(board: Board) -> tuple[tuple[int, ...], ...]:
    """The neighbours of every territory, by index: one tuple lookup on hot paths
    instead of ``board.territories[t].neighbours``. Cached per board."""
    cached = _GRAPHS.get(id(board))
    if cached is None or cached[0] is not board:
        cached = _GRAPHS[id(board)] = (board, tuple(t.neighbours for t in board.territories))
    return cached[1]


@dataclass
class Player:
    name: str
    colour: str = ""
    neutral: bool = False
    alive: bool = True
    cards: list[int] = field(default_factory=list)
    mission: int | None = None  # index into board.missions
    mission_fallback: bool = False  # own-colour destroy mission: 24 territories instead
    hq: int | None = None
    eliminated_by: int | None = None
    to_place: int = 0  # initial armies still to place (setup)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "colour": self.colour,
            "neutral": self.neutral,
            "alive": self.alive,
            "cards": list(self.cards),
            "mission": self.mission,
            "mission_fallback": self.mission_fallback,
            "hq": self.hq,
            "eliminated_by": self.eliminated_by,
            "to_place": self.to_place,
        }


@dataclass
class GameState:
    board: Board
    options: Options
    game: str  # the game's name: part of every dice stream's message
    players: list[Player]  # by seat; a neutral player, if any, is the last seat
    order: list[int] = field(default_factory=list)  # turn order of the playing seats
    owner: list[int] = field(default_factory=list)  # seat per territory (-1 before claims)
    armies: list[int] = field(default_factory=list)
    deck: list[int] = field(default_factory=list)  # draw pile, top first
    discard: list[int] = field(default_factory=list)
    removed_cards: list[int] = field(default_factory=list)  # out of the game (Capital HQs)
    sets_traded: int = 0
    phase: EnginePhase = REINFORCE
    turn: int = 0  # player-turn number: 1 for the first turn of play
    round: int = 0  # how many times the turn order came round (1 in the first round)
    current: int = -1  # seat to move, -1 during simultaneous setup
    # per-turn bookkeeping
    reinforcements: int = 0  # armies still to place this turn
    must_trade: bool = False
    trades_this_turn: int = 0
    bonus_taken: bool = False
    conquered_this_turn: bool = False
    fortifies_this_turn: int = 0
    commander_used: bool = False
    pending_move: tuple[int, int, int] | None = None  # (source, target, minimum) after a conquest
    last_conquest: int | None = None  # territory taken last (where elimination trades go)
    winner: int | None = None
    win_reason: str = ""
    # Standing orders DEFEND WITH 1 IN t: territories whose owner rolls one die
    # in defence. Kept sorted; cleared when the territory changes hands.
    defend_one: list[int] = field(default_factory=list)
    # Two players, rules version 3: (seat, territory) for DEFEND WITH 1 IN a
    # neutral territory, given by the player who rolls for the neutral when the
    # other one attacks it. Kept sorted; cleared when the territory is taken.
    defend_neutral: list[tuple[int, int]] = field(default_factory=list)
    # The rules version a GM moved the game to (`pbem upgrade-rules`, the log's
    # RULES command), 0 while it plays the version it started with. A snapshot
    # carries it, so a state read back plays by ``options`` of that version.
    rules_upgraded_to: int = 0
    # Trench warfare (option trench): the territories taken this turn, which
    # may not attack until the next turn. In conquest order; empty otherwise.
    taken_this_turn: list[int] = field(default_factory=list)
    # Assassin (goal = assassin): each seat's secret target, by seat (-1: none),
    # empty in every other game so that their hashes stay as they were.
    targets: list[int] = field(default_factory=list)
    # Freestyle (play_order = freestyle): the seats that have played in this
    # round, in the order they played; empty in every other game.
    moved: list[int] = field(default_factory=list)

    # -- helpers -------------------------------------------------------------
    @property
    def neutral_seat(self) -> int | None:
        last = len(self.players) - 1
        return last if self.players and self.players[last].neutral else None

    def territories_of(self, seat: int) -> list[int]:
        return [t for t, o in enumerate(self.owner) if o == seat]

    def territory_count(self, seat: int) -> int:
        return self.owner.count(seat)

    def army_count(self, seat: int) -> int:
        return sum(a for a, o in zip(self.armies, self.owner, strict=True) if o == seat)

    def continents_held(self, seat: int) -> list[int]:
        # no set of the seat's territories: most continents fail at their first territory
        # (a plain loop: faster than a set or all() with a generator)
        owner = self.owner
        held = []
        for c in self.board.continents:
            for t in c.territories:
                if owner[t] != seat:
                    break
            else:
                held.append(c.index)
        return held

    def alive_seats(self) -> list[int]:
        """Playing seats still in the game, in turn order (neutral excluded)."""
        return [s for s in self.order if self.players[s].alive]

    def copy(self) -> GameState:
        new = copy.copy(self)
        new.players = [copy.copy(p) for p in self.players]
        for p in new.players:
            p.cards = list(p.cards)
        new.order = list(self.order)
        new.owner = list(self.owner)
        new.armies = list(self.armies)
        new.deck = list(self.deck)
        new.discard = list(self.discard)
        new.removed_cards = list(self.removed_cards)
        new.defend_one = list(self.defend_one)
        new.defend_neutral = list(self.defend_neutral)
        new.taken_this_turn = list(self.taken_this_turn)
        new.targets = list(self.targets)
        new.moved = list(self.moved)
        return new

    # -- canonical form --------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Everything that decides the future of the game (not the map or options,
        which a game stores on its own)."""
        data: dict[str, Any] = {
            "game": self.game,
            "map": self.board.name,
            "players": [p.to_dict() for p in self.players],
            "order": list(self.order),
            "owner": list(self.owner),
            "armies": list(self.armies),
            "deck": list(self.deck),
            "discard": list(self.discard),
            "removed_cards": list(self.removed_cards),
            "sets_traded": self.sets_traded,
            "phase": self.phase,
            "turn": self.turn,
            "round": self.round,
            "current": self.current,
            "reinforcements": self.reinforcements,
            "must_trade": self.must_trade,
            "trades_this_turn": self.trades_this_turn,
            "bonus_taken": self.bonus_taken,
            "conquered_this_turn": self.conquered_this_turn,
            "fortifies_this_turn": self.fortifies_this_turn,
            "commander_used": self.commander_used,
            "pending_move": list(self.pending_move) if self.pending_move else None,
            "last_conquest": self.last_conquest,
            "winner": self.winner,
            "win_reason": self.win_reason,
        }
        if self.defend_one:  # only when used: the hashes of games without it stay as they were
            data["defend_one"] = list(self.defend_one)
        if self.defend_neutral:  # only when used (rules version 3), as defend_one
            data["defend_neutral"] = [[seat, t] for seat, t in self.defend_neutral]
        if self.rules_upgraded_to:  # only when upgraded: other games' hashes stay as they were
            data["rules_upgraded_to"] = self.rules_upgraded_to
        if self.taken_this_turn:  # only under trench: other games' hashes stay as they were
            data["taken_this_turn"] = list(self.taken_this_turn)
        if self.targets:  # assassin games only: other games' hashes stay as they were
            data["targets"] = list(self.targets)
        if self.moved:  # freestyle games only: other games' hashes stay as they were
            data["moved"] = list(self.moved)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], board: Board, options: Options) -> GameState:
        players = [Player(**p) for p in data["players"]]
        pending = data.get("pending_move")
        fields_ = {k: v for k, v in data.items() if k not in ("players", "map", "pending_move")}
        if "phase" in fields_:
            fields_["phase"] = EnginePhase(fields_["phase"])
        if "defend_neutral" in fields_:  # JSON pairs back to tuples
            fields_["defend_neutral"] = [(int(a), int(b)) for a, b in fields_["defend_neutral"]]
        if fields_.get("rules_upgraded_to"):  # the GM moved the game to newer rules
            options = replace(options, rules_version=int(fields_["rules_upgraded_to"]))
        return cls(
            board=board,
            options=options,
            players=players,
            pending_move=tuple(pending) if pending else None,
            **fields_,
        )

    def canonical_json(self) -> str:
        """``json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))``, byte
        for byte, written out directly (keys in sorted order): replays hash every step."""
        players = ",".join([_player_json(p) for p in self.players])
        pending = self.pending_move
        defend = f'"defend_one":{_ints(self.defend_one)},' if self.defend_one else ""
        if self.defend_neutral:
            pairs = ",".join([f"[{_int(a)},{_int(b)}]" for a, b in self.defend_neutral])
            defend = f'"defend_neutral":[{pairs}],' + defend
        upgraded = self.rules_upgraded_to
        rules = f'"rules_upgraded_to":{_int(upgraded)},' if upgraded else ""
        taken = self.taken_this_turn
        trench = f'"taken_this_turn":{_ints(taken)},' if taken else ""
        targets = f'"targets":{_ints(self.targets)},' if self.targets else ""
        moved = f'"moved":{_ints(self.moved)},' if self.moved else ""
        return (
            f'{{"armies":{_ints(self.armies)},"bonus_taken":{_bool(self.bonus_taken)},'
            f'"commander_used":{_bool(self.commander_used)},'
            f'"conquered_this_turn":{_bool(self.conquered_this_turn)},'
            f'"current":{_int(self.current)},"deck":{_ints(self.deck)},{defend}'
            f'"discard":{_ints(self.discard)},'
            f'"fortifies_this_turn":{_int(self.fortifies_this_turn)},'
            f'"game":{_str(self.game)},"last_conquest":{_opt(self.last_conquest)},'
            f'"map":{_str(self.board.name)},{moved}"must_trade":{_bool(self.must_trade)},'
            f'"order":{_ints(self.order)},"owner":{_ints(self.owner)},'
            f'"pending_move":{_ints(pending) if pending else "null"},'
            f'"phase":{_str(self.phase)},"players":[{players}],'
            f'"reinforcements":{_int(self.reinforcements)},'
            f'"removed_cards":{_ints(self.removed_cards)},"round":{_int(self.round)},'
            f'{rules}"sets_traded":{_int(self.sets_traded)},{trench}{targets}'
            f'"trades_this_turn":{_int(self.trades_this_turn)},"turn":{_int(self.turn)},'
            f'"win_reason":{_str(self.win_reason)},"winner":{_opt(self.winner)}}}'
        )

    def canonical_json_reference(self) -> str:
        """The definition that ``canonical_json`` must match (tests compare the two)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def state_hash(self) -> str:
        """SHA-256 of the canonical serialisation: the same on every machine."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()

    def keyed_hash(self, key: bytes) -> str:
        """HMAC-SHA256 of the canonical serialisation under a game's hash key: the
        published hash of hash version 2 (see replay.GameDefinition.state_hash).
        Without the key nobody can test a guess of the hidden hands and missions
        against it; the key follows from the dice secret, published at the end."""
        return hmac.new(key, self.canonical_json().encode("utf-8"), hashlib.sha256).hexdigest()


# -- canonical JSON, written directly ---------------------------------------------
# Each helper writes what json.dumps writes for its type; anything of another type
# (never made by the engine) goes through json.dumps itself, so the bytes never differ.
_str = json.encoder.encode_basestring_ascii  # what dumps uses


def _int(value: Any) -> str:
    return str(value) if type(value) is int else json.dumps(value)


def _opt(value: Any) -> str:
    return "null" if value is None else _int(value)


def _bool(value: Any) -> str:
    if value is True:
        return "true"
    return "false" if value is False else json.dumps(value)


def _ints_repr(values: Any) -> str:
    # lists of territories, seats and cards: the engine keeps only ints in them, and
    # the repr of a list of ints is its JSON with blanks (made in C)
    if type(values) is list:
        return repr(values).replace(" ", "")
    return f"[{','.join(map(str, values))}]"


_DECIMAL_LIMIT: Final = 1024
_DECIMALS: Final[tuple[str, ...]] = tuple(str(i) for i in range(_DECIMAL_LIMIT))


# Compiled, this module has no .py __file__: the table loop is then the fast one.
_COMPILED: Final = not __file__.endswith(".py")


def _ints(values: Any) -> str:
    """The JSON of a list of ints. Compiled, the digits of small ints come from a table
    (repr converts each int anew; the loop interpreted is slower than repr). Anything
    else than a list of ints in 0..1023 goes to ``_ints_repr``: the bytes are the same
    either way."""
    if not _COMPILED or type(values) is not list:
        return _ints_repr(values)
    items: list[Any] = values
    out: list[str] = []
    for v in items:
        if type(v) is int and 0 <= v < _DECIMAL_LIMIT:
            out.append(_DECIMALS[v])
        else:
            return _ints_repr(values)
    return "[" + ",".join(out) + "]"


def _player_json(p: Player) -> str:
    return (
        f'{{"alive":{_bool(p.alive)},"cards":{_ints(p.cards)},"colour":{_str(p.colour)},'
        f'"eliminated_by":{_opt(p.eliminated_by)},"hq":{_opt(p.hq)},'
        f'"mission":{_opt(p.mission)},"mission_fallback":{_bool(p.mission_fallback)},'
        f'"name":{_str(p.name)},"neutral":{_bool(p.neutral)},"to_place":{_int(p.to_place)}}}'
    )
