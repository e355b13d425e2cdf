"""Game records: a plain-text file in the spirit of chess PGN.

A record holds everything needed to replay a game and check every roll
(docs/RECORDS.md: the format's versions and what every pbem reads):

    [RecordFormat "2"]           (absent: format 1)
    [Game "world-1"]
    [Map "classic"]
    [MapSHA256 "…"]
    [Options "{…json…}"]         (every option, rules_version included)
    [RulesVersion "2"]           (the rules_version of [Options], for a reader: the
                                 version the game started with)
    [Player "0 alice red"]
    [DiceVersion "pbem-dice-v1"]
    [Commitment "…"]
    [HashVersion "2"]            (keyed state hashes; absent: version 1, plain SHA-256)
    [Secret "…"]                 (only once revealed)
    [Result "alice"]

    === setup 0 alice gm
    PLACE 10 Alaska, 3 Alberta
    === turn 1 alice mail hash=9f2c…
    PLACE 3 Alaska
    ATTACK Alaska -> Kamchatka
    === draws turn:1 entries=1
    6 5 3 4 2 1 17/42

A record that carries the secret also carries every draw of every stream
(``=== draws LABEL entries=I,J``: the stream, the indices of the log entries
whose contributions key it in dice version 2, then each ``uniform(n)`` drawn,
``r/n``, a die written as its face), so scripts/verify_dice.py can check every
roll from docs/DICE.md alone. The map's text ends the record, after a line
``=== map`` (format 1 embedded it only when it was not the shipped map: such a
record's map is found by its MapSHA256 in the map archive, pbem/maps/archive.py).
``hash=`` is the state hash after the step that entry completed, so
`pbem verify` can name the first turn that differs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Final

from pbem.maps import archive as map_archive
from pbem.maps import map_names
from pbem.maps.copies import parse_named
from pbem.orderlog.replay import (
    HASH_PLAIN,
    HASH_VERSIONS,
    Draws,
    Entry,
    GameDefinition,
    ReplayError,
    Step,
    apply,
    paused_gc,
    start,
)
from pbem.rules.dice import DICE_V1, check_version, commitment, secret_size_problem
from pbem.rules.errors import MapError, OptionsError
from pbem.rules.options import Options

# Why a state hash differs once the secret matched the commitment: the dice are
# the ones promised, so something else in the record is not what was played.
CHANGED_AFTER = (
    "The secret matches the commitment, so the dice are the ones promised: an order, "
    "a hash, the options or the map of the record are not those of the game played "
    "(changed after it was written, or written by another program)."
)


class RecordError(ValueError):
    """A record file that cannot be read; names the line."""


class MapNotFoundError(RecordError):
    """A record that does not embed its map, and this pbem has no map of its hash
    (or, without a hash, of its name): the message says what to do."""


RECORD_FORMAT_1: Final = 1  # no [RecordFormat]; the map embedded only if not the shipped one
RECORD_FORMAT_2: Final = 2  # [RecordFormat "2"], [RulesVersion], the map always embedded
RECORD_FORMATS: Final = (RECORD_FORMAT_1, RECORD_FORMAT_2)
RECORD_FORMAT: Final = RECORD_FORMAT_2  # what write_record writes


@dataclass
class DrawSection:
    """``=== draws``: one stream's draws, ``(n, result)`` of each ``uniform(n)``."""

    label: str
    entries: list[int]  # indices (from 0) in Record.entries of the contributing entries
    draws: list[tuple[int, int]]


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
    dice_version: str = DICE_V1
    draws: list[DrawSection] = field(default_factory=list)  # only with the secret
    # `pbem rollback --reroll`: (first turn, commitment, secret hex once published)
    rerolls: list[tuple[int, str, str | None]] = field(default_factory=list)
    hash_version: int = HASH_PLAIN  # what the hash= values are (replay.HASH_VERSIONS)
    record_format: int = RECORD_FORMAT  # the format it was read as; written: always the newest


