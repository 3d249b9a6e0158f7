"""A pasted llama-bench asked about: "is this normal for my 3090?", "这速度正常吗", "too slow?".

The paste is read by the /submit parser (core/community/pasted.py: the markdown table, or the CSV /
JSON / JSONL llama-bench prints), its fixed model line ("qwen3moe 30B.A3B Q4_K - Medium": the
architecture, a rounded size and the file type) with the architecture-and-size reading /submit uses
(core/community/arch_model.py). The card comes from the question's words, else from the paste's
device lines or record; with neither, the reply asks which card ran it. Each pp / tg row is then put
against the estimator's own range for that card, model, quant, backend and depth
(core/ask/estimate_request.run_query, calibrated by community anchors where the caller has them):
inside the range is normal, below it is on the low side (with what practitioners check first), above
it is above the estimate. A table pasted with another question ("what about 70b?") is not this
module's: `pasted_bench_answer` returns None and the usual answer runs.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.anchors.anchor_index import AnchorIndex
from core.anchors.calibrate import NONE as NOT_CALIBRATED
from core.anchors.calibrate import CalibrationInfo, calibrate
from core.ask.estimate_request import QueryError, run_query
from core.catalog.kv_cache import KV_CACHE_TYPES
from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.community.arch_model import resolve_arch_model
from core.community.pasted import Pasted, PastedRun, read_bench_records, read_pasted
from core.estimator.estimate import Estimate, Range
from core.estimator.frameworks import backend_id, backend_names
from core.estimator.setup import SetupError
from core.i18n import Lang, translate
from core.render.anchors import calibration_line
from core.render.compact import setup_title
from core.render.doc import Doc, Para, render_first_fitting
from core.render.fmt import num, speed_range
from core.understanding.language import decide_language
from core.understanding.parse import parse_question
from core.understanding.question import ParsedQuestion
from core.understanding.resolve import resolve_gpu, resolve_model

log = logging.getLogger(__name__)

Verdict = Literal["normal", "low", "high"]
Phase = Literal["prefill", "decode"]

MAX_RUNS = 6  # runs compared in one reply: a sweep of dozens would not fit a chat message
# A model the question names is the paste's own when its size is within this share of the printed
# parameter count (llama-bench prints "8.03 B"; a fine-tune of another size is another model).
SAME_SIZE = 0.10
BARE_CARD_WORDS = 3  # "my 3090:", "on my 4090" above a paste: asking about it, though no question word
N_GEN_DEFAULT = 128  # llama-bench's default tg length, for the context a tg-only run needs

# What asks "is this normal?" of a pasted run, in the words people use (English and Chinese). A
# table with a question not among these ("what about 70b?") keeps the usual answer.
_ASKS = re.compile(
    r"\b(?:normal|expected|typical|reasonable|realistic|sane|on par|underperform\w*|sanity.?check\w*)\b"
    r"|\b(?:too|so|very|really|quite|kinda)\s+(?:slow|low)\b"
    r"|\b(?:is|are|does|do|was|were|seems?|looks?|sounds?)\b[^.?!\n]{0,40}?"
    r"\b(?:good|ok|okay|fine|right|correct|bad|slow|low|fast|decent|alright|off)\b"
    r"|\bshould (?:i|it|this|that|they) (?:be )?(?:get|getting|expect|faster|higher)\b"
    r"|\bhow (?:does|do) (?:this|these|it|that) (?:compare|look|stack)"
    r"|\bwhat do you think\b|\bany good\b|\bgood enough\b"
    r"|正常|对吗|对不对|合理|偏低|偏慢|太慢|太低|慢吗|低吗|快吗|够快|达标|有问题吗|怎么样|行不行|靠谱"
    r"|符合预期|什么水平|算快|算慢|这速度|这个速度",
    re.I,
)
# Lines of tool output around the numbers (table rows, build and log lines, CSV and JSON): what is
# left is what the person wrote.
_TOOL_LINE = re.compile(
    r"^[ \t]*(?:\||```|build:|ggml_\w+|llama_\w+|load_backend|register_backend|print_info|load_tensors"
    r"|main:|system_info|Device \d+:|\"\w+\"[ \t]*:|[\[\]{}],?[ \t]*$|\{.*\"avg_ts\")"
    r"|^[^\n]*(?:,[^\n]*){8,}$",
)
_NOTHING = re.compile(r"^[\s?？!！.。,，:：;；~\-—]*$")


@dataclass(frozen=True, slots=True)
class BenchAnswer:
    """The reply: "answer" (each row compared) or "clarify" (which card / model / quant it was)."""

    status: Literal["answer", "clarify"]
    text: str
    rows: tuple[dict[str, Any], ...] = ()  # one object per compared row, for `ask --json`


@dataclass(frozen=True, slots=True)
class _Where:
    """The machine the bench ran on: a card (how many, which memory size) or a CPU alone."""

    gpu_id: str | None  # None: a CPU-only run (the CPU is among `host`)
    count: int = 1
    memory_gib: float | None = None
    # What the question says of the rest of the box, as estimate-request fields: the OS, the host
    # RAM and its kind, the CPU ("4090 + 64gb ram": a model larger than the card is priced on it).
    host: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class _Reading:
    """What a run's model line was read as."""

    model_id: str
    quant: str
    printed: str  # as llama-bench printed it, file type removed ("qwen3moe 30B A3B")
    same_shape: tuple[str, ...] = ()  # other catalog models of the same shape: the same figures


