"""Console entry point. `pbem odds` and `pbem verify` answer before typer is
imported (typer and its imports, about 0.15 s, cost more than the odds or a
verify of a long game); everything else, and any other spelling of their
arguments, goes to the typer app in pbem.cli (built with the one command named, see
`pbem.cli.app_for`), which also documents them in `pbem --help`."""

from __future__ import annotations

import json
import sys


def _fast_odds(args: list[str]) -> int | None:
    """`odds A D [--json]` with plain integers; None to let typer handle the rest."""
    rest = [a for a in args if a != "--json"]
    if len(rest) != 2 or not all(a.isdigit() for a in rest) or len(args) - len(rest) > 1:
        return None
    attackers, defenders = int(rest[0]), int(rest[1])
    if attackers < 1 or defenders < 1:
        return None
    from pbem.rules.odds import battle, format_odds, to_json

    result = battle(attackers, defenders)
    if "--json" in args:
        print(json.dumps(to_json(result), indent=2, sort_keys=True))
    else:
        print(format_odds(result))
    return 0


def _verify_args(args: list[str]) -> tuple[str, str | None] | None:
    """(file, secret) of `verify FILE --secret HEX` (either order, or --secret=HEX),
    (file, None) of `verify FILE` (the record's own [Secret])."""
    if len(args) == 1 and not args[0].startswith("-"):
        return args[0], None
    if len(args) == 2 and args[0].startswith("--secret=") and not args[1].startswith("-"):
        return args[1], args[0].removeprefix("--secret=")
    if len(args) == 2 and args[1].startswith("--secret=") and not args[0].startswith("-"):
        return args[0], args[1].removeprefix("--secret=")
    if len(args) != 3 or "--secret" not in args[:2]:
        return None
    at = args.index("--secret")
    secret = args[at + 1]
    file = args[2] if at == 0 else args[0]
    if file.startswith("-") or secret.startswith("-"):
        return None
    return file, secret


def _fast_verify(args: list[str]) -> int | None:
    """`verify FILE [--secret HEX]`, as pbem.cli.records.verify answers it (same
    output, same exit code); None to let typer handle anything else."""
    found = _verify_args(args)
    if found is None:
        return None
    from pathlib import Path

    from pbem.orderlog.records import RecordError, read_record, secret_to_verify, verify_record

    file, secret = found
    path = Path(file)
    try:
        text = path.read_text(encoding="utf-8")
        record = read_record(text, str(path))
        report = verify_record(record, secret_to_verify(record, secret, str(path)))
    except OSError as exc:
        print(f"error: {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print(f"error: {path}: not UTF-8 text", file=sys.stderr)
        return 1
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report.message)
    return 0 if report.ok else 1


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        from pbem import __version__, native

        print(f"pbem {__version__}; {native.state().describe()}")
        sys.exit(0)
    fast = {"odds": _fast_odds, "verify": _fast_verify}.get(args[0] if args else "")
    if fast is not None:
        code = fast(args[1:])
        if code is not None:
            sys.exit(code)
    from pbem.cli import app_for

    app_for(args)()


if __name__ == "__main__":
    main()