def map_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_record(record: Record) -> str:
    """The record in the newest format (RECORD_FORMAT), whatever format it was read
    from: the map's text always at the end, so no later pbem needs its own copy."""
    lines = [
        f"[RecordFormat {_quote(str(RECORD_FORMAT))}]",
        f"[Game {_quote(record.game)}]",
        f"[Map {_quote(record.map_name)}]",
        f"[MapSHA256 {_quote(map_sha256(record.map_text))}]",
    ]
    if record.preset:
        lines.append(f"[Preset {_quote(record.preset)}]")
    lines.append(f"[Options {_quote(json.dumps(record.options.to_dict(), sort_keys=True))}]")
    lines.append(f"[RulesVersion {_quote(str(record.options.rules_version))}]")
    for seat, (name, colour) in enumerate(record.players):
        lines.append(f"[Player {_quote(f'{seat} {name} {colour}'.strip())}]")
    lines.append(f"[DiceVersion {_quote(record.dice_version)}]")
    lines.append(f"[Commitment {_quote(record.commitment)}]")
    if record.hash_version != HASH_PLAIN:  # records of version 1 stay as they were
        lines.append(f"[HashVersion {_quote(str(record.hash_version))}]")
    if record.secret_hex:
        lines.append(f"[Secret {_quote(record.secret_hex)}]")
    if record.rerolls:  # "TURN:COMMITMENT[:SECRET]", one per reroll, oldest first
        items = [f"{t}:{c}" + (f":{s}" if s else "") for t, c, s in record.rerolls]
        lines.append(f"[Rerolls {_quote(' '.join(items))}]")
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
    for section in record.draws:
        lines.append(
            f"=== draws {section.label} entries={','.join(map(str, section.entries)) or '-'}"
        )
        tokens = [str(r + 1) if n == 6 else f"{r}/{n}" for n, r in section.draws]
        lines.extend(" ".join(tokens[i : i + 30]) for i in range(0, len(tokens), 30))
    lines.append("=== map")
    # the map's text exactly as it is (its SHA-256 is in the headers), to the end
    return "\n".join(lines) + "\n" + record.map_text


def read_record(text: str, source: str = "record") -> Record:
    """A record file's headers, entries, hashes, draws and map (RecordError if malformed)."""
    with paused_gc():
        return _read_record(text, source)


def _read_record(text: str, source: str) -> Record:
    """The record's parts in the file's order: headers, entries, the map; then the
    headers' values are checked (each error names ``source`` and what is wrong)."""
    lines = text.split("\n")
    headers, players, i = _read_headers(lines, source)
    names = [name for name, _ in players]
    entries, hashes, draws, map_text = _read_sections(lines, i, names, source)
    for key in ("Game", "Map", "Options", "Commitment"):
        if key not in headers:
            raise RecordError(f"{source}: missing header [{key} ...]")
    record_format = _record_format(headers, source)
    map_name = headers["Map"]
    map_text = _map_text(headers, map_name, map_text, source)
    try:
        version = check_version(headers.get("DiceVersion", DICE_V1))
    except ValueError as exc:
        raise RecordError(f"{source}: DiceVersion: {exc}") from None
    hash_version = headers.get("HashVersion", str(HASH_PLAIN))
    if hash_version not in {str(v) for v in HASH_VERSIONS}:
        known = ", ".join(map(str, HASH_VERSIONS))
        raise RecordError(f"{source}: HashVersion {hash_version!r}: this pbem knows {known}")
    try:
        options = Options.from_stored(json.loads(headers["Options"]), source=f"{source}: Options")
    except OptionsError as exc:
        raise RecordError(str(exc)) from None
    except (ValueError, TypeError) as exc:
        raise RecordError(f"{source}: Options: {exc}") from None
    written = headers.get("RulesVersion")
    if written is not None and written != str(options.rules_version):
        raise RecordError(
            f"{source}: [RulesVersion {written!r}] contradicts the rules_version "
            f"{options.rules_version} of [Options]; the record was edited by hand"
        )
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
        dice_version=version,
        draws=draws,
        rerolls=_rerolls(headers.get("Rerolls", ""), source),
        hash_version=int(hash_version),
        record_format=record_format,
    )


