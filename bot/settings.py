"""Settings from the environment and `.env` (pydantic-settings), validated at start.

Every variable is `TOKBOT_<NAME>`; `deploy/.env.example` explains each. A missing or malformed
value is reported by name (`SettingsError`), never as a stack trace.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.community.moderators import ModeratorPolicy

_TELEGRAM_TOKEN = re.compile(r"^\d{5,}:[A-Za-z0-9_-]{30,}$")
_DATABASE_URL = re.compile(r"^postgres(ql)?://\S+$")
_SCHEMA = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_PUBLIC_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$")
_DISCORD_TOKEN = re.compile(r"^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")


class SettingsError(ValueError):
    """Bad configuration, with one line per problem naming the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TOKBOT_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    telegram_token: SecretStr | None = None
    discord_token: SecretStr | None = None
    db_path: Path = Path("tokbot.db")  # the embedded SQLite database (when no database_url is set)
    # PostgreSQL for several bot processes on one database: postgresql://user:password@host:5432/db.
    # Set, it replaces db_path. A secret: the URL may carry the password.
    database_url: SecretStr | None = None
    database_schema: str | None = None  # a schema of its own on a shared server (default: public)
    moderators: str = ""  # console:bob,telegram:123,discord:456
    moderator_roles: str = ""  # Discord role ids whose members moderate, comma-separated
    default_lang: Literal["en", "zh"] = "en"
    default_os: Literal["linux", "windows", "macos"] | None = None
    submissions_per_hour: int | None = Field(default=None, ge=1, le=1000)
    # Models the catalog lacks are read from the Hugging Face Hub: on/off; None (unset): on when
    # HF_ENDPOINT names a Hub or mirror. huggingface_hub's own HF_ENDPOINT / HF_TOKEN /
    # HF_HUB_OFFLINE / HF_HOME are read by the library from the process environment.
    hub: bool | None = None
    # Which site those models are read from: the Hugging Face Hub, or ModelScope for people who can't
    # reach it (MODELSCOPE_DOMAIN / MODELSCOPE_ENDPOINT name the site, as its own client reads them;
    # chosen, it is on unless `hub` is false). bot/hub/select.py composes it.
    model_source: Literal["huggingface", "modelscope"] = "huggingface"
    # The warm cache's folder (core/cache/warm.py); "off" turns it off; None: $XDG_CACHE_HOME/tokbot.
    cache_dir: str | None = None

    # Platform endpoints: the real APIs by default; tests point them at fakes on 127.0.0.1.
    telegram_api_url: str = "https://api.telegram.org/bot"
    telegram_file_url: str = "https://api.telegram.org/file/bot"
    discord_guild_ids: str = ""  # guilds to sync slash commands to with `python -m bot sync`

    # Observability: /healthz and /metrics on a local port (0 disables).
    metrics_host: str = "127.0.0.1"
    metrics_port: int = Field(default=9108, ge=0, le=65535)
    # The web page (bot/web): `python -m bot run` serves it beside the bots when web_port is set
    # (`python -m bot web` serves it alone, on 8080 by default); public_url is the address people
    # reach it at (behind a proxy): chat replies then carry a "Full page" link.
    web_host: str = "127.0.0.1"
    web_port: int | None = Field(default=None, ge=1, le=65535)
    public_url: str | None = None
    # Reconnecting a chat platform whose network is down at start or drops later (bot/adapter.py
    # Backoff): the first wait, doubled per attempt up to the cap, less up to `jitter` of it at random.
    # A minute's cap: a bot back within a minute of its network, without hammering a dead resolver.
    reconnect_first_seconds: float = Field(default=1.0, gt=0, le=600)
    reconnect_max_seconds: float = Field(default=60.0, gt=0, le=3600)
    reconnect_jitter: float = Field(default=0.25, ge=0, le=1)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["json", "text"] = "json"

    @field_validator("telegram_token", "discord_token", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("hub", mode="before")
    @classmethod
    def _blank_hub_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("model_source", mode="before")
    @classmethod
    def _source_word(cls, value: object) -> object:
        # "ModelScope", " hf " as people write them; blank is the default.
        if not isinstance(value, str):
            return value
        word = value.strip().lower()
        return {"": "huggingface", "hf": "huggingface", "hub": "huggingface", "ms": "modelscope"}.get(
            word, word
        )

    @field_validator("web_port", "public_url", mode="before")
    @classmethod
    def _blank_web_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("public_url")
    @classmethod
    def _public_url_shape(cls, value: str | None) -> str | None:
        if value is not None and not _PUBLIC_URL.match(value.strip()):
            raise ValueError("must be an http(s) address, e.g. https://tokbot.example.org")
        return value.strip().rstrip("/") if value is not None else None

    @field_validator("database_url", "database_schema", mode="before")
    @classmethod
    def _blank_database_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("database_url")
    @classmethod
    def _database_url_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _DATABASE_URL.match(value.get_secret_value().strip()):
            raise ValueError(
                "must be a PostgreSQL URL, postgresql://user:password@host:5432/dbname "
                "(leave it empty for the SQLite file at TOKBOT_DB_PATH)"
            )
        return value

    @field_validator("database_schema")
    @classmethod
    def _schema_shape(cls, value: str | None) -> str | None:
        if value is not None and not _SCHEMA.match(value):
            raise ValueError("lower-case letters, digits and _ only, starting with a letter")
        return value

    def database_label(self) -> str:
        """Where the data lives, for logs and messages (no password)."""
        if self.database_url is None:
            return str(self.db_path)
        from urllib.parse import urlsplit

        parts = urlsplit(self.database_url.get_secret_value())
        where = f"postgresql://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"
        return where + (f" (schema {self.database_schema})" if self.database_schema else "")

    @field_validator("telegram_token")
    @classmethod
    def _telegram_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _TELEGRAM_TOKEN.match(value.get_secret_value().strip()):
            raise ValueError("does not look like a Telegram bot token (123456789:AA... from @BotFather)")
        return value

    @field_validator("discord_token")
    @classmethod
    def _discord_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _DISCORD_TOKEN.match(value.get_secret_value().strip()):
            raise ValueError(
                "does not look like a Discord bot token (three dot-separated parts, from the "
                "Developer Portal's Bot page)"
            )
        return value

    @field_validator("moderators")
    @classmethod
    def _moderators_shape(cls, value: str) -> str:
        ModeratorPolicy.parse(value)  # raises ValueError naming the bad entry
        return value

    def moderator_policy(self) -> ModeratorPolicy:
        return ModeratorPolicy.parse(self.moderators, self.moderator_roles)


def load_settings(**overrides: object) -> Settings:
    """Settings from env/.env (+ overrides); raises SettingsError naming each bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            name = "TOKBOT_" + "_".join(str(p) for p in err["loc"]).upper()
            lines.append(f"{name}: {err['msg'].removeprefix('Value error, ')}")
        raise SettingsError("\n".join(lines)) from None
