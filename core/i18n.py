"""User-facing text in English and Chinese, kept as data in `catalogs/messages/*.toml`.

Code never builds sentences itself: it produces a `Note` (a message code plus parameters) and the
renderer turns it into text in the asker's language. Each file in `catalogs/messages/` is a table
of codes, each with an `en` and a `zh` template in `str.format` syntax:

    [fit.tight]
    en = "tight: {free:.1f} GiB left"
    zh = "能跑但紧:剩 {free:.1f} GiB"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeGuard, get_args

from core.cache.warm import shipped

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = get_args(Lang)
MESSAGES_DIR = Path(__file__).resolve().parents[1] / "catalogs" / "messages"


def is_lang(value: object) -> TypeGuard[Lang]:
    """True for a language the bot speaks; narrows a checked string to `Lang`."""
    return value in LANGS


@dataclass(frozen=True, slots=True)
class Note:
    """A message to show the user, not yet in any language."""

    code: str
    params: dict[str, Any] = field(default_factory=dict)

    def text(self, lang: Lang = "en") -> str:
        return translate(self.code, lang, **self.params)


def _flatten(prefix: str, table: dict[str, Any], out: dict[str, dict[str, str]]) -> None:
    if "en" in table and isinstance(table["en"], str):
        out[prefix] = {k: v for k, v in table.items() if isinstance(v, str)}
    # A message may have messages below it ([submission.form.gpu] and [submission.form.gpu.example]).
    for key, value in table.items():
        if isinstance(value, dict):
            _flatten(f"{prefix}.{key}" if prefix else key, value, out)


def messages(directory: Path = MESSAGES_DIR) -> dict[str, dict[str, str]]:
    """Every message code -> {"en": template, "zh": template}, from all files in the folder."""
    if directory == MESSAGES_DIR:
        return _shipped_messages()
    return _read_messages(directory)


@shipped("i18n.messages")
def _shipped_messages() -> dict[str, dict[str, str]]:
    return _read_messages(MESSAGES_DIR)


@cache
def _read_messages(directory: Path) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for path in sorted(directory.glob("*.toml")):
        with path.open("rb") as fh:
            _flatten("", tomllib.load(fh), out)
    return out


def translate(code: str, lang: Lang = "en", **params: Any) -> str:
    """The message in `lang` (falling back to English); an unknown code shows itself, never raises."""
    entry = messages().get(code)
    if entry is None:
        return code
    template = entry.get(lang) or entry.get("en") or code
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):
        return template
