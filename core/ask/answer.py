"""Question in, chat reply out: parse, decide (answer / ask back / help / error), estimate, render.

`answer()` is what every chat adapter and `python -m bot ask` call. It never raises: any failure is
an "error" reply with a calm message, and the text always fits one message of the target. The
question is read once into an `AskQuery` (core/understanding/query.py), which the estimate, the renderer and
the follow-up views (one quant in full, all frameworks, speculative decoding, a chart, another OS
or KV cache type) all take whole; a follow-up switches its fields with `dataclasses.replace`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from core.anchors.anchor_index import AnchorIndex
from core.anchors.calibrate import calibrate
from core.ask.intent_answer import (
    assumed_card_line,
    family_reply,
    frameworks_compared,
    intent_reply,
    with_fit_lead,
    with_intent,
)
from core.ask.intent_answer import clear_caches as clear_intent_caches
from core.ask.pasted_bench_answer import pasted_bench_answer
from core.catalog.gpu import Gpu
from core.catalog.kv_cache import FULL_PRECISION_KV
from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.estimator import speed
from core.estimator.estimate import Estimate, EstimateRequest, Setup, estimate
from core.estimator.frameworks import backend_names, check_backend
from core.estimator.memory import default_os
from core.estimator.setup import (
    HostSpec,
    SetupError,
    build_mixed_setup,
    build_setup,
    cpu_only_setup,
    is_serving,
    mixable,
)
from core.i18n import Lang, translate
from core.render.anchors import anchor_section
from core.render.candidates import candidate_names
from core.render.compact import Reading, card_reading_line, compact_reply, setup_title
from core.render.doc import Doc, Para, Part, fits, render_first_fitting, truncate
from core.render.mac_choices import mac_choices_line
from core.render.overview import gpu_overview, model_overview
from core.understanding.hub_rule import HubNeed, card_like_pattern, model_need
from core.understanding.intent import intent_details
from core.understanding.language import decide_language
from core.understanding.ollama_tags import typed_ollama_tag
from core.understanding.parse import ParsedQuestion, parse_question
from core.understanding.query import AskQuery, CardSpec, Hardware, QueryNote
from core.understanding.resolution import Resolution

ReplyStatus = Literal["answer", "clarify", "help", "error"]
View = Literal["quant", "frameworks", "speculative"]

MAX_INPUT = 1000  # characters of a question that are read; chat questions are a line or two
CANDIDATES = 3  # names offered when asking back


@dataclass(frozen=True, slots=True)
class Reply:
    status: ReplyStatus
    query: AskQuery | None  # None only when the question could not be read at all
    candidates: dict[str, list[str]] = field(default_factory=dict)
    text: str = ""
    rows: tuple[dict[str, Any], ...] = ()  # an intent reply's table as objects (core/ask/intent_answer.py)
    # A model name the catalog doesn't hold (or holds only as a neighbour): what the command layer
    # looks up on the Hub before answering again (core/commands/model_lookup.py).
    hub: HubNeed | None = None
    model: tuple[str, str] | None = None  # (name, repo) of the model answered about
    # A full answer's one recommended plan (core.estimator.serialize.plan_dict): its `command` is the
    # reply's `$` line.
    plan: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON shape of `python -m bot ask --json`; an intent reply adds its `rows`."""
        query = self.query.as_json() if self.query is not None else {}
        out: dict[str, Any] = {
            "status": self.status,
            "query": query,
            "candidates": self.candidates,
            "reply": self.text,
        }
        if self.rows:
            out["rows"] = [dict(row) for row in self.rows]
        if self.model is not None:
            out["model"] = {"name": self.model[0], "repo": self.model[1]}
        if self.hub is not None:
            out["hub"] = {"kind": self.hub.kind, "name": self.hub.name}
        if self.plan is not None:
            out["plan"] = self.plan
        return out


def _sure_id(res: Resolution | None) -> str | None:
    return res.best_id if res is not None and res.confident else None


def query_of(
    parsed: ParsedQuestion, lang: Lang, target: str, catalog: Catalog, default_os: str | None = None
) -> AskQuery:
    """The question as read, as the one query everything after it takes. `default_os` (a
    deployment's setting) stands in for an OS the question doesn't name, when it names a card."""
    cards = _machine_cards(parsed, catalog)
    os_name: str | None = parsed.os
    if os_name is None and cards[0].gpu_id is not None:
        os_name = default_os or None
    hardware = Hardware(
        cards,
        parsed.host_ram_gib,
        parsed.host_ram_type,
        parsed.machines,
        parsed.laptop,
        host_ram_channels=parsed.host_ram_channels,
        cpu=parsed.cpu or _assumed_cpu(parsed, cards, catalog),
        cpu_sockets=parsed.cpu_sockets,
    )
    model_id = _sure_id(parsed.model)
    # Only Ollama names models "deepseek-r1:671b": a typed tag with no framework named is Ollama's,
    # and a bare "int4" beside it its file's quant, not a GPTQ checkpoint (`_tag_quants`).
    tag = typed_ollama_tag(parsed.raw, model_id, catalog) if parsed.framework in ("ollama", None) else None
    if tag is not None and parsed.framework is None:
        parsed = replace(parsed, framework="ollama", quants=_tag_quants(parsed.quants, tag[1], catalog))
    framework = parsed.framework or _framework_for(parsed.quants, None, catalog)
    backend, backend_note = _asked_backend(parsed.backend, cards[0].gpu_id, os_name, framework, catalog)
    other_backend = _other_backend(parsed, backend, cards[0].gpu_id, os_name, framework, catalog)
    if other_backend is not None:
        backend_note = None  # the comparison's title names both backends
    notes = _notes(parsed, hardware, catalog)
    quants = parsed.quants or ((tag[1],) if tag else ())  # the quant the typed tag downloads
    return AskQuery(
        hardware=hardware,
        model_id=model_id,
        quants=quants,
        contexts=parsed.contexts,
        os=os_name,
        framework=parsed.framework,
        kv_type=parsed.kv_type or FULL_PRECISION_KV,
        lang=lang,
        target=target,
        intent=parsed.intent,
        notes=notes if backend_note is None else (*notes, backend_note),
        backend=backend,
        other_backend=other_backend,
        ollama_tag=tag[0] if tag and tag[1] in quants else None,
        cpu_moe_layers=parsed.cpu_moe_layers,
        gpu_memory_utilization=parsed.gpu_memory_utilization,
        split_mode=parsed.split_mode,
        link=parsed.link,
        ubatch=parsed.ubatch,
    )


