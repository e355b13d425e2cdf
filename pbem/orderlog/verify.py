"""Replaying a log against the state hashes stored with it.

The service reads the log and the stored hashes from the database
(service/play/archive.py); this module does the replay and the comparison, so
the proof that a game is what its log says needs nothing but data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pbem.orderlog import replay
from pbem.orderlog.replay import Entry, GameDefinition


@dataclass
class ReplayReport:
    ok: bool
    steps: int
    turns: int
    message: str
    first_difference: int | None = None  # log seq of the first step that differs


def compare_hashes(
    definition: GameDefinition,
    entries: Sequence[tuple[int, Entry]],
    stored: dict[int, str],
    progress: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    """Rebuild the game from its entries (log seq, entry) and compare every
    stored state hash (log seq -> hash; seq 0 is the state after the deal)."""
    loaded, _ = replay.start(definition)
    if 0 in stored and not entries and definition.state_hash(loaded.state) != stored[0]:
        return ReplayReport(False, 0, 0, "the state after the deal differs from the stored one", 0)
    steps = 0
    for i, (seq, entry) in enumerate(entries):
        try:
            step = replay.apply(loaded, entry)
        except replay.ReplayError as exc:
            return ReplayReport(False, steps, loaded.state.turn, f"log entry {seq}: {exc}", seq)
        if progress is not None:
            progress(i + 1, len(entries))
        if step is None:
            continue
        steps += 1
        expected = stored.get(seq)
        if expected is not None and expected != step.state_hash:
            where = f"turn {step.turn}" if step.turn else "the setup"
            return ReplayReport(
                False,
                steps,
                step.turn,
                f"{where} (log entry {seq}) differs: stored {expected[:12]}…, "
                f"replayed {step.state_hash[:12]}…",
                seq,
            )
    state = loaded.state
    return ReplayReport(True, steps, state.turn, f"{steps} steps replayed, every hash matches")
