"""Which options a game's "Rules in force" states (issue 29, point 9):
``Options.applies`` decides it for every mail and `pbem rules`, per preset
and player count."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from pbem.maps.presets import load_preset, preset_names
from pbem.rules.options import Options
from pbem.rules.optionwords import WORDS

# The options each preset states in a game of 3 players (4 for Capital Risk's
# shortened goal makes no difference: the option is read under goal = capital).
COMMON = {"claim", "placement", "card_values", "move_in", "fortify", "goal"}
CARDS = {"territory_bonus", "traded_cards", "forced_trade_at", "max_trades"}
EXPECTED: dict[str, set[str]] = {
    "classic": COMMON | CARDS,
    "2016": COMMON | CARDS,
    "two-player": COMMON | CARDS,
    "capital": COMMON | CARDS | {"capitals_to_win"},
    "secret-mission": COMMON | CARDS | {"mission_win", "mission_deck"},
    "european": COMMON | CARDS | {"fixed_mixed_set", "mission_win", "mission_deck"},
    "european-domination": COMMON | CARDS | {"fixed_mixed_set"},
    "expert": COMMON | CARDS | {"max_armies", "card_reroll", "commander"},
    "assassin": COMMON | CARDS,
    "terminator": COMMON | CARDS | {"max_turns"},
    "doubles": COMMON - {"goal"} | CARDS | {"team_size"},  # the team's win said instead
    "triples": COMMON - {"goal"} | CARDS | {"team_size"},
    "flat-rate": COMMON | CARDS | {"fixed_mixed_set"},
    "capped-escalation": COMMON | CARDS | {"card_value_cap"},
    "trench": COMMON | CARDS | {"fixed_mixed_set", "trench"},
    "parachute": COMMON | CARDS,
    "freestyle": COMMON | CARDS | {"play_order"},
    "fog-freestyle": COMMON | CARDS | {"fog", "play_order"},
    "fog-doubles-freestyle": COMMON - {"goal"} | CARDS | {"team_size", "fog", "play_order"},
}


def applying(options: Options, players: int | None) -> set[str]:
    return {f.name for f in fields(options) if options.applies(f.name, players)}


@pytest.mark.parametrize("name", preset_names())
def test_a_three_player_game_states_only_the_options_that_apply(name: str) -> None:
    assert applying(load_preset(name), 3) == EXPECTED[name]


@pytest.mark.parametrize("name", preset_names())
def test_a_two_player_game_states_the_neutral_and_a_preset_its_player_counts(name: str) -> None:
    options = load_preset(name)
    if options.goal == "domination":  # missions and capitals need 3 or more players
        assert applying(options, 2) == EXPECTED[name] | {"neutral"}
    preset = applying(options, None)
    assert {"min_players", "max_players"} <= preset
    assert ("neutral" in preset) == (options.min_players == 2)


def test_the_classic_words_for_three_players_say_nothing_of_other_games() -> None:
    lines = load_preset("classic").describe(3)
    text = "\n".join(lines)
    for word in ("mission", "headquarters", "neutral", "players.", "re-roll", "commander"):
        assert word not in text, word
    assert lines[0] == "Territories are dealt at random from the shuffled territory cards."
    assert len(lines) == len(EXPECTED["classic"]) + 2  # and the two fixed rules


def test_no_cards_leaves_out_every_card_rule() -> None:
    options = replace(load_preset("classic"), card_values="none")
    lines = options.describe(4)
    assert "No cards are used." in lines
    said = [line for line in lines[1:] if "card" in line.lower()]  # [0]: the deal's cards
    assert said == ["No cards are used."]


def test_an_option_that_is_on_is_stated() -> None:
    options = replace(load_preset("classic"), max_turns=40, neutral=False)
    assert WORDS["max_turns"].format(40) in options.describe(3)  # type: ignore[union-attr]
    assert "A two-player game has no neutral army." in options.describe(2)
    assert "A two-player game has no neutral army." not in options.describe(3)
