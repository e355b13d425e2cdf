"""Measurement: one order mail followed call by call through pbem's modules.

    PBEM_NATIVE=0 PYTHONPATH=. python scripts/trace_mail.py
    cd OTHER && PBEM_NATIVE=0 PYTHONPATH=$PWD python /path/to/scripts/trace_mail.py
    python scripts/trace_mail.py --cycle   # trace run_cycle as a whole instead

It sets up a game as the tests do (``tests/longgame_helpers.py``: a World in a
temporary folder, SQLite, the Maildir transport, three greedy TextBots, the
game-start mails sent), lets the player whose turn it is write his orders as a
fresh mail, and plays one such mail untraced (so that lazy imports and caches
are warm), then writes the next one and traces, with ``sys.setprofile`` on the
main thread, the poll's stages for it, in this order:

- ``poll._inbox_stage``: open the inbox, take the one mail (claim, identify,
  decide, store, and, where the code does it there, tell), move it;
- ``poll._telling_stage``, when the checkout has one (the mails decided above,
  rendered and queued after the commit);
- ``poll._outbox_stage``: send what is due (to the Maildir spool), prune.

The deadline stage (nothing is due), health and the poll record are left out;
with ``--cycle``, ``poll.run_cycle`` is traced whole instead (in the older
layout its sender thread runs beside it and is not traced).

Only frames of modules named ``pbem.*`` count (not ``pbem.testing``). The
current module is that of the innermost pbem frame on the stack; each call and
each return that changes it makes one transition in the sequence of distinct
consecutive modules. Figures:

- modules: distinct pbem modules entered;
- returns to a module already left: transitions into a module seen earlier in
  that sequence (by a call or by a function's return);
- climbs: transitions from a lower layer to a higher one; also given for calls
  alone (a function of a lower layer calling into a higher one, the return to
  a caller left out).

Layers, top to bottom: cli > service > orderlog (log before) > orders, report, mail, store,
config > maps > rules > the rest (pbem itself, native, paths, vocab, ...). In
the layout with service sub-packages, service is ranked ops > intake > tell >
play > the shared modules (service.context, clock, errors), as they may import
each other (tests/project/test_architecture.py); in the flat layout
all of service is one rank. Run with ``PBEM_NATIVE=0``, so that the compiled
engine hides no call.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeGuard

SERVICE_RANKS = {"ops": 1.0, "intake": 1.1, "tell": 1.2, "play": 1.3}
MIDDLE = ("orders", "report", "mail", "store", "config")


def layer(module: str) -> tuple[float, str]:
    """(rank, name) of a pbem module's layer; a smaller rank is a higher layer."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top == "cli":
        return 0.0, "cli"
    if top == "service":
        sub = parts[2] if len(parts) > 2 else ""
        if sub in SERVICE_RANKS:
            return SERVICE_RANKS[sub], f"service.{sub}"
        if _split_service:
            return 1.4, "service (shared)"
        return 1.0, "service"
    if top in ("log", "orderlog"):  # the order log, before and after its rename
        return 2.0, "log"
    if top in MIDDLE:
        return 3.0, "orders, report, mail, store, config"
    if top == "maps":
        return 4.0, "maps"
    if top == "rules":
        return 5.0, "rules"
    return 6.0, "the rest"


_split_service = False


def _is_pbem(module: object) -> TypeGuard[str]:
    return (
        isinstance(module, str)
        and (module == "pbem" or module.startswith("pbem."))
        and not (module == "pbem.testing" or module.startswith("pbem.testing."))
    )


class Tracer:
    """The sequence of distinct consecutive pbem modules, and the calls between them."""

    def __init__(self) -> None:
        self.sequence: list[str] = []
        self.calls: list[tuple[str, str]] = []  # (caller's pbem module, callee's)
        self.events = 0
        self.marks: list[tuple[str, int]] = []  # (stage, length of the sequence at its end)

    def mark(self, stage: str) -> None:
        self.marks.append((stage, len(self.sequence)))

    def _enter(self, module: str) -> None:
        if not self.sequence or self.sequence[-1] != module:
            self.sequence.append(module)

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        self.events += 1
        module = frame.f_globals.get("__name__")
        if not _is_pbem(module):
            return  # the innermost pbem frame is unchanged
        if event == "call":
            caller = self.sequence[-1] if self.sequence else None
            if caller is not None and caller != module:
                self.calls.append((caller, module))
            self._enter(module)
            return
        back = frame.f_back
        while back is not None:
            name = back.f_globals.get("__name__")
            if _is_pbem(name):
                self._enter(name)
                return
            back = back.f_back
        # back in this script between two stages: it stands for run_cycle, in poll
        self._enter(self.sequence[0])

    def run(self, work: Callable[[], Any]) -> Any:
        sys.setprofile(self.profile)
        try:
            return work()
        finally:
            sys.setprofile(None)