def _record_format(headers: dict[str, str], source: str) -> int:
    """[RecordFormat] (absent: format 1); a newer format than this pbem knows is refused
    by name rather than misread."""
    written = headers.get("RecordFormat", str(RECORD_FORMAT_1))
    if written not in {str(v) for v in RECORD_FORMATS}:
        known = ", ".join(map(str, RECORD_FORMATS))
        raise RecordError(
            f"{source}: record format {written!r} is newer than this pbem, which reads "
            f"formats {known}: upgrade pbem"
        )
    return int(written)


def _read_headers(
    lines: list[str], source: str
) -> tuple[dict[str, str], list[tuple[str, str]], int]:
    """The ``[Key "value"]`` lines before the first ``===``: the headers, the players
    (name, colour) in seat order, and the index of the first line after them."""
    headers: dict[str, str] = {}
    players: list[tuple[str, str]] = []
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
    return headers, players, i


def _read_sections(
    lines: list[str], i: int, names: list[str], source: str
) -> tuple[list[Entry], list[str | None], list[DrawSection], str | None]:
    """The ``=== ...`` sections from line ``i``: the log's entries with the hash each
    names, the draws sections, and the embedded map's text (None: not embedded)."""
    entries: list[Entry] = []
    hashes: list[str | None] = []
    draws: list[DrawSection] = []
    map_text: str | None = None
    current: list[str] | None = None
    head: list[str] = []
    head_line = 0

    def close() -> None:
        if current is None:
            return
        if head[0] == "draws":
            draws.append(_draws(head, current, source, head_line))
            return
        entries.append(_entry(head, "\n".join(current).strip("\n"), names, source, head_line))
        hashes.append(next((p[5:] for p in head[4:] if p.startswith("hash=")), None))

    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("=== map"):
            close()
            current = None
            map_text = "\n".join(lines[i:])  # verbatim: _map_text checks it
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
    return entries, hashes, draws, map_text


def _map_text(headers: dict[str, str], map_name: str, embedded: str | None, source: str) -> str:
    """The map the record was played on: embedded (checked against its MapSHA256),
    else the archived map of its MapSHA256, else (a record without the hash) the
    shipped map of its name. Never today's map of that name in place of another."""
    wanted = headers.get("MapSHA256")
    if embedded is not None:
        # verbatim (format 2), or with one newline at the end as format 1 wrote it (and
        # as it reads after a mailer or an editor added blank lines)
        ended = embedded.rstrip("\n") + "\n"
        if wanted is None:
            return ended
        for text in (embedded, ended):
            if map_sha256(text) == wanted:
                return text
        raise RecordError(
            f"{source}: the map {map_name!r} differs from the one the game was played on"
        )
    if wanted is not None:
        found = map_archive.archived_map_text(wanted)
        if found is None:
            found = _shipped_text(map_name)  # a map edited since the archive was made
        if found is None or map_sha256(found) != wanted:
            raise MapNotFoundError(_not_archived(map_name, wanted, source))
        return found
    shipped = _shipped_text(map_name)
    if shipped is None:
        raise MapNotFoundError(
            f"{source}: map {map_name!r} is neither embedded in the record nor shipped "
            "with this pbem: add a line '=== map' and the map's text at the end of the record"
        )
    return shipped


def _not_archived(map_name: str, wanted: str, source: str) -> str:
    """What to do about a map this pbem has no text of: a shipped map's older text
    comes with a newer pbem; a map of one's own only with the record."""
    embed = "add a line '=== map' and the map's text at the end of the record"
    if map_name in map_names():
        return (
            f"{source}: this record was made by a pbem whose map {map_name!r} "
            f"(SHA-256 {wanted}) is not in this pbem's archive: upgrade pbem, or {embed}"
        )
    return (
        f"{source}: the map {map_name!r} (SHA-256 {wanted}) is not embedded in the record, "
        f"and this pbem has no map of that name or hash: {embed}"
    )


