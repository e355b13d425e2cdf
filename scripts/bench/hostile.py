"""What each hostile mail of issue 27 costs one `pbem poll`.

    python scripts/bench/hostile.py                        # every attack, SQLite
    python scripts/bench/hostile.py --postgresql           # on a private PostgreSQL too
    python scripts/bench/hostile.py --only html_blockquotes,big_stranger

The attacks are those of tests/service/test_hostile_mail.py. A game on the Maildir
transport is set up once per engine (`pbem init`, `pbem new`, a poll), then
for every attack a copy of it gets the attack's mails ahead of a valid order
mail and ONE `pbem poll` runs as a child process under a 2 GiB address-space
limit, a CPU budget (--cpu) and a wall-time timeout (--timeout): it stops by
itself. Printed per attack: the wall time, the CPU time (user + system) and
the peak RSS of that child (os.wait4), its exit, where the attack mail and
the valid mail ended. Everything stays on this machine (PostgreSQL listens
on 127.0.0.1 only); every server and folder is removed at the end. It
prints figures; it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests import hostile_helpers as world  # noqa: E402
from tests.fixtures_pg import _find_bindir, _Server  # noqa: E402
from tests.service.test_hostile_mail import ATTACKS, Attack  # noqa: E402


def measure(
    template: world.Template, attack: Attack, directory: Path, args: argparse.Namespace
) -> str:
    copy = world.GameCopy.from_template(template, directory)
    try:
        mails = attack.build(template.passwords)
        size = sum(len(m) for m in mails)
        for n, raw in enumerate(mails, 1):
            copy.deliver(world.attack_key(n), raw)
        del mails
        copy.deliver(world.VALID_KEY, world.valid_mail(template.passwords))
        run = copy.poll(timeout=args.timeout, cpu_limit=args.cpu)
        case = "squatting" if attack.name == "message_id_squatting" else attack.name
        ended = ",".join(sorted(set(copy.folder_of(case)))) or "-"
        valid = ",".join(copy.folder_of("valid")) or "-"
        exit_ = "timeout" if run.returncode is None else str(run.returncode)
        return (
            f"{attack.name:<24}{size / 1e6:>8.2f}{run.wall:>8.1f}{run.cpu:>8.1f}"
            f"{run.max_rss_kb / 1024:>9.0f}  {exit_:<8}{ended:<20}{valid}"
        )
    finally:
        copy.drop()


def run_engine(label: str, url: str | None, args: argparse.Namespace) -> None:
    """Every chosen attack on one engine (``url`` None: SQLite in the folder)."""
    chosen = [a for a in ATTACKS if not args.only or a.name in args.only.split(",")]
    with tempfile.TemporaryDirectory(prefix="pbem-hostile-") as tmp:
        root = Path(tmp)
        url = url or f"sqlite:///{root / 'template' / 'var' / 'pbem.db'}"
        template = world.make_template(root / "template", url)
        print(f"\n{label}: one `pbem poll` per attack (2 GiB, {args.cpu} s CPU, {args.timeout} s)")
        print(f"{'attack':<24}{'MB':>8}{'wall s':>8}{'CPU s':>8}{'peak MB':>9}  ", end="")
        print(f"{'exit':<8}{'attack mail':<20}valid mail")
        for n, attack in enumerate(chosen):
            print(measure(template, attack, root / f"copy-{n}", args), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated attack names")
    parser.add_argument("--postgresql", action="store_true", help="also on a private PostgreSQL")
    parser.add_argument("--cpu", type=int, default=world.POLL_CPU_SECONDS, help="CPU seconds")
    parser.add_argument("--timeout", type=float, default=120.0, help="wall seconds per poll")
    args = parser.parse_args()
    run_engine("SQLite", None, args)
    if args.postgresql:
        bindir = _find_bindir()
        if bindir is None:
            print("PostgreSQL is not installed (scripts/install-system-deps.sh)", file=sys.stderr)
            return 1
        server = _Server(bindir)
        try:
            server.start()
            with server.connect_admin() as admin:
                admin.execute("CREATE DATABASE hostile_template")
            run_engine("PostgreSQL", server.url("hostile_template"), args)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
