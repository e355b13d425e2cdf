"""A game's settings: its timing and policies, one schema and one set of defaults.

They live in ``Game.settings_json`` over ``DEFAULTS``; ``check_settings``
says what each may be. They are not rule options: they never change a
state hash. The service's own bookkeeping for a game (seats the bot plays,
seats on autopilot during the setup) is kept beside them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pbem.config import GameDefaults
from pbem.service.errors import ServiceError
from pbem.store import Game

if TYPE_CHECKING:  # an idle poll loads no order language (tests/cli/test_startup_imports.py)
    from pbem.orders import SetMail, SetTimezone

UTC = ZoneInfo("UTC")

DEFAULTS: dict[str, Any] = {
    "turn_hours": 48.0,
    "setup_hours": 72.0,
    "grace_hours": 24.0,
    "reminder_hours": [24.0, 6.0],
    "allowed_days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    "timezone": "UTC",
    "adjudicate": "orders",  # or "deadline"
    "remove_after_misses": 3,  # in a row; 0: never
    "remove_after_of_last": [0, 0],  # [N, M]: N misses among the player's last M turns
    "on_removal": "neutral",  # or "bot": the greedy bot plays the seat
    "absence_days_per_year": 21,
    "press_anonymous": False,
    "press_copy_gm": False,
    "press_per_hour": 10,
    "replacement_extra_hours": 24.0,
    "mail_default": "every",  # which mail a player gets until they SET MAIL
}
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


# what a new game stores of its settings (the rest is read from DEFAULTS)
NEW_GAME_KEYS = ("turn_hours", "grace_hours", "reminder_hours", "adjudicate")


def new_game_settings(file: GameDefaults, **given: Any) -> dict[str, Any]:
    """A new game's stored settings: what the GM gave (None: nothing), else the
    config file's [defaults], else DEFAULTS."""
    out: dict[str, Any] = {}
    for key in NEW_GAME_KEYS:
        value = given.get(key)
        if value is None:
            value = getattr(file, key)
        if value is None:
            value = DEFAULTS[key]
        out[key] = list(value) if key == "reminder_hours" else value
    return out


def settings_of(game: Game) -> dict[str, Any]:
    """What the game stores (its settings given, and the service's bookkeeping),
    without the defaults."""
    stored: dict[str, Any] = json.loads(game.settings_json or "{}")
    return stored


def settings(game: Game) -> dict[str, Any]:
    """The game's settings in force: what it stores over DEFAULTS."""
    return {**DEFAULTS, **settings_of(game)}


def check_settings(stored: dict[str, Any]) -> dict[str, Any]:
    """The settings a game may be created with; a ServiceError names the first bad one."""

    def bad(key: str, why: str) -> ServiceError:
        return ServiceError(f"setting {key} = {stored[key]!r}: {why}")

    conf = {**DEFAULTS, **stored}
    for key in ("turn_hours", "setup_hours"):
        if not isinstance(conf[key], int | float) or conf[key] <= 0:
            raise bad(key, "a positive number of hours")
    for key in ("grace_hours", "replacement_extra_hours"):
        if not isinstance(conf[key], int | float) or conf[key] < 0:
            raise bad(key, "a number of hours, 0 or more")
    hours = conf["reminder_hours"]
    if not isinstance(hours, list) or not all(isinstance(h, int | float) and h > 0 for h in hours):
        raise bad("reminder_hours", "a list of positive hours before the deadline")
    days = conf["allowed_days"]
    if not isinstance(days, list) or not days or any(str(d).lower()[:3] not in DAYS for d in days):
        raise bad("allowed_days", f"a list of days out of {', '.join(DAYS)}")
    try:
        ZoneInfo(str(conf["timezone"]))
    except (ZoneInfoNotFoundError, ValueError):
        raise bad("timezone", "an IANA time zone such as Europe/Paris") from None
    choices = {
        "adjudicate": ("orders", "deadline"),
        "on_removal": ("neutral", "bot"),
        "mail_default": MAIL_MODES,
    }
    for key, allowed in choices.items():
        if conf[key] not in allowed:
            raise bad(key, f"one of {', '.join(allowed)}")
    for key in ("remove_after_misses", "absence_days_per_year", "press_per_hour"):
        if not isinstance(conf[key], int) or conf[key] < 0:
            raise bad(key, "a whole number, 0 or more")
    pair = conf["remove_after_of_last"]
    if (
        not isinstance(pair, list)
        or len(pair) != 2
        or not all(isinstance(x, int) and x >= 0 for x in pair)
        or pair[0] > pair[1]
    ):
        raise bad("remove_after_of_last", "[N, M]: N misses among the last M turns, N <= M")
    return conf


MAIL_MODES = ("every", "myturn", "digest")


def mail_mode(game: Game, seat: int) -> str:
    """Which mail a seat gets: its own SET MAIL, else the game's default."""
    conf = settings(game)
    return str(conf.get("mail_prefs", {}).get(str(seat), conf["mail_default"]))


def set_mail_mode(game: Game, seat: int, mode: str) -> None:
    stored = json.loads(game.settings_json or "{}")
    stored.setdefault("mail_prefs", {})[str(seat)] = mode
    game.settings_json = json.dumps(stored, sort_keys=True)


MAIL_MODE_WORDS = {
    "every": "From now on you get every turn report.",
    "myturn": "From now on you get the reports of your own turns only; your "
    "turn mail says what changed since.",
    "digest": "From now on you get the reports of your own turns, and one "
    "mail a day with the other turns.",
}


def apply_set(game: Game, seat: int, cmd: SetMail | SetTimezone) -> tuple[str, bool]:
    from pbem.orders import SetMail
    """SET MAIL or SET TIMEZONE for ``seat``: the answer, and whether it changed
    anything (a SET of what is set already changes nothing, and says so)."""
    if isinstance(cmd, SetMail):
        if mail_mode(game, seat) == cmd.mode:
            return f"Your mail is set to {cmd.mode.upper()} already; nothing changed.", False
        set_mail_mode(game, seat, cmd.mode)
        return MAIL_MODE_WORDS[cmd.mode], True
    if settings(game).get("tz_prefs", {}).get(str(seat)) == cmd.zone:
        return f"Deadlines are shown in {cmd.zone} time already; nothing changed.", False
    set_player_zone(game, seat, cmd.zone)
    return f"From now on deadlines are also shown in {cmd.zone} time.", True


def set_player_zone(game: Game, seat: int, zone: str) -> None:
    stored = json.loads(game.settings_json or "{}")
    stored.setdefault("tz_prefs", {})[str(seat)] = zone
    game.settings_json = json.dumps(stored, sort_keys=True)


def bot_seats(game: Game) -> set[int]:
    """Seats the greedy bot plays (their players were removed with on_removal = bot)."""
    return {int(s) for s in settings(game).get("bot_seats", [])}


def autopilot_seats(game: Game) -> set[int]:
    """Seats whose player was removed during the setup: the autopilot
    places for them until the setup is over, then the removal policy applies."""
    return {int(s) for s in settings(game).get("setup_autopilot", [])}