@dataclass(frozen=True, slots=True)
class _Row:
    """One pp or tg row against its estimate (None: no estimate, the card holds none of it)."""

    test: str  # "pp512", "tg128 @ d4096"
    phase: Phase
    measured: float
    estimate: Range | None
    verdict: Verdict | None


@dataclass(frozen=True, slots=True)
class _Compared:
    """One run compared: its reading, what was priced and each of its rows."""

    run: PastedRun
    reading: _Reading
    est: Estimate
    rows: tuple[_Row, ...]
    asked_backend: str | None  # the table's backend when it can't drive the card (priced without it)
    calibration: CalibrationInfo
    label: str = ""  # the settings that tell it apart from the other runs of the same model
    # It doesn't fit the card by the estimate, so it was priced as llama.cpp's --fit would run it
    # (a MoE's experts, else whole layers, in system RAM): how a run like `-ncmoe` got its numbers.
    fitted: bool = False


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the question around the paste says (None: nothing but the paste)."""

    parsed: ParsedQuestion | None
    lang: Lang
    target: str


# --- the entry point -----------------------------------------------------------------------------


def pasted_bench_answer(
    text: str,
    catalog: Catalog,
    lang: Lang | None = None,
    target: str = "plain",
    anchors: AnchorIndex | None = None,
    default_os: str | None = None,
) -> BenchAnswer | None:
    """The comparison when `text` holds a llama-bench paste and asks whether it is normal; None for
    anything else (no paste, another question), which the usual answer then takes. Never raises."""
    if not isinstance(text, str) or not text:
        return None
    text = text[: sections(catalog).submit.submit.text_max_chars]  # what /submit reads at most
    try:
        pasted = _bench(text, catalog)
        if pasted is None:
            return None
        asked = _asked(text, catalog, lang or decide_language(text, None, "en"), target)
        if asked is None:
            return None
        return _answer(pasted, asked, catalog, anchors, default_os)
    except Exception:  # noqa: BLE001 - the usual answer takes over; the fault is logged, not shown
        log.exception("pasted llama-bench comparison failed")
        return None


def _bench(text: str, catalog: Catalog) -> Pasted | None:
    """llama-bench output in the text (markdown, CSV or JSON) with at least one speed in it."""
    pasted = read_pasted(text, catalog)
    if pasted is None or not pasted.runs or pasted.runs[0].tool != "llama-bench":
        pasted = read_bench_records(text, catalog)
    if pasted is None or not any(r.decode_tps or r.prefill_tps for r in pasted.runs):
        return None
    return pasted


def question_words(text: str) -> str:
    """The text without its tool output: the person's own words around the paste."""
    kept = [line for line in text.splitlines() if not _TOOL_LINE.match(line)]
    return "\n".join(kept).strip()