def _tag_quants(quants: tuple[str, ...], tag_quant: str, catalog: Catalog) -> tuple[str, ...]:
    """The quants asked beside an Ollama tag: those Ollama loads (GGUF files); one it doesn't (a bare
    "int4" read as GPTQ-INT4) is the tag's own."""
    kept = tuple(q for q in quants if q in catalog.quants and catalog.quants[q].format == "gguf")
    return kept if kept or not quants else (tag_quant,)


def _other_backend(
    parsed: ParsedQuestion,
    first: str | None,
    gpu_id: str | None,
    os_name: str | None,
    framework: str | None,
    catalog: Catalog,
) -> str | None:
    """The second backend of a comparison ("ROCm vs Vulkan on 7900 XTX"): only when both can drive
    the card (else the question is answered on the first, with its note, as before)."""
    if parsed.intent != "compare" or first is None or len(parsed.backends) < 2:
        return None
    other, note = _asked_backend(parsed.backends[1], gpu_id, os_name, framework, catalog)
    return other if note is not None and note.code in ("backend", "backend_cpu") else None


def _asked_backend(
    backend: str | None, gpu_id: str | None, os_name: str | None, framework: str | None, catalog: Catalog
) -> tuple[str | None, QueryNote | None]:
    """The backend the question named, if it can drive the card on the OS (and the framework it named
    or its quant implies has it), and the note that says so; one that can't is dropped with a note
    naming it and what was priced instead (never silently)."""
    if backend is None or gpu_id is None:
        return backend, None
    gpu = catalog.gpus[gpu_id]
    os_used = os_name or default_os(gpu, catalog)
    names = backend_names(catalog)
    fw = catalog.frameworks.get(framework or "")
    if fw is not None and backend not in fw.backends:
        return None, QueryNote("backend_not_in_framework", names[backend], fw.name)
    if check_backend(backend, gpu, os_used, catalog).ok:
        return backend, QueryNote("backend_cpu" if backend == "cpu" else "backend", names[backend])
    priced = names.get(speed.choose_backend(gpu, os_used, catalog), "")
    return None, QueryNote("backend_impossible", names[backend], priced)


def _machine_cards(parsed: ParsedQuestion, catalog: Catalog) -> tuple[CardSpec, ...]:
    """The cards in the asker's machine: the first, and those joined to it by "+" ("5090 + 4090");
    a card named as the other choice ("A100/A800") or compared ("vs", a compare question) is not."""
    first_id = _sure_id(parsed.gpu)
    if first_id is None:
        return (CardSpec(None, parsed.gpu_count, None),)
    specs: list[CardSpec] = []
    for card in parsed.cards or ():
        gid = _sure_id(card.res)
        if (
            gid is None
            or gid not in catalog.gpus
            or (specs and (card.joiner != "+" or parsed.intent == "compare"))
        ):
            continue
        specs.append(CardSpec(gid, card.count, card.res.memory_gib or catalog.gpus[gid].memory_gib))
    return tuple(specs) or (CardSpec(first_id, parsed.gpu_count, catalog.gpus[first_id].memory_gib),)


def mixed_cards(hardware: Hardware, catalog: Catalog) -> tuple[CardSpec, ...]:
    """The cards of one machine priced card by card (setup.build_mixed_setup), each with its memory;
    () when they are not a mix a layer split prices that way (one kind, several vendors, machines)."""
    cards = [c for c in hardware.cards if c.gpu_id is not None and c.gpu_id in catalog.gpus]
    gpus = [catalog.gpus[c.gpu_id] for c in cards if c.gpu_id is not None]
    if hardware.machines > 1 or len({c.gpu_id for c in cards}) < 2 or not mixable(gpus):
        return ()
    if sum(c.count for c in cards) > MAX_CARDS:
        return ()
    return tuple(CardSpec(c.gpu_id, c.count, c.memory_gib or gpus[k].memory_gib) for k, c in enumerate(cards))


