"""The replies to questions that run the other way, chosen from the query's intent.

`with_intent` completes the query with what only these replies need (the second card or model of a
comparison, the prompt length, concurrent users, a card known only by its memory, a model named only
by its size); `intent_reply` answers when the intent has its own reply, else returns None and the
question gets the ordinary fit/speed table. Both are called from core/ask/answer.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from core.ask import which_model_run
from core.ask.compare_plan import compare_plan
from core.ask.concurrency_answer import serving_doc, serving_plan, serving_plan_dict, serving_rows
from core.catalog.kv_cache import FULL_PRECISION_KV
from core.catalog.loader import Catalog, default_catalog
from core.catalog.sections import sections
from core.estimator.choice import Choice, choose
from core.estimator.concurrency import Batch, concurrent_for
from core.estimator.estimate import Estimate, Row, in_ram
from core.estimator.frameworks import backend_names
from core.estimator.frameworks.serving_setup import is_serving_setup
from core.estimator.serialize import plan_dict
from core.estimator.setup import is_serving
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.i18n import Lang, translate
from core.render import compare, framework_compare, ttft, which_hardware, which_model
from core.render.advice import remedy_text
from core.render.doc import Doc, Para, fits, render
from core.render.fmt import ctx_label, gib, num
from core.render.intent_rows import RowAsk, card_label, config, one_row, runs, setup_for
from core.understanding.intent import IntentDetails, intent_details, typical_card
from core.understanding.normalize import clean
from core.understanding.parse import ParsedQuestion, parse_question
from core.understanding.parse_fields import named_frameworks
from core.understanding.query import AskQuery, CardSpec, QueryNote
from core.understanding.resolution import Resolution

# Where a comparison splits into its two sides: "A vs B", "A 和 B 哪个快", "A or B", "2 x 4090 slower
# than one 4090", "2 M4 16GB is the same as 1 M4 32GB".
# "2张4090 比 1张5090": a bare 比 too, never that of 比特 (bit) or 比如 (for example).
_SPLIT = re.compile(
    r"\s(?:vs\.?|versus|or|compared to|than|same as)\s|和|跟|与|还是|对比|比较|比(?![特如例])"
)
DEFAULT_CONTEXT = 8192


@dataclass(frozen=True, slots=True)
class IntentReply:
    doc: Doc
    rows: tuple[dict[str, Any], ...]
    intent: str
    plan: dict[str, Any] | None = None  # the reply's `$` command's plan (`ask --json`), where it has one


def _sure(res: Resolution | None) -> str | None:
    return res.best_id if res is not None and res.confident else None


def _sides(raw: str, catalog: Catalog) -> tuple[ParsedQuestion, ParsedQuestion] | None:
    text = clean(raw)
    m = _SPLIT.search(text)
    if m is None:
        return None
    return parse_question(text[: m.start()], catalog), parse_question(text[m.end() :], catalog)


def _other(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> AskQuery:
    """The second card or model of a comparison, read from the two sides of "vs" / "和"."""
    sides = _sides(parsed.raw, catalog)
    if sides is None:
        return query
    left, right = sides
    lg, rg = _sure(left.gpu), _sure(right.gpu)
    lm, rm = _sure(left.model), _sure(right.model)
    # One card against itself is a comparison when the count or the memory differs: "2 x 4090 vs one
    # 4090", "2 M4 16GB vs 1 M4 32GB" (exo#587).
    if lg and rg and (lg != rg or _shape(left) != _shape(right)):
        lc, rc = _side_counts(parsed, left, right, (lg, rg))
        first = CardSpec(lg, lc, left.gpu.memory_gib if left.gpu else None)
        hardware = replace(query.hardware, cards=(first, *query.hardware.cards[1:]))
        other = CardSpec(rg, rc, right.gpu.memory_gib if right.gpu else None)
        return replace(query, hardware=hardware, other_card=other, model_id=query.model_id or rm or lm)
    if lm and rm and lm != rm:
        return replace(query, model_id=lm, other_model_id=rm)
    return query


def _side_counts(
    parsed: ParsedQuestion, left: ParsedQuestion, right: ParsedQuestion, ids: tuple[str, str]
) -> tuple[int, int]:
    """Each side's card count. A count said once after both ("is 7900xtx or 3090 faster for 70b, 2
    cards") is read by the whole question for each card; a side read alone sees it on one side only."""
    whole = parsed.cards
    if len(whole) == 2 and (whole[0].res.best_id, whole[1].res.best_id) == ids:
        return max(left.gpu_count, whole[0].count), max(right.gpu_count, whole[1].count)
    return left.gpu_count, right.gpu_count


def _shape(side: ParsedQuestion) -> tuple[int, float | None]:
    return side.gpu_count, side.gpu.memory_gib if side.gpu else None


