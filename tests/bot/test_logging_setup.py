"""Structured logs: one JSON object per line with the extra fields; tokens never appear."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.logging_setup import REDACTED, configure_logging
from bot.settings import Settings

TELEGRAM = "123456789:AAF" + "x" * 32
DISCORD = "M" * 24 + ".Gabcde." + "y" * 27


@pytest.fixture
def restore_root():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def configured(fmt: str, **fields: object) -> io.StringIO:
    stream = io.StringIO()
    settings = Settings(
        _env_file=None, log_format=fmt, telegram_token=TELEGRAM, discord_token=DISCORD, **fields
    )  # type: ignore[call-arg]
    configure_logging(settings, stream)
    return stream


def test_json_lines_carry_the_fields_and_extras(restore_root):
    stream = configured("json")
    logging.getLogger("tokbot.test").info("answered %s", "ask", extra={"platform": "telegram", "ms": 12})
    entry = json.loads(stream.getvalue().splitlines()[-1])
    assert entry["level"] == "INFO" and entry["logger"] == "tokbot.test" and entry["msg"] == "answered ask"
    assert entry["platform"] == "telegram" and entry["ms"] == 12
    assert entry["ts"].endswith("+00:00")


def test_exceptions_are_one_json_line(restore_root):
    stream = configured("json")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("t").exception("failed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and "RuntimeError: boom" in json.loads(lines[0])["exc"]


def test_tokens_are_redacted_everywhere(restore_root):
    stream = configured("json")
    log = logging.getLogger("httpx")
    log.warning("POST https://api.telegram.org/bot%s/getUpdates", TELEGRAM)
    logging.getLogger("x").error("discord login %s", DISCORD, extra={"token": TELEGRAM})
    # A token that is not the configured one but has Telegram's shape (another bot, a user paste).
    logging.getLogger("x").error("other 987654321:%s", "B" * 35)
    out = stream.getvalue()
    assert TELEGRAM not in out and DISCORD not in out and "B" * 35 not in out
    assert out.count(REDACTED) == 4


def test_text_format_is_redacted_too(restore_root):
    stream = configured("text")
    logging.getLogger("x").warning("token=%s", DISCORD)
    out = stream.getvalue()
    assert "WARNING" in out and DISCORD not in out and REDACTED in out


def test_level_and_chatty_libraries(restore_root):
    stream = configured("json", log_level="WARNING")
    logging.getLogger("x").info("not shown")
    assert stream.getvalue() == ""
    assert logging.getLogger("httpx").level == logging.WARNING


def test_configure_is_idempotent(restore_root):
    configured("json")
    configured("text")
    assert len(logging.getLogger().handlers) == 1