def priced_card(hardware: Hardware, catalog: Catalog) -> CardSpec:
    """The one kind of card the estimate prices. Mixed cards are priced as that many of the card with
    the least memory (then the lowest bandwidth): every card is held to the smallest one's memory and
    speed, so the figures never promise more than the mix gives. Several machines: one of them."""
    cards = [c for c in hardware.cards if c.gpu_id is not None and c.gpu_id in catalog.gpus]
    if len(cards) < 2:
        return hardware.first
    gpus = catalog.gpus

    def weakest(c: CardSpec) -> tuple[float, float]:
        assert c.gpu_id is not None
        return (c.memory_gib or gpus[c.gpu_id].memory_gib, gpus[c.gpu_id].bandwidth_gbs)

    low = min(cards, key=weakest)
    return CardSpec(low.gpu_id, min(MAX_CARDS, sum(c.count for c in cards)), low.memory_gib)


MAX_CARDS = 64  # what an estimate prices (core/estimator/setup.py)


def _card_words(card: CardSpec, catalog: Catalog) -> str:
    assert card.gpu_id is not None
    name = catalog.gpus[card.gpu_id].name
    return f"{card.count}× {name}" if card.count > 1 else name


def _assumed_cpu(parsed: ParsedQuestion, cards: tuple[CardSpec, ...], catalog: Catalog) -> str | None:
    """ "纯cpu qwen3 30b" names no CPU and no card: priced on the typical desktop CPU of
    catalogs/cpus.toml [assumed] (the reply's note says so), not answered with a GPU table."""
    if parsed.backend != "cpu" or cards[0].gpu_id is not None or parsed.cpu is not None:
        return None
    cpu = sections(catalog).cpu_assumed.get("cpu_only")
    return cpu if cpu in catalog.cpus else None


def _notes(parsed: ParsedQuestion, hardware: Hardware, catalog: Catalog) -> tuple[QueryNote, ...]:
    """What the reply must say about the reading: values ignored, and setups priced another way."""
    notes = [QueryNote(code, value) for code, value in parsed.notes]
    if hardware.cpu and parsed.cpu is None:
        notes.append(QueryNote("cpu_assumed", catalog.cpus[hardware.cpu].name))
    known = [c for c in hardware.cards if c.gpu_id is not None]
    if len(known) > 1:
        mix = " + ".join(_card_words(c, catalog) for c in known)
        if mixed_cards(hardware, catalog):
            notes.append(QueryNote("mixed_split", mix, _split_order(hardware, catalog)))
        else:
            notes.append(QueryNote("mixed_cards", mix, _card_words(priced_card(hardware, catalog), catalog)))
    if hardware.machines > 1 and known:
        notes.append(
            QueryNote(
                "machines", str(hardware.machines), _card_words(priced_card(hardware, catalog), catalog)
            )
        )
    if parsed.gpu_memory_utilization is not None:
        notes.append(QueryNote("gpu_util", f"{parsed.gpu_memory_utilization:g}"))
    if parsed.kv_type is not None and parsed.kv_type != FULL_PRECISION_KV:
        # The table doesn't show which KV cache it was priced with; the question set one, so say so.
        notes.append(QueryNote("kv_type", parsed.kv_type))
    first = hardware.first.gpu_id
    if hardware.laptop and first is not None and catalog.gpus[first].form != "laptop":
        notes.append(QueryNote("laptop_no_row", catalog.gpus[first].name))
    return tuple(notes)


def _split_order(hardware: Hardware, catalog: Catalog) -> str:
    """The cards in the order a layer split's -ts lists them (fastest first, as CUDA numbers them)."""
    cards = [(catalog.gpus[c.gpu_id], c.count) for c in mixed_cards(hardware, catalog) if c.gpu_id]
    order = sorted(((g, n) for g, n in cards), key=lambda c: -c[0].bandwidth_gbs)
    return ", ".join(f"{n}× {g.name}" if n > 1 else g.name for g, n in order)


def _with_notes(query: AskQuery | None, status: ReplyStatus, text: str) -> str:
    """The reply with the reading's notes above it; the notes give way when the message would not fit."""
    if query is None or not query.notes or status == "help":
        return text
    for notes in (query.notes, query.notes[:1]):
        lines = tuple(
            Para(translate(f"reply.note.{n.code}", query.lang, value=n.value, priced=n.priced)) for n in notes
        )
        combined = f"{_text(lines, query.target)}\n{text}"
        if fits(combined, query.target):
            return combined
    return text


def _candidates(parsed: ParsedQuestion) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"gpu": [], "model": []}
    if parsed.gpu is not None:
        out["gpu"] = [cid for cid, _ in parsed.gpu.candidates[:CANDIDATES]]
    if parsed.model is not None:
        out["model"] = [cid for cid, _ in parsed.model.candidates[:CANDIDATES]]
    return out


def _text(doc: Doc, target: str) -> str:
    return render_first_fitting([doc], target)


def _error_text(lang: Lang, target: str) -> str:
    reason = translate("reply.internal_error", lang)
    return _text((Para(translate("reply.error", lang, reason=reason)),), target)