def _asked(text: str, catalog: Catalog, lang: Lang, target: str) -> _Asked | None:
    """The question, when it asks whether the paste is normal (or asks nothing else: a bare paste,
    or one with only the card named above it); None for another question."""
    words = question_words(text)
    parsed = parse_question(words, catalog) if not _NOTHING.match(words) else None
    if parsed is None or _ASKS.search(words):
        return _Asked(parsed, lang, target)
    if parsed.model is None and parsed.gpu is not None and len(words.split()) <= BARE_CARD_WORDS:
        return _Asked(parsed, lang, target)
    return None


# --- reading the paste ---------------------------------------------------------------------------


def _asked_model(asked: _Asked) -> str | None:
    res = asked.parsed.model if asked.parsed is not None else None
    return res.best_id if res is not None and res.confident else None


def _reading(run: PastedRun, asked: _Asked, catalog: Catalog) -> _Reading | Para | None:
    """The run's model and quant; a Para asking which, when the line doesn't say; None when the
    question names another model (then it asks about that one, not about the paste)."""
    printed = run.model or ""
    found = _model_of(printed, run, asked, catalog)
    if found is None or isinstance(found, Para):
        return found
    model_id, others = found
    quant = run.quant or (asked.parsed.quants[0] if asked.parsed and asked.parsed.quants else None)
    if quant is None:
        name = catalog.models[model_id].name
        return Para(translate("pasted_bench.unknown_quant", asked.lang, model=name))
    return _Reading(model_id, quant, printed, others)


def _model_of(
    printed: str, run: PastedRun, asked: _Asked, catalog: Catalog
) -> tuple[str, tuple[str, ...]] | Para | None:
    """(model id, other models of its shape) for the printed line, read with its size and params
    columns as /submit reads it; the question's own model when it has that shape."""
    arch = resolve_arch_model(printed, run.params_b, run.size_gib, run.quant, catalog) if printed else None
    ids = tuple(c for c, _ in arch.candidates) if arch is not None else ()
    named = _asked_model(asked)
    if named is not None:
        # The reading of the printed shape decides; only where it found nothing, the printed size.
        # A model the question named needs no "priced as" note.
        other = named not in ids if arch is not None else not _same_size(named, run, catalog)
        return None if other else (named, ())
    if arch is not None and arch.confident and arch.best_id is not None:
        return arch.best_id, tuple(i for i in ids if i != arch.best_id)
    return _unread_model(printed, run, ids, asked.lang, catalog)


def _same_size(model_id: str, run: PastedRun, catalog: Catalog) -> bool:
    model = catalog.models.get(model_id)
    if model is None or run.params_b is None:
        return model is not None and run.params_b is None  # nothing printed to check against
    return abs(model.params_b - run.params_b) <= SAME_SIZE * run.params_b


def _unread_model(
    printed: str, run: PastedRun, ids: tuple[str, ...], lang: Lang, catalog: Catalog
) -> tuple[str, tuple[str, ...]] | Para:
    """A model line the architecture reading left open: several shapes fit it, or none did (then a
    plain name reading, checked against the printed size, may still find it)."""
    if len(ids) > 1:
        closest = ", ".join(catalog.models[i].name for i in ids[:3])
        return Para(translate("pasted_bench.which_model", lang, printed=printed, closest=closest))
    res = resolve_model(printed, catalog) if printed else None
    if res is not None and res.confident and res.best_id and _same_size(res.best_id, run, catalog):
        return res.best_id, ()
    params = f"{run.params_b:g}" if run.params_b is not None else "?"
    return Para(translate("pasted_bench.unknown_model", lang, printed=printed or "?", params=params))


def _host(parsed: ParsedQuestion | None, default_os: str | None) -> tuple[tuple[str, Any], ...]:
    """The question's OS, host RAM and CPU as estimate-request fields (the deployment's OS where the
    question names none)."""
    fields: list[tuple[str, Any]] = []
    if parsed is not None:
        said = (
            ("ram", parsed.host_ram_gib),
            ("ram_type", parsed.host_ram_type),
            ("ram_channels", parsed.host_ram_channels),
            ("cpu", parsed.cpu),
        )
        fields += [(k, v) for k, v in said if v is not None]
    os_name = (parsed.os if parsed is not None else None) or default_os
    return (*fields, ("os", os_name)) if os_name else tuple(fields)


