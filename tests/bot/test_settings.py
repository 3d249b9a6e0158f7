"""Settings: every bad TOKBOT_* variable is named; tokens stay secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.settings import SettingsError, load_settings

TELEGRAM = "123456789:AAF" + "x" * 32
DISCORD = "M" * 24 + ".Gabcde." + "y" * 27


@pytest.fixture(autouse=True)
def clean_env(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("TOKBOT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # .env is read from the working directory


def problems(monkeypatch, **env: str) -> str:
    for name, value in env.items():
        monkeypatch.setenv(f"TOKBOT_{name.upper()}", value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    return str(caught.value)


def test_defaults_need_no_configuration():
    s = load_settings()
    assert s.telegram_token is None and s.discord_token is None
    assert s.db_path == Path("tokbot.db") and s.metrics_port == 9108 and s.log_format == "json"


def test_valid_tokens_are_secret(monkeypatch):
    monkeypatch.setenv("TOKBOT_TELEGRAM_TOKEN", TELEGRAM)
    monkeypatch.setenv("TOKBOT_DISCORD_TOKEN", DISCORD)
    s = load_settings()
    assert s.telegram_token.get_secret_value() == TELEGRAM
    assert s.discord_token.get_secret_value() == DISCORD
    assert TELEGRAM not in repr(s) and DISCORD not in str(s)


def test_blank_token_means_not_configured(monkeypatch):
    monkeypatch.setenv("TOKBOT_TELEGRAM_TOKEN", "  ")
    assert load_settings().telegram_token is None


def test_malformed_telegram_token_is_named_without_echoing_it(monkeypatch):
    text = problems(monkeypatch, telegram_token="12345:short-secret")
    assert text.startswith("TOKBOT_TELEGRAM_TOKEN: ") and "BotFather" in text
    assert "short-secret" not in text


def test_malformed_discord_token_is_named(monkeypatch):
    assert "TOKBOT_DISCORD_TOKEN: " in problems(monkeypatch, discord_token="abc")


@pytest.mark.parametrize("entry", ["bob", "irc:bob", "telegram:", ":123"])
def test_bad_moderator_entry_is_named(monkeypatch, entry):
    text = problems(monkeypatch, moderators=f"console:bob,{entry}")
    assert text.startswith("TOKBOT_MODERATORS: ") and repr(entry) in text


def test_moderators_and_roles_parse(monkeypatch):
    monkeypatch.setenv("TOKBOT_MODERATORS", "console:bob, telegram:123,discord:456")
    monkeypatch.setenv("TOKBOT_MODERATOR_ROLES", "111,222")
    policy = load_settings().moderator_policy()
    assert policy.users == {"console:bob", "telegram:123", "discord:456"}
    assert policy.discord_roles == {"111", "222"}


@pytest.mark.parametrize("port", ["-1", "65536", "http"])
def test_bad_port_is_named(monkeypatch, port):
    assert problems(monkeypatch, metrics_port=port).startswith("TOKBOT_METRICS_PORT: ")


def test_every_problem_is_reported_at_once(monkeypatch):
    text = problems(
        monkeypatch,
        telegram_token="x",
        moderators="bob",
        metrics_port="70000",
        log_format="xml",
        default_lang="fr",
        submissions_per_hour="0",
    )
    names = [line.split(":")[0] for line in text.splitlines()]
    assert sorted(names) == sorted(
        [
            "TOKBOT_TELEGRAM_TOKEN",
            "TOKBOT_MODERATORS",
            "TOKBOT_METRICS_PORT",
            "TOKBOT_LOG_FORMAT",
            "TOKBOT_DEFAULT_LANG",
            "TOKBOT_SUBMISSIONS_PER_HOUR",
        ]
    )


def test_dotenv_file_in_the_working_directory_is_read(tmp_path):
    (tmp_path / ".env").write_text("TOKBOT_DB_PATH=/data/tokbot.db\nTOKBOT_METRICS_PORT=0\nOTHER=1\n")
    s = load_settings()
    assert s.db_path == Path("/data/tokbot.db") and s.metrics_port == 0


def test_overrides_win_over_the_environment(monkeypatch):
    monkeypatch.setenv("TOKBOT_DB_PATH", "/from/env.db")
    assert load_settings(db_path=Path("cli.db")).db_path == Path("cli.db")


def test_database_url_selects_postgres_and_stays_secret(monkeypatch):
    url = "postgresql://tokbot:hunter2@db.internal:5432/tokbot"
    monkeypatch.setenv("TOKBOT_DATABASE_URL", url)
    monkeypatch.setenv("TOKBOT_DATABASE_SCHEMA", "bot_eu")
    s = load_settings()
    assert s.database_url.get_secret_value() == url and "hunter2" not in repr(s)
    assert s.database_label() == "postgresql://db.internal:5432/tokbot (schema bot_eu)"


def test_blank_database_url_means_sqlite(monkeypatch):
    monkeypatch.setenv("TOKBOT_DATABASE_URL", " ")
    s = load_settings()
    assert s.database_url is None and s.database_label() == "tokbot.db"


@pytest.mark.parametrize("url", ["mysql://x@y/z", "tokbot.db", "sqlite:///tokbot.db", "postgresql://"])
def test_a_database_url_that_is_not_postgres_is_named_without_echoing_it(monkeypatch, url):
    text = problems(monkeypatch, database_url=url)
    assert text.startswith("TOKBOT_DATABASE_URL: ") and "postgresql://user:password@host" in text
    assert url not in text.replace("postgresql://user", "")


@pytest.mark.parametrize("schema", ["Public", "1abc", "a-b", "x;drop"])
def test_bad_database_schema_is_named(monkeypatch, schema):
    assert "TOKBOT_DATABASE_SCHEMA: " in problems(monkeypatch, database_schema=schema)
