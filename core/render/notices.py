"""The text of an outbox item, rendered at send time in the recipient's language and markup.

Payloads are written by the storage layer in the same transaction as the decision and hold plain
values (ids, numbers, the credit), so a notice can be rendered long after, by any process.

Names, reasons and versions in a payload are what someone typed: the whole notice goes through the
chat target's one escaping rule (core/render/doc.py), so a display name like
"[Free Nitro](https://evil.example)" shows as typed instead of becoming a link.
"""

from __future__ import annotations

from typing import Any

from core.catalog.loader import Catalog
from core.i18n import Lang, translate
from core.render.doc import Target
from core.render.message import one
from core.render.submission import display_name, setup_line, speeds_line
from core.storage.records import Measurement, OutboxItem

# The markup each platform's notifier sends notices in: Discord renders markdown in every message;
# Telegram notices go out without a parse mode (bot/telegram/notifier.py), the console prints them.
NOTICE_TARGETS: dict[str, Target] = {"discord": "discord", "telegram": "plain", "console": "plain"}


def notice_target(platform: str) -> Target:
    return NOTICE_TARGETS.get(platform, "plain")


def _measurement(p: dict[str, Any]) -> Measurement:
    return Measurement(
        gpu_id=str(p.get("gpu_id", "?")),
        model_id=str(p.get("model_id", "?")),
        quant=str(p.get("quant", "?")),
        decode_tps=float(p.get("decode_tps") or 0),
        gpu_count=int(p.get("gpu_count") or 1),
        memory_gib=p.get("memory_gib"),
        context=p.get("context"),
        framework=str(p.get("framework") or "llama.cpp"),
        prefill_tps=p.get("prefill_tps"),
    )


def notice_line(item: OutboxItem, catalog: Catalog) -> str:
    """The notice as one unescaped line (what every target's text is made from)."""
    p = item.payload
    lang: Lang = "zh" if item.lang == "zh" else "en"
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
            name=display_name(p.get("credit")) or "?",
        )
        return text + " " + translate("notice.unsubscribe_hint", lang)
    status = p.get("status", "approved")
    reason = " ".join(str(p.get("reason") or "").split()) or "-"  # one line: a reason can't forge another
    return translate(f"notice.{status}", lang, id=sid, setup=setup, reason=reason)


def notice_text(item: OutboxItem, catalog: Catalog, target: Target | None = None) -> str:
    """The notice escaped for `target` (by default the markup its platform's notifier sends)."""
    return one(target or notice_target(item.platform), notice_line(item, catalog))