def _where(asked: _Asked, pasted: Pasted, catalog: Catalog, default_os: str | None) -> _Where | Para:
    """The card from the question's words, else from the paste; a Para asking which when neither
    says it surely."""
    parsed = asked.parsed
    host = _host(parsed, default_os)
    if parsed is not None and parsed.gpu is not None:
        res = parsed.gpu
        if res.confident and res.best_id is not None:
            return _Where(res.best_id, parsed.gpu_count, res.memory_gib, host)
        closest = ", ".join(catalog.gpus[c].name for c, _ in res.candidates[:3] if c in catalog.gpus)
        return Para(translate("pasted_bench.which_card", asked.lang, closest=closest or "?"))
    if pasted.gpu:
        res = resolve_gpu(pasted.gpu, catalog)
        if res.confident and res.best_id is not None:
            return _Where(res.best_id, pasted.gpu_count or 1, res.memory_gib, host)
    if parsed is not None and parsed.cpu and _backend(pasted.runs[0], catalog) == "cpu":
        return _Where(None, host=host)
    return Para(translate("pasted_bench.ask_card", asked.lang))


def _backend(run: PastedRun, catalog: Catalog) -> str | None:
    """The backend id the table's column names ("CUDA", "Vulkan", "Metal,BLAS": the first known)."""
    for part in (run.backend or "").split(","):
        found = backend_id(part, catalog)
        if found is not None:
            return found
    return None


# --- pricing -------------------------------------------------------------------------------------


def _query(where: _Where, reading: _Reading, run: PastedRun, catalog: Catalog) -> dict[str, Any]:
    """The run as an estimate request by names: the card, model, quant, depth and prompt it ran."""
    depth = run.depth or 0
    prompt = run.prompt_tokens or 512
    raw: dict[str, Any] = {
        "model": reading.model_id,
        "quant": [reading.quant],
        "framework": "llama.cpp",
        "depth": depth,
        "prompt": prompt,
        # llama-bench's context holds the depth, the prompt and the tokens generated: no more.
        "ctx": [depth + (run.prompt_tokens or 0) + (run.gen_tokens or N_GEN_DEFAULT)],
    }
    raw.update(where.host)
    if where.gpu_id is not None:
        raw.update(gpu=where.gpu_id, count=where.count)
        if where.memory_gib:
            raw["memory"] = where.memory_gib
    if run.kv_type in KV_CACHE_TYPES:
        raw["kv_type"] = run.kv_type
    layers = catalog.models[reading.model_id].layers
    if where.gpu_id is not None and run.n_gpu_layers is not None and 0 <= run.n_gpu_layers < layers:
        raw.update(offload="layers", gpu_layers=run.n_gpu_layers)  # -ngl below the model: priced so
    return raw


def _estimate(raw: dict[str, Any], backend: str | None, catalog: Catalog) -> tuple[Estimate, str | None]:
    """The estimate on the table's backend; one the card can't run is priced on the card's own
    (returned second, to say so) rather than not at all."""
    if backend is None or backend == "cpu":
        return run_query(raw, catalog), None
    try:
        return run_query({**raw, "backend": backend}, catalog), None
    except QueryError:
        return run_query(raw, catalog), backend


def _verdict(measured: float, r: Range) -> Verdict:
    if measured < r.low:
        return "low"
    return "high" if measured > r.high else "normal"


def _test(kind: str, tokens: int | None, depth: int | None) -> str:
    name = f"{kind}{tokens}" if tokens else kind
    return f"{name} @ d{depth}" if depth else name


def _rows(run: PastedRun, est: Estimate) -> tuple[_Row, ...]:
    row = est.rows[0]
    out: list[_Row] = []
    if run.prefill_tps:
        r = row.prefill_tps
        test = _test("pp", run.prompt_tokens, run.depth)
        out.append(_Row(test, "prefill", run.prefill_tps, r, _verdict(run.prefill_tps, r) if r else None))
    if run.decode_tps:
        r = row.decode_tps
        test = _test("tg", run.gen_tokens, run.depth)
        out.append(_Row(test, "decode", run.decode_tps, r, _verdict(run.decode_tps, r) if r else None))
    return tuple(out)


