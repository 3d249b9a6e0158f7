"""Logging for a long-running bot: JSON lines (one object per record) or plain text.

JSON fields: ts (UTC, ISO 8601), level, logger, msg, then every `extra=` field of the call, and
`exc` with the traceback when there is one. Secrets never reach the output: every line is
scrubbed of the configured token values *and* of anything shaped like a Telegram bot token, because
HTTP client libraries log request URLs and Telegram puts the token in the URL path.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TextIO

from pydantic import SecretStr

from bot.settings import Settings

REDACTED = "***"
_TELEGRAM_TOKEN = re.compile(r"\d{5,}:[A-Za-z0-9_-]{30,}")
# "//user:password@" in a URL (HF_ENDPOINT may carry credentials; HTTP clients log the URLs they ask).
_URL_USERINFO = re.compile(r"(?<=//)[^/\s@\"']+@")
# Attributes every LogRecord has; whatever else is on a record came from `extra=`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}
# Libraries that log every HTTP request at INFO (with the token in the URL, for Telegram).
_CHATTY = ("httpx", "httpcore", "aiohttp.access", "discord.gateway", "discord.http")
# One DEBUG line per SQL statement, with its parameters (user data): never useful in the bot's log.
_SQL = ("aiosqlite",)


class _Redactor:
    def __init__(self, secrets: Iterable[str]):
        # Longest first so a secret containing another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return _URL_USERINFO.sub(f"{REDACTED}@", _TELEGRAM_TOKEN.sub(REDACTED, text))


class JsonFormatter(logging.Formatter):
    def __init__(self, secrets: Iterable[str] = ()):
        super().__init__()
        self.redact = _Redactor(secrets)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        # default=str: an odd extra (a Path, a datetime, a SecretStr -> "**********") never breaks logging.
        return self.redact(json.dumps(entry, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    def __init__(self, secrets: Iterable[str] = ()):
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
        self.redact = _Redactor(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(super().format(record))


def secrets_of(settings: Settings) -> list[str]:
    """Every SecretStr value in the settings (the tokens), to scrub from log lines."""
    values = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            values.append(value.get_secret_value())
    values.append(os.environ.get("HF_TOKEN") or "")  # huggingface_hub reads it from the environment
    return values


def configure_logging(settings: Settings, stream: TextIO | None = None, level: str | None = None) -> None:
    """Replace the root logger's handlers with one that writes `settings.log_format` to stderr.

    Idempotent (tests and the console call it more than once). `level` overrides settings.log_level.
    """
    secrets = secrets_of(settings)
    formatter: logging.Formatter = (
        JsonFormatter(secrets) if settings.log_format == "json" else TextFormatter(secrets)
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level or settings.log_level)
    quiet = logging.DEBUG if (level or settings.log_level) == "DEBUG" else logging.WARNING
    for name in _CHATTY:
        logging.getLogger(name).setLevel(quiet)
    for name in _SQL:
        logging.getLogger(name).setLevel(logging.INFO)
