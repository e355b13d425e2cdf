"""Game records: a plain-text file in the spirit of chess PGN.

A record holds everything needed to replay a game and check every roll:

    [Game "world-1"]
    [Map "classic"]
    [MapSHA256 "…"]
    [Options "{…json…}"]
    [Player "0 alice red"]
    [DiceVersion "pbem-dice-v1"]
    [Commitment "…"]
    [Secret "…"]                 (only once revealed)
    [Result "alice"]

    === setup 0 alice gm
    PLACE 10 Alaska, 3 Alberta
    === turn 1 alice mail hash=9f2c…
    PLACE 3 Alaska
    ATTACK Alaska -> Kamchatka

A map that is not shipped with pbem (or differs from the shipped one) is
embedded after a line ``=== map``. ``hash=`` is the state hash after the
step that entry completed, so `pbem verify` can name the first turn that
differs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from pbem.maps import map_names
from pbem.rules.dice import DICE_VERSION, commitment
from pbem.rules.errors import MapError, OptionsError
from pbem.rules.maps import parse_map
from pbem.rules.options import Options
from pbem.service.replay import Entry, GameDefinition, ReplayError, replay


class RecordError(ValueError):
    """A record file that cannot be read; names the line."""


@dataclass
class Record:
    game: str
    map_name: str
    map_text: str
    options: Options
    players: list[tuple[str, str]]  # (name, colour) by seat
    commitment: str
    entries: list[Entry]
    hashes: list[str | None]  # per entry: the hash written after it, if any
    secret_hex: str | None = None
    result: str = ""
    preset: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def map_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_record(record: Record) -> str:
    lines = [
        f"[Game {_quote(record.game)}]",
        f"[Map {_quote(record.map_name)}]",
        f"[MapSHA256 {_quote(map_sha256(record.map_text))}]",
    ]
    if record.preset:
        lines.append(f"[Preset {_quote(record.preset)}]")
    lines.append(f"[Options {_quote(json.dumps(record.options.to_dict(), sort_keys=True))}]")
    for seat, (name, colour) in enumerate(record.players):
        lines.append(f"[Player {_quote(f'{seat} {name} {colour}'.strip())}]")
    lines.append(f"[DiceVersion {_quote(DICE_VERSION)}]")
    lines.append(f"[Commitment {_quote(record.commitment)}]")
    if record.secret_hex:
        lines.append(f"[Secret {_quote(record.secret_hex)}]")
    if record.result:
        lines.append(f"[Result {_quote(record.result)}]")
    lines.append("")
    names = [name for name, _ in record.players]
    for entry, state_hash in zip(record.entries, record.hashes, strict=True):
        who = names[entry.seat] if entry.seat is not None and entry.seat < len(names) else "-"
        head = f"=== {entry.kind} {entry.turn} {who} {entry.source}"
        if state_hash:
            head += f" hash={state_hash}"
        lines.append(head)
        lines.extend(entry.text.rstrip("\n").split("\n") if entry.text.strip() else [])
    if not _is_builtin(record.map_name, record.map_text):
        lines.append("=== map")
        lines.extend(record.map_text.rstrip("\n").split("\n"))
    return "\n".join(lines) + "\n"


def _is_builtin(name: str, text: str) -> bool:
    from pbem.paths import maps_dir

    path = maps_dir() / f"{name}.toml"
    return name in map_names() and path.read_text(encoding="utf-8") == text


def read_record(text: str, source: str = "record") -> Record:
    headers: dict[str, str] = {}
    players: list[tuple[str, str]] = []
    entries: list[Entry] = []
    hashes: list[str | None] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines) and not lines[i].startswith("==="):
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        if not (line.startswith("[") and line.endswith("]") and " " in line):
            raise RecordError(f'{source}: line {i}: expected a header like [Game "name"]')
        key, _, raw = line[1:-1].partition(" ")
        value = _unquote(raw.strip(), source, i)
        if key == "Player":
            parts = value.split()
            if len(parts) < 2 or not parts[0].isdigit() or int(parts[0]) != len(players):
                raise RecordError(
                    f"{source}: line {i}: Player must be 'SEAT NAME [COLOUR]' in seat order"
                )
            players.append((parts[1], parts[2] if len(parts) > 2 else ""))
        else:
            headers[key] = value
    map_text: str | None = None
    names = [name for name, _ in players]
    current: list[str] | None = None
    head: list[str] = []
    head_line = 0

    def close() -> None:
        if current is None:
            return
        entries.append(_entry(head, "\n".join(current).strip("\n"), names, source, head_line))
        hashes.append(next((p[5:] for p in head[4:] if p.startswith("hash=")), None))

    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("=== map"):
            close()
            current = None
            map_text = "\n".join(lines[i:]).rstrip("\n") + "\n"
            break
        if line.startswith("=== "):
            close()
            head, head_line, current = line[4:].split(), i, []
            continue
        if current is None:
            if line.strip():
                raise RecordError(f"{source}: line {i}: text outside an entry")
            continue
        current.append(line)
    else:
        close()
    for key in ("Game", "Map", "Options", "Commitment"):
        if key not in headers:
            raise RecordError(f"{source}: missing header [{key} ...]")
    map_name = headers["Map"]
    if map_text is None:
        if map_name not in map_names():
            raise RecordError(f"{source}: map {map_name!r} is neither shipped nor embedded")
        from pbem.paths import maps_dir

        map_text = (maps_dir() / f"{map_name}.toml").read_text(encoding="utf-8")
    if "MapSHA256" in headers and headers["MapSHA256"] != map_sha256(map_text):
        raise RecordError(
            f"{source}: the map {map_name!r} differs from the one the game was played on"
        )
    try:
        options = Options.from_dict(json.loads(headers["Options"]), source=f"{source}: Options")
    except OptionsError as exc:
        raise RecordError(str(exc)) from None
    except (ValueError, TypeError) as exc:
        raise RecordError(f"{source}: Options: {exc}") from None
    return Record(
        game=headers["Game"],
        map_name=map_name,
        map_text=map_text,
        options=options,
        players=players,
        commitment=headers["Commitment"],
        entries=entries,
        hashes=hashes,
        secret_hex=headers.get("Secret"),
        result=headers.get("Result", ""),
        preset=headers.get("Preset", ""),
        headers=headers,
    )


def _unquote(raw: str, source: str, line: int) -> str:
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"':
        raise RecordError(f"{source}: line {line}: header values are in double quotes")
    return raw[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def _entry(head: list[str], text: str, names: list[str], source: str, line: int) -> Entry:
    if len(head) < 4 or head[0] not in ("setup", "turn", "command") or not head[1].isdigit():
        raise RecordError(f"{source}: line {line}: expected '=== KIND TURN PLAYER SOURCE'")
    kind, turn, who, origin = head[0], int(head[1]), head[2], head[3]
    if origin not in ("mail", "gm", "default", "bot"):
        raise RecordError(
            f"{source}: line {line}: unknown source {origin!r} (mail, gm, default or bot)"
        )
    if who == "-":
        seat = None
    elif who in names:
        seat = names.index(who)
    else:
        raise RecordError(f"{source}: line {line}: no player {who!r}")
    return Entry(kind=kind, seat=seat, text=text, turn=turn, source=origin)


def definition_of(record: Record, secret: bytes) -> GameDefinition:
    try:
        board = parse_map(record.map_text, f"{record.map_name} (in the record)")
    except MapError as exc:
        raise RecordError(str(exc)) from None
    return GameDefinition(record.game, board, record.options, tuple(record.players), secret)


@dataclass
class VerifyReport:
    ok: bool
    steps: int
    message: str
    turn: int | None = None  # the first turn that differs


def verify_record(record: Record, secret_hex: str) -> VerifyReport:
    """Recompute every step from the secret; report the first difference."""
    try:
        secret = bytes.fromhex(secret_hex.strip())
    except ValueError:
        return VerifyReport(False, 0, "the secret is not hexadecimal")
    if commitment(secret) != record.commitment:
        return VerifyReport(
            False, 0, "the secret does not match the commitment published at the start"
        )
    definition = definition_of(record, secret)
    expected = [h for h in record.hashes]
    steps = 0
    index = 0
    try:
        game_steps = replay(definition, record.entries)
        for step in game_steps:
            steps += 1
            # the hash stands on the last entry of the step
            index += len(step.entries)
            wanted = expected[index - 1]
            where = f"turn {step.turn}" if step.turn else "the setup"
            if wanted is None and step.turn:
                message = f"{where} has no state hash in the record: it cannot be checked"
                return VerifyReport(False, steps, message, step.turn)
            if wanted is not None and wanted != step.state_hash:
                return VerifyReport(
                    False,
                    steps,
                    f"{where} differs: the record says {wanted[:12]}…, "
                    f"the dice give {step.state_hash[:12]}…",
                    step.turn,
                )
    except ReplayError as exc:
        return VerifyReport(False, steps, f"the orders do not replay: {exc}", exc.turn)
    if record.result and steps:
        final = step.state
        winner = final.players[final.winner].name if final.winner is not None else ""
        if winner != record.result:
            message = (
                f"the record says {record.result} won; the orders give {winner or 'no winner'}"
            )
            return VerifyReport(False, steps, message)
    return VerifyReport(True, steps, f"all {steps} steps verified; every roll matches the secret")