# --- the estimate --------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _estimate(catalog: Catalog, query: AskQuery) -> Estimate:
    # Chat groups ask the same few combinations over and over; the estimate is the costly step.
    # `query` is already the estimate's view of it (see estimate_for), so one key serves all replies.
    card = query.hardware.first
    assert query.model_id is not None  # estimate_for checked it, and a card or a CPU
    hw = query.hardware
    cpu = catalog.cpus.get(hw.cpu or "")
    if card.gpu_id is None:
        # A CPU and no card ("7950X 64G 能跑 qwen3 30b 吗"): a CPU-only run on that CPU.
        assert cpu is not None
        box = HostSpec(hw.host_ram_gib, hw.host_ram_type, hw.host_ram_channels, hw.cpu_sockets, cpu)
        setup = cpu_only_setup(catalog, query.os, box)
        return estimate(_request(setup, query, catalog), catalog)
    # "How many users" is a serving question though it names no count (users None).
    serving = query.capacity or is_serving(query.framework, query.users, catalog)
    try:  # the DDR type the question said sets the offload bandwidth (DDR5 ~1.75x DDR4 at 2 channels)
        sockets = hw.cpu_sockets if cpu is not None else None
        box = HostSpec(hw.host_ram_gib, hw.host_ram_type, hw.host_ram_channels, sockets, cpu)
        setup = _card_setup(query, box, serving, catalog)
    except SetupError:
        if hw.host_ram_type is None and hw.host_ram_channels is None and cpu is None:
            raise
        setup = _card_setup(query, HostSpec(hw.host_ram_gib), serving, catalog)
    return estimate(_request(setup, query, catalog), catalog)


def _card_setup(query: AskQuery, box: HostSpec, serving: bool, catalog: Catalog) -> Setup:
    """The setup of the query's cards: one kind, or (estimate_for kept several) a mix card by card."""
    cards = query.hardware.cards
    if len(cards) > 1:
        mix = [(catalog.gpus[c.gpu_id or ""], float(c.memory_gib or 0.0), c.count) for c in cards]
        return build_mixed_setup(mix, catalog, query.os, box, serving)
    card = cards[0]
    gpu = catalog.gpus[card.gpu_id or ""]
    return build_setup(gpu, catalog, card.count, card.memory_gib, query.os, box, serving)


def _request(setup: Setup, query: AskQuery, catalog: Catalog) -> EstimateRequest:
    assert query.model_id is not None
    return EstimateRequest(
        setup,
        catalog.models[query.model_id],
        query.quants,
        query.contexts,
        depth=query.depth,
        prompt=query.prompt,
        framework=query.framework,
        kv_type=query.kv_type,
        backend=_still_runs(query.backend, setup.gpu, setup.os, catalog),
        offload="cpu" if setup.gpu.id == "cpu-only" else _experts_asked(query, catalog),
        cpu_moe_layers=query.cpu_moe_layers if _experts_asked(query, catalog) else None,
        users=query.users,
        ollama_tag=query.ollama_tag,
        gpu_memory_utilization=query.gpu_memory_utilization,
        split_mode=query.split_mode,
        link=query.link,
        ubatch=query.ubatch,
        output=query.output,
    )


def _experts_asked(query: AskQuery, catalog: Catalog) -> str:
    """ "experts" when the pasted command keeps a MoE's experts in RAM (`--n-cpu-moe N`, `--cpu-moe`)."""
    model = catalog.models.get(query.model_id or "")
    return "experts" if query.cpu_moe_layers is not None and model is not None and model.is_moe else ""


def _still_runs(backend: str | None, gpu: Gpu, os_name: str, catalog: Catalog) -> str | None:
    """A follow-up that switches the OS may leave a backend that OS can't run: priced without it."""
    return backend if backend and check_backend(backend, gpu, os_name, catalog).ok else None


def _framework_for(quants: tuple[str, ...], asked: str | None, catalog: Catalog) -> str | None:
    """The framework the asked quant implies when none was named: AWQ/FP8 mean vLLM, MLX means MLX."""
    if asked or not quants:
        return asked
    formats = {catalog.quants[q].format for q in quants}
    if formats == {"serving"} and "vllm" in catalog.frameworks:
        return "vllm"
    if formats == {"mlx"} and "mlx" in catalog.frameworks:
        return "mlx"
    return None


def estimate_for(query: AskQuery, catalog: Catalog) -> Estimate:
    """The estimate behind a reply's query (raises SetupError / KeyError on a query it can't price)."""
    card = priced_card(query.hardware, catalog)
    cpu_only = card.gpu_id is None and query.hardware.cpu in catalog.cpus
    if (card.gpu_id is None and not cpu_only) or query.model_id is None:
        raise KeyError("a card (or a CPU) and a model are needed for an estimate")
    quants = tuple(q for q in query.quants if q in catalog.quants)
    framework = query.framework if query.framework in catalog.frameworks else None
    memory = 0.0 if card.gpu_id is None else float(card.memory_gib or catalog.gpus[card.gpu_id].memory_gib)
    # Mixed cards are priced card by card; any other setup as the one kind of card it prices.
    cards = mixed_cards(query.hardware, catalog) or (CardSpec(card.gpu_id, card.count or 1, memory),)
    # What the reply's language, target and intent are doesn't change the figures: one cache entry.
    key = replace(
        query,
        hardware=replace(query.hardware, cards=cards),
        quants=quants,
        framework=_framework_for(quants, framework, catalog),
        lang="en",
        target="plain",
        intent="general",
        notes=(),
    )
    return _estimate(catalog, key)


# --- the full answer -----------------------------------------------------------------------------


_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.IGNORECASE)


def _said(raw: str, params_b: float) -> str:
    """ "27B" when the question named the model only by a size close to this model's."""
    for m in _SIZE.finditer(raw):
        size = float(m.group(1))
        if abs(size - params_b) <= 0.06 * params_b:
            return f"{m.group(1)}B"
    return ""


