"""A player's first three turns without a fight (issue 29, points 4, 6 and 11).

Through the real mail path (the local Maildir transport, `run_cycle`), read
as the players read their mail: the setup report every player gets when the
setup ends (and `pbem render GAME --turn 0`, the same mail), the round of each
turn, and a turn the GM played, mailed and rendered as one.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from pbem.cli import app
from pbem.report import views
from pbem.report.subjects import TOKEN_RE
from pbem.rules.state import SETUP_PHASES
from pbem.service.play import gm
from pbem.service.play.games import find_game, find_player
from pbem.service.play.passwords import turn_token
from tests.longgame_helpers import Mail, Table, World, new_table

PLAYERS = ["ann", "bob", "cat"]
runner = CliRunner()


def render(world: World, *args: str) -> str:
    """`pbem render GAME ...`'s output, run in-process against the world's config."""
    result = runner.invoke(app, ["render", *args, "--config", str(world.config_path)])
    assert result.exit_code == 0, (result.stdout, result.exception)
    return result.stdout


def as_rendered(mail: Mail) -> str:
    """What `pbem render` prints of a mail: its subject, a blank line, its text.
    A player's copy carries their reply token in its subject; `pbem render`,
    with --as too, never prints one (a GM-side tool): the rest is the same."""
    subject = TOKEN_RE.sub("", mail.subject).rstrip()
    return f"Subject: {subject}\n\n{mail.text}\n"


def token(world: World, game: str, name: str, turn: int) -> str:
    """The reply token of ``name``'s seat in ``game`` at ``turn``."""
    seat = next(p.seat for p in world.players(game) if p.name == name)
    return turn_token(bytes.fromhex(world.game(game).secret), game, seat, turn)


def setup_done(world: World, game: str, overrides: dict[str, str]) -> Table:
    table = new_table(world, game, PLAYERS, overrides=overrides)
    table.run(lambda: world.state(game).phase not in SETUP_PHASES)
    table.read_all()
    return table


