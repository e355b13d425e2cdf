"""Issue 5 end to end: a whole game by mail through real servers on loopback.

Three bot players send their orders over SMTP (to the relay, which delivers
into Dovecot over LMTP) and read everything pbem sends them over IMAP;
pbem polls the game's IMAP inbox and sends through the same SMTP relay.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.testing.mailservers import MailServers
from tests.mailloop_helpers import MailWorld, kind, message_ids, parse, replies_to

pytestmark = pytest.mark.integration

GAME = "loop-1"
BOTS = ["ada", "brook", "cyrus"]
ROUNDS = 4  # max_turns counts rounds: 3 players x 4 rounds = 12 turns, then the game ends


def test_a_whole_game_by_mail_over_imap_and_smtp(mail_servers: MailServers, tmp_path: Path) -> None:
    world = MailWorld.create(mail_servers, tmp_path)
    players = world.new_game(GAME, BOTS, overrides={"max_turns": str(ROUNDS)}, bots=True)
    for _cycle in range(3 * ROUNDS + 5):
        wrote = sum(p.answer(world, GAME) for p in players.values())
        report = world.poll()
        assert report.deferred == report.failed == 0
        assert [m.status for m in report.mails] == ["processed"] * wrote
        if world.game(GAME).phase == "over":
            break
    game = world.game(GAME)
    assert game.phase == "over" and game.status == "finished"
    state = world.state(GAME)
    assert state.turn == 3 * ROUNDS and state.winner == game.winner_seat is not None

    # The order log: the three setup mails, then one mail per turn, every one by mail.
    log = world.order_log(GAME)
    assert [(e.kind, e.source) for e in log] == [("setup", "mail")] * 3 + [("turn", "mail")] * (
        3 * ROUNDS
    )
    assert [e.turn for e in log[3:]] == list(range(1, 3 * ROUNDS + 1))
    sent = [mid for p in players.values() for mid in p.sent]
    assert sorted(e.message_id for e in log) == sorted(sent)

    # Every mail was processed once and moved; nothing is left in the inbox.
    assert sorted(m.message_id for m in world.inbound()) == sorted(sent)
    assert {m.status for m in world.inbound()} == {"processed"}
    assert world.folder("INBOX") == []
    assert sorted(world.processed()) == sorted(sent)
    assert world.rejected() == []

    # Every outbox row went out, and each arrived exactly once.
    assert {row.status for row in world.outbox()} == {"sent"}
    winner = BOTS[game.winner_seat]
    for player in players.values():
        mails = player.mailbox()
        assert set(message_ids(mails).values()) == {1}
        # Exactly one answer (the receipt) to each of the player's mails.
        for mid in player.sent:
            assert [kind(m) for m in replies_to(mails, mid)] == ["receipt"]
        kinds = [kind(m) for m in mails]
        assert kinds.count("turn_report") == 3 * ROUNDS
        assert kinds.count("your_turn") == ROUNDS
        assert kinds.count("game_over") == 1
        last_report = [m for m in mails if kind(m) == "turn_report"][-1]
        subject, token = str(last_report["Subject"]).split(" (token ")  # the player's own
        assert subject.endswith(f"{winner} wins!") and token.endswith(")")
    gm_mail = world.servers.read_mailbox(world.gm_address)
    kinds = [kind(parse(m.raw)) for m in gm_mail]  # the setup report, every turn's
    assert kinds == ["setup_report"] + ["turn_report"] * (3 * ROUNDS)
