#!/usr/bin/env python3
"""Check every draw of a pbem game record from docs/DICE.md alone (standard library only).

    python scripts/verify_dice.py world-1.pgn [--secret HEX]

It does not know the rules of Risk: it checks that the secret matches the commitment, that
each stream is keyed as the spec says (v2: with the contributions of the right log entries)
and that every draw written in the record's ``=== draws`` sections is the one the stream
gives. Together with `pbem verify` (which replays the orders) it shows that no roll was
chosen. It reads records of every format (docs/RECORDS.md) and checks what each carries:
a record without draws sections (written before pbem wrote them, or exported without the
secret) lets it check the secret against the commitment, and it says that the draws
are left to `pbem verify`.

Exit status:
  0  every draw of the record checked, and every one matches
  1  a difference: the first one is printed after "FAILED:"
  2  the command line or the file is wrong (nothing was read)
  3  nothing found wrong, but not everything could be checked: the record has no secret,
     no draws sections, or a dice version this script does not know; it prints
     "checked:" and "not checked:" lines saying which
"""

import hashlib
import hmac
import sys


def read(text):
    """(headers, entries [(kind, turn, text)], draws [(label, [entry index], [(n, r)])])."""
    headers, entries, draws, block = {}, [], [], None
    for line in text.split("\n"):
        if line.startswith("=== map"):
            break
        if line.startswith("=== "):
            head = line[4:].split()
            if head[0] == "draws":
                listed = head[2][len("entries=") :]
                indices = [] if listed == "-" else [int(i) for i in listed.split(",")]
                block = []
                draws.append((head[1], indices, block))
            else:
                block = []
                entries.append((head[0], int(head[1]), block))
        elif block is not None:
            block.append(line)
        elif line.startswith("[") and line.endswith("]"):
            key, _, value = line[1:-1].partition(" ")
            headers[key] = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    entries = [(kind, turn, "\n".join(lines).strip("\n")) for kind, turn, lines in entries]
    parsed = []
    for label, indices, lines in draws:
        drawn = []
        for token in " ".join(lines).split():  # "r/n" is uniform(n) -> r; a digit, a die face
            r, _, n = token.partition("/")
            drawn.append((int(n), int(r)) if n else (6, int(r) - 1))
        parsed.append((label, indices, drawn))
    return headers, entries, parsed


def contribution(text):
    """v2: SHA-256 of the entry's SALT (text after 'SALT '), else of its canonical text."""
    for line in text.split("\n"):
        if line.startswith("SALT "):
            return hashlib.sha256(line[5:].encode()).digest()
    return hashlib.sha256(text.encode()).digest()


DICE_VERSIONS = ("pbem-dice-v1", "pbem-dice-v2")
RECORD_FORMATS = ("1", "2")  # [RecordFormat]; absent: 1
OK, DIFFERENCE, USAGE, UNCHECKED = 0, 1, 2, 3
USE_PBEM = "use `pbem verify FILE`, which replays the orders with the rules engine"


def stream(version, secret, game, label, contributions, length):
    if version == "pbem-dice-v1":
        out, i = b"", 0
        while len(out) < length:
            msg = game.encode() + b"\x00" + label.encode() + b"\x00" + i.to_bytes(8, "big")
            out += hmac.new(secret, msg, hashlib.sha256).digest()
            i += 1
        return out[:length]
    if version == "pbem-dice-v2":
        msg = b"pbem-dice-v2\x00" + game.encode() + b"\x00" + label.encode() + b"\x00"
        msg += len(contributions).to_bytes(4, "big") + b"".join(contributions)
        key = hashlib.blake2b(msg, key=secret, digest_size=32).digest()
        return hashlib.shake_256(key).digest(length)
    raise ValueError(f"unknown dice version {version!r}")


class Unchecked(Exception):
    """Nothing found wrong, but something could not be checked: (checked, not checked)."""

    def __init__(self, checked, unchecked):
        super().__init__(unchecked)
        self.checked, self.unchecked = checked, unchecked