def _frameworks_compared(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> AskQuery:
    """ "ollama or exllamav2", "llama.cpp vs vllm", "ollama 还是 vllm 哪个快": two or more priced
    frameworks named with a comparison word ([compare] framework_words) are all carried on the
    query (the parse keeps only the first as `framework`)."""
    if parsed.framework is None:
        return query
    named = named_frameworks(parsed.raw, catalog)
    if len(named) < 2 or not _compare_word(clean(parsed.raw), catalog):
        return query
    return replace(query, frameworks=named)


def _compare_word(text: str, catalog: Catalog) -> bool:
    for word in config(catalog, "compare").get("framework_words", ()):
        w = str(word)
        if w.isascii() and w.isalpha():
            if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", text):
                return True
        elif w in text:
            return True
    return False


def _size_only(parsed: ParsedQuestion, model_id: str | None, catalog: Catalog) -> float | None:
    """ "72B", "140亿": the model was named by its size and no word of its family's name."""
    if model_id is None or parsed.size_b is None:
        return None
    family = catalog.models[model_id].family.lower()
    word = family.replace("-", " ").split()[0] if family else ""
    return parsed.size_b if word and word not in clean(parsed.raw) else None


def with_intent(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> AskQuery:
    details = intent_details(parsed.raw, catalog)
    if query.intent == "compare":
        query = _other(parsed, query, catalog)
    query = _frameworks_compared(parsed, query, catalog)
    if details.prompt is not None:
        query = replace(query, prompt=details.prompt)
    elif query.intent in ("ttft", "concurrency") and query.contexts:
        query = replace(query, prompt=query.contexts[0])  # "首 token 要多久 8k": the 8K is the prompt
    if details.users is not None or details.capacity:
        query = replace(query, users=details.users, capacity=details.capacity)
    query = _release_asked(parsed, _value_asked(parsed, query, catalog), catalog)
    size_b = _size_only(parsed, query.model_id, catalog)
    if size_b != query.model_size_b:  # a dataclass replace costs more than the comparison
        query = replace(query, model_size_b=size_b)
    return _task_asked(_memory_only(parsed, query, details, catalog), details, parsed.model is not None)


# The intents a card with a task and no model is answered as a which-model list for: "4090 for
# coding", "how fast is a 3090 for coding" name no model to price.
_TASK_INTENTS = frozenset({"general", "fit", "speed", "which_model"})


def _task_asked(query: AskQuery, details: IntentDetails, model_named: bool) -> AskQuery:
    """ "Best model for coding on a 4090": a card, a task and no model is the which-model list for
    that task. A question that names a model, even one the catalog lacks ("Qwen3-Coder-Next"),
    keeps its answer (the task is not set), and "q8 kv worth it" is said only where a model's plan
    can say what the cache buys."""
    if details.kv_worth and query.model_id is not None:
        query = replace(query, kv_worth=True)
    if details.max_context and query.model_id is not None:
        query = replace(query, max_context=True)
    if details.topics:
        query = replace(query, topics=details.topics)
    if details.task is None or model_named or query.model_id is not None or query.gpu_id is None:
        return query
    if query.intent not in _TASK_INTENTS:
        return query
    return replace(query, intent="which_model", task=details.task)


def _value_asked(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> AskQuery:
    """ "性价比", "best value" (catalogs/deploy.toml value_words): a note that prices aren't known (said
    plainly above the reply, no invented prices), and a model with no card is answered with the
    hardware it needs."""
    raw = clean(parsed.raw)
    if not any(w.lower() in raw for w in sections(catalog).deploy.deploy.value_words):
        return query
    intent = query.intent
    if query.gpu_id is None and query.model_id is not None and intent in ("general", "fit", "memory"):
        intent = "which_hardware"
    return replace(query, intent=intent, notes=(*query.notes, QueryNote("no_prices")))


def _memory_only(
    parsed: ParsedQuestion, query: AskQuery, details: IntentDetails, catalog: Catalog
) -> AskQuery:
    """ "a 16GB GPU", "48G的显卡": no card named, only its memory: a typical card of that size."""
    if parsed.gpu is not None or details.memory_only_gib is None:
        return query
    if details.memory_only_gib == parsed.host_ram_gib:
        return query  # "内存 64g 能跑吗": the size is the host's RAM, read as such
    gpu_id = typical_card(details.memory_only_gib, catalog, parsed.laptop)
    if gpu_id is None:
        return query
    card = CardSpec(gpu_id, details.memory_only_count, details.memory_only_gib, assumed=True)
    intent = query.intent
    if query.model_id is None and intent in ("general", "fit", "speed", "memory"):
        intent = "which_model"
    return replace(query, hardware=replace(query.hardware, cards=(card,)), intent=intent)


# --- the replies -----------------------------------------------------------------------------------


def _ctx(query: AskQuery) -> int:
    return query.contexts[0] if query.contexts else DEFAULT_CONTEXT


def _setup(query: AskQuery, card: CardSpec, catalog: Catalog) -> Any:
    assert card.gpu_id is not None
    # "How many users" is a serving question though it names no count of them.
    serving = query.capacity or is_serving(query.framework, query.users, catalog)
    ram = query.hardware.host_ram_gib
    return setup_for(catalog, card.gpu_id, card.count or 1, card.memory_gib, query.os, ram, serving)


def _title(card: CardSpec, catalog: Catalog) -> str:
    assert card.gpu_id is not None
    gpu = catalog.gpus[card.gpu_id]
    name = gpu.name
    if card.memory_gib and card.memory_gib != gpu.memory_gib:
        name += f" {card.memory_gib:g}GB"
    return f"{card.count}× {name}" if card.count > 1 else name


def _assumed(query: AskQuery, catalog: Catalog) -> tuple[Para, ...]:
    card = query.hardware.first
    if not card.assumed or card.gpu_id is None:
        return ()
    gpu = catalog.gpus[card.gpu_id]
    return (
        Para(
            translate(
                "intent.assumed_card", query.lang, gib=card.memory_gib or gpu.memory_gib, gpu=card_label(gpu)
            )
        ),
    )


def _which_model(query: AskQuery, catalog: Catalog) -> IntentReply:
    card = query.hardware.first
    # The asked KV cache type ("q8 kv cache"): the reply's header says it is priced, so the rows are.
    setup = _setup(query, card, catalog)
    # The task ("for coding") is a cache key like the rest: a hashable string or None. Its own
    # context (RAG: 32K) sizes the list when the question names none.
    ctx = which_model_run.list_context(query, catalog)
    result = which_model.which_models(catalog, setup, ctx, query.kv_type, query.task)
    return _which_model_reply(query, result, catalog)


def _which_model_reply(query: AskQuery, result: which_model.WhichModel, catalog: Catalog) -> IntentReply:
    """The list, and the top pick's `$` command under it when the message has room."""
    card = query.hardware.first
    shown = int(config(catalog, "which_model").get("shown", 8))
    doc = (
        *_assumed(query, catalog),
        *which_model.which_model_doc(result, _title(card, catalog), catalog, query.lang, shown),
    )
    doc, plan = which_model_run.with_run(doc, query, result, catalog)
    return IntentReply(doc, tuple(which_model.rows_json(result, shown)), "which_model", plan)


def family_reply(query: AskQuery, ids: tuple[str, ...], catalog: Catalog) -> IntentReply:
    """Which size of one family runs on the card ("gemma-4 哪个版本合适"): the which-model list of
    that family's members only, instead of asking back which of them was meant."""
    setup = _setup(query, query.hardware.first, catalog)
    ctx = which_model_run.list_context(query, catalog)
    result = which_model.family_models(catalog, setup, ctx, ids, query.kv_type)
    return _which_model_reply(query, result, catalog)


def _which_hardware(query: AskQuery, catalog: Catalog) -> IntentReply:
    assert query.model_id is not None
    model = catalog.models[query.model_id]
    quant = which_hardware.pick_quant(model, query.quants, catalog)
    asked = bool(query.quants)
    target = query.target_tps or 0.0
    result = which_hardware.needs(catalog, query.model_id, quant, _ctx(query), asked, target)
    return IntentReply(
        which_hardware.needs_doc(result, catalog, query.lang, query.target_tps),
        tuple(which_hardware.needs_json(result)),
        "which_hardware",
    )


@dataclass(frozen=True, slots=True)
class _ReleaseWords:
    """catalogs/understanding.toml [release_precision]: what says "the model as released"."""

    pattern: re.Pattern[str] | None
    quants: frozenset[str]


@lru_cache(maxsize=4)
def _release_words(catalog: Catalog) -> _ReleaseWords:
    table = catalog.tables.get("understanding", {}).get("release_precision", {})
    words = sorted((str(w).lower() for w in table.get("words", ())), key=len, reverse=True)
    # Latin words stand alone ("fp16" is no part of "fp160"); CJK ones are substrings.
    alts = [rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])" if w.isascii() else re.escape(w) for w in words]
    return _ReleaseWords(re.compile("|".join(alts)) if alts else None, frozenset(table.get("quants", ())))


def _release_asked(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> AskQuery:
    """ "What hardware for DeepSeek V3 full precision", "部署满血 kimi k2 要几张卡": for a model released
    in FP8 / MXFP4 / INT4, full precision is that release (a BF16 copy is an upcast nobody serves), so
    the hardware answers price the release: an unquantized quant asked ("full precision", "原版",
    "fp16" resolve to HF-BF16 / F16) becomes it, and so does no quant with a release word ("满血")."""
    model = catalog.models.get(query.model_id or "")
    if query.intent not in ("which_hardware", "cards_needed") or model is None:
        return query
    release = which_hardware.release_of(model, catalog)
    if release is None:
        return query
    words = _release_words(catalog)
    if any(q in words.quants for q in query.quants):
        quants = tuple(dict.fromkeys(release.priced if q in words.quants else q for q in query.quants))
        return replace(query, quants=quants)
    if not query.quants and words.pattern is not None and words.pattern.search(clean(parsed.raw)):
        return replace(query, quants=(release.priced,))
    return query


def _card_count(query: AskQuery, catalog: Catalog) -> IntentReply:
    card, model_id = query.hardware.first, query.model_id
    assert card.gpu_id is not None and model_id is not None
    model = catalog.models[model_id]
    quants = tuple(q for q in query.quants if q in catalog.quants)
    if not quants:
        key = "serving" if _served(query, catalog) else "gguf"
        ladder = [str(q) for q in config(catalog, "cards").get(key, ("Q8_0", "Q4_K_M"))]
        native = [model.native_quant] if model.native_quant in catalog.quants else []
        quants = tuple(dict.fromkeys(q for q in (*native, *ladder) if q in catalog.quants))
    counts = which_hardware.cards_needed(catalog, card.gpu_id, model_id, quants, _ctx(query), query.framework)
    doc = which_hardware.cards_doc(
        counts, card.gpu_id, model_id, _ctx(query), catalog, query.lang, card.count
    )
    return IntentReply(doc, tuple(which_hardware.cards_json(counts)), "cards_needed")


def _served(query: AskQuery, catalog: Catalog) -> bool:
    """A card count given in serving checkpoints: vLLM / SGLang named, or none named and the card one
    that is served (a datacenter card: people deploy FP8 / BF16 / AWQ with tensor parallel, not
    GGUF layer splits; issue 20)."""
    if query.framework in ("vllm", "sglang"):
        return True
    gpu = catalog.gpus.get(query.hardware.first.gpu_id or "")
    if query.framework or gpu is None:
        return False
    return is_serving_setup(gpu, 1, None, catalog)  # one card, no users: served for its segment alone


def _compare(query: AskQuery, catalog: Catalog) -> IntentReply | None:
    cfg = config(catalog, "compare")
    lang = query.lang
    quants = query.quants or tuple(str(q) for q in cfg.get("quants", ("Q8_0", "Q4_K_M")))
    quants = tuple(q for q in quants if q in catalog.quants)
    notes: list[Para] = []
    card = query.hardware.first
    if card.gpu_id is None:
        card = CardSpec(str(cfg.get("card", "rtx-4090")))
        notes.append(
            Para(
                translate(
                    "intent.compare.assumed_card", lang, gpu=card_label(catalog.gpus[card.gpu_id or ""])
                )
            )
        )
    model_id = query.model_id
    if model_id is None:
        model_id = str(cfg.get("model", "qwen3-14b"))
        notes.append(
            Para(translate("intent.compare.assumed_model", lang, model=catalog.models[model_id].name))
        )
    ctx = _ctx(query)
    native = catalog.quants.get(catalog.models[model_id].native_quant or "")
    if not query.quants and query.other_model_id is None and native is not None and native.format == "gguf":
        # One model on two setups, released in a GGUF type of its own (gpt-oss MXFP4): that file
        # only; a "Q8_0" or "IQ3_XXS" of it is the same bytes under another name.
        quants = (native.id,)
    if query.other_card is not None and query.other_card.gpu_id is not None:
        a = compare.Side(_title(card, catalog), _setup(query, card, catalog), model_id)
        b = compare.Side(
            _title(query.other_card, catalog), _setup(query, query.other_card, catalog), model_id
        )
        what = catalog.models[model_id].name
    elif query.other_backend is not None and query.backend is not None:
        return _compare_backends(query, card, model_id, quants, ctx, notes, catalog)
    elif query.other_model_id is not None:
        setup = _setup(query, card, catalog)
        a = compare.Side(catalog.models[model_id].name, setup, model_id)
        b = compare.Side(catalog.models[query.other_model_id].name, setup, query.other_model_id)
        what = _title(card, catalog)
    else:
        return None
    pairs = compare.compare_rows(catalog, a, b, quants, ctx, query.framework)
    run, plan = compare_plan(replace(query, model_id=model_id), pairs, catalog)
    doc = (*notes, *compare.compare_doc(a, b, pairs, what, ctx, lang), *run)
    return IntentReply(doc, tuple(compare.compare_json(pairs)), "compare", plan)


def _compare_backends(
    query: AskQuery,
    card: CardSpec,
    model_id: str,
    quants: tuple[str, ...],
    ctx: int,
    notes: list[Para],
    catalog: Catalog,
) -> IntentReply:
    """One card, one model, two llama.cpp backends ("ROCm vs Vulkan on 7900 XTX for qwen3 32b"):
    each side is the same setup priced on its backend, so the table shows what the backend changes."""
    assert query.backend is not None and query.other_backend is not None
    names = backend_names(catalog)
    setup = _setup(query, card, catalog)
    title = _title(card, catalog)
    a = compare.Side(f"{title} · {names[query.backend]}", setup, model_id)
    b = compare.Side(f"{title} · {names[query.other_backend]}", setup, model_id)
    pairs = tuple(
        compare.Pair(
            q,
            one_row(
                catalog, setup, model_id, q, ctx, RowAsk(framework=query.framework, backend=query.backend)
            ),
            one_row(
                catalog,
                setup,
                model_id,
                q,
                ctx,
                RowAsk(framework=query.framework, backend=query.other_backend),
            ),
        )
        for q in quants
    )
    run, plan = compare_plan(replace(query, model_id=model_id), pairs, catalog)
    doc = (*notes, *compare.compare_doc(a, b, pairs, catalog.models[model_id].name, ctx, query.lang), *run)
    return IntentReply(doc, tuple(compare.compare_json(pairs)), "compare", plan)


def frameworks_compared(query: AskQuery) -> bool:
    """Frameworks compared on a card and a model, for one user: a card or model comparison, the time
    to first token and N users keep their own replies."""
    if len(query.frameworks) < 2 or query.gpu_id is None or query.model_id is None:
        return False
    if query.other_card is not None or query.other_model_id is not None:
        return False
    return query.intent not in ("ttft", "concurrency", "cards_needed", "which_hardware", "which_model")


def _compare_frameworks(query: AskQuery, catalog: Catalog) -> IntentReply | None:
    """Each framework's own plan on this setup, one line each, then the faster one's command
    (core/render/framework_compare.py). Priced through `estimate_for`, as the full answer is. None
    when none of them runs here: the full answer's table and ways out say what would."""
    from core.ask.answer import estimate_for  # answer.py imports this module

    def priced_with(framework: str) -> Estimate:
        asked = replace(
            query,
            framework=framework,
            frameworks=(),
            quants=framework_compare.loadable(query.quants, framework, catalog),
            ollama_tag=query.ollama_tag if framework == "ollama" else None,
        )
        return estimate_for(asked, catalog)

    priced = framework_compare.price_all(query.frameworks, priced_with, catalog)
    best = framework_compare.fastest(priced)
    if best.decode is None:
        return None
    doc = framework_compare.framework_compare_doc(priced, catalog, query.lang)
    plan = plan_dict(best.est, catalog, query.lang, chosen=(best.choice, best.plan))
    return IntentReply(doc, (), "compare", plan)


def _os_line(setup: Any, lang: Lang) -> tuple[Para, ...]:
    """A serving answer priced on Linux the user didn't name says so (issue 20)."""
    if setup is None or not setup.os_assumed or not setup.os_server or setup.os_only:
        return ()
    return (Para(translate("intent.os_server", lang)),)


def _concurrency(query: AskQuery, catalog: Catalog) -> IntentReply | None:
    """N users on a named card: the plan that serves them, headlined with their aggregate and
    per-user tok/s, then the time to first token, the table, their KV caches and the command (issue
    20, core/ask/concurrency_answer.py). None when nothing runs (the TTFT table says so) or no card
    or user count was named."""
    card, users = query.hardware.first, query.users
    if card.gpu_id is None or not (query.capacity or (users is not None and users >= 2)):
        return None
    ctx = ttft.context_for(query.prompt, query.contexts)
    if not query.contexts:
        ctx = max(ctx, DEFAULT_CONTEXT)  # each user's KV cache at a usable context, not the bare prompt
    model = catalog.models[query.model_id or str(config(catalog, "ttft").get("model", "qwen3-8b"))]
    setup = _setup(query, card, catalog)
    sp = serving_plan(query, setup, model, ctx, catalog)
    if sp is None:
        return None
    doc: Doc = (
        *_assumed(query, catalog),
        *serving_doc(sp, query, _title(card, catalog), catalog),
        *_os_line(setup, query.lang),
    )
    return IntentReply(doc, serving_rows(sp), query.intent, serving_plan_dict(sp, catalog, query.lang))


def _ttft(query: AskQuery, catalog: Catalog) -> IntentReply:
    cfg = config(catalog, "ttft")
    lang = query.lang
    prompt = query.prompt
    ctx = ttft.context_for(prompt, query.contexts)
    if query.intent == "concurrency" and not query.contexts:
        ctx = max(ctx, DEFAULT_CONTEXT)  # each user's KV cache at a usable context, not at the bare prompt
    card = query.hardware.first
    reference = card.gpu_id is None
    model_id = query.model_id or str(cfg.get("model", "qwen3-8b"))
    model = catalog.models[model_id]
    setup: Any = None  # the named card's (the reference table of many cards has none)
    if reference:
        setups = tuple(
            setup_for(catalog, g, 1, None, None, None) for g in cfg.get("cards", ()) if g in catalog.gpus
        )
        quant = which_hardware.pick_quant(model, query.quants, catalog)
        rows = ttft.reference_rows(catalog, setups, model_id, quant, prompt, ctx)
        title = quant
    else:
        quants = query.quants or _ttft_quants(query, cfg, catalog)
        setup = _setup(query, card, catalog)
        rows, fallback = _ttft_rows_that_fit(query, catalog, setup, model_id, quants, ctx)
        title = _title(card, catalog)
    doc: Doc = (
        *_assumed(query, catalog),
        *ttft.ttft_doc(rows, title, model.name, prompt, lang, reference or query.model_id is None),
    )
    if not reference:
        doc = (*doc, *_ttft_no_fit_lines(rows, fallback, lang))
    if query.intent == "concurrency":
        # Aggregate figures need one card to price; the reference table (no card named) has many.
        users = query.users or 1
        # Priced on what the rows were: the framework the estimate chose (vLLM when asked) and the
        # backend the question named, so the aggregate line agrees with the table above it.
        fw = next((r.row.framework for r in rows if r.row.framework), query.framework or "llama.cpp")
        speed_of = (
            None
            if reference
            else (
                lambda q: concurrent_for(
                    Batch(setup, model, q, users, ctx, fw, backend=query.backend), catalog
                )
            )
        )
        doc = (*doc, *ttft.concurrency_lines(rows, query.users, ctx, lang, speed_of))
        doc = (*doc, *_os_line(setup, lang))
        figures = ttft.concurrency_json(rows, query.users, speed_of)
        if figures is not None:
            # On the row the line was priced on (an added key: the rows keep their shape).
            json_rows = [
                {**r, "concurrency": figures} if r.get("quant") == figures["quant"] else r
                for r in ttft.ttft_json(rows)
            ]
            return IntentReply(doc, tuple(json_rows), query.intent)
    return IntentReply(doc, tuple(ttft.ttft_json(rows)), query.intent)


def _ttft_rows_that_fit(
    query: AskQuery, catalog: Catalog, setup: Any, model_id: str, quants: tuple[str, ...], ctx: int
) -> tuple[tuple[ttft.TtftRow, ...], str]:
    """The TTFT rows as asked; where none runs and no cache type was asked, the same rows with a
    q8_0 KV cache when that makes one run (a 128K prompt of Qwen3-32B on a 48 GB card); where none
    runs still, the rows plus one of the lower quant their way out names (Kimi K2 on a 512 GB M3
    Ultra: IQ3_XXS), so the prompt's wait is said. The second item says which fallback was taken
    ("", "kv" or "quant")."""
    known = tuple(q for q in quants if q in catalog.quants)
    ask = RowAsk(query.prompt, 0, query.framework, query.backend, query.kv_type)
    rows = ttft.ttft_rows(catalog, setup, model_id, known, ctx, ask)
    if any(runs(r.row) for r in rows):
        return rows, ""
    if query.kv_type == FULL_PRECISION_KV:
        quantized = ttft.ttft_rows(catalog, setup, model_id, known, ctx, replace(ask, kv_type="q8_0"))
        if any(runs(r.row) for r in quantized):
            return quantized, "kv"
    lower = next(
        (
            r.row.remedy.quant
            for r in rows
            if r.row.remedy is not None
            and r.row.remedy.kind == WayOutKind.LOWER_QUANT
            and r.row.remedy.quant in catalog.quants
            and r.row.remedy.quant not in known
        ),
        None,
    )
    if lower is not None:
        extra = ttft.ttft_rows(catalog, setup, model_id, (lower,), ctx, ask)
        if any(runs(r.row) for r in extra):
            return (*rows, *extra), "quant"
    return rows, ""


def _ttft_no_fit_lines(rows: tuple[ttft.TtftRow, ...], fallback: str, lang: Lang) -> tuple[Para, ...]:
    """Why the table is what it is: priced with a q8_0 KV cache because only that fits, or with the
    way out's lower quant added, or, where nothing runs, the first row's way out (the single-model
    table's line), never a table of x alone."""
    if fallback == "kv":
        return (Para(translate("intent.ttft.kv_fallback", lang)),)
    if fallback == "quant":
        return (Para(translate("intent.ttft.quant_fallback", lang, quant=rows[-1].label)),)
    if any(runs(r.row) for r in rows):
        return ()
    ways = [f"{r.label}: {remedy_text(r.row.remedy, lang)}" for r in rows if r.row.remedy is not None]
    return (Para(translate("reply.ways_out", lang, items=" · ".join(ways[:2]))),) if ways else ()


def _ttft_quants(query: AskQuery, cfg: dict[str, Any], catalog: Catalog) -> tuple[str, ...]:
    """The quants a TTFT / concurrency table shows when none was asked: a serving framework's own
    checkpoints (FP8, AWQ) when one was named; a release quantized natively in a GGUF type (gpt-oss
    MXFP4) in that type only (a Q8_0 of it is the same bytes under another name); else the intent's
    GGUF pair."""
    own = cfg.get("framework_quants", {}).get(query.framework or "", ())
    named = tuple(str(q) for q in own if q in catalog.quants)
    if named:
        return named
    model = catalog.models.get(query.model_id or "")
    native = catalog.quants.get(model.native_quant or "") if model is not None else None
    if native is not None and native.format == "gguf":
        return (native.id,)
    return tuple(str(q) for q in cfg.get("quants", ("Q8_0", "Q4_K_M")))


def intent_reply(query: AskQuery, catalog: Catalog) -> IntentReply | None:
    """The intent's own reply, or None when the question is best answered by the fit/speed table."""
    return _reply(catalog, query)


@lru_cache(maxsize=1024)
def _reply(catalog: Catalog, query: AskQuery) -> IntentReply | None:
    # The same question (same query) gets the same reply: chat groups repeat themselves.
    intent, card, model = query.intent, query.hardware.first, query.model_id
    if (
        card.gpu_id is None
        and query.hardware.cpu in catalog.cpus
        and model is not None
        and intent != "compare"
    ):
        # A CPU and a model: the CPU-only answer, whose prefill line is the time to first token on
        # that CPU (the intents' card tables would answer for cards the question didn't name).
        return None
    if frameworks_compared(query):
        by_framework = _compare_frameworks(query, catalog)
        if by_framework is not None:
            return by_framework
    if intent == "which_model" and card.gpu_id is not None and model is None:
        return _which_model(query, catalog)
    if intent in ("which_hardware", "cards_needed") and card.gpu_id is None and model is not None:
        return _which_hardware(query, catalog)
    if intent == "cards_needed" and card.gpu_id is not None and model is not None:
        return _card_count(query, catalog)
    if intent == "compare":
        return _compare(query, catalog)
    if intent in ("ttft", "concurrency"):
        # N users on a named card: their throughput first; else (nothing runs) the TTFT table.
        return (_concurrency(query, catalog) if intent == "concurrency" else None) or _ttft(query, catalog)
    return None


# Ways out that change one setting and keep the whole run where the table priced it (a q8_0 KV cache,
# macOS's GPU wired limit raised): the answer is "yes, with it", never "not in VRAM alone".
_SETTINGS = frozenset({WayOutKind.KV_QUANT, WayOutKind.MAC_WIRED_LIMIT})
# Ways out that are another row of the table as it is (a smaller quant, a shorter context): the
# verdict is that row's own, read off the table, so the line and the table never disagree.
_ON_TABLE = frozenset({WayOutKind.LOWER_QUANT, WayOutKind.SHORTER_CTX})
# The questions whose table is the answer ("how fast", "速度多少"): when every cell of it is "x", the
# way out that runs leads instead of waiting at the foot of the table. A bare "4090 qwen3 32b" asks
# nothing yet: its table comes first, as before.
_TABLE_INTENTS = frozenset({"speed"})


@dataclass(frozen=True, slots=True)
class _Lead:
    text: str
    said: str = ""  # the ways-out line's item this lead already says ("" when it says none)


def fit_lead(est: Estimate, query: AskQuery, catalog: Catalog | None = None) -> str:
    """The verdict a fit question ("will qwen3 32b run on my 3060", "3090 跑得动吗") is answered
    with before the table: yes (at which quant and context, how fast; "tight" when it fits with
    little headroom), yes with a setting (a q8_0 KV cache, the macOS wired limit), not alone (offload)
    or no (even the smallest quant is too big). A speed question whose table is all "x" leads with
    its way out the same way. "" for other questions. The row is the one the table's command is
    written for (core.estimator.choice.choose), so the line and the table never disagree."""
    return _lead(est, query, catalog).text


def _lead(est: Estimate, query: AskQuery, catalog: Catalog | None) -> _Lead:
    if not est.rows:
        return _Lead("")
    choice = choose(est, catalog or default_catalog())
    lang = query.lang
    if query.intent == "fit":
        return _fit_verdict(est, choice, lang)
    if query.intent in _TABLE_INTENTS and all(r.status == "no_fit" for r in est.rows):
        # Every cell is "x": the answer is the way out, said first (and not again below the table).
        way = _way_out(est, choice, lang, "intent.lead.")
        if way.text:
            return way
    return _Lead(_shorter_lead(est, choice, lang))


def _prefix(est: Estimate) -> str:
    """A CPU-only run says the same of the RAM the row needs against the usable RAM."""
    return "intent.fit.ram_" if in_ram(est) else "intent.fit."


def _figures(row: Row) -> dict[str, str]:
    return {
        "quant": row.quant,
        "ctx": ctx_label(row.context),
        "usable": gib(row.usable_gib),
        "total": gib(row.total_gib),
    }


def _fits(row: Row | None) -> bool:
    return row is not None and row.status != "no_fit" and row.decode_tps is not None


def _fit_verdict(est: Estimate, choice: Choice, lang: Lang) -> _Lead:
    landed = _landing(est, choice)
    if landed is not None:
        return _Lead(_yes(est, landed, lang))
    way = _way_out(est, choice, lang, "intent.fit.")
    return way if way.text else _Lead(_no(est, choice.row, lang))


def _landing(est: Estimate, choice: Choice) -> Row | None:
    """The row of the table the command runs as it is: the chosen row when it fits, or the row a
    smaller quant or a shorter context lands on (M1 Max 64GB and Llama-3.3-70B: MLX-8BIT doesn't
    fit, the command loads MLX-4BIT at 32K, which does: the verdict is that row's "yes")."""
    row = choice.row
    if row.status != "no_fit":
        return row if _fits(row) else None
    remedy = row.remedy
    if remedy is None or remedy.kind not in _ON_TABLE or remedy.wired_limit_mb:
        return None  # a quant that fits only past macOS's default share is "x" on the table
    at = next((r for r in est.rows if r.quant == choice.quant and r.context == choice.context), None)
    return at if _fits(at) else None


def _yes(est: Estimate, row: Row, lang: Lang) -> str:
    assert row.decode_tps is not None  # _fits
    verdict = "yes" if row.status == "smooth" else "tight"
    return translate(_prefix(est) + verdict, lang, tps=num(row.decode_tps.mid), **_figures(row))


def _way_out(est: Estimate, choice: Choice, lang: Lang, base: str) -> _Lead:
    """The chosen row's way out, when it runs on this machine: a setting (the whole run stays where
    the table priced it) or a placement that leaves part of the model in RAM."""
    row, remedy = choice.row, choice.row.remedy
    if row.status != "no_fit" or remedy is None or not remedy.decode_mid:
        return _Lead("")
    setting = remedy.kind in _SETTINGS or (remedy.kind in _ON_TABLE and remedy.wired_limit_mb > 0)
    if not setting and not facts(remedy.kind).runs_here:
        return _Lead("")
    way = remedy_text(remedy, lang)
    ram = in_ram(est)
    key = base + ("ram_way_out" if ram else "setting" if setting else "way_out")
    # A smaller quant that fits once the wired limit is raised: the figures are that quant's, at
    # macOS's default share (the setting is what it takes), not those of the quant it replaces.
    at = next((r for r in est.rows if r.quant == choice.quant and r.context == choice.context), None)
    if remedy.kind in _ON_TABLE and (at is None or remedy.quality_warning):
        # A quant the table doesn't show, or a 1-2-bit one: more than "one setting"; the verdict
        # stays the table's own.
        return _Lead("")
    shown = at if at is not None and remedy.kind in _ON_TABLE else row
    # The ways-out line names the chosen row's way out first (core/render/compact.py _ways_out).
    said = f"{row.quant} {ctx_label(row.context)}: {way}"
    return _Lead(translate(key, lang, way=way, **_figures(shown)), said)


def _no(est: Estimate, row: Row, lang: Lang) -> str:
    """No: the smallest quant at the command's context is too big. When that one does fit (the rule
    passed it over, too slow or too few bits), its "yes" is said instead: a "no" never prints a need
    below the usable memory."""
    column = [r for r in est.rows if r.context == row.context]
    smallest = min(column or [row], key=lambda r: r.total_gib)
    if _fits(smallest):
        return _yes(est, smallest, lang)
    if smallest.total_gib <= smallest.usable_gib:
        # Too big for a reason the memory figures don't show (the system RAM of an engine that keeps
        # experts there): no "no" that prints a need below what is usable.
        return ""
    figures = _figures(smallest)
    if in_ram(est):
        # When nothing fits in RAM it names the best way out that needs no card (a smaller quant, a
        # shorter context, more RAM).
        figures["way"] = remedy_text(smallest.remedy, lang) if smallest.remedy is not None else ""
    return translate(_prefix(est) + "no", lang, **figures)


def _shorter_lead(est: Estimate, choice: Choice, lang: Lang) -> str:
    """A plan that runs a shorter context than the one asked says so first: the asked context
    doesn't fit, and what the command runs instead (issue 20)."""
    asked = est.request.contexts[0] if est.request.contexts else 0
    if choice.step != "shorter" or not asked or choice.context >= asked:
        return ""
    at = next((r for r in est.rows if r.quant == choice.quant and r.context == asked), choice.row)
    figures = {"asked": ctx_label(asked), "ctx": ctx_label(choice.context), "quant": choice.quant}
    tps = num(choice.decode_mid or 0.0)
    return translate(
        "intent.fit.shorter", lang, total=gib(at.total_gib), usable=gib(at.usable_gib), tps=tps, **figures
    )


def with_fit_lead(est: Estimate, query: AskQuery, text: str, catalog: Catalog | None = None) -> str:
    """The answer with the fit verdict on top, when the question asked for one and it still fits
    one message of the chat. A lead that names the way out takes it off the ways-out line below, so
    the same words are not read twice in a row."""
    lead = _lead(est, query, catalog)
    if not lead.text:
        return text
    body = _without_item(text, lead.said, query) if lead.said else text
    combined = (
        f"{render((Para(_for_the_stand_in(est, lead.text, catalog, query.lang)),), query.target)}\n{body}"
    )
    return combined if fits(combined, query.target) else text


def _for_the_stand_in(est: Estimate, lead: str, catalog: Catalog | None, lang: Lang) -> str:
    """ "Can vLLM run on a P40?": the table is llama.cpp's (the engine asked can't run here), so its
    "Yes, it fits" is said as llama.cpp's, after a "not with vLLM", never as the asked engine's yes."""
    stand = est.stands_in
    if stand is None or not stand.asked or catalog is None or stand.framework not in catalog.frameworks:
        return lead
    engine = catalog.frameworks[stand.framework].name
    gguf = catalog.frameworks[est.framework].name if est.framework in catalog.frameworks else est.framework
    return translate("intent.lead.stand_in", lang, engine=engine, framework=gguf, lead=lead)


def _without_item(text: str, item: str, query: AskQuery) -> str:
    """`text` with `item` taken off its ways-out line ("If it doesn't fit: A · B" -> "... B"); the
    line goes when `item` was all it said. Matched as rendered for the target (escaped alike)."""
    target, lang = query.target, query.lang
    alone = render((Para(translate("reply.ways_out", lang, items=item)),), target)
    said = render((Para(item),), target)
    sep = render((Para(" · "),), target).strip()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line == alone:
            return "\n".join(lines[:i] + lines[i + 1 :])
        if line.startswith(alone[: len(alone) - len(said)]) and f"{said} {sep} " in line:
            lines[i] = line.replace(f"{said} {sep} ", "", 1)
            return "\n".join(lines)
    return text


def assumed_card_line(query: AskQuery, catalog: Catalog, lang: Lang) -> str:
    """The line above an ordinary answer for a card known only by its memory ("" otherwise)."""
    paras = _assumed(replace(query, lang=lang), catalog)
    return paras[0].text if paras else ""


def clear_caches() -> None:
    """Forget the intent replies' cached estimates (core.ask.answer.clear_caches calls this)."""
    from core.render import intent_rows

    intent_rows.clear()
    _reply.cache_clear()
    which_model.which_models.cache_clear()
    which_hardware.needs.cache_clear()
    which_hardware.cards_needed.cache_clear()
