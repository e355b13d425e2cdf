"""Console entry point. `pbem odds` answers before typer is imported (typer and
its imports cost more than the odds themselves); everything else goes to
the typer app in pbem.cli, which also documents `odds` in `pbem --help`."""

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


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        from pbem import __version__, native

        print(f"pbem {__version__}; {native.state().describe()}")
        sys.exit(0)
    if args[:1] == ["odds"]:
        code = _fast_odds(args[1:])
        if code is not None:
            sys.exit(code)
    from pbem.cli import app

    app()


if __name__ == "__main__":
    main()
