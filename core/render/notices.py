"""The text of an outbox item, rendered at send time in the recipient's language.

Payloads are written by the storage layer in the same transaction as the decision and hold plain
values (ids, numbers, the credit), so a notice can be rendered long after, by any process.
"""

from __future__ import annotations

from typing import Any

from core.catalog.loader import Catalog
from core.i18n import translate
from core.records import Measurement, OutboxItem
from core.render.submission import setup_line, speeds_line


def _measurement(p: dict[str, Any]) -> Measurement:
    return Measurement(
        gpu_id=str(p.get("gpu_id", "?")), model_id=str(p.get("model_id", "?")),
        quant=str(p.get("quant", "?")), decode_tps=float(p.get("decode_tps") or 0),
        gpu_count=int(p.get("gpu_count") or 1), memory_gib=p.get("memory_gib"), context=p.get("context"),
        framework=str(p.get("framework") or "llama.cpp"), prefill_tps=p.get("prefill_tps"),
    )  # fmt: skip


def notice_text(item: OutboxItem, catalog: Catalog) -> str:
    p = item.payload
    lang = item.lang if item.lang in ("en", "zh") else "en"
    m = _measurement(p)
    sid = p.get("submission_id", "?")
    setup = setup_line(m, catalog)
    if item.kind == "anchor":
        text = translate(
            "notice.anchor",
            lang,
            id=sid,
            setup=setup,
            speeds=speeds_line(m, lang),
            name=p.get("credit") or "?",
        )
        return text + " " + translate("notice.unsubscribe_hint", lang)
    status = p.get("status", "approved")
    reason = p.get("reason") or "-"
    return translate(f"notice.{status}", lang, id=sid, setup=setup, reason=reason)