def check(text, secret_hex=None):
    """'' when every draw matches, else the first problem; Unchecked when the record
    does not carry what a check needs (the secret, the draws, a known dice version)."""
    headers, entries, draws = read(text)
    version = headers.get("DiceVersion", "pbem-dice-v1")
    fmt = headers.get("RecordFormat", "1")
    if fmt not in RECORD_FORMATS:
        print(
            f"note: record format {fmt} is newer than this script (formats "
            f"{', '.join(RECORD_FORMATS)}); it checks the draws as docs/DICE.md describes them"
        )
    try:
        secret = bytes.fromhex(secret_hex or headers.get("Secret", ""))
    except ValueError:
        return "the secret is not hexadecimal"
    if not secret:
        raise Unchecked(
            [],
            [
                "the secret and every draw: the record has no [Secret] (the game's secret "
                "is not revealed yet); give it with --secret HEX once it is"
            ],
        )
    if len(secret) != 32:
        size = f"the secret is {len(secret)} bytes"
        return f"{size}; a {version} secret is exactly 32 bytes (64 hex digits)"
    if hashlib.sha256(secret).hexdigest() != headers.get("Commitment"):
        return "the secret does not match the commitment"
    checked = ["the secret matches the commitment published at the start"]
    if version not in DICE_VERSIONS:
        raise Unchecked(
            checked,
            [
                f"the draws: dice version {version!r} is newer than this script "
                f"({', '.join(DICE_VERSIONS)}); use a newer verify_dice.py, or {USE_PBEM}"
            ],
        )
    if not draws:
        raise Unchecked(
            checked,
            [
                "the draws: the record has no '=== draws' sections (it was written before "
                "pbem wrote them, or exported without the secret); " + USE_PBEM,
            ],
        )
    rerolls = []  # `pbem rollback --reroll`: a new secret from turn T on, "T:COMMITMENT:SECRET"
    for item in headers.get("Rerolls", "").split():
        first, made, new = (item.split(":") + [""])[:3]
        try:
            rerolled = bytes.fromhex(new)
        except ValueError:
            rerolled = b""
        if len(rerolled) != 32 or hashlib.sha256(rerolled).hexdigest() != made:
            return f"the secret of the dice rerolled from turn {first} is missing or wrong"
        rerolls.append((int(first), rerolled))
    labels = {label for label, _, _ in draws}
    for kind, turn, _ in entries:
        if kind == "turn" and f"turn:{turn}" not in labels:
            return f"turn {turn} has no draws section"
    total = 0
    for label, indices, drawn in draws:
        chosen = [entries[i] for i in indices]
        if label == "setup":
            expected = not chosen
        elif label == "setup:place":
            expected = bool(chosen) and all(kind == "setup" for kind, _, _ in chosen)
        else:
            expected = [(k, f"turn:{t}") for k, t, _ in chosen] == [("turn", label)]
        if not expected:
            return f"stream {label} is keyed with the wrong log entries {indices}"
        v2 = version != "pbem-dice-v1"
        contributions = [contribution(t) for _, _, t in chosen] if v2 else []
        length = 64 + 8 * len(drawn)
        turn = int(label[5:]) if label.startswith("turn:") else 0
        key = ([secret] + [new for first, new in rerolls if turn and first <= turn])[-1]
        data = stream(version, key, headers["Game"], label, contributions, length)
        offset = 0
        for k, (n, r) in enumerate(drawn):
            while True:
                while offset + 4 > len(data):
                    length *= 2
                    data = stream(version, key, headers["Game"], label, contributions, length)
                u = int.from_bytes(data[offset : offset + 4], "big")
                offset += 4
                if u < 2**32 - 2**32 % n:
                    break
            if u % n != r:
                return (
                    f"{label}: draw {k + 1} is {r} of {n} in the record, the secret gives {u % n}"
                )
        total += len(drawn)
    print(f"ok: {len(draws)} streams, {total} draws, every one as {version} gives it")
    return ""


def main(argv):
    """The exit status of the module's docstring; what was and was not checked printed."""
    at = argv.index("--secret") if "--secret" in argv else None
    if not argv or argv[0].startswith("-") or (at is not None and at + 1 >= len(argv)):
        print(__doc__, file=sys.stderr)
        return USAGE
    secret = argv[at + 1] if at is not None else None
    try:
        with open(argv[0], encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{argv[0]}: cannot be read: {exc}", file=sys.stderr)
        return USAGE
    try:
        problem = check(text, secret)
    except Unchecked as partial:
        for line in partial.checked:
            print(f"checked: {line}")
        for line in partial.unchecked:
            print(f"not checked: {line}")
        return UNCHECKED
    except (ValueError, IndexError, KeyError) as exc:
        print(f"FAILED: the record cannot be read as docs/DICE.md describes it ({exc!r})")
        return DIFFERENCE
    if problem:
        print(f"FAILED: {problem}")
        return DIFFERENCE
    return OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
