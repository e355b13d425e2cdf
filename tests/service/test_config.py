"""Configuration: defaults, where the file is found, every key, env overrides, bad files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pbem.config import Config, ConfigError, GameDefaults, load_config
from pbem.mail.settings import ImapSettings, MailSettings, SmtpSettings
from pbem.service.play.gamesettings import new_game_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "pbem.example.toml"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An empty working folder and home, so no stray pbem.toml is found; returns env."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return {"HOME": str(tmp_path / "home")}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def defaults_in(folder: Path) -> Config:
    return Config(
        database_url=f"sqlite:///{folder}/var/pbem.db",
        state_dir=folder / "var",
        mail=MailSettings(
            transport="maildir",
            maildir_root=folder / "var" / "mail",
            game_address="pbem@localhost",
            gm_address="gm@localhost",
            from_name="pbem",
            max_mail_bytes=1_048_576,
            reply_budget_per_hour=20,
            alert_budget_per_hour=5,
            reply_to_unknown=False,
            imap=ImapSettings(
                host="localhost",
                port=993,
                user="",
                password="",
                tls="implicit",
                timeout=30.0,
                mailbox="INBOX",
                processed_folder="pbem-processed",
                rejected_folder="pbem-rejected",
            ),
            smtp=SmtpSettings(
                host="localhost", port=587, user="", password="", tls="starttls", timeout=30.0
            ),
        ),
        defaults=GameDefaults(),  # nothing given: service/play/settings.py's DEFAULTS apply
        path=None,
    )


def test_no_file_gives_the_embedded_defaults(home: dict[str, str], tmp_path: Path) -> None:
    assert load_config(env=home) == defaults_in(tmp_path / "work")


def test_the_example_file_loads_and_shows_the_defaults(tmp_path: Path) -> None:
    config = load_config(EXAMPLE, env={})
    given = GameDefaults(turn_hours=48.0, grace_hours=24.0, reminder_hours=(24.0, 6.0))
    assert config == replace(
        defaults_in(EXAMPLE.parent), path=EXAMPLE, defaults=replace(given, adjudicate="orders")
    )
    # the [defaults] it shows are the one set of defaults, service/play/settings.py's
    assert new_game_settings(config.defaults) == new_game_settings(GameDefaults())


def test_a_new_games_settings_the_gm_then_the_file_then_the_defaults() -> None:
    nothing = new_game_settings(GameDefaults())
    assert nothing == {
        "turn_hours": 48.0,
        "grace_hours": 24.0,
        "reminder_hours": [24.0, 6.0],
        "adjudicate": "orders",
    }
    file = GameDefaults(turn_hours=24.0, reminder_hours=(12.0,), adjudicate="deadline")
    assert new_game_settings(file, turn_hours=6.0) == {
        "turn_hours": 6.0,
        "grace_hours": 24.0,
        "reminder_hours": [12.0],
        "adjudicate": "deadline",
    }


FULL = """
database_url = "postgresql://pbem@db.example.org/pbem"
state_dir = "/srv/pbem"

[mail]
transport = "imap"
maildir_root = "mail"
game_address = "risk@example.org"
gm_address = "gm@example.org"
from_name = "Risk by mail"
max_mail_bytes = 2000000
reply_budget_per_hour = 7
alert_budget_per_hour = 2
reply_to_unknown = true

[mail.imap]
host = "imap.example.org"
port = 1993
user = "risk"
password = "imap-secret"
tls = "starttls"
timeout = 12
mailbox = "Risk"
processed_folder = "Risk.done"
rejected_folder = "Risk.bad"

[mail.smtp]
host = "smtp.example.org"
port = 2525
user = "risk-out"
password = "smtp-secret"
tls = "none"
timeout = 9.5