def _reading(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> Reading:
    """How the names were read, for the lines above the table (other readings, the words used)."""
    model_res, gpu_res = parsed.model, parsed.gpu
    assert model_res is not None and gpu_res is not None and query.model_id is not None
    also = tuple(catalog.models[m].name for m in model_res.also if m in catalog.models)
    model = catalog.models[query.model_id]
    said = _said(parsed.raw, model.params_b) if also and model_res.candidates[0][1] < 100 else ""
    return replace(_card_reading(gpu_res, catalog), also=also, said=said)


def _card_reading(gpu_res: Resolution, catalog: Catalog) -> Reading:
    """How the card name was read: its other sizes sold under that name and what to type for them."""
    gpu_also = tuple(catalog.gpus[g].name for g in gpu_res.also if g in catalog.gpus)
    return Reading(gpu_also=gpu_also, gpu_hint=_memory_hint(gpu_res, catalog))


def _memory_hint(gpu_res: Resolution, catalog: Catalog) -> str:
    """ "80g" when the card read ("a100": the 40 GB) has a sibling of another memory size, the
    words that price that one instead."""
    read = catalog.gpus.get(gpu_res.best_id or "")
    other = next((catalog.gpus[g] for g in gpu_res.also if g in catalog.gpus), None)
    if read is None or other is None or other.memory_gib == read.memory_gib or read.unified_memory:
        # A Mac chip's memory is chosen at purchase, whatever its core count: the size typed
        # ("m4 max 128g") is read on its own, not through a sibling.
        return ""
    return f"{other.memory_gib:g}g"


@lru_cache(maxsize=1024)
def _full_text(catalog: Catalog, query: AskQuery, reading: Reading, anchors: AnchorIndex | None) -> str:
    # The same question (same reading) gets the same text: render once, serve from memory after.
    # An anchor index hashes by its version, so an approved or withdrawn anchor is a new key.
    est = estimate_for(query, catalog)
    if anchors is None:
        return with_fit_lead(est, query, compact_reply(est, catalog, query, reading), catalog)
    est, calibration = calibrate(est, anchors, catalog)
    section = anchor_section(est, anchors, catalog, query.lang, calibration, query.quants)
    # A fit question ("will it run") leads with the verdict (core/ask/intent_answer.py).
    return with_fit_lead(est, query, compact_reply(est, catalog, query, reading, anchors=section), catalog)


_seen_anchor_version = 0


def _use_index(anchors: AnchorIndex | None) -> None:
    """Drop cached replies when a new anchor index arrives: they were rendered with the old one and
    would otherwise keep every old index alive as part of their cache keys."""
    global _seen_anchor_version
    if anchors is not None and anchors.version != _seen_anchor_version:
        _seen_anchor_version = anchors.version
        _full_text.cache_clear()


@lru_cache(maxsize=256)
def _model_text(catalog: Catalog, model_id: str, lang: Lang, target: str) -> str:
    return _text(model_overview(catalog.models[model_id], catalog, lang), target)


@lru_cache(maxsize=256)
def _gpu_text(catalog: Catalog, card: CardSpec, os_name: str | None, lang: Lang, target: str) -> str:
    assert card.gpu_id is not None
    gpu = catalog.gpus[card.gpu_id]
    setup = build_setup(gpu, catalog, card.count, card.memory_gib, os_name)
    title = _setup_name(gpu.name, setup.memory_gib, gpu.memory_gib, setup.count)
    return _text(gpu_overview(setup, title, catalog, lang), target)


def clear_caches() -> None:
    """Forget cached estimates and replies (after a catalog reload, or in benchmarks)."""
    for fn in (_estimate, _full_text, _model_text, _gpu_text, _read_query, _card_name_patterns):
        fn.cache_clear()
    clear_intent_caches()


# --- the decision --------------------------------------------------------------------------------


def _family_pick(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> tuple[str, ...]:
    """The members of the one family a card question names without a size and asks which of them
    to run ("4060ti 16g 跑 gemma-4 哪个版本合适"); () for any other question."""
    res = parsed.model
    if res is None or _sure_id(res) is not None or _sure_id(parsed.gpu) is None:
        return ()
    top = res.candidates[0][1] if res.candidates else 0.0
    # The near-equal readings only (a far one, "glm-4-32b" for "gemma-4", is not a member asked about).
    ids = [cid for cid, score in res.candidates if cid in catalog.models and score >= top - 10.0]
    families = {catalog.models[cid].family for cid in ids}
    if len(ids) < 2 or len(families) != 1:
        return ()
    words = catalog.tables.get("intents", {}).get("family_pick", {}).get("words", ())
    said = parsed.raw.lower()
    if not any(str(w) in said for w in words):
        return ()
    family = families.pop()
    members = sorted((m for m in catalog.models.values() if m.family == family), key=lambda m: -m.params_b)
    return tuple(m.id for m in members)


def _which_mac(parsed: ParsedQuestion, lang: Lang, catalog: Catalog) -> Doc | None:
    """A Mac named by its product alone ("mac studio qwen3 235b"): ask which chip and memory, with
    the model's memory table under it when the model is clear (what each quant needs picks the size);
    None for any other card."""
    res = parsed.gpu
    if res is None or not res.product or res.best_id is not None:
        return None
    asked = Para(mac_choices_line(res.product, catalog, lang))
    model_id = _sure_id(parsed.model)
    if model_id is None or model_id not in catalog.models:
        return (asked,)
    overview = model_overview(catalog.models[model_id], catalog, lang)
    return (asked, *overview[:-1])  # its last line asks for a card: the line above already does


def _ask_back(parsed: ParsedQuestion, lang: Lang, catalog: Catalog) -> tuple[ReplyStatus, Doc] | None:
    """Ask back when the card or model was named but not clearly; None when both are clear or absent."""
    mac = _which_mac(parsed, lang, catalog)
    if mac is not None:
        return "clarify", mac
    lines: list[Para] = []
    unknown = False
    for res, kind, table in ((parsed.gpu, "gpu", catalog.gpus), (parsed.model, "model", catalog.models)):
        if res is None or _sure_id(res) is not None:
            continue
        ids = [cid for cid, _ in res.candidates[:CANDIDATES] if cid in table]
        if ids:
            names = candidate_names(ids, catalog, lang, kind)
            lines.append(Para(translate(f"reply.clarify.{kind}", lang, names=names)))
        else:
            unknown = True
            lines.append(Para(translate(f"reply.unknown.{kind}", lang)))
    if not lines:
        return None
    status: ReplyStatus = "error" if unknown and len(lines) == 1 else "clarify"
    return status, tuple(lines)


def _model_only(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> str:
    assert query.model_id is not None
    text = _model_text(catalog, query.model_id, query.lang, query.target)
    card = _unknown_card(parsed.raw, catalog)
    if card:
        note = _text((Para(translate("reply.unknown_card_named", query.lang, name=card)),), query.target)
        text = f"{note}\n{text}"
    return text


def _model_reading(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> Reading:
    """How the model name was read, when no card name was (a card known only by its memory)."""
    res = parsed.model
    if res is None or query.model_id is None:
        return Reading()
    also = tuple(catalog.models[m].name for m in res.also if m in catalog.models)
    said = _said(parsed.raw, catalog.models[query.model_id].params_b) if also else ""
    return Reading(also=also, said=said)


def _with_card_reading(text: str, parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> str:
    """An intent's reply (how many users, how many cards, time to first token) with the line the
    table answer has for a card typed without its memory ("a100": the 40 GB read, the 80 GB said)."""
    res = parsed.gpu
    read = catalog.gpus.get(res.best_id or "") if res is not None else None
    if res is None or read is None or not res.also:
        return text
    line = _text((Para(card_reading_line(read.name, _card_reading(res, catalog), query.lang)),), query.target)
    # Second, as in the table answer: the first line stays the answer the intent asked for.
    head, _, rest = text.partition("\n")
    combined = f"{head}\n{line}\n{rest}" if rest else f"{head}\n{line}"
    return combined if fits(combined, query.target) else text


def _decide_intent(
    parsed: ParsedQuestion, query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None
) -> tuple[ReplyStatus, str, tuple[dict[str, Any], ...], dict[str, Any] | None] | None:
    """An intent's own reply (which model, which hardware, compare, TTFT, concurrency, how many
    cards), or the full answer for a card known only by its memory; None: the usual decision."""
    family = _family_pick(parsed, query, catalog)
    if family:
        sizes = family_reply(query, family, catalog)
        return "answer", truncate(sizes.doc, query.target), sizes.rows, sizes.plan
    if _ask_back(parsed, query.lang, catalog) is not None:
        return None
    try:
        got = intent_reply(query, catalog)
        if got is not None:
            return (
                "answer",
                _with_card_reading(truncate(got.doc, query.target), parsed, query, catalog),
                got.rows,
                got.plan,
            )
        if query.hardware.first.assumed and query.model_id is not None:
            line = _text((Para(assumed_card_line(query, catalog, query.lang)),), query.target)
            full = _full_text(catalog, query, _model_reading(parsed, query, catalog), anchors)
            return "answer", f"{line}\n{full}", (), None
    except SetupError as exc:
        reason = translate("reply.error", query.lang, reason=str(exc))
        return "error", _text((Para(reason),), query.target), (), None
    return None


def _decide(
    parsed: ParsedQuestion, query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None = None
) -> tuple[ReplyStatus, str]:
    lang, target = query.lang, query.target
    if parsed.gpu is None and parsed.model is None:
        return "help", _text((Para(translate("reply.help", lang)),), target)
    asked = _ask_back(parsed, lang, catalog)
    if asked is not None:
        return asked[0], _text(asked[1], target)
    if parsed.gpu is None and not (query.hardware.cpu and query.model_id):
        return "answer", _model_only(parsed, query, catalog)
    try:
        if parsed.model is None:
            return "answer", _gpu_text(catalog, query.hardware.first, query.os, lang, target)
        reading = (
            _reading(parsed, query, catalog)
            if parsed.gpu is not None
            else _model_reading(parsed, query, catalog)
        )
        return "answer", _full_text(catalog, query, reading, anchors)
    except SetupError as exc:
        return "error", _text((Para(translate("reply.error", lang, reason=str(exc))),), target)


def _unknown_card(raw: str, catalog: Catalog) -> str:
    """The card-like name in a question whose card the catalog didn't recognise ("" if none)."""
    pattern = card_like_pattern(catalog)
    m = pattern.search(raw) if pattern else None
    return " ".join(m.group(0).split()) if m else ""


def _setup_name(name: str, memory: float, default: float, count: int) -> str:
    if memory != default:
        name += f" {memory:g}GB"
    return f"{count}× {name}" if count > 1 else name


def answer(
    text: Any,
    catalog: Catalog,
    lang: Lang | None = None,
    target: str = "plain",
    anchors: AnchorIndex | None = None,
    default_os: str | None = None,
) -> Reply:
    """The reply to one chat question. Never raises; the text fits one message of `target`.

    `lang`: the reply's language as the caller decided it (a chat adapter's router); None decides
    it from the question alone (`decide_language`, English unless it is written in Chinese).
    `anchors`: approved measurements; when given, a full answer (card + model) is calibrated by the
    community ones on that card and shows the measured-anchor lines (or the call for them).
    `default_os`: the OS to assume when the question names none (a deployment's setting); without
    it the card decides (GeForce: Windows desktop, datacenter: headless Linux, Apple: macOS)."""
    raw = text if isinstance(text, str) else ""
    # A pasted llama-bench asking "is this normal?" is read whole, before the question is cut to size.
    bench = pasted_bench_answer(raw, catalog, lang, target, anchors, default_os)
    if bench is not None:
        return Reply(bench.status, None, text=bench.text, rows=bench.rows)
    raw = raw[:MAX_INPUT]
    chosen: Lang = lang or decide_language(raw, None, "en")
    query: AskQuery | None = None
    candidates: dict[str, list[str]] = {"gpu": [], "model": []}
    rows: tuple[dict[str, Any], ...] = ()
    need: HubNeed | None = None
    plan: dict[str, Any] | None = None
    try:
        parsed, need, query = _read_query(raw, catalog, chosen, target, default_os)
        candidates = _candidates(parsed)
        _use_index(anchors)
        by_intent = None if need is not None else _decide_intent(parsed, query, catalog, anchors)
        if need is not None:
            status, reply = hub_pending(need, query, catalog)
        elif by_intent is not None:
            status, reply, rows, plan = by_intent
            query = _compared_framework(query, plan)
        else:
            status, reply = _decide(parsed, query, catalog, anchors)
            if status == "answer" and _cpu_only(query, catalog):
                rows = _cpu_only_rows(query, catalog, anchors)
            plan = _plan(query, catalog, anchors) if status == "answer" else None
    except Exception:  # noqa: BLE001 - a chat bot answers calmly, whatever went wrong inside
        status, reply = "error", _error_text(chosen, target)
    model = _model_named(query, catalog)
    return Reply(status, query, candidates, _with_notes(query, status, reply), rows, need, model, plan)


def _compared_framework(query: AskQuery, plan: dict[str, Any] | None) -> AskQuery:
    """A framework comparison's reply runs the faster one's command: its query (the follow-up
    buttons' "in full", "Frameworks", "On Linux") is that framework's, not the first one named."""
    if not frameworks_compared(query) or plan is None or plan.get("framework") not in query.frameworks:
        return query
    return replace(query, framework=str(plan["framework"]))


@lru_cache(maxsize=1024)
def _read_query(
    raw: str, catalog: Catalog, lang: Lang, target: str, default_os: str | None
) -> tuple[ParsedQuestion, HubNeed | None, AskQuery]:
    """The question read into its query: pure in its arguments (frozen values), so a question asked
    again (chat groups repeat combinations) is read once."""
    parsed, need = _model_step(parse_question(raw, catalog), catalog)
    query = with_intent(parsed, query_of(parsed, lang, target, catalog, default_os), catalog)
    return parsed, need, _with_output(parsed, query, catalog)


def _with_output(parsed: ParsedQuestion, query: AskQuery, catalog: Catalog) -> AskQuery:
    """ "2000 in 500 out", "输出 500" (issue 23): the reply length asked about; the phrase's numbers are
    one request's lengths, not contexts ("2k in" was also read as a 2K context: dropped). Also the
    decode speed wanted ("at least 20 tok/s")."""
    details = intent_details(parsed.raw, catalog, query.intent)
    if details.target_tps is not None:
        query = replace(query, target_tps=details.target_tps)
    if details.output is None:
        return query
    contexts = tuple(c for c in query.contexts if c not in details.io_tokens)
    return replace(query, output=details.output, contexts=contexts)


# --- the model-resolution step: names the catalog doesn't hold (issue 9) -------------------------


def _cpu_only(query: AskQuery, catalog: Catalog) -> bool:
    hw = query.hardware
    return hw.first.gpu_id is None and hw.cpu in catalog.cpus and query.model_id in catalog.models


def _cpu_only_rows(
    query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None
) -> tuple[dict[str, Any], ...]:
    """A CPU-only answer's rows for `ask --json`: the estimate's own rows (the `estimate --json` row
    objects, calibrated as the text is), each saying its memory figures are system RAM."""
    from core.estimator.serialize import row_dict

    est = estimate_for(query, catalog)
    if anchors is not None:
        est = calibrate(est, anchors, catalog)[0]
    return tuple(row_dict(est, r, catalog, query.lang) | {"memory": "ram"} for r in est.rows)


def _plan(query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None) -> dict[str, Any] | None:
    """A full answer's plan for `ask --json`, from the estimate its text was rendered from (calibrated
    the same way), so its command is the reply's `$` line; None for a reply with no estimate."""
    from core.estimator.serialize import plan_dict

    if not (query.complete or _cpu_only(query, catalog)):
        return None
    est = estimate_for(query, catalog)
    if anchors is not None:
        est = calibrate(est, anchors, catalog)[0]
    return plan_dict(est, catalog, query.lang, output=query.output)


def _model_step(parsed: ParsedQuestion, catalog: Catalog) -> tuple[ParsedQuestion, HubNeed | None]:
    """The parsed question with its model reading held to the Hub rule (core.understanding.resolve
    .model_need): a neighbour that lacks part of the typed name is never answered in its place."""
    res, need = model_need(_without_cards(parsed, catalog), parsed.model, catalog)
    if res is parsed.model:
        return parsed, need
    return replace(parsed, model=res), need


def _without_cards(parsed: ParsedQuestion, catalog: Catalog) -> str:
    """The question with the names of the cards it was read to name blanked: their words ("RTX PRO
    6000" before a model) are not part of a model's typed name."""
    raw = parsed.raw
    for card in parsed.cards:
        if card.res.best_id in catalog.gpus and card.res.confident:
            for pattern in _card_name_patterns(card.res.best_id or "", catalog):
                # a stop, not a space: the words either side are two runs, not one name
                raw = pattern.sub(lambda m: ";" + " " * (len(m.group(0)) - 1), raw)
    return raw


@lru_cache(maxsize=512)
def _card_name_patterns(gpu_id: str, catalog: Catalog) -> tuple[re.Pattern[str], ...]:
    """A card's multi-word names, longest first, compiled once per card (a bare "4090" is read as a
    card already)."""
    gpu = catalog.gpus[gpu_id]
    names = sorted((gpu.name, *gpu.aliases), key=len, reverse=True)
    return tuple(re.compile(re.escape(n), re.IGNORECASE) for n in names if len(n) >= 4 and " " in n)


def _model_named(query: AskQuery | None, catalog: Catalog) -> tuple[str, str] | None:
    if query is None or query.model_id is None or query.model_id not in catalog.models:
        return None
    model = catalog.models[query.model_id]
    return model.name, model.hf_repo


def hub_pending(need: HubNeed, query: AskQuery, catalog: Catalog, why: str = "") -> tuple[ReplyStatus, str]:
    """The reply while a name is not in the catalog and no Hub answered it: what was looked for,
    why the Hub didn't answer (`why`: a sentence, default "no Hub is configured"), and the catalog's
    nearest readings, said to be other models."""
    lang = query.lang
    reason = why or translate("hub.why.not_configured", lang)
    lines = [Para(translate(f"hub.unknown.{need.kind}", lang, name=need.name, why=reason))]
    return "error", _text(tuple(lines), query.target)


# --- follow-ups ----------------------------------------------------------------------------------


def _view(est: Estimate, view: str, quant: str | None, catalog: Catalog, lang: Lang) -> Doc | None:
    from core.render import detail

    if view == "quant":
        return detail.quant_detail(est, quant, catalog, lang)
    if view == "frameworks":
        return detail.frameworks_view(est, quant, catalog, lang)
    if view == "speculative":
        return detail.speculative_view(est, quant, catalog, lang)
    return None


def follow_up(
    query: AskQuery,
    view: str,
    catalog: Catalog,
    quant: str | None = None,
    anchors: AnchorIndex | None = None,
) -> Reply:
    """A detail view for an earlier answer: "quant" (one quantization in full), "frameworks",
    "speculative"; in the query's language, for its target. Never raises. With `anchors`, speeds are
    calibrated as in `answer()` and the measured-anchor lines follow the view."""
    lang, target = query.lang, query.target
    try:
        est = estimate_for(query, catalog)
        section: tuple[Part, ...] = ()
        if anchors is not None:
            est, calibration = calibrate(est, anchors, catalog)
            section = anchor_section(est, anchors, catalog, lang, calibration, (quant,) if quant else ())
        doc: Doc | None
        if view == "sources":
            from core.render.sources import sources_view

            # Where each figure came from; the anchor lines are the links themselves here.
            doc, section = sources_view(est, catalog, lang, anchors), ()
        else:
            doc = _view(est, view, quant, catalog, lang)
        if doc is None:
            return Reply("help", query, {}, _text((Para(translate("reply.help", lang)),), target))
        return Reply("answer", query, {}, truncate((*doc, *section), target))
    except Exception:  # noqa: BLE001 - see answer()
        return Reply("error", query, {}, _error_text(lang, target))


def answer_query(query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None = None) -> Reply:
    """The full answer for an earlier reply's query, e.g. after a button switched its OS or KV cache
    type (`dataclasses.replace(query, kv_type="q8_0")`). Never raises."""
    try:
        _use_index(anchors)
        return Reply("answer", query, {}, _full_text(catalog, query, Reading(), anchors))
    except Exception:  # noqa: BLE001 - see answer()
        return Reply("error", query, {}, _error_text(query.lang, query.target))


def chart(query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None = None) -> bytes:
    """PNG chart for an earlier answer, labelled in the query's language; raises ChartUnavailable
    when matplotlib is not installed."""
    from core.render.chart import chart_png

    est = estimate_for(query, catalog)
    if anchors is not None:
        est = calibrate(est, anchors, catalog)[0]
    return chart_png(est, query.lang, catalog=catalog)  # catalog: a one-cell answer gets its neighbours


__all__ = [
    "AskQuery",
    "Reply",
    "answer",
    "answer_query",
    "chart",
    "clear_caches",
    "estimate_for",
    "follow_up",
    "query_of",
    "setup_title",
]
