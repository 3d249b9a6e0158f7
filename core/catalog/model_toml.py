"""Write a `Model` as the `[[model]]` table catalogs/models.toml holds, in that file's own layout.

Fields in dataclass order; a field at its default is left out (as the hand-written entries do),
except `attention` and `rope_scaled_context`, which every entry spells out. Replacing one entry
in the file leaves every other entry byte for byte as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, fields

from core.catalog.model import Model

_ALWAYS = {"attention", "rope_scaled_context"}
_HEADER = "[[model]]"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        items = "".join(f"    {_value(item)},\n" for item in value)
        return f"[\n{items}]"
    raise TypeError(f"cannot write {value!r} as TOML")


def model_to_toml(model: Model) -> str:
    """The entry's `[[model]]` table, ending with a newline."""
    lines = [_HEADER]
    for spec in fields(Model):
        value = getattr(model, spec.name)
        if value is None:
            continue
        default = spec.default if spec.default is not MISSING else MISSING
        if spec.name not in _ALWAYS and default is not MISSING and value == default:
            continue
        lines.append(f"{spec.name} = {_value(value)}")
    return "\n".join(lines) + "\n"


_ID = re.compile(r'^id = "([^"]+)"$', re.MULTILINE)


def split_entries(text: str) -> tuple[str, list[str]]:
    """(the file's preamble, its `[[model]]` tables, each without trailing blank lines)."""
    parts = text.split("\n" + _HEADER + "\n")
    tables = [(_HEADER + "\n" + part).rstrip("\n") for part in parts[1:]]
    return parts[0].rstrip("\n"), tables


def join_entries(preamble: str, tables: list[str]) -> str:
    """The inverse of split_entries: one blank line between tables, a newline at the end."""
    return "\n\n".join([preamble, *tables]) + "\n"


def entry_id(table: str) -> str:
    match = _ID.search(table)
    if not match:
        raise ValueError(f"catalog table without an id: {table[:60]!r}")
    return match.group(1)


def upsert(text: str, model: Model) -> str:
    """`text` (models.toml) with `model`'s table replaced in place, or appended when new."""
    preamble, tables = split_entries(text)
    table = model_to_toml(model).rstrip("\n")
    ids = [entry_id(existing) for existing in tables]
    if model.id in ids:
        tables[ids.index(model.id)] = table
    else:
        tables.append(table)
    return join_entries(preamble, tables)


def remove(text: str, model_id: str) -> str:
    """`text` (models.toml) without the table of `model_id`."""
    preamble, tables = split_entries(text)
    return join_entries(preamble, [table for table in tables if entry_id(table) != model_id])
