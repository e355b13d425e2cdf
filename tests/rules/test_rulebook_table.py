"""docs/RULES.md says which option plays each rule and its value in every
preset; these tests hold the page to config/rules/*.toml and options.py."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from pbem.maps.presets import load_preset, preset_names
from pbem.paths import presets_dir
from pbem.rules.options import CHOICES, Options

PAGE = Path(__file__).parents[2] / "docs" / "RULES.md"
PRESETS = preset_names(presets_dir())
OPTION_NAMES = [f.name for f in fields(Options)]


def _table(heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first table after ``heading``."""
    text = PAGE.read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    rows = []
    for line in after.splitlines()[1:]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append([c.strip().replace("\\|", "|") for c in cells])
        elif rows:
            break
    return [r for r in rows if not set("".join(r)) <= {"-"}]


def _text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def test_every_option_by_preset_matches_the_presets() -> None:
    rows = _table("## Every option, by preset")
    assert rows[0] == ["option", *PRESETS]
    assert [r[0].strip("`") for r in rows[1:]] == OPTION_NAMES
    for row in rows[1:]:
        name = row[0].strip("`")
        assert row[1:] == [_text(getattr(load_preset(p), name)) for p in PRESETS], name


def test_the_issue_14_table_names_real_options_values_and_defaults() -> None:
    rows = _table("## The minor points of issue 14")
    assert rows[0] == ["rule", "rulebook", "option", "default per preset", "tests"]
    checked = 0
    for rule, _, option, defaults, tests in rows[1:]:
        assert Path(PAGE.parent.parent / tests.split("`")[1]).is_file(), tests
        found = re.fullmatch(r"`(\w+)` = (.+)", option)
        if found is None:
            assert option == "none (every preset)" and defaults == "every preset", rule
            continue
        name, values = found[1], found[2].split(" | ")
        allowed = CHOICES.get(name, ("true", "false"))
        assert name in OPTION_NAMES and tuple(values) == tuple(allowed), option
        said: dict[str, str] = {}
        for part in defaults.split("; "):
            who, value = part.rsplit(": ", 1)
            if who in ("every preset", "every other preset"):
                said.update({p: value for p in PRESETS if p not in said})
            else:
                said[who] = value
        assert sorted(said) == PRESETS, defaults
        assert said == {p: _text(getattr(load_preset(p), name)) for p in PRESETS}, name
        checked += 1
    assert checked == 5  # mission_deck, card_reroll, traded_cards, neutral, claim


def test_the_issue_33_table_names_test_files_and_how_each_rule_is_versioned() -> None:
    rows = _table("## The audit of issue 33")
    assert rows[0] == ["rule", "rulebook", "versioned by", "tests"]
    assert len(rows) > 1
    for rule, _, how, tests in rows[1:]:
        assert Path(PAGE.parent.parent / tests.split("`")[1]).is_file(), tests
        found = re.match(r"rules_version 3|`(\w+)` = ", how)
        assert found is not None, rule
        assert found[1] is None or found[1] in OPTION_NAMES, how
