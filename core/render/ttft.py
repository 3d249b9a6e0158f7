"""Time to first token for a prompt length, and what can honestly be said about concurrent users.

TTFT is the estimator's prefill time for the prompt from an empty context (one request). The
estimator has no batched model yet, so for "16并发" the reply gives the single-user figures, says
plainly that the aggregate is not estimated, and adds the one thing that is known exactly: the KV
cache N users need at the context (N × one user's), against the card's usable memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.catalog.loader import Catalog
from core.estimator.concurrency import ConcurrentSpeed, as_json
from core.estimator.estimate import Row, Setup
from core.i18n import Lang, translate
from core.render.doc import Doc, Para, Pre
from core.render.fmt import NO_FIT, ctx_label, num, table
from core.render.intent_rows import RowAsk, one_row, runs, short_card_label


def _throughput(got: ConcurrentSpeed) -> dict[str, float]:
    """The aggregate and per-user figures and their bands, as the concurrency messages name them."""
    return {
        "agg": got.aggregate_tps,
        "each": got.per_user_tps,
        "agg_low": got.aggregate_low,
        "agg_high": got.aggregate_high,
        "each_low": got.per_user_low,
        "each_high": got.per_user_high,
    }


@dataclass(frozen=True, slots=True)
class TtftRow:
    label: str  # quant (one setup) or card (the reference table)
    row: Row

    def as_json(self) -> dict[str, Any]:
        r = self.row
        ok = runs(r)
        return {
            "label": self.label,
            "quant": r.quant,
            "status": r.status,
            "prefill_tps": r.prefill_tps.mid if ok and r.prefill_tps else None,
            "ttft_s": r.ttft_s if ok else None,
            "decode_tps": r.decode_tps.mid if ok and r.decode_tps else None,
            "kv_gib": r.kv_gib,
            "total_gib": r.total_gib,
        }


def context_for(prompt: int, asked: tuple[int, ...]) -> int:
    """The context the prompt is priced in: the asked one when it holds the prompt, else the prompt
    plus room for the answer, rounded up to 1K."""
    if asked and asked[0] >= prompt:
        return asked[0]
    return -(-(prompt + 512) // 1024) * 1024


def ttft_rows(
    catalog: Catalog, setup: Setup, model_id: str, quants: tuple[str, ...], ctx: int, ask: RowAsk
) -> tuple[TtftRow, ...]:
    """One row per quant, each priced as `ask` says (the prompt at depth 0, the framework, the
    backend the question named, already checked against the card, and the KV cache type)."""
    return tuple(TtftRow(q, one_row(catalog, setup, model_id, q, ctx, ask)) for q in quants)


def reference_rows(
    catalog: Catalog, setups: tuple[Setup, ...], model_id: str, quant: str, prompt: int, ctx: int
) -> tuple[TtftRow, ...]:
    return tuple(
        TtftRow(short_card_label(s.gpu), one_row(catalog, s, model_id, quant, ctx, RowAsk(prompt, 0)))
        for s in setups
    )


def _seconds(value: float | None) -> str:
    if value is None:
        return NO_FIT
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def _table(rows: tuple[TtftRow, ...], first: str) -> tuple[str, ...]:
    header = [first, "pp t/s", "TTFT s", "tg t/s"]
    body = []
    for r in rows:
        ok = runs(r.row)
        body.append(
            [
                r.label[:12],
                num(r.row.prefill_tps.mid) if ok and r.row.prefill_tps else NO_FIT,
                _seconds(r.row.ttft_s if ok else None),
                num(r.row.decode_tps.mid) if ok and r.row.decode_tps else NO_FIT,
            ]
        )
    return table(header, body)


def ttft_doc(
    rows: tuple[TtftRow, ...], title_setup: str, model_name: str, prompt: int, lang: Lang, reference: bool
) -> Doc:
    parts: list[Para | Pre] = []
    if reference:
        parts.append(Para(translate("intent.ttft.assumed", lang, model=model_name)))
    parts += [
        Para(
            translate(
                "intent.ttft.title", lang, setup=title_setup, model=model_name, prompt=ctx_label(prompt)
            )
        ),
        Para(translate("intent.ttft.legend", lang)),
        Pre(_table(rows, "card" if reference else "quant")),
        Para(translate("intent.ttft.method", lang)),
    ]
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class Serving:
    """N users on one named setup, as the concurrency answer headlines them: the row they are priced
    on (the first quant that runs, with a quantized KV cache when only that fits), its framework's
    name as the reply says it, and the batched model's figures."""

    row: Row
    users: int
    ctx: int
    prompt: int
    framework: str
    speed: ConcurrentSpeed
    kv_quantized: bool = False
    depth: int = 0  # the tokens each user's sequence was priced holding (prompt + a reply)


def serving_headline(s: Serving, title_setup: str, model_name: str, lang: Lang) -> Para:
    """The first line: N users' aggregate and per-user tok/s (what a concurrency question asks)."""
    return Para(translate("intent.concurrency.headline", lang, **_served(s, title_setup, model_name)))


def _served(s: Serving, title_setup: str, model_name: str) -> dict[str, object]:
    """What a serving line names: the setup, model, users, quant, engine, depth and the speeds."""
    return {
        "setup": title_setup,
        "model": model_name,
        "users": s.users,
        "quant": s.row.quant,
        "framework": s.framework,
        "depth": ctx_label(s.depth or s.ctx),
        **_throughput(s.speed),
    }


