"""GM commands by mail: PAUSE, RESUME, EXTEND hours, PROCESS, KICK player, STATUS.

A mail from the game's GM address carrying the game's GM password (set by
`pbem gm-password GAME`, stored only as a salted hash like the players'
passwords) runs the same functions as the command line (pbem.service.play.gm),
in the mail's one transaction, and is answered to the GM's address. The
GM's address alone is not enough: a From line is easy to forge, so a
missing or wrong password is refused and counted like a player's failed
authentication (the alert budget of the address).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, select

from pbem.mail.decode import DecodedMail
from pbem.orders.gmcommands import GmCommand, GmMail, GmProblem, parse_gm_mail
from pbem.report.letters import QUOTED_LINE, quote
from pbem.rules.state import ENDED, SETUP_PHASES
from pbem.service.context import Context
from pbem.service.errors import ServiceError
from pbem.service.play import gm, notices
from pbem.service.play.games import load, players_of
from pbem.service.play.passwords import hash_password, new_password, verify_password
from pbem.service.play.ratelimit import allow
from pbem.store import Game, ServiceState, id_of
from pbem.vocab import GamePhase, GameStatus

MOST_LISTED = 20  # problems or ignored lines quoted in one answer


def _key(game: Game) -> str:
    return f"gm-password:{id_of(game)}"


def set_gm_password(session: Session, ctx: Context, game: Game) -> str:
    """`pbem gm-password GAME`: a new GM password for the game (the old one
    stops working); only its hash is stored. Returns the line for the GM."""
    password = new_password()
    row = session.exec(select(ServiceState).where(ServiceState.key == _key(game))).first()
    row = row or ServiceState(key=_key(game))
    row.value = hash_password(password)
    session.add(row)
    return (
        f"GM password of {game.name}: {password}\n"
        f"Mail from {gm_address(ctx, game)} with a line PASSWORD {password} and one "
        "command a line (PAUSE, RESUME, EXTEND hours, PROCESS, KICK player, STATUS) "
        "runs them. Keep it secret; running this command again replaces it."
    )


def gm_address(ctx: Context, game: Game) -> str:
    return (game.gm_address or ctx.config.mail.gm_address or "").strip().lower()


def is_gm_mail(ctx: Context, game: Game, mail: DecodedMail) -> bool:
    address = gm_address(ctx, game)
    return bool(address) and mail.sender.strip().lower() == address


def _verified(session: Session, game: Game, password: str | None) -> bool | None:
    """True or False; None when the game has no GM password at all."""
    row = session.exec(select(ServiceState).where(ServiceState.key == _key(game))).first()
    if row is None:
        return None
    return bool(password) and verify_password(password or "", row.value)


def has_gm_password(session: Session, game: Game, password: str | None) -> bool:
    """The mail's PASSWORD is the game's GM password (a GM who also plays a
    seat from the same address writes the GM password to act as the GM)."""
    return bool(_verified(session, game, password))


def handle(
    session: Session, ctx: Context, game: Game, mail: DecodedMail, password: str | None
) -> tuple[bool, str]:
    """Authenticate, run the commands, answer the GM. Returns (authenticated,
    a line for the poll log)."""
    verified = _verified(session, game, password)
    if not verified:
        budget = ctx.config.mail.alert_budget_per_hour
        if allow(session, f"alert:{gm_address(ctx, game)}", budget, ctx.clock.now()):
            refusal = _refusal(game, verified, bool(password))
            _answer(session, ctx, game, mail, "GM commands refused", refusal, answer=False)
        return False, f"authentication failed for the GM of {game.name}"
    if mail.text_cut:  # a part of a mail is not the mail: none of it is run
        done = "GM commands not run: the mail is too long"
        _answer(session, ctx, game, mail, done, cut_answer(len(mail.text)))
        return True, f"GM mail: {done}"
    parsed = parse_gm_mail(mail.text)  # the orders layer reads the commands
    problems = parsed.problems + _game_problems(session, game, parsed.commands)
    lines: list[str] = []
    if not problems and not parsed.commands:
        lines.append(
            "There is no command in your mail: nothing was done. Write one a line: "
            "PAUSE, RESUME, EXTEND hours, PROCESS, KICK player, STATUS."
        )
    elif not problems:
        lines, problems = _run_all(session, ctx, game, parsed.commands)
    if problems:  # all or nothing: one problem and nothing of the mail is done
        lines = _problem_lines(problems)
    if parsed.ignored:
        lines.append(_not_read(parsed))
    if problems:
        done = f"GM commands not run: {_count(len(problems), 'problem')}"
    elif parsed.commands:
        done = "GM commands done: " + ", ".join(dict.fromkeys(c.word for c in parsed.commands))
    else:
        done = "GM commands: none found"
    _answer(session, ctx, game, mail, done, "\n".join(lines))
    return True, f"GM mail: {done}"


def cut_answer(kept: int) -> str:
    return (
        f"Nothing was done: your mail is longer than {kept} characters, more than pbem "
        "reads of a mail, and a mail is run whole or not at all. Send the commands "
        "in a shorter mail."
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _game_problems(session: Session, game: Game, commands: list[GmCommand]) -> list[GmProblem]:
    """The commands checked against the game before any runs: a KICK of no
    player of the game."""
    names = {p.name.lower() for p in players_of(session, game)}
    return [
        GmProblem(
            c.line, f"KICK {c.argument}", f"game {game.name} has no player {quote(c.argument, 60)}"
        )
        for c in commands
        if c.word == "KICK" and c.argument.lower() not in names
    ]


def _run_all(
    session: Session, ctx: Context, game: Game, commands: list[GmCommand]
) -> tuple[list[str], list[GmProblem]]:
    """Every command run, in a savepoint: (what each did, the refusals). One
    refused and the savepoint is rolled back, so nothing of the mail is done
    (each of the others still runs, so that every refusal is found)."""
    lines: list[str] = []
    refused: list[GmProblem] = []
    savepoint = session.begin_nested()
    for cmd in commands:
        argument = " " + quote(cmd.argument, 60) if cmd.argument else ""
        try:
            done = _run(session, ctx, game, cmd)
        except ServiceError as exc:
            refused.append(GmProblem(cmd.line, f"{cmd.word}{argument}", f"refused: {exc}"))
            continue
        shown = done if cmd.word == "STATUS" else quote(done, 300)
        lines.append(f"{cmd.word}{argument}: {shown}")
    if refused:
        savepoint.rollback()
        session.expire_all()
    else:
        savepoint.commit()
    return lines, refused


def _problem_lines(problems: list[GmProblem]) -> list[str]:
    """'Nothing was done', then every problem with its line (at most MOST_LISTED)."""
    ordered = sorted(problems, key=lambda p: p.line)
    lines = [
        f"Nothing was done: {_count(len(ordered), 'problem')} in your mail "
        "(all that were found); a mail with any problem does nothing:"
    ]
    lines += [
        f'  line {p.line} "{quote(p.text, 60)}": {quote(p.message, QUOTED_LINE)}'
        for p in ordered[:MOST_LISTED]
    ]
    if len(ordered) > MOST_LISTED:
        lines.append(f"  and {len(ordered) - MOST_LISTED} more")
    return lines


def _not_read(parsed: GmMail) -> str:
    """The lines ignored as prose, quoted short (at most MOST_LISTED of them)."""
    quoted = [f'line {n} "{quote(text, 60)}"' for n, text in parsed.ignored[:MOST_LISTED]]
    more = len(parsed.ignored) - MOST_LISTED
    listed = ", ".join(quoted) + (f" and {more} more" if more > 0 else "")
    return f"Not read as commands: {listed}."


def _refusal(game: Game, verified: bool | None, carried: bool) -> str:
    if verified is None:
        return (
            f"Game {game.name} has no GM password yet, so no GM command by mail is run. "
            f"Set one with `pbem gm-password {game.name}` and write it on a line "
            "PASSWORD <it> in your mail. Nothing was done."
        )
    if carried:
        return (
            f"The GM password in your mail to {game.name} is wrong (the line PASSWORD "
            "must carry the password `pbem gm-password` printed last), so nothing in "
            "it was done. If you did not send it, someone may be writing in your name."
        )
    return (
        f"Your mail to {game.name} did not carry the game's GM password (a line "
        "PASSWORD followed by the password `pbem gm-password` printed), so nothing "
        "in it was done. If you did not send it, someone may be writing in your name."
    )


def _run(session: Session, ctx: Context, game: Game, cmd: GmCommand) -> str:
    """What ``cmd`` did; ServiceError when it is refused."""
    actions: dict[str, Callable[[], str]] = {
        "PAUSE": lambda: gm.pause(session, ctx, game),
        "RESUME": lambda: gm.resume(session, ctx, game),
        "EXTEND": lambda: gm.extend(session, ctx, game, float(cmd.argument)),
        "PROCESS": lambda: gm.process(session, ctx, game),
        "KICK": lambda: gm.kick(session, ctx, game, cmd.argument),
        "STATUS": lambda: status_text(session, game),
    }
    return actions[cmd.word]()


def status_text(session: Session, game: Game) -> str:
    """STATUS for the GM: where the game stands and how each player does."""
    head = f"{game.name}: {game.status}, phase {game.phase}, turn {game.turn}"
    if game.phase == GamePhase.OPEN:
        return head + " (waiting for players to join)"
    state = load(session, game).state
    lines = [head]
    if state.phase in SETUP_PHASES:
        lines.append("  setup: waiting for the setup orders")
    elif state.phase != ENDED:
        from pbem.report.moving import to_move

        lines.append(f"  to move: {to_move(state).removesuffix(' to move')}")
    deadline = game.deadline
    lines.append(f"  deadline: {deadline:%Y-%m-%d %H:%M} UTC" if deadline else "  deadline: none")
    for p in players_of(session, game):
        armies = sum(a for t, a in enumerate(state.armies) if state.owner[t] == p.seat)
        lines.append(
            f"  {p.name}: {p.status}, {len(state.territories_of(p.seat))} territories, "
            f"{armies} armies, {p.missed_in_row} missed in a row"
        )
    return "\n".join(lines)


def _answer(
    session: Session,
    ctx: Context,
    game: Game,
    mail: DecodedMail,
    subject: str,
    text: str,
    answer: bool = True,
) -> None:
    """The one answer, to the GM's registered address (never to another sender)."""
    address = gm_address(ctx, game)
    notices.alert(
        session,
        ctx,
        game,
        address,
        subject,
        text,
        ("gm-mail", mail.reply_key),
        in_reply_to=mail.message_id,
        answer=answer,
    )


def games_of_gm(session: Session, ctx: Context, address: str) -> list[str]:
    """The names of the unfinished games whose GM writes from ``address``."""
    games = session.exec(select(Game).where(Game.status != GameStatus.FINISHED)).all()
    wanted = address.strip().lower()
    return sorted(g.name for g in games if gm_address(ctx, g) == wanted)


def answer_unnamed(session: Session, ctx: Context, mail: DecodedMail, games: list[str]) -> None:
    """A GM's mail naming no game: which games they run, and how to name one."""
    listed = ", ".join(f"[{name}]" for name in games)
    text = (
        f"Your mail does not say which game it is for; you are the GM of {listed}. Put "
        f"the game's name in the subject, like [{games[0]}], or a line GAME {games[0]}, "
        "and send it again. Nothing was done."
    )
    notices.alert(
        session,
        ctx,
        None,
        mail.sender,
        "Which game?",
        text,
        ("gm-mail", mail.reply_key),
        in_reply_to=mail.message_id,
    )
