"""The pydantic edge of `/submit`: raw text fields typed and range-checked, each error a message code
(catalogs/messages/submit.toml) with its numbers, never a pydantic sentence."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from core.ask.estimate_request import parse_context
from core.catalog.loader import Catalog
from core.catalog.platforms import os_from_word
from core.community.submit_limits import SubmitLimits, limits
from core.i18n import Note

_NUMBER = re.compile(r"^\s*~?\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)\s*([a-z/ ]*?)\s*$", re.I)
_SPEED_UNITS = ("", "t/s", "tok/s", "tokens/s", "token/s", "tps", "tk/s", "toks/s")
_TRUE = {"1", "on", "true", "yes", "y", "enabled", "开"}
_FALSE = {"0", "off", "false", "no", "n", "disabled", "关"}


def _err(code: str, **params: Any) -> PydanticCustomError:
    return PydanticCustomError(code, code, params)


def _limits_of(info: ValidationInfo) -> SubmitLimits:
    # read_form always validates with the limits in the context.
    found: SubmitLimits = (info.context or {})["limits"]
    return found


# Issue 24: every numeric field reads digits one way. Any script's decimal digits ("１２８", "١٢٨")
# are the ASCII ones (never accepted and then dropped); other digit-like characters ("²") and runs
# longer than MAX_DIGITS (400 digits overflowed the context parser) are refused with the field's
# own message; one comma rule (`_decimal`); integers are read as integers, never through a float.
MAX_DIGITS = 12
_DIGIT_RUN = re.compile(r"\d+")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


class _BadDigits(ValueError):
    pass


def _ascii_digits(text: str) -> str:
    """`text` with every Unicode decimal digit as its ASCII digit; _BadDigits for a digit-like
    character that is no decimal digit, or for a run of more than MAX_DIGITS digits."""
    out = []
    for char in text:
        if char.isdecimal() and not char.isascii():
            out.append(str(unicodedata.decimal(char)))
        elif char.isdigit() and not char.isdecimal():  # superscripts, circled digits
            raise _BadDigits(char)
        else:
            out.append(char)
    plain = "".join(out)
    if any(len(run) > MAX_DIGITS for run in _DIGIT_RUN.findall(plain)):
        raise _BadDigits("too many digits")
    return plain


def _plain(value: Any, code: str, **params: Any) -> str:
    """A typed number's text, digits made plain, or the field's own error (`code`)."""
    try:
        return _ascii_digits(str(value).strip())
    except _BadDigits:
        raise _err(code, **params, value=str(value)[:20]) from None


def _decimal(digits: str) -> float:
    """ "1,234" and "1,234,567" are thousands (a comma before exactly three digits, repeated);
    any other comma is a decimal point ("128,5" is 128.5). The one rule for every numeric field."""
    if _THOUSANDS.match(digits):
        return float(digits.replace(",", ""))
    return float(digits.replace(",", "."))


def _number(value: Any, field: str, units: tuple[str, ...] = ("",)) -> float:
    """ "128.5", "128,5 t/s", "1,234", 128 -> float (`_decimal`'s comma rule)."""
    if isinstance(value, bool):
        raise _err("submit.not_a_number", field=field, value=value)
    if isinstance(value, int | float):
        return float(value)
    m = _NUMBER.match(_plain(value, "submit.not_a_number", field=field))
    if not m or m.group(2).lower().replace(" ", "") not in units:
        raise _err("submit.not_a_number", field=field, value=str(value)[:40])
    return _decimal(m.group(1))


def _whole(value: Any) -> Any:
    """A typed token count as an int when it is plain digits (with thousands commas): read as an
    integer, never through a float; anything else ("32k") is left to parse_context."""
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and (text.isdigit() or (_THOUSANDS.match(text) and "." not in text)):
            return int(text.replace(",", ""))
    return value


class SubmissionForm(BaseModel):
    """The raw fields of one measurement, typed. Names stay text: resolving them needs the catalog."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    gpu: str | None = None
    count: int | None = None
    memory: float | None = None
    model: str | None = None
    quant: str | None = None
    ctx: int | None = None
    depth: int | None = None
    framework: str | None = None
    version: str | None = None
    backend: str | None = None
    os: str | None = None
    decode: float | None = None
    prefill: float | None = None
    prompt: int | None = None
    kv: str | None = None
    fa: bool | None = None
    mem_used: float | None = None
    evidence: str | None = None
    notes: str | None = None

    @field_validator("gpu", "model", "quant", "framework", "version", mode="before")
    @classmethod
    def _name(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        text = str(value).strip()
        if len(text) > 200:
            raise _err("submit.too_long", field=info.field_name, max=200)
        return text

    @field_validator("decode", "prefill", mode="before")
    @classmethod
    def _speed(cls, value: Any, info: ValidationInfo) -> float | None:
        if value is None or str(value).strip() == "":
            return None
        speed = _number(value, str(info.field_name), _SPEED_UNITS)
        if not speed > 0:
            raise _err("submit.not_positive", field=info.field_name, value=value)
        top = _limits_of(info).max_speed
        if speed > top:
            raise _err("submit.speed_absurd", field=info.field_name, value=speed, max=top)
        return speed

    @field_validator("count", mode="before")
    @classmethod
    def _count(cls, value: Any, info: ValidationInfo) -> int | None:
        if value is None or str(value).strip() == "":
            return None
        top = _limits_of(info).max_count
        text = _plain(value, "submit.bad_count", max=top).lower().strip("x×*张卡 ")
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= top:
            raise _err("submit.bad_count", value=str(value)[:20], max=top)
        return int(text)

    @field_validator("memory", "mem_used", mode="before")
    @classmethod
    def _memory(cls, value: Any, info: ValidationInfo) -> float | None:
        if value is None or str(value).strip() == "":
            return None
        top = _limits_of(info).max_memory_gib
        m = _NUMBER.match(_plain(value, "submit.bad_memory", field=info.field_name, max=top))
        unit = m.group(2).lower().replace(" ", "") if m else ""
        scale = {"": 1.0, "g": 1.0, "gb": 1.0, "gib": 1.0, "mib": 1 / 1024, "mb": 1 / 1024}.get(unit)
        if m is None or scale is None:
            raise _err("submit.bad_memory", field=info.field_name, value=str(value)[:20], max=top)
        gib = _decimal(m.group(1)) * scale  # the same comma rule as the speeds: 1,000 MiB is 1000
        if not 0 < gib <= top:
            raise _err("submit.bad_memory", field=info.field_name, value=str(value)[:20], max=top)
        return round(gib, 2)

    @field_validator("ctx", mode="before")
    @classmethod
    def _ctx(cls, value: Any, info: ValidationInfo) -> int | None:
        if value is None or str(value).strip() == "":
            return None
        lim = _limits_of(info)
        text = _plain(value, "submit.bad_context", min=lim.min_context, max=lim.max_context)
        try:
            tokens = parse_context(_whole(text))
        except (ValueError, OverflowError):
            tokens = -1
        if not lim.min_context <= tokens <= lim.max_context:
            raise _err("submit.bad_context", value=str(value)[:20], min=lim.min_context, max=lim.max_context)
        return tokens

    @field_validator("depth", "prompt", mode="before")
    @classmethod
    def _tokens(cls, value: Any, info: ValidationInfo) -> int | None:
        if value is None or str(value).strip() == "":
            return None
        lim = _limits_of(info)
        plain = _plain(value, "submit.bad_tokens", field=info.field_name, max=lim.max_context)
        text = plain.lower().removeprefix("d").removeprefix("pp")
        try:
            tokens = 0 if text == "0" else parse_context(_whole(text))
        except (ValueError, OverflowError):
            tokens = -1
        low = 0 if info.field_name == "depth" else 1
        if not low <= tokens <= lim.max_context:
            raise _err("submit.bad_tokens", field=info.field_name, value=str(value)[:20], max=lim.max_context)
        return tokens

    @field_validator("kv", mode="before")
    @classmethod
    def _kv(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        spellings = _limits_of(info).kv
        name = spellings.canonical(str(value))
        if name is None:
            raise _err("submit.bad_kv", value=str(value)[:20], known=", ".join(spellings.choices()))
        return name

    @field_validator("fa", mode="before")
    @classmethod
    def _fa(cls, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("", "auto"):
            return None  # llama.cpp's default "auto": we can't tell what it chose
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise _err("submit.bad_flag", field="fa", value=str(value)[:20])

    @field_validator("backend", mode="before")
    @classmethod
    def _backend(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        known = _limits_of(info).backends
        # llama-bench prints lists like "Metal,BLAS" or "RPC,CUDA": the first GPU backend counts.
        parts = [p.strip().lower() for p in re.split(r"[,+/ ]+", str(value)) if p.strip()]
        gpu_first = sorted(parts, key=lambda p: known.get(p) == "cpu")
        for part in gpu_first:
            if part in known:
                return known[part]
        raise _err("submit.bad_backend", value=str(value)[:20], known=", ".join(sorted(set(known.values()))))

    @field_validator("os", mode="before")
    @classmethod
    def _os(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        named = os_from_word(str(value), _limits_of(info).os_words)
        if named is None:
            raise _err("submit.bad_os", value=str(value)[:20])
        return named

    @field_validator("evidence", "notes", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        lim = _limits_of(info)
        top = lim.evidence_max_chars if info.field_name == "evidence" else lim.notes_max_chars
        return str(value).strip()[:top]  # cut, not refused: a long log is still good evidence


def _form_problems(exc: ValidationError) -> tuple[list[Note], set[str]]:
    notes: list[Note] = []
    bad: set[str] = set()
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else "?"
        bad.add(field)
        code = err["type"]
        if code.startswith("submit."):
            notes.append(Note(code, dict(err.get("ctx") or {})))
        else:
            notes.append(Note("submit.bad_value", {"field": field, "value": str(err.get("input"))[:40]}))
    return notes, bad


def read_form(fields: dict[str, str], catalog: Catalog) -> tuple[SubmissionForm, list[Note], set[str]]:
    """Type the fields; a bad field is reported and left out, the rest still comes through."""
    ctx = {"limits": limits(catalog)}
    try:
        return SubmissionForm.model_validate(fields, context=ctx), [], set()
    except ValidationError as exc:
        notes, bad = _form_problems(exc)
    good = {k: v for k, v in fields.items() if k not in bad}
    return SubmissionForm.model_validate(good, context=ctx), notes, bad
