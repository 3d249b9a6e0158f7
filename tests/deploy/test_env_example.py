"""deploy/: .env.example documents exactly the Settings fields; the container and unit agree on the
database path and the health check."""

from __future__ import annotations

import re
from pathlib import Path

from bot.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
# `TOKBOT_NAME=value`, or the same commented out (`# TOKBOT_NAME=value`: a default left alone).
_ASSIGNMENT = re.compile(r"^#?\s*(TOKBOT_[A-Z0-9_]+)=", re.MULTILINE)


def documented() -> list[str]:
    return _ASSIGNMENT.findall((DEPLOY / ".env.example").read_text(encoding="utf-8"))


def test_env_example_lists_every_setting_once_and_nothing_unknown():
    fields = {f"TOKBOT_{name.upper()}" for name in Settings.model_fields}
    names = documented()
    assert sorted(set(names)) == sorted(fields), (set(names) - fields, fields - set(names))
    assert len(names) == len(set(names)), "a setting listed twice: which one wins is unclear"


def test_env_example_explains_each_setting():
    text = (DEPLOY / ".env.example").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(text):
        if _ASSIGNMENT.match(line):
            assert i > 0 and text[i - 1].startswith("#"), f"no explanation above {line!r}"
    joined = "\n".join(text)
    assert "TOKBOT_MODERATORS=console:bob,telegram:123,discord:456" in joined
    assert "TOKBOT_MODERATOR_ROLES" in joined


def test_env_example_as_shipped_is_valid_and_needs_no_token(tmp_path, monkeypatch):
    import os

    from bot.settings import load_settings

    for name in list(os.environ):
        if name.startswith("TOKBOT_"):
            monkeypatch.delenv(name)
    (tmp_path / ".env").write_text((DEPLOY / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.telegram_token is None and settings.discord_token is None


def test_dockerfile_volume_db_path_healthcheck_non_root():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert "TOKBOT_DB_PATH=/data/tokbot.db" in text and 'VOLUME ["/data"]' in text
    assert "HEALTHCHECK" in text and "/healthz" in text
    assert "TOKBOT_METRICS_HOST=0.0.0.0" in text and "EXPOSE 9108" in text
    assert re.search(r"^USER tokbot$", text, re.MULTILINE)
    assert text.count("FROM ") >= 2, "multi-stage: build tools stay in the builder"
    assert 'CMD ["run"]' in text


def test_compose_uses_env_file_volume_restart_and_healthcheck():
    text = (DEPLOY / "docker-compose.yml").read_text(encoding="utf-8")
    assert "env_file: .env" in text
    assert "TOKBOT_DB_PATH: /data/tokbot.db" in text and "tokbot-data:/data" in text
    assert "restart: unless-stopped" in text
    assert "healthcheck:" in text and "/healthz" in text
    assert "dockerfile: deploy/Dockerfile" in text


def test_systemd_unit():
    text = (DEPLOY / "tokbot.service").read_text(encoding="utf-8")
    settings = dict(re.findall(r"^(\w+)=(.*)$", text, re.MULTILINE))
    assert "TOKBOT_DB_PATH=/var/lib/tokbot/tokbot.db" in text and settings["StateDirectory"] == "tokbot"
    assert settings["EnvironmentFile"] and settings["WorkingDirectory"] and settings["User"] == "tokbot"
    assert settings["Restart"] == "on-failure" and settings["KillSignal"] == "SIGTERM"
    assert settings["TimeoutStopSec"] and settings["ExecStart"].endswith("-m bot run")
    assert settings["NoNewPrivileges"] == "yes" and settings["ProtectSystem"] == "strict"
    assert "/healthz" in text


def test_compose_postgres_is_an_optional_profile_with_its_own_volume():
    text = (DEPLOY / "docker-compose.yml").read_text(encoding="utf-8")
    tokbot = text[text.index("  tokbot:\n") : text.index("  postgres:\n")]
    postgres = text[text.index("  postgres:\n") : text.index("\nvolumes:\n")]
    assert "profiles: [postgres]" in postgres, "the default `up` stays SQLite-only"
    assert "profiles:" not in tokbot
    assert "image: postgres:" in postgres and "tokbot-postgres:/var/lib/postgresql/data" in postgres
    assert "pg_isready" in postgres and "ports:" not in postgres  # the compose network only
    assert re.search(r"^  tokbot-postgres:$", text, re.MULTILINE)
    env = (DEPLOY / ".env.example").read_text(encoding="utf-8")
    assert "postgresql://tokbot:" in env and "@postgres:5432/tokbot" in env


def test_settings_database_url_selects_postgres_and_blank_means_sqlite(monkeypatch):
    from bot.settings import load_settings

    monkeypatch.delenv("TOKBOT_DATABASE_URL", raising=False)
    assert load_settings(database_url="  ").database_url is None
    chosen = load_settings(database_url="postgresql://tokbot:pw@db:5432/tokbot", database_schema="bot")
    assert chosen.database_label() == "postgresql://db:5432/tokbot (schema bot)"  # no password
