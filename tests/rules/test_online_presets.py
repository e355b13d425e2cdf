"""The presets of the online settings: `pbem rules NAME` says each in words,
and the list of presets keeps a gap after a long name."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.maps.presets import load_preset

SAID = {
    "flat-rate": [
        "- Card sets are worth 4 (three infantry), 6 (three cavalry), 8 (three artillery); "
        "a wild stands for any one type.",
        "- With fixed card values, one card of each type is a set too, worth 10.",
    ],
    "capped-escalation": [
        "- Card sets are worth 4, 6, 8, 10, 12, 15, then 5 more each, over all sets.",
        "- Capped escalation: no card set is worth more than 30 armies; the values rise "
        "to the cap and stay there.",
    ],
    "trench": [
        "- Trench warfare: a territory taken this turn may not attack again this turn "
        "(one territory's advance per turn from each front).",
    ],
    "parachute": [
        "- One fortifying move per turn, between any two own territories (parachute: "
        "no path needed).",
    ],
}


@pytest.mark.parametrize("name", list(SAID))
def test_pbem_rules_says_each_online_preset_in_words(name: str) -> None:
    result = CliRunner().invoke(app, ["rules", name])
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{name}: Online ")
    text = "\n".join(lines)
    assert "\n".join(SAID[name]) in text  # in this order, one after the other
    assert len(lines) == 1 + len(load_preset(name).describe())
    said = [w for w in ("Capped escalation", "Trench warfare", "parachute") if w in text]
    assert len(said) == (0 if name == "flat-rate" else 1)  # only its own setting


def test_the_list_of_presets_keeps_a_gap_after_every_name() -> None:
    result = CliRunner().invoke(app, ["rules"])
    assert result.exit_code == 0, result.stdout
    for line in result.stdout.splitlines():
        name, rest = line.split(" ", 1)
        assert rest.startswith(" "), line