def test_every_player_gets_one_setup_report_with_the_draft_and_only_their_mission(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    overrides = {"claim": "draft", "placement": "blind", "goal": "mission"}
    table = setup_done(world, "draft", overrides)
    state = world.state("draft")
    first = state.players[state.current].name
    missions = {p.name: views.mission_text(state, s) for s, p in enumerate(state.players)}
    order = [state.players[s].name for s in state.order]
    for name in PLAYERS:
        reports = table.mails(name, "setup_report")
        assert len(reports) == 1, table[name].kinds()
        mail = reports[0]
        mine = token(world, "draft", name, 1)  # the game's turn when the setup ended
        assert mail.subject == f"[draft] The setup is done: {first} plays turn 1 (token {mine})"
        text = mail.text
        assert text.startswith("The setup of draft is done\n==========================\n\n")
        assert f"{first} (" in text.split("\n")[3] and "plays turn 1, by " in text
        if name == first:
            assert 'That is you: your "Your turn" mail follows, with your turn token.' in text
        else:
            assert 'You get a "Your turn" mail when your turn comes.' in text
        assert (
            "Turn order\n----------\n"
            + "".join(
                f"  {i}. {n} ({state.players[state.order[i - 1]].colour})"
                + ("  <- you" if n == name else "")
                + "\n"
                for i, n in enumerate(order, start=1)
            )
            in text
        )
        assert "The draft, pick by pick\n-----------------------\n" in text
        # the picks in order: seat after seat in turn order, 42 of them
        picks = [line for line in text.splitlines() if line[:6].strip().rstrip(".").isdigit()]
        assert len(picks) == 42
        for i, line in enumerate(picks):
            assert line.startswith(f"  {i + 1:>2}. {order[i % 3]}: ")
        assert "The starting armies\n-------------------\n" in text
        assert "The board as turn 1 begins" in text
        # private: this player's own mission, nobody else's
        assert f"Your secret mission: {missions[name].split()[0]}" in text
        assert " ".join(missions[name].split()) in mail.flat
        for other, mission in missions.items():
            if other != name and mission != missions[name]:
                assert " ".join(mission.split()) not in mail.flat, (name, other)
    # the first player also gets their turn; the others nothing more
    assert [m.kind for m in table.mails(first)][-1] == "your_turn"
    gm_reports = [m for m in table.gm if m.kind == "setup_report"]
    assert len(gm_reports) == 1 and "Your secret mission" not in gm_reports[0].text
    assert gm_reports[0].subject == f"[draft] The setup is done: {first} plays turn 1"
    # `pbem render --turn 0` is the same mail: the GM's copy, and each player's with --as
    assert render(world, "draft", "--turn", "0") == as_rendered(gm_reports[0])
    for name in PLAYERS:
        mail = table.mails(name, "setup_report")[0]
        assert render(world, "draft", "--turn", "0", "--as", name) == as_rendered(mail)


def test_the_default_setup_reports_the_deal_and_receipts_promise_what_follows(
    tmp_path: Path,
) -> None:
    """claim = deal, placement = blind (every preset's): the deal and each
    player's placement are reported; no receipt promises a turn report."""
    world = World(tmp_path)
    table = setup_done(world, "deal", {"placement": "blind"})
    state = world.state("deal")
    for name in PLAYERS:
        (mail,) = table.mails(name, "setup_report")
        seat = next(s for s, p in enumerate(state.players) if p.name == name)
        own = sorted(state.board.territories[t].name for t in state.territories_of(seat))
        assert f"{name} (14 territories): {', '.join(own)}." in mail.flat
        assert "The deal\n--------\n" in mail.text
        assert f"\n{name}: " in mail.text.split("The starting armies")[1]
        receipts = table.mails(name, "receipt")
        assert receipts, table[name].kinds()
        for receipt in receipts:
            assert "turn report" not in receipt.flat
        last = receipts[-1].flat
        assert (
            "the setup report follows then." in last
            or "They have been played with every player's; the setup report comes in a "
            "separate mail."
            in last
        ), last
    (ann,) = table.mails("ann", "setup_report")
    assert render(world, "deal", "--turn", "0", "--as", "ann") == as_rendered(ann)


def test_a_draft_receipt_says_the_placement_is_asked_for_next(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = setup_done(world, "next", {"claim": "draft", "placement": "blind"})
    for name in PLAYERS:
        first = table.mails(name, "receipt")[0].flat  # the draft's
        assert first.startswith("Setup orders accepted (draft)")
        assert (
            "then a mail asks for the next setup orders." in first
            or "a mail asking for the next setup orders comes separately." in first
        ), first


def quiet_turn(world: World, game: str) -> str:
    """Orders that place every army on one territory and attack nothing."""
    state = world.state(game)
    seat = state.current
    territory = state.board.territories[state.territories_of(seat)[0]].name
    return f"PLACE {state.reinforcements} {territory}\n"


def test_turns_one_to_three_of_three_players_are_round_one_and_turn_four_round_two(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    table = new_table(world, "rounds", PLAYERS)
    table.silence()
    table.read_all()
    state = world.state("rounds")
    order = [state.players[s].name for s in state.order]
    for _ in range(4):
        mover = table[table.mover()]
        mover.read()
        mover.reply(mover.latest("your_turn"), quiet_turn(world, "rounds"))
        world.poll()
    table.read_all()
    reports = table.mails(order[0], "turn_report")
    assert [m.subject for m in reports] == [
        f"[rounds] Turn {t}: {order[(t - 1) % 3]} took nothing. {order[t % 3]} to move "
        f"(token {token(world, 'rounds', order[0], t + 1)})"  # the turn then: the next one
        for t in (1, 2, 3, 4)
    ]
    for turn, mail in enumerate(reports, start=1):
        mover = order[(turn - 1) % 3]
        colour = next(p.colour for p in state.players if p.name == mover)
        head = f"Turn {turn} (round {1 if turn <= 3 else 2}): {mover} ({colour})"
        assert mail.text.startswith(f"{head}\n{'=' * len(head)}\n"), mail.text[:80]


def test_a_turn_the_gm_played_is_mailed_and_rendered_as_one(tmp_path: Path) -> None:
    world = World(tmp_path)
    table = new_table(world, "gmturn", PLAYERS)
    table.silence()
    table.read_all()
    mover = table.mover()
    text = quiet_turn(world, "gmturn")
    with world.session() as session:
        game = find_game(session, "gmturn")
        player = find_player(session, game, mover)
        assert gm.adjudicate(session, world.ctx, game, player, text, False).accepted
    world.flush()
    table.read_all()
    for name in PLAYERS:
        (mail,) = table.mails(name, "turn_report")
        assert f"The GM played this turn for {mover}." in mail.text
        assert render(world, "gmturn", "--turn", "1", "--as", name) == as_rendered(mail)
    (copy,) = [m for m in table.gm if m.kind == "turn_report"]
    assert render(world, "gmturn", "--turn", "1") == as_rendered(copy)
    assert render(world, "gmturn") == as_rendered(copy)  # the latest turn


def test_render_of_a_game_still_in_its_setup_says_so(tmp_path: Path) -> None:
    world = World(tmp_path)
    new_table(world, "early", PLAYERS, overrides={"placement": "blind"})
    result = runner.invoke(
        app, ["render", "early", "--turn", "0", "--config", str(world.config_path)]
    )
    assert result.exit_code != 0
    assert "game early is still in its setup: no setup report yet" in (
        result.stdout + result.stderr
    )


def test_a_setup_report_told_twice_is_the_same_bytes(tmp_path: Path) -> None:
    from sqlmodel import select

    from pbem.service.tell import telling
    from pbem.service.tell.outbox import raw_of
    from pbem.store import Notice, Outbox

    world = World(tmp_path)
    setup_done(world, "twice", {"placement": "blind"})
    with world.session(write=False) as session:
        notices = session.exec(select(Notice).where(Notice.kind == "setup-report")).all()
        assert len(notices) == 4  # three players and the GM
        for notice in notices:
            row = session.exec(select(Outbox).where(Outbox.message_id == notice.message_id)).one()
            assert telling.mail_again(session, world.ctx, notice) == raw_of(session, row)


def test_claims_in_turn_are_reported_once_in_the_order_taken(tmp_path: Path) -> None:
    """claim = turns: one round of CLAIM mails per territory each, many setup
    steps; one setup report at the end lists every claim of every round."""
    world = World(tmp_path)
    table = setup_done(world, "turns", {"claim": "turns", "placement": "auto"})
    state = world.state("turns")
    order = [state.players[s].name for s in state.order]
    for name in PLAYERS:
        (mail,) = table.mails(name, "setup_report")
        assert "The claims, in order\n--------------------\n" in mail.text
        picks = [line for line in mail.text.splitlines() if line[:6].strip().rstrip(".").isdigit()]
        assert [line.split(": ")[0].split(". ")[1] for line in picks] == [
            order[i % 3] for i in range(42)
        ]
        assert "Placed at random, one army at a time in turn order;" in mail.text
        # the first round is asked for in the game-start mail, every later one by a prompt
        assert len(table.mails(name, "setup_prompt")) == 13