def _compare(
    run: PastedRun, reading: _Reading, where: _Where, catalog: Catalog, anchors: AnchorIndex | None
) -> _Compared | None:
    raw = _query(where, reading, run, catalog)
    try:
        est, swapped = _estimate(raw, _backend(run, catalog), catalog)
        fitted = est.rows[0].decode_tps is None and "offload" not in raw and where.gpu_id is not None
        if fitted:
            est, swapped = _estimate({**raw, "offload": "auto"}, _backend(run, catalog), catalog)
    except (QueryError, SetupError, KeyError):
        return None  # a setup the estimator can't price: the run is left out
    info = NOT_CALIBRATED
    if anchors is not None:
        est, info = calibrate(est, anchors, catalog)
    return _Compared(run, reading, est, _rows(run, est), swapped, info, fitted=fitted)


def _labelled(compared: list[_Compared]) -> list[_Compared]:
    """Runs of one model that differ in a setting (fa, ngl, KV type) are named by it."""
    out = []
    for c in compared:
        twins = [o.run for o in compared if o.reading == c.reading]
        parts = [
            f"{name} {value}"
            for name, value, values in (
                ("fa", _on(c.run.flash_attn), {r.flash_attn for r in twins}),
                ("ngl", c.run.n_gpu_layers, {r.n_gpu_layers for r in twins}),
                ("kv", c.run.kv_type, {r.kv_type for r in twins}),
            )
            if len(values) > 1 and value is not None
        ]
        out.append(replace(c, label=", ".join(parts)))
    return out


def _on(flag: bool | None) -> int | None:
    return None if flag is None else int(flag)


# --- the reply -----------------------------------------------------------------------------------


def _answer(
    pasted: Pasted, asked: _Asked, catalog: Catalog, anchors: AnchorIndex | None, default_os: str | None
) -> BenchAnswer | None:
    runs = [r for r in pasted.runs if r.decode_tps or r.prefill_tps]
    readings = [_reading(r, asked, catalog) for r in runs]
    if any(r is None for r in readings):
        return None  # the question names another model: it is about that one
    lang = asked.lang
    first = readings[0]
    if isinstance(first, Para):
        return _clarify((Para(_read_line(runs[0], None, lang, catalog)), first), asked.target)
    where = _where(asked, pasted, catalog, default_os)
    if isinstance(where, Para):
        return _clarify((Para(_read_line(runs[0], first, lang, catalog)), where), asked.target)
    pairs = [(run, r) for run, r in zip(runs, readings, strict=True) if isinstance(r, _Reading)]
    compared = [c for run, r in pairs[:MAX_RUNS] if (c := _compare(run, r, where, catalog, anchors))]
    if not compared:
        return None
    doc = _doc(_labelled(compared), len(pairs) - len(compared), lang, catalog)
    return BenchAnswer("answer", render_first_fitting([doc], asked.target), _rows_json(compared, catalog))


def _clarify(doc: Doc, target: str) -> BenchAnswer:
    return BenchAnswer("clarify", render_first_fitting([doc], target))


def _tps(value: float) -> str:
    """A measured speed as the person will recognise it from the table: 98.7, 4123."""
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def _speeds(run: PastedRun) -> str:
    parts = []
    if run.prefill_tps:
        parts.append(f"{_test('pp', run.prompt_tokens, run.depth)} {_tps(run.prefill_tps)} tok/s")
    if run.decode_tps:
        parts.append(f"{_test('tg', run.gen_tokens, run.depth)} {_tps(run.decode_tps)} tok/s")
    return ", ".join(parts)


def _read_line(run: PastedRun, reading: _Reading | None, lang: Lang, catalog: Catalog) -> str:
    """What was read off the paste, said before asking for what it lacks."""
    backend = _backend(run, catalog)
    shown = backend_names(catalog).get(backend or "", run.backend or "?")
    if reading is None:
        what = run.model or "?"
    else:
        what = f"{catalog.models[reading.model_id].name} {reading.quant}"
    return translate("pasted_bench.read", lang, what=what, backend=shown, speeds=_speeds(run))


