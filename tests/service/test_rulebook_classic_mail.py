"""Claiming territories in turn by mail (claim = turns), through real mail
servers on loopback: one round of CLAIM mails per territory each, and a
setup prompt for every round."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.testing.mailservers import MailServers
from tests.mailloop_helpers import MailWorld, kind, message_ids

pytestmark = pytest.mark.integration
GAME = "claim-1"
BOTS = ["ada", "brook", "cyrus"]


def test_territories_are_claimed_in_turn_by_mail(mail_servers: MailServers, tmp_path: Path) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game(GAME, BOTS, overrides={"claim": "turns"}, bots=True)
    cycles = 0
    while world.state(GAME).phase == "claim":
        assert cycles < 16, "the claims do not advance"
        wrote = sum(p.answer(world, GAME) for p in players.values())
        report = world.poll()
        assert [m.status for m in report.mails] == ["processed"] * wrote
        cycles += 1
    state = world.state(GAME)
    assert cycles == 14 and state.phase == "place"  # 42 territories, 3 a round
    assert sorted(state.owner.count(s) for s in range(3)) == [14, 14, 14]
    log = world.order_log(GAME)
    assert [(e.kind, e.source) for e in log] == [("setup", "mail")] * 42
    for player in players.values():
        mails = player.mailbox()
        assert set(message_ids(mails).values()) == {1}
        prompts = [str(m["Subject"]) for m in mails if kind(m) == "setup_prompt"]
        # the game start asks for round 1; then rounds 2 to 14 and the placement
        assert len(prompts) == 14
        assert "(39 territories free)" in prompts[0] and "(3 territories free)" in prompts[12]
        assert "placement" in prompts[13]