def _imports() -> tuple[Any, Any, Any]:
    """World, new_table and the poll module of the checkout on sys.path."""
    global _split_service
    try:
        poll = importlib.import_module("pbem.service.ops.poll")
        _split_service = True
    except ImportError:
        poll = importlib.import_module("pbem.service.poll")
    from tests.longgame_helpers import World, new_table

    return World, new_table, poll


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycle", action="store_true", help="trace poll.run_cycle whole")
    args = parser.parse_args()
    if os.environ.get("PBEM_NATIVE") != "0":
        print("note: PBEM_NATIVE is not 0; the compiled engine may hide calls", file=sys.stderr)
    world_class, new_table, poll = _imports()
    with tempfile.TemporaryDirectory(prefix="pbem-trace-") as tmp:
        world = world_class(Path(tmp))
        table = new_table(world, "g", ["ann", "bob", "cat"], dice_version="v2")
        settings = world.config.mail
        from pbem.mail.settings import open_sender

        sender = open_sender(settings)  # opened before the stages, as run_cycle does

        def stages(mark: Callable[[str], None]) -> list[str]:
            if args.cycle:
                poll.run_cycle(world.engine, world.config, world.clock)
                mark("run_cycle")
                return ["run_cycle"]
            report = poll.PollReport()
            assert poll._inbox_stage(world.engine, world.ctx, settings, None, report) is None
            mark("_inbox_stage")
            if hasattr(poll, "_telling_stage"):
                poll._telling_stage(world.engine, world.ctx)
                mark("_telling_stage")
            poll._outbox_stage(
                world.engine, world.config, sender, world.clock, settings.game_address, report
            )
            mark("_outbox_stage")
            return ["_inbox_stage", "_telling_stage", "_outbox_stage"]

        def one_mail(traced: bool) -> Tracer | None:
            seat = table[table.mover()]
            before = len(world.log("g"))
            seat.write(seat.bot.write_turn(world.state("g")))  # with its PASSWORD line
            tracer = Tracer() if traced else None
            if tracer is not None:
                tracer.run(lambda: stages(tracer.mark))
            else:
                stages(lambda _stage: None)
            assert len(world.log("g")) == before + 1, "the order mail was not played"
            return tracer

        one_mail(traced=False)  # warm: lazy imports, caches
        tracer = one_mail(traced=True)
        world.engine.dispose()
    assert tracer is not None
    report(tracer, poll.__name__)


def report(tracer: Tracer, poll_name: str) -> None:
    seq = tracer.sequence
    pairs = list(zip(seq, seq[1:], strict=False))
    seen: set[str] = set()
    returns = 0
    for module in seq:
        returns += module in seen
        seen.add(module)
    climbs = sum(layer(b)[0] < layer(a)[0] for a, b in pairs)
    call_climbs = [(a, b) for a, b in tracer.calls if layer(b)[0] < layer(a)[0]]
    first: dict[str, int] = {}
    for i, module in enumerate(seq):
        first.setdefault(module, i)
    call_returns = _calls_into_seen(tracer.calls, seq[0] if seq else "")
    done = [stage for stage, _end in tracer.marks]
    print(f"traced: {', '.join(f'{poll_name}.{s}' for s in done)} (one order mail, warm)")
    print(f"python {sys.version.split()[0]}, PBEM_NATIVE={os.environ.get('PBEM_NATIVE', '')}")
    print(f"profile events (call/return, all modules): {tracer.events}")
    print(f"pbem modules entered:                      {len(first)}")
    print(f"transitions between pbem modules:          {len(pairs)}")
    print(f"returns to a module already left:          {returns}")
    print(f"  of which by a call (not a return):       {call_returns}")
    print(f"climbs, lower layer -> higher (all):       {climbs}")
    print(f"  of which by a call (not a return):       {len(call_climbs)}")
    if _split_service:
        flat = sum(_flat(b) < _flat(a) for a, b in pairs)
        flat_calls = sum(_flat(b) < _flat(a) for a, b in tracer.calls)
        print(f"climbs, service as one rank (all / call):  {flat} / {flat_calls}")
    start = 0
    met: set[str] = set()
    for stage, end in tracer.marks:
        part = seq[start:end]
        new = [m for m in dict.fromkeys(part) if m not in met]
        met.update(part)
        print(f"stage {stage}: {len(set(part))} modules ({len(new)} new), {len(part)} entries")
        start = end
    edges = set(pairs)
    print(f"distinct (from, to) module pairs:          {len(edges)}")
    print(f"  into a module already left, distinct:    {_distinct_returns(seq)}")
    print(
        f"  climbs, distinct:                        "
        f"{sum(layer(b)[0] < layer(a)[0] for a, b in edges)}"
    )
    print(f"  climbs by a call, distinct:              {len(set(call_climbs))}")
    print("modules in order of first entry, by layer:")
    groups: dict[tuple[float, str], list[str]] = {}
    for module in first:
        groups.setdefault(layer(module), []).append(module)
    for (_rank, name), modules in sorted(groups.items()):
        print(f"  {name} ({len(modules)}):")
        for module in modules:
            print(f"    {module}")
    if call_climbs:
        print("calls from a lower layer into a higher one (caller -> callee, count):")
        counted: dict[tuple[str, str], int] = {}
        for pair in call_climbs:
            counted[pair] = counted.get(pair, 0) + 1
        for (a, b), n in sorted(counted.items(), key=lambda kv: -kv[1]):
            print(f"  {a} -> {b}: {n}")


def _flat(module: str) -> float:
    """The rank of a module's layer with all of service as one rank."""
    rank = layer(module)[0]
    return 1.0 if 1.0 <= rank < 2.0 else rank


def _distinct_returns(seq: list[str]) -> int:
    """Distinct (from, to) pairs of the transitions into a module already left."""
    seen: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for i, module in enumerate(seq):
        if module in seen:
            pairs.add((seq[i - 1], module))
        seen.add(module)
    return len(pairs)


def _calls_into_seen(calls: list[tuple[str, str]], start: str) -> int:
    """Calls into a module that had been entered before (and so left)."""
    seen = {start}
    n = 0
    for caller, callee in calls:
        seen.add(caller)
        n += callee in seen
        seen.add(callee)
    return n


if __name__ == "__main__":
    main()