def _header(c: _Compared, lang: Lang, catalog: Catalog) -> list[Para]:
    model = catalog.models[c.reading.model_id].name
    backend = backend_names(catalog).get(c.est.backend, c.est.backend)
    params = {"setup": setup_title(c.est), "model": model, "quant": c.reading.quant, "backend": backend}
    out = [Para(translate("pasted_bench.header", lang, **params))]
    if c.reading.same_shape:
        others = ", ".join(catalog.models[i].name for i in c.reading.same_shape[:2] if i in catalog.models)
        out.append(
            Para(
                translate(
                    "pasted_bench.same_shape", lang, printed=c.reading.printed, model=model, others=others
                )
            )
        )
    if c.asked_backend is not None:
        said = backend_names(catalog).get(c.asked_backend, c.asked_backend)
        out.append(Para(translate("pasted_bench.backend_swapped", lang, said=said, used=backend)))
    return out


def _row_line(row: _Row, label: str, lang: Lang) -> str:
    test = f"{row.test}, {label}" if label else row.test
    phase = translate(f"pasted_bench.phase.{row.phase}", lang)
    if row.estimate is None or row.verdict is None:
        return translate(
            "pasted_bench.row_no_estimate", lang, test=test, phase=phase, measured=_tps(row.measured)
        )
    return translate(
        "pasted_bench.row",
        lang,
        test=test,
        phase=phase,
        measured=_tps(row.measured),
        mid=num(row.estimate.mid),
        range=speed_range(row.estimate),
        verdict=translate(f"pasted_bench.verdict.{row.verdict}", lang),
    )


def _advice(compared: list[_Compared], lang: Lang, catalog: Catalog) -> list[Para]:
    """Under the rows: the usual causes when a row is low, and what the table itself shows."""
    out: list[Para] = []
    if any(r.verdict == "low" for c in compared for r in c.rows):
        out.append(Para(translate(_causes(compared[0].est), lang)))
        if any(c.run.flash_attn is False for c in compared):
            out.append(Para(translate("pasted_bench.fa_off", lang)))
    if any(c.fitted for c in compared):
        out.append(Para(translate("pasted_bench.fitted", lang)))
    for c in compared:
        layers = catalog.models[c.reading.model_id].layers
        ngl = c.run.n_gpu_layers
        if c.est.request.offload == "layers" and ngl is not None:
            out.append(Para(translate("pasted_bench.partial", lang, ngl=ngl, layers=layers)))
            break
    info = next((c.calibration for c in compared if c.calibration.applied), None)
    if info is not None:
        out.append(Para(calibration_line(info, lang)))
    return out


def _causes(est: Estimate) -> str:
    """What practitioners check first on this kind of machine: a CPU alone, an Apple chip, a card on
    Linux (said so: no Windows to blame), a card on Windows or an OS not said."""
    setup = est.request.setup
    if setup.gpu.id == "cpu-only":
        return "pasted_bench.low_causes.cpu"
    if setup.gpu.unified_memory and setup.gpu.vendor == "Apple":
        return "pasted_bench.low_causes.apple"
    if setup.os.startswith("linux") and not setup.os_assumed:
        return "pasted_bench.low_causes.linux"
    return "pasted_bench.low_causes"


def _doc(compared: list[_Compared], left_out: int, lang: Lang, catalog: Catalog) -> Doc:
    parts: list[Para] = []
    seen: set[tuple[str, str]] = set()
    for c in compared:
        key = (c.reading.model_id, c.reading.quant)
        if key not in seen:  # one header per model read; its runs' rows below it
            seen.add(key)
            parts += _header(c, lang, catalog)
        parts += [Para(_row_line(row, c.label, lang)) for row in c.rows]
    if left_out > 0:
        parts.append(Para(translate("pasted_bench.more_runs", lang, n=left_out)))
    parts += _advice(compared, lang, catalog)
    parts.append(Para(translate("anchors.call_more", lang)))  # the usual nudge: /submit what you measured
    return tuple(parts)


def _rows_json(compared: list[_Compared], catalog: Catalog) -> tuple[dict[str, Any], ...]:
    out = []
    for c in compared:
        setup = c.est.request.setup
        for row in c.rows:
            r = row.estimate
            out.append(
                {
                    "gpu": setup.gpu.id,
                    "count": setup.count,
                    "model": c.reading.model_id,
                    "quant": c.reading.quant,
                    "backend": c.est.backend,
                    "test": row.test,
                    "phase": row.phase,
                    "measured": row.measured,
                    "low": r.low if r else None,
                    "mid": r.mid if r else None,
                    "high": r.high if r else None,
                    "verdict": row.verdict,
                }
            )
    return tuple(out)