[defaults]
preset = "fast"
map = "fantasy"
turn_hours = 24
grace_hours = 0
reminder_hours = [12, 1.5]
adjudicate = "deadline"
"""


def test_every_key_is_read(tmp_path: Path) -> None:
    file = write(tmp_path / "etc" / "pbem.toml", FULL)
    assert load_config(file, env={}) == Config(
        database_url="postgresql://pbem@db.example.org/pbem",
        state_dir=Path("/srv/pbem"),
        mail=MailSettings(
            transport="imap",
            maildir_root=tmp_path / "etc" / "mail",
            game_address="risk@example.org",
            gm_address="gm@example.org",
            from_name="Risk by mail",
            max_mail_bytes=2_000_000,
            reply_budget_per_hour=7,
            alert_budget_per_hour=2,
            reply_to_unknown=True,
            imap=ImapSettings(
                host="imap.example.org",
                port=1993,
                user="risk",
                password="imap-secret",
                tls="starttls",
                timeout=12.0,
                mailbox="Risk",
                processed_folder="Risk.done",
                rejected_folder="Risk.bad",
            ),
            smtp=SmtpSettings(
                host="smtp.example.org",
                port=2525,
                user="risk-out",
                password="smtp-secret",
                tls="none",
                timeout=9.5,
            ),
        ),
        defaults=GameDefaults(
            preset="fast",
            map="fantasy",
            turn_hours=24.0,
            grace_hours=0.0,
            reminder_hours=(12.0, 1.5),
            adjudicate="deadline",
        ),
        path=file,
    )


def test_passwords_are_not_in_the_repr(tmp_path: Path) -> None:
    file = write(tmp_path / "pbem.toml", FULL)
    shown = repr(load_config(file, env={}))
    assert "imap-secret" not in shown and "smtp-secret" not in shown
    assert "db.example.org" not in shown


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    file = write(tmp_path / "pbem.toml", FULL)
    config = load_config(
        file,
        env={
            "PBEM_DATABASE_URL": "postgresql://other@db2.example.org/pbem",
            "PBEM_IMAP_PASSWORD": "from-env-1",
            "PBEM_SMTP_PASSWORD": "from-env-2",
        },
    )
    assert config.database_url == "postgresql://other@db2.example.org/pbem"
    assert config.mail.imap.password == "from-env-1"
    assert config.mail.smtp.password == "from-env-2"
    assert config.mail.imap.user == "risk"  # the rest is the file's


def test_empty_environment_variables_are_ignored(tmp_path: Path) -> None:
    file = write(tmp_path / "pbem.toml", FULL)
    env = {"PBEM_DATABASE_URL": "", "PBEM_IMAP_PASSWORD": "", "PBEM_SMTP_PASSWORD": ""}
    config = load_config(file, env=env)
    assert config.database_url == "postgresql://pbem@db.example.org/pbem"
    assert (config.mail.imap.password, config.mail.smtp.password) == ("imap-secret", "smtp-secret")


def test_relative_sqlite_url_in_env_is_relative_to_the_working_folder(
    home: dict[str, str], tmp_path: Path
) -> None:
    config = load_config(env={**home, "PBEM_DATABASE_URL": "sqlite:///data/x.db"})
    assert config.database_url == f"sqlite:///{tmp_path}/work/data/x.db"


def test_bad_database_url_in_env(home: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(env={**home, "PBEM_DATABASE_URL": "oracle://x"})
    assert str(caught.value) == (
        "environment variable PBEM_DATABASE_URL: must be a sqlite:///path or "
        'postgresql://user@host/dbname URL, got string "oracle://x"'
    )


# --- where the file is found ------------------------------------------------------------


def named(name: str) -> str:
    return f'[mail]\nfrom_name = "{name}"\n'


def test_search_order(home: dict[str, str], tmp_path: Path) -> None:
    user_file = write(Path(home["HOME"]) / ".config" / "pbem" / "pbem.toml", named("user"))
    assert load_config(env=home).path == user_file
    local = write(tmp_path / "work" / "pbem.toml", named("local"))
    assert load_config(env=home).mail.from_name == "local"
    assert load_config(env=home).path == local
    by_env = write(tmp_path / "env.toml", named("env"))
    env = {**home, "PBEM_CONFIG": str(by_env)}
    assert load_config(env=env).mail.from_name == "env"
    given = write(tmp_path / "given.toml", named("given"))
    assert load_config(given, env=env).mail.from_name == "given"
    assert load_config(given, env=env).path == given


def test_missing_given_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "nope.toml", env={})
    assert str(caught.value) == f"{tmp_path}/nope.toml: config file not found (given with --config)"


def test_missing_file_named_by_pbem_config(home: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(env={**home, "PBEM_CONFIG": str(tmp_path / "gone.toml")})
    assert (
        str(caught.value) == f"{tmp_path}/gone.toml: config file not found (named by PBEM_CONFIG)"
    )


# --- paths and derived values -------------------------------------------------------------


def test_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    file = write(tmp_path / "etc" / "pbem.toml", 'state_dir = "state"\n')
    config = load_config(file, env={})
    assert config.state_dir == tmp_path / "etc" / "state"
    assert config.database_url == f"sqlite:///{tmp_path}/etc/state/pbem.db"
    assert config.mail.maildir_root == tmp_path / "etc" / "state" / "mail"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///db/pbem.db", "sqlite:///{etc}/db/pbem.db"),
        ("sqlite:////abs/pbem.db", "sqlite:////abs/pbem.db"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("postgresql://u@h/d", "postgresql://u@h/d"),
    ],
)
def test_database_url_paths(tmp_path: Path, url: str, expected: str) -> None:
    file = write(tmp_path / "etc" / "pbem.toml", f'database_url = "{url}"\n')
    assert load_config(file, env={}).database_url == expected.format(etc=tmp_path / "etc")


@pytest.mark.parametrize(
    ("section", "tls", "port"),
    [
        ("imap", "implicit", 993),
        ("imap", "starttls", 143),
        ("imap", "none", 143),
        ("smtp", "implicit", 465),
        ("smtp", "starttls", 587),
        ("smtp", "none", 25),
    ],
)
def test_port_follows_tls_when_not_given(tmp_path: Path, section: str, tls: str, port: int) -> None:
    file = write(tmp_path / "pbem.toml", f'[mail.{section}]\ntls = "{tls}"\n')
    assert getattr(load_config(file, env={}).mail, section).port == port


# --- bad files ----------------------------------------------------------------------------

BAD: list[tuple[str, str]] = [
    ("[mail]\ntransport = \n", "invalid TOML: Invalid value (at line 2, column 13)"),
    (
        "[mail\n",
        "invalid TOML: Expected ']' at the end of a table declaration (at line 1, column 6)",
    ),
    ('databse_url = "x"\n', "databse_url: unknown key (did you mean database_url?)"),
    ("[mial]\n", "mial: unknown key (did you mean mail?)"),
    ("[defaults]\ncolour = 1\n", "defaults.colour: unknown key"),
    ('[mail.imap]\nhots = "x"\n', "mail.imap.hots: unknown key (did you mean mail.imap.host?)"),
    ('mail = "x"\n', 'mail: expected a table [mail], got string "x"'),
    ('[mail.imap]\nport = "993"\n', 'mail.imap.port: expected an integer, got string "993"'),
    ("[mail.imap]\nport = 70000\n", "mail.imap.port: must be at most 65535, got 70000"),
    ("[mail.smtp]\nport = 0\n", "mail.smtp.port: must be at least 1, got 0"),
    (
        "[mail]\nmax_mail_bytes = true\n",
        "mail.max_mail_bytes: expected an integer, got boolean true",
    ),
    ("[mail]\nmax_mail_bytes = 10\n", "mail.max_mail_bytes: must be at least 1024, got 10"),
    (
        "[mail]\nreply_budget_per_hour = -1\n",
        "mail.reply_budget_per_hour: must be at least 0, got -1",
    ),
    (
        '[mail]\ntransport = "smtp"\n',
        'mail.transport: must be one of "maildir", "imap"; got "smtp"',
    ),
    (
        '[mail.smtp]\ntls = "ssl"\n',
        'mail.smtp.tls: must be one of "implicit", "starttls", "none"; got "ssl"',
    ),
    (
        '[defaults]\nadjudicate = "now"\n',
        'defaults.adjudicate: must be one of "orders", "deadline"; got "now"',
    ),
    (
        '[mail]\nreply_to_unknown = "yes"\n',
        'mail.reply_to_unknown: expected true or false, got string "yes"',
    ),
    (
        '[mail]\ngame_address = "pbem"\n',
        "mail.game_address: expected a mail address like name@example.org, got 'pbem'",
    ),
    ('[mail.imap]\nhost = ""\n', "mail.imap.host: must not be empty"),
    ("[mail.imap]\ntimeout = nan\n", "mail.imap.timeout: must be a finite number, got nan"),
    ("[mail.smtp]\ntimeout = 0\n", "mail.smtp.timeout: must be more than 0, got 0"),
    # checked by the mail layer's own type (MailSettings), named here all the same
    ('[mail]\ntransport = "imap"\n', 'mail.imap.user: required when transport = "imap"'),
    (
        '[mail]\ntls_ca_file = "/nonexistent/ca.pem"\n',
        "mail.tls_ca_file: no such file '/nonexistent/ca.pem'",
    ),
    ("[defaults]\nturn_hours = 0\n", "defaults.turn_hours: must be more than 0, got 0"),
    ("[defaults]\ngrace_hours = -1\n", "defaults.grace_hours: must not be negative, got -1"),
    (
        "[defaults]\nreminder_hours = 6\n",
        "defaults.reminder_hours: expected an array of numbers, got integer 6",
    ),
    (
        '[defaults]\nreminder_hours = [24, "6"]\n',
        'defaults.reminder_hours[1]: expected a number, got string "6"',
    ),
    (
        "[defaults]\nreminder_hours = [24, 0]\n",
        "defaults.reminder_hours[1]: must be more than 0, got 0",
    ),
    ("[defaults]\npreset = 3\n", "defaults.preset: expected a string, got integer 3"),
    ("[poll]\nmax_attempts = 0\n", "poll.max_attempts: must be at least 1, got 0"),
    ("[poll]\nclaim_lease_seconds = 0\n", "poll.claim_lease_seconds: must be more than 0, got 0"),
    (
        "[poll]\nretry_base = 1\n",
        "poll.retry_base: unknown key (did you mean poll.retry_base_seconds?)",
    ),
    ("state_dir = []\n", "state_dir: expected a string, got an array"),
    (
        'database_url = "mysql://root@h/pbem"\n',
        "database_url: must be a sqlite:///path or postgresql://user@host/dbname URL, "
        'got string "mysql://root@h/pbem"',
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_file_is_refused_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    file = write(tmp_path / "pbem.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_config(file, env={})
    assert str(caught.value) == f"{file}: {message}"


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    file = tmp_path / "pbem.toml"
    file.write_bytes(b'from_name = "\xff"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(file, env={})
    assert str(caught.value) == (
        f"{file}: not UTF-8 text: 'utf-8' codec can't decode byte 0xff in position 13: "
        "invalid start byte"
    )


def test_config_error_carries_its_parts(tmp_path: Path) -> None:
    file = write(tmp_path / "pbem.toml", '[mail]\ntransport = "smtp"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(file, env={})
    assert (caught.value.source, caught.value.key) == (str(file), "mail.transport")


def test_the_mail_table_is_the_mail_layers_own_settings(tmp_path: Path) -> None:
    """One mail configuration: no copier between a config type and the mail layer's."""
    file = write(tmp_path / "pbem.toml", FULL)
    mail = load_config(file, env={}).mail
    assert type(mail) is MailSettings
    assert (mail.imap.port, mail.smtp.port, mail.max_mail_bytes) == (1993, 2525, 2_000_000)
    assert mail.own_addresses == {"risk@example.org"}


def test_one_size_limit_and_standard_ports_by_default() -> None:
    settings = MailSettings()
    assert settings.max_mail_bytes == 1_048_576
    assert (settings.imap.port, settings.smtp.port) == (993, 587)
    assert ImapSettings(tls="none").port == 143
    assert SmtpSettings(tls="implicit").port == 465


def test_outage_dir_is_relative_to_the_file_and_empty_by_default(tmp_path: Path) -> None:
    """Empty: the system's temporary folder (pbem.service.ops.health.outage_file)."""
    assert load_config(write(tmp_path / "a.toml", ""), env={}).poll.outage_dir == ""
    file = write(tmp_path / "etc" / "pbem.toml", '[poll]\noutage_dir = "shared"\n')
    assert load_config(file, env={}).poll.outage_dir == str(tmp_path / "etc" / "shared")
