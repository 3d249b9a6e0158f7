"""The community's open data set: every approved anchor as CSV or JSON.

One flat row per anchor: ids and display names of card and model, every measurement field, the
credit (the submitter's display name, or the source's label for published numbers), the source
and date. Never exported: platform user ids, chat ids, moderator identities, fingerprints (they are
derived from user ids), and pasted logs: evidence is exported only when it is a link; a log is
reduced to its length, since it may hold paths, host names or much more text than a data set wants.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from core.anchors.anchor_index import anchor_date
from core.catalog.loader import Catalog, default_catalog
from core.storage.records import Submission

SCHEMA = 1
NOTES_MAX = 300  # characters of free-text notes kept per anchor
URL_MAX = 500

FIELDS: tuple[str, ...] = (
    "id",
    "origin",
    "gpu_id",
    "gpu_name",
    "gpu_count",
    "memory_gib",
    "model_id",
    "model_name",
    "quant",
    "decode_tps",
    "prefill_tps",
    "prompt_tokens",
    "context",
    "depth",
    "framework",
    "framework_version",
    "backend",
    "os",
    "kv_type",
    "flash_attn",
    "memory_used_gib",
    "credit",
    "source",
    "date",
    "evidence_url",
    "evidence_log_chars",
    "notes",
    "estimate_decode_mid",
    "engine_version",
)

# Typed columns, so a CSV reader can restore exactly what the JSON holds (see `parse_csv`).
_INT = {"id", "gpu_count", "prompt_tokens", "context", "depth", "evidence_log_chars"}
_FLOAT = {"memory_gib", "decode_tps", "prefill_tps", "memory_used_gib", "estimate_decode_mid"}
_BOOL = {"flash_attn"}


def _evidence(text: str | None) -> tuple[str | None, int | None]:
    if not text:
        return None, None
    stripped = text.strip()
    if (
        stripped.startswith(("http://", "https://"))
        and len(stripped.split()) == 1
        and len(stripped) <= URL_MAX
    ):
        return stripped, None
    return None, len(text)


def anchor_row(sub: Submission, catalog: Catalog) -> dict[str, Any]:
    """One anchor as the export shows it (JSON types: None, int, float, bool, str)."""
    m = sub.measurement
    gpu, model = catalog.gpus.get(m.gpu_id), catalog.models.get(m.model_id)
    url, log_chars = _evidence(m.evidence)
    notes = m.notes[:NOTES_MAX] if m.notes else None
    return {
        "id": sub.id,
        "origin": sub.origin,
        "gpu_id": m.gpu_id,
        "gpu_name": gpu.name if gpu else None,
        "gpu_count": m.gpu_count,
        "memory_gib": m.memory_gib,
        "model_id": m.model_id,
        "model_name": model.name if model else None,
        "quant": m.quant,
        "decode_tps": m.decode_tps,
        "prefill_tps": m.prefill_tps,
        "prompt_tokens": m.prompt_tokens,
        "context": m.context,
        "depth": m.depth,
        "framework": m.framework,
        "framework_version": m.framework_version,
        "backend": m.backend,
        "os": m.os,
        "kv_type": m.kv_type,
        "flash_attn": m.flash_attn,
        "memory_used_gib": m.memory_used_gib,
        "credit": sub.submitter.name or None,  # a display name, never the platform user id
        "source": sub.source if sub.origin == "published" else None,
        "date": anchor_date(sub),
        "evidence_url": url,
        "evidence_log_chars": log_chars,
        "notes": notes,
        "estimate_decode_mid": sub.estimate.decode_mid if sub.estimate else None,
        "engine_version": (sub.estimate.engine_version or None) if sub.estimate else None,
    }


def rows(anchors: Iterable[Submission], catalog: Catalog | None = None) -> list[dict[str, Any]]:
    """Approved anchors only (anything else handed in is skipped), by id."""
    cat = catalog or default_catalog()
    approved = sorted((a for a in anchors if a.status == "approved"), key=lambda a: a.id)
    return [anchor_row(a, cat) for a in approved]


def export_json(anchors: Iterable[Submission], catalog: Catalog | None = None) -> bytes:
    data = {"schema": SCHEMA, "fields": list(FIELDS), "anchors": rows(anchors, catalog)}
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")


# A text cell a spreadsheet would run as a formula (OWASP "CSV injection"): = + - @, and a tab or
# carriage return before one. Such a cell gets a leading apostrophe, which the spreadsheet shows as
# text; so does a cell that already starts with one, so `parse_csv` can take exactly one off.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def neutralise(text: str) -> str:
    """`text` as a CSV cell no spreadsheet evaluates (issue 24)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)  # a number is a number (a negative one is no formula)
    return neutralise(str(value))


def export_csv(anchors: Iterable[Submission], catalog: Catalog | None = None) -> bytes:
    buf = io.StringIO()
    # CRLF rows (RFC 4180): the writer quotes a cell holding either character, so a carriage
    # return typed into a note can't end the row and start a forged one.
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\r\n")
    writer.writeheader()
    for row in rows(anchors, catalog):
        writer.writerow({k: _cell(v) for k, v in row.items()})
    # UTF-8 with BOM: spreadsheet apps otherwise misread Chinese display names.
    return buf.getvalue().encode("utf-8-sig")


def parse_csv(data: bytes) -> list[dict[str, Any]]:
    """The rows of `export_csv` with their JSON types back (for consumers and the round-trip test)."""
    out = []
    for raw in csv.DictReader(io.StringIO(data.decode("utf-8-sig"))):
        row: dict[str, Any] = {}
        for key, text in raw.items():
            if text == "":
                row[key] = None
            elif key in _INT:
                row[key] = int(text)
            elif key in _FLOAT:
                row[key] = float(text)
            elif key in _BOOL:
                row[key] = text == "true"
            else:
                row[key] = text[1:] if text.startswith("'") else text  # undo `neutralise`
        out.append(row)
    return out