def capacity_lines(
    s: Serving,
    knee: ConcurrentSpeed | None,
    capped: int,
    asked_ctx: bool,
    title_setup: str,
    model_name: str,
    lang: Lang,
) -> tuple[Para, ...]:
    """A capacity answer's first lines ("how many users"): the users the KV cache holds at the
    context (said as asked, or as the default assumed), their aggregate and per-user tok/s; where
    per-user speed halves when that comes first; the scheduler's cap when it, not memory, sets it."""
    ctx_key = (
        "intent.concurrency.capacity_ctx_asked" if asked_ctx else "intent.concurrency.capacity_ctx_default"
    )
    parts = [
        Para(
            translate(
                "intent.concurrency.capacity",
                lang,
                ctx=ctx_label(s.ctx),
                ctx_note=translate(ctx_key, lang, ctx=ctx_label(s.ctx)),
                **_served(s, title_setup, model_name),
            )
        )
    ]
    if knee is not None:
        parts.append(
            Para(translate("intent.concurrency.capacity_knee", lang, knee=knee.users, **_throughput(knee)))
        )
    if capped:
        parts.append(
            Para(translate("intent.concurrency.capacity_capped", lang, cap=capped, framework=s.framework))
        )
    return tuple(parts)


def serving_ttft(s: Serving, lang: Lang) -> Para:
    """The second line: one prompt's time to first token, and when all N arrive together (prefill is
    compute-bound: a burst of N prompts takes about N times one)."""
    row = s.row
    ttft = row.ttft_s or 0.0
    pp = row.prefill_tps.mid if row.prefill_tps else 0.0
    return Para(
        translate(
            "intent.concurrency.ttft",
            lang,
            prompt=ctx_label(s.prompt),
            ttft=_seconds(ttft),
            burst=_seconds(ttft * s.users),
            users=s.users,
            pp=num(pp),
        )
    )


def serving_kv(s: Serving, lang: Lang) -> tuple[Para, ...]:
    """N users' KV caches against usable memory; when they don't all fit, how many do at the context
    and what context each of the N gets (a paged cache serves fewer at once, the rest wait)."""
    row, users = s.row, s.users
    kv = row.kv_gib * users
    total = row.total_gib + row.kv_gib * (users - 1)
    fits = total <= row.usable_gib
    verdict = translate("intent.verdict.fits" if fits else "intent.verdict.no_fit", lang)
    parts = [
        Para(
            translate(
                "intent.concurrency.kv",
                lang,
                users=users,
                ctx=ctx_label(s.ctx),
                kv=kv,
                total=total,
                usable=row.usable_gib,
                verdict=verdict,
            )
        )
    ]
    free = row.usable_gib - (row.total_gib - row.kv_gib)
    if not fits and row.kv_gib > 0 and free > 0:
        each = int(free / users / row.kv_gib * s.ctx) // 1024 * 1024
        room = {"fit": int(free // row.kv_gib), "ctx": ctx_label(s.ctx), "users": users}
        key = "intent.concurrency.kv_room" if each >= 1024 else "intent.concurrency.kv_room_only"
        parts.append(Para(translate(key, lang, each=ctx_label(max(each, 1024)), **room)))
    if s.kv_quantized:
        parts.append(Para(translate("intent.concurrency.kv_quant", lang)))
    return tuple(parts)


def concurrency_lines(
    rows: tuple[TtftRow, ...],
    users: int | None,
    ctx: int,
    lang: Lang,
    speed_of: Callable[[str], ConcurrentSpeed] | None = None,
) -> Doc:
    """A concurrency answer: N users' aggregate and per-user tok/s from the engine's batched model
    (`speed_of(quant)`, for a named card), and N users' KV cache against usable memory."""
    if users is None:
        # No number of users to price (a capacity question, users None, the serving plan couldn't
        # answer: nothing holds one user's cache as it is, which the table shows).
        return (Para(translate("intent.concurrency.single_any", lang)),)
    row = next((r.row for r in rows if runs(r.row)), None)
    if speed_of is not None and row is not None and users > 1:
        got = speed_of(row.quant)
        parts = [
            Para(
                translate(
                    "intent.concurrency.speed",
                    lang,
                    users=users,
                    quant=row.quant,
                    **_throughput(got),
                )
            )
        ]
    else:
        parts = [Para(translate("intent.concurrency.single", lang, users=users))]
    if row is not None:
        kv = row.kv_gib * users
        total = row.total_gib + row.kv_gib * (users - 1)
        verdict = translate(
            "intent.verdict.fits" if total <= row.usable_gib else "intent.verdict.no_fit", lang
        )
        parts.append(
            Para(
                translate(
                    "intent.concurrency.kv",
                    lang,
                    users=users,
                    ctx=ctx_label(ctx),
                    kv=kv,
                    total=total,
                    usable=row.usable_gib,
                    verdict=verdict,
                )
            )
        )
    return tuple(parts)


def concurrency_json(
    rows: tuple[TtftRow, ...], users: int | None, speed_of: Callable[[str], ConcurrentSpeed] | None
) -> dict[str, Any] | None:
    """The concurrency line's figures for `ask --json` (the same row and call as `concurrency_lines`,
    so the JSON and the line are one figure per cell); None where the line gives none."""
    row = next((r.row for r in rows if runs(r.row)), None)
    if speed_of is None or row is None or users is None or users < 2:
        return None
    return as_json(speed_of(row.quant), row.quant)


def ttft_json(rows: tuple[TtftRow, ...]) -> list[dict[str, Any]]:
    return [r.as_json() for r in rows]
