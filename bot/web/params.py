"""A page URL's parameters as a change to the question's query: the links that switch the OS, the
KV cache type, one quant or one context keep the question (`q`) and add one parameter each.

Pure: strings in, a checked `AskQuery` out. A value the catalog doesn't know is ignored (the link
can only have been edited by hand), never an error page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from core.catalog.kv_cache import is_kv_cache_type
from core.catalog.loader import Catalog
from core.i18n import Lang, is_lang
from core.understanding.query import AskQuery

QUESTION_MAX = 1000  # characters read, as for a chat question (core.ask.answer.MAX_INPUT)
OS_VALUES = ("linux", "windows", "macos")
CONTEXT_MAX = 10_485_760  # 10M tokens: beyond anything a model reads
SWITCH_KEYS = ("os", "kv", "quant", "ctx")
EVERY = "all"  # quant=all / ctx=all: the whole ladder, whatever the question named


@dataclass(frozen=True, slots=True)
class PageParams:
    question: str
    lang: Lang | None
    os: str | None = None
    kv: str | None = None
    quant: str | None = None
    ctx: str | None = None  # a token count, or EVERY

    @classmethod
    def read(cls, params: Mapping[str, str]) -> PageParams:
        lang = params.get("lang")
        ctx: str | None = params.get("ctx", "")
        if not (ctx == EVERY or (ctx and ctx.isdigit() and 0 < int(ctx) <= CONTEXT_MAX)):
            ctx = None
        return cls(
            question=" ".join(params.get("q", "").split())[:QUESTION_MAX],
            lang=lang if is_lang(lang) else None,
            os=params.get("os") if params.get("os") in OS_VALUES else None,
            kv=params.get("kv") if is_kv_cache_type(params.get("kv")) else None,
            quant=params.get("quant") or None,
            ctx=ctx,
        )

    def apply(self, query: AskQuery, catalog: Catalog) -> AskQuery:
        """The query with the switches this URL sets (each checked against the catalog)."""
        changes: dict[str, object] = {}
        if self.os is not None:
            changes["os"] = self.os
        if self.kv is not None and is_kv_cache_type(self.kv):
            changes["kv_type"] = self.kv
        if self.quant == EVERY:
            changes["quants"] = ()
        elif self.quant is not None and self.quant in catalog.quants:
            changes["quants"] = (self.quant,)
        if self.ctx == EVERY:
            changes["contexts"] = ()
        elif self.ctx is not None:
            changes["contexts"] = (int(self.ctx),)
        return replace(query, **changes) if changes else query  # type: ignore[arg-type]

    def as_params(self) -> dict[str, str]:
        """The URL parameters that make this page (the links start from these)."""
        out = {"q": self.question}
        if self.lang:
            out["lang"] = self.lang
        for key in SWITCH_KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = str(value)
        return out