def _shipped_text(map_name: str) -> str | None:
    """The text of the built-in map ``map_name`` as this pbem ships it, or None."""
    if map_name not in map_names():
        return None
    from pbem.paths import maps_dir

    return (maps_dir() / f"{map_name}.toml").read_text(encoding="utf-8")


def _rerolls(value: str, source: str) -> list[tuple[int, str, str | None]]:
    out: list[tuple[int, str, str | None]] = []
    for item in value.split():
        parts = item.split(":")
        if len(parts) not in (2, 3) or not parts[0].isdigit():
            raise RecordError(f"{source}: Rerolls: {item!r} is not TURN:COMMITMENT[:SECRET]")
        out.append((int(parts[0]), parts[1], parts[2] if len(parts) == 3 else None))
    return out


def _unquote(raw: str, source: str, line: int) -> str:
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"':
        raise RecordError(f"{source}: line {line}: header values are in double quotes")
    return raw[1:-1].replace('\\"', '"').replace("\\\\", "\\")


_DIE_DRAWS = {str(face): (6, face - 1) for face in range(1, 7)}  # a die face: uniform(6)


def _draws(head: list[str], lines: list[str], source: str, line: int) -> DrawSection:
    """``=== draws LABEL entries=I,J`` and its lines of draws (``r/n``, or a die face)."""
    if len(head) != 3 or not head[2].startswith("entries="):
        raise RecordError(f"{source}: line {line}: expected '=== draws LABEL entries=I,J'")
    listed = head[2][len("entries=") :]
    tokens = " ".join(lines).split()
    try:
        indices = [] if listed == "-" else [int(i) for i in listed.split(",")]
        try:  # most sections hold dice only: one table look-up per draw
            drawn = list(map(_DIE_DRAWS.__getitem__, tokens))
        except KeyError:
            drawn = [_DIE_DRAWS.get(token) or _draw(token) for token in tokens]
    except ValueError:
        raise RecordError(f"{source}: line {line}: unreadable draws") from None
    return DrawSection(head[1], indices, drawn)


def _draw(token: str) -> tuple[int, int]:
    """``r/n`` -> (n, r); a die face -> (6, face - 1). ValueError when unreadable."""
    r, _, n = token.partition("/")
    return (int(n), int(r)) if n else (6, int(r) - 1)


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
        board = parse_named(record.map_text, f"{record.map_name} (in the record)", record.map_name)
    except MapError as exc:
        raise RecordError(str(exc)) from None
    players = tuple(record.players)
    rerolls = tuple((t, bytes.fromhex(s)) for t, _, s in record.rerolls if s)
    return GameDefinition(
        record.game,
        board,
        record.options,
        players,
        secret,
        record.dice_version,
        rerolls,
        record.hash_version,
    )


def draws_of(record: Record, secret: bytes) -> list[DrawSection]:
    """Replay the record and note every draw of every stream (for its draws sections)."""
    game, _ = start(definition_of(record, secret), log_draws=True)
    for entry in record.entries:
        apply(game, entry)
    return _sections(record, game.draws)


def _sections(record: Record, draws: list[Draws] | None) -> list[DrawSection]:
    assert draws is not None
    index = {id(entry): i for i, entry in enumerate(record.entries)}
    return [DrawSection(d.label, [index[id(e)] for e in d.entries], list(d.log)) for d in draws]


def reroll_problem(record: Record) -> str:
    """Why the rerolled dice of a record cannot be checked ("" when they can)."""
    for turn, made, secret_hex in record.rerolls:
        if not secret_hex:
            return f"the secret of the dice rerolled from turn {turn} is not in the record"
        try:
            secret = bytes.fromhex(secret_hex)
        except ValueError:
            return f"the secret of the dice rerolled from turn {turn} is not hexadecimal"
        if len(secret) != 32 or commitment(secret) != made:
            return (
                f"the secret of the dice rerolled from turn {turn} does not match the "
                "commitment announced at the rollback"
            )
    return ""


