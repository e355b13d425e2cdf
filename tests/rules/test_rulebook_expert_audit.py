"""The expert rules, points 5 and 6 of issue 33's audit (rules version 3).

000 (the expert variations): "You may, if you wish, re-roll any one die."
By mail a player cannot choose after seeing the dice, so ``ATTACK ... REROLL``
states the policy: under rules version 3 the lowest attacking die that lost a
comparison is re-rolled only when that gains armies on average
(combat.reroll_helps); version 2 re-rolls it on every roll that loses one.

000: "Once per turn while attacking you may change one of the dice." The
commander (a die counts as a 6) is spent, under version 3, on the attack whose
order says ``COMMANDER``; with none in the turn's orders, on the turn's first
roll of 3 attacking dice where it wins a comparison; never on a one-die probe.
Versions 1 and 2 spend it on the turn's first roll where it wins one.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import product

import pytest

from pbem.maps.presets import load_preset
from pbem.orders import validate_mail
from pbem.orders.forecast import _Fixed, forecast
from pbem.orders.parser import parse_orders
from pbem.orders.render import render_action
from pbem.orders.validate import turn_actions
from pbem.rules import combat
from pbem.rules.actions import Attack, Place, Until, UntilKind
from pbem.rules.events import AttackResolved, Roll
from pbem.rules.options import Options
from pbem.rules.ruleversions import RULES_CHANGES
from pbem.rules.turnplan import play_turn
from tests.rules.support import ScriptedDice, arrange, give_cards, new_state, start_turn

EXPERT = load_preset("expert")
V2 = replace(EXPERT, rules_version=2)
RR3 = replace(EXPERT, commander=False)  # the re-roll alone
RR2 = replace(RR3, rules_version=2)
SEAT = 0
AU = list(range(38, 42))
ALASKA, KAMCHATKA = 0, 33


def _position(options: Options = EXPERT, card: bool = True, alaska: int = 6):  # noqa: ANN202
    state = new_state(3, options)
    victim = next(s for s in state.order if s != SEAT)
    arrange(state, {SEAT: AU + [KAMCHATKA], victim: [ALASKA]}, armies={33: 10, 0: alaska})
    if card:
        give_cards(state, SEAT, [KAMCHATKA])  # the card of FROM: the re-roll applies
    start_turn(state, SEAT)
    return state


def _play(options: Options, text: str, dice: list[int], card: bool = True):  # noqa: ANN202
    """Play ``text`` (after the turn's PLACE) on ``dice``: the dice stream and the attacks."""
    state = _position(options, card)
    mail = parse_orders(f"PLACE {state.reinforcements} Indonesia\n{text}", state.board)
    assert validate_mail(state, SEAT, mail) == []
    rng = ScriptedDice(dice)
    events = play_turn(state, turn_actions(state, mail.turn_orders), rng)
    assert rng.dice == []  # every die given was used
    return rng, [e for e in events if isinstance(e, AttackResolved)]


# ------------------------------------------------------------------ point 5: the re-roll


def test_issue_case_4_4_v_5_3_is_rerolled_under_version_2_only() -> None:
    """ "4 4 v 5 3 (one loss each) was re-rolled into 2 losses to 0": version 2
    re-rolls the 4 that lost to the 5 (here into a 1: 4 1 v 5 3 loses both);
    version 3 keeps the roll, and draws no extra die."""
    order = "ATTACK Kamchatka -> Alaska WITH 2 DICE UNTIL 1 ROLL REROLL"
    rng, (attack,) = _play(RR2, order, [4, 4, 5, 3, 1])
    assert rng.requests == [4, 1]
    assert attack.rolls == (Roll((4, 1), (5, 3), 2, 0, rerolled=(4, 1)),)
    rng, (attack,) = _play(RR3, order, [4, 4, 5, 3])
    assert rng.requests == [4]
    assert attack.rolls == (Roll((4, 4), (5, 3), 1, 1),)


def test_the_4_4_v_5_3_reroll_loses_two_thirds_of_an_army_on_average() -> None:
    """Hand count: the 4 re-rolled as 6 wins both (+2), as 5 or 4 changes nothing,
    as 3, 2 or 1 loses both (-2): (2 + 0 + 0 - 2 - 2 - 2) / 6 = -2/3 < 0 kept."""
    assert not combat.reroll_helps((4, 4), (5, 3))
    # 5 2 v 4 3 (the 2 lost): 6 or 5 or 4 wins both, 3 2 1 keep one each: +1 > 0
    assert combat.reroll_helps((5, 2), (4, 3))
    # a die that lost to a 6 cannot win: re-rolling gains nothing, no die is drawn
    assert not combat.reroll_helps((6, 1), (6, 6))
    assert not combat.reroll_helps((5,), (6,))


def _policy_reference(att: int, dfn: int, mode: str) -> Fraction:
    """Mean armies (defender's losses - attacker's) per roll, counted independently
    of the engine: mode plain, forced (version 2) or helps (version 3)."""

    def net(a: list[int], d: list[int]) -> int:
        pairs = zip(sorted(a, reverse=True), sorted(d, reverse=True), strict=False)
        return sum(1 if x > y else -1 for x, y in pairs)

    total = Fraction(0)
    for dice in product(range(1, 7), repeat=att + dfn):
        a, d = sorted(dice[:att], reverse=True), sorted(dice[att:], reverse=True)
        lost = [i for i in range(min(att, dfn)) if a[i] <= d[i]]
        kept = Fraction(net(a, d))
        if mode == "plain" or not lost:
            total += kept
            continue
        i = lost[-1]
        again = Fraction(sum(net(a[:i] + [x] + a[i + 1 :], d) for x in range(1, 7)), 6)
        total += again if mode == "forced" or again > kept else kept
    return total / 6 ** (att + dfn)


# the exact table of the policy: (attacker dice, defender dice) -> plain, forced, helps
POLICY_TABLE = {
    (1, 1): (Fraction(-1, 6), Fraction(17, 108), Fraction(17, 108)),
    (2, 1): (Fraction(17, 108), Fraction(23, 72), Fraction(23, 72)),
    (3, 1): (Fraction(23, 72), Fraction(1613, 3888), Fraction(1613, 3888)),
    (1, 2): (Fraction(-53, 108), Fraction(-143, 648), Fraction(-143, 648)),
    (2, 2): (Fraction(-143, 324), Fraction(251, 3888), Fraction(503, 3888)),
    (3, 2): (Fraction(205, 1296), Fraction(2305, 5832), Fraction(2779, 5832)),
}


@pytest.mark.parametrize("pair", sorted(POLICY_TABLE))
def test_policy_table_by_enumeration(pair: tuple[int, int]) -> None:
    """Issue 33: "2 v 2 nets +0.065 armies a roll forced, +0.129 when taken only
    if it helps; 3 v 2: +0.395 v +0.477". Counted by hand over every roll and
    through the engine's own combat.roll (with the extra die where it draws one)."""
    att, dfn = pair
    plain, forced, helps = POLICY_TABLE[pair]
    assert _policy_reference(att, dfn, "plain") == plain
    assert _policy_reference(att, dfn, "forced") == forced
    assert _policy_reference(att, dfn, "helps") == helps
    for want, reroll, only_if_helps in ((plain, False, False), (forced, True, False)):
        assert _engine_mean(att, dfn, reroll, only_if_helps) == want
    assert _engine_mean(att, dfn, True, True) == helps


def test_the_issues_rounded_figures() -> None:
    assert round(float(POLICY_TABLE[2, 2][1]), 3) == 0.065
    assert round(float(POLICY_TABLE[2, 2][2]), 3) == 0.129
    assert round(float(POLICY_TABLE[3, 2][1]), 3) == 0.395
    assert round(float(POLICY_TABLE[3, 2][2]), 3) == 0.477


def _engine_mean(att: int, dfn: int, reroll: bool, only_if_helps: bool) -> Fraction:
    total = 0
    for drawn in product(range(1, 7), repeat=att + dfn + 1):  # the last: the extra die
        r = combat.roll(_Fixed(drawn), att, dfn, reroll, False, only_if_helps)
        total += r.defender_losses - r.attacker_losses
    return Fraction(total, 6 ** (att + dfn + 1))


def test_forecast_gives_the_odds_of_the_policy() -> None:
    """One roll of 2 v 2 from 10 armies: the attacker's mean losses, version 3 with
    its policy (2,000 of 3,888 in sixths) against version 2 forced."""
    attack = Attack(KAMCHATKA, ALASKA, 2, Until(UntilKind.ROLLS, 1), reroll=True)

    def source_left(options: Options) -> float:
        state = _position(options)
        plan = [Place(((state.reinforcements, AU[0]),)), attack]
        return forecast(state, plan).attacks[0].source_left

    def mean_loss(mode: str) -> Fraction:
        total = Fraction(0)
        for dice in product(range(1, 7), repeat=5):
            a, d = sorted(dice[:2], reverse=True), sorted(dice[2:4], reverse=True)
            lost = [i for i in range(2) if a[i] <= d[i]]
            if lost:
                b = list(a)
                b[lost[-1]] = dice[4]
                b.sort(reverse=True)
                if mode == "forced" or combat.reroll_helps(tuple(a), tuple(d)):
                    a = b
            total += sum(1 for x, y in zip(a, d, strict=True) if x <= y)
        return total / 6**5

    assert abs(source_left(RR3) - float(10 - mean_loss("helps"))) < 1e-12
    assert abs(source_left(RR2) - float(10 - mean_loss("forced"))) < 1e-12
    assert mean_loss("helps") != mean_loss("forced")


# ------------------------------------------------------------------ point 6: the commander

PROBE = "ATTACK Kamchatka -> Alaska WITH 1 DIE UNTIL 1 ROLL"
MAIN = "ATTACK Kamchatka -> Alaska UNTIL 1 ROLL"
# the probe: 1 v 5 3 (lost; as a 6 it wins); the main roll: 3 2 2 v 5 4 (both lost;
# a 2 as a 6, the lowest die that gains, makes 6 3 2 v 5 4: one each)
DICE = [1, 5, 3, 3, 2, 2, 5, 4]


def test_version_2_spends_the_commander_on_a_one_die_probe() -> None:
    """The departure: "spent automatically on the first roll of the turn, even a
    one-die probe" (kept for games of version 2)."""
    _, (probe, main) = _play(V2, f"{PROBE}\n{MAIN}", DICE, card=False)
    assert probe.rolls == (Roll((6,), (5, 3), 0, 1, commander=(1, 6)),)
    assert main.rolls == (Roll((3, 2, 2), (5, 4), 2, 0),)


def test_version_3_default_keeps_it_for_a_roll_of_3_dice() -> None:
    """ "Once per turn while attacking you may change one of the dice": without a
    COMMANDER order, the turn's first roll of 3 dice where it wins a comparison."""
    _, (probe, main) = _play(EXPERT, f"{PROBE}\n{MAIN}", DICE, card=False)
    assert probe.rolls == (Roll((1,), (5, 3), 1, 0),)
    assert main.rolls == (Roll((6, 3, 2), (5, 4), 1, 1, commander=(2, 6)),)


def test_version_3_commander_order_chooses_the_attack() -> None:
    _, (probe, main) = _play(EXPERT, f"{PROBE} COMMANDER\n{MAIN}", DICE, card=False)
    assert probe.rolls == (Roll((6,), (5, 3), 0, 1, commander=(1, 6)),)
    assert main.rolls == (Roll((3, 2, 2), (5, 4), 2, 0),)
    # named on the later attack: the 3-dice roll before it does not spend it
    main_first = [3, 2, 2, 5, 4, 1, 5, 3]
    _, (main, probe) = _play(EXPERT, f"{MAIN}\n{PROBE} COMMANDER", main_first, card=False)
    assert main.rolls == (Roll((3, 2, 2), (5, 4), 2, 0),)
    assert probe.rolls == (Roll((6,), (5, 3), 0, 1, commander=(1, 6)),)


def test_commander_parses_renders_and_is_refused_where_it_does_not_exist() -> None:
    state = _position(card=False)
    line = "ATTACK Kamchatka -> Alaska WITH 1 DICE REROLL COMMANDER"
    action = parse_orders(line, state.board).orders[0].action
    assert action == Attack(KAMCHATKA, ALASKA, 1, reroll=True, commander=True)
    assert render_action(action, state.board) == line
    assert parse_orders(line, state.board).orders[0].action == action  # round trip
    lower = parse_orders("attack kamchatka -> alaska commander", state.board).orders[0]
    assert render_action(lower.action, state.board) == "ATTACK Kamchatka -> Alaska COMMANDER"

    def problems(options: Options) -> list[tuple[int, str]]:
        s = _position(options, card=False)
        text = f"PLACE {s.reinforcements} Indonesia\nATTACK Kamchatka -> Alaska COMMANDER"
        return [(p.line, p.message) for p in validate_mail(s, SEAT, parse_orders(text, s.board))]

    assert problems(EXPERT) == []
    assert problems(load_preset("classic")) == [(2, "COMMANDER: these rules have no commander")]
    assert problems(V2) == [
        (
            2,
            "COMMANDER: this game plays rules version 2, where the commander is used on "
            "the turn's first roll where it wins a comparison; the order came with version 3",
        )
    ]


def test_rules_words_and_changes_of_version_3() -> None:
    words = EXPERT.describe()
    assert any("only when re-rolling it gains armies on average" in w for w in words)
    assert any("ATTACK ... COMMANDER" in w for w in words)
    assert (
        "An attacker holding the card of either territory may re-roll one lost die per roll "
        "(ATTACK ... REROLL)."
    ) in V2.describe()
    assert "Once per turn one attacking die of a roll counts as a 6." in V2.describe()
    changes = " ".join(change.text for change in RULES_CHANGES[3])
    assert "REROLL re-rolls" in changes and "COMMANDER" in changes


def test_the_reference_states_the_policy_table() -> None:
    """docs/ORDERS-REFERENCE.md (written from pbem.orders.reference) quotes the table."""
    from pbem.orders.reference import EXPERT_CLAUSES

    for (att, dfn), values in POLICY_TABLE.items():
        cells = [f"{v.numerator}/{v.denominator} = {float(v):+.3f}" for v in values]
        cells = [c.replace("+", "") if c.startswith("-") else c for c in cells]
        assert f"| {att} v {dfn} | " + " | ".join(cells) + " |" in EXPERT_CLAUSES


def test_an_attacks_repr_names_commander_only_when_set() -> None:
    """Digests of parsed orders (tests/rules/test_outputs_pinned.py) stay as before."""
    assert repr(Attack(1, 2)) == (
        "Attack(source=1, target=2, dice=3, until=Until(kind='conquered', n=0), "
        "move=Amount(kind='min', n=0), reroll=False)"
    )
    assert repr(Attack(1, 2, commander=True)).endswith("reroll=False, commander=True)")


def test_forecast_follows_where_the_commander_is_used() -> None:
    """Two single rolls of 3 dice: with COMMANDER on the second, the first rolls as
    without a commander; with none written, the first may use it."""
    one = Until(UntilKind.ROLLS, 1)

    def first_source_left(options: Options, named: bool) -> float:
        state = _position(options, card=False)
        plan = [
            Place(((state.reinforcements, AU[0]),)),
            Attack(KAMCHATKA, ALASKA, until=one),
            Attack(KAMCHATKA, ALASKA, until=one, commander=named),
        ]
        return forecast(state, plan).attacks[0].source_left

    without = first_source_left(RR3, False)
    # 3 v 2 plain: the attacker loses 2 in 2275, 1 in 2611 of 7776 rolls
    assert abs(without - (10 - (2 * 2275 + 2611) / 7776)) < 1e-12
    assert abs(first_source_left(EXPERT, True) - without) < 1e-12
    assert first_source_left(EXPERT, False) > without + 0.1