@dataclass
class VerifyReport:
    ok: bool
    steps: int
    message: str
    turn: int | None = None  # the first turn that differs


def secret_to_verify(record: Record, given: str | None, source: str = "the record") -> str:
    """The secret ``pbem verify`` checks with: ``given`` (--secret), else the
    record's own [Secret]; both, and different, is refused with both named."""
    recorded = record.secret_hex
    if given is None:
        if recorded is None:
            raise RecordError(
                f"{source} has no [Secret] (the game's secret is not revealed yet): "
                "give it with --secret HEX"
            )
        return recorded
    if recorded is not None and given.strip().lower() != recorded.strip().lower():
        raise RecordError(
            f"--secret {given} differs from the [Secret] of {source} ({recorded}); "
            "leave --secret out to verify with the record's"
        )
    return given


def verify_record(record: Record, secret_hex: str) -> VerifyReport:
    """Recompute every step from the secret; report the first difference."""
    with paused_gc():
        return _verify_record(record, secret_hex)


def _verify_record(record: Record, secret_hex: str) -> VerifyReport:
    try:
        secret = bytes.fromhex(secret_hex.strip())
    except ValueError:
        return VerifyReport(False, 0, "the secret is not hexadecimal")
    if secret_size_problem(secret, record.dice_version):
        return VerifyReport(False, 0, secret_size_problem(secret, record.dice_version))
    if commitment(secret) != record.commitment:
        return VerifyReport(
            False, 0, "the secret does not match the commitment published at the start"
        )
    problem = reroll_problem(record)
    if problem:
        return VerifyReport(False, 0, problem)
    definition = definition_of(record, secret)
    expected = [h for h in record.hashes]
    steps = 0
    index = 0
    step: Step | None = None
    # one replay checks the hashes and, when the record has them, notes the draws
    game, _ = start(definition, log_draws=bool(record.draws))
    try:
        for entry in record.entries:
            found = apply(game, entry)
            if found is None:
                continue
            step = found
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
                    f"{where} differs: the record says {wanted[:12]}…, its orders replayed "
                    f"give {step.state_hash[:12]}…. {CHANGED_AFTER}",
                    step.turn,
                )
    except ReplayError as exc:
        return VerifyReport(False, steps, f"the orders do not replay: {exc}", exc.turn)
    if record.result and step is not None:
        final = step.state
        winner = final.players[final.winner].name if final.winner is not None else ""
        if winner != record.result:
            message = (
                f"the record says {record.result} won; the orders give {winner or 'no winner'}"
            )
            return VerifyReport(False, steps, message)
    if record.draws:
        problem = _compare_draws(record.draws, _sections(record, game.draws))
        if problem:
            return VerifyReport(False, steps, problem)
    return VerifyReport(True, steps, f"all {steps} steps verified; every roll matches the secret")


def _compare_draws(written: list[DrawSection], computed: list[DrawSection]) -> str:
    """The first difference between a record's draws sections and the replay's, or ''."""
    for i, (w, c) in enumerate(zip(written, computed, strict=False)):
        if (w.label, w.entries) != (c.label, c.entries):
            return f"draws section {i + 1} ({w.label}) names another stream or other entries"
        if w.draws != c.draws:
            pairs = zip(w.draws, c.draws, strict=False)
            at = next((k for k, (a, b) in enumerate(pairs) if a != b), None)
            at = min(len(w.draws), len(c.draws)) if at is None else at
            return f"the draws of {w.label} differ from the secret's at draw {at + 1}"
    if len(written) != len(computed):
        return f"the record has {len(written)} draws sections; the game used {len(computed)}"
    return ""
