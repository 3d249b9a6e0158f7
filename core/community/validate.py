"""Check a `/submit` and turn it into measurements ready for moderation.

Steps: `submit_parse` reads the text into raw fields per measurement; `SubmissionForm` (pydantic,
the edge) types them; names are resolved against the catalog; then the checks:
- unknown or ambiguous names are refused with the closest catalog ids;
- a decode speed above the memory-bandwidth ceiling, or a prefill speed above the compute ceiling,
  is physically impossible and refused with both numbers;
- a number far from the estimator's range, a model the estimator says doesn't fit, partial offload,
  batched benchmarks and other caveats are accepted but flagged for the moderator.
Every user-facing sentence is a `Note` (catalogs/messages/submit.toml); constants are in
catalogs/submit.toml.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.community.ceilings import decode_ceiling, peak_tflops, prefill_ceiling, quant_bytes_per_token
from core.community.pasted import MODEL_FROM_ARCH, PARTIAL_OFFLOAD, THROUGHPUT_ONLY
from core.community.submission_form import SubmissionForm, read_form
from core.community.submit_limits import SubmitLimits, engine_version, limits
from core.community.submit_parse import RawRun, parse_submission
from core.estimator.estimate import EstimateRequest, Row, estimate
from core.estimator.setup import SetupError, build_setup
from core.i18n import Note
from core.storage.records import EstimateSnapshot, Measurement
from core.understanding.resolution import Resolution
from core.understanding.resolve import resolve_framework, resolve_gpu, resolve_model, resolve_quant


@dataclass(frozen=True, slots=True)
class Draft:
    measurement: Measurement
    estimate: EstimateSnapshot | None
    flags: tuple[str, ...]  # codes for the moderator, e.g. "far_from_estimate", "no_fit_estimated"
    flag_notes: tuple[Note, ...]  # the same, as Notes with numbers, for the moderator's view


@dataclass(frozen=True, slots=True)
class SubmitReading:
    drafts: tuple[Draft, ...]  # measurements that passed (a paste may hold several)
    problems: tuple[Note, ...]  # why something was refused / what is wrong, specific and friendly
    missing: tuple[str, ...]  # required fields absent: of "gpu", "model", "quant", "decode" (not problems)
    candidates: dict[str, list[str]]  # when a name was ambiguous: field -> catalog ids (closest first)

    @property
    def ok(self) -> bool:
        return bool(self.drafts) and not self.problems and not self.missing


# --- resolution ----------------------------------------------------------------------------------

_HBM = re.compile(r"\bHBM\d?e?\b|\bGDDR\d\w*\b", re.I)


def _display(ids: list[str], table: dict[str, Any]) -> str:
    return ", ".join(f"{getattr(table[i], 'name', i)} ({i})" for i in ids if i in table)


@dataclass(slots=True)
class _Check:
    """Problems and candidates collected while reading one run."""

    problems: list[Note]
    candidates: dict[str, list[str]]

    def unknown(self, kind: str, text: str, res: Resolution, table: dict[str, Any]) -> None:
        ids = [c for c, _ in res.candidates]
        self.candidates[kind] = ids
        code = f"submit.ambiguous_{kind}" if res.found else f"submit.unknown_{kind}"
        self.problems.append(Note(code, {"text": text, "closest": _display(ids[:3], table) or "-"}))


def _resolve(kind: str, raw: RawRun, text: str, catalog: Catalog) -> Resolution:
    if kind in raw.resolved:
        return raw.resolved[kind]
    if kind == "gpu":
        res = resolve_gpu(text, catalog)
        if not res.confident:
            # Log names like "NVIDIA H100 80GB HBM3" carry memory-type words the aliases don't have.
            alt = resolve_gpu(_HBM.sub(" ", text), catalog)
            res = alt if alt.confident else res
        return res
    if kind == "model":
        return resolve_model(text, catalog)
    if kind == "quant":
        return resolve_quant(text, catalog)
    return resolve_framework(text, catalog)


# --- one run -------------------------------------------------------------------------------------


def _row(
    form: SubmissionForm,
    gpu: Gpu,
    model: Model,
    quant: str,
    framework: str,
    memory: float | None,
    kv: KvCacheType,
    catalog: Catalog,
) -> Row:
    lim = limits(catalog)
    depth = form.depth or 0
    context = form.ctx or max(lim.default_context, depth + (form.prompt or 0))
    setup = build_setup(gpu, catalog, form.count or 1, memory, form.os)
    request = EstimateRequest(
        setup=setup,
        model=model,
        quants=(quant,),
        contexts=(context,),
        depth=depth,
        prompt=form.prompt or 512,
        framework=framework,
        kv_type=kv,
    )
    return estimate(request, catalog).rows[0]


def _snapshot(row: Row, catalog: Catalog) -> EstimateSnapshot | None:
    version = engine_version(catalog)
    prefill = row.prefill_tps.mid if row.prefill_tps else None
    if row.decode_tps is not None:
        d = row.decode_tps
        return EstimateSnapshot(d.low, d.mid, d.high, prefill, row.status, version)
    remedy = row.remedy
    if remedy is not None and remedy.decode_mid is not None:
        # Doesn't fit: the estimate is the way out people actually take (offload, KV quant).
        mid = remedy.decode_mid
        return EstimateSnapshot(
            remedy.decode_low or mid, mid, remedy.decode_high or mid, None, row.status, version
        )
    return None


def _gpus_label(gpu: Gpu, count: int) -> str:
    return gpu.name if count == 1 else f"{count}× {gpu.name}"


Flags = list[tuple[str, dict[str, Any]]]  # (flag code, its numbers) for the moderator, in order


@dataclass(frozen=True, slots=True)
class _Names:
    """The four names of one run, resolved (each found and confident when no problem was noted)."""

    gpu: Resolution
    model: Resolution
    quant: Resolution
    framework: Resolution


@dataclass(frozen=True, slots=True)
class _Run:
    """One run with its names resolved and its numbers read: what the checks and the draft use."""

    raw: RawRun
    text: str
    form: SubmissionForm
    gpu: Gpu
    model: Model
    quant: str
    framework: str
    count: int
    memory: float | None
    sizes: tuple[float, ...]  # the memory sizes the card comes in
    kv_est: KvCacheType  # the cache type the estimator prices the run's as
    decode: float
    speculative: bool  # the notes, framework or text mention speculative decoding


def _read_run(raw: RawRun, text: str, catalog: Catalog, check: _Check) -> tuple[Draft | None, set[str]]:
    """A draft for one run, or None with its problems in `check`; also the missing required fields."""
    lim = limits(catalog)
    form, notes, bad = read_form(raw.fields, catalog)
    check.problems.extend(notes)
    values = form.model_dump()
    missing = {k for k in lim.required if values.get(k) is None and k not in bad}
    # Names are resolved even when something else is wrong, so one reply lists every problem.
    names = _resolve_names(raw, form, catalog, check)
    if check.problems or missing or names is None:
        return None, missing
    return _checked_draft(_run(raw, text, form, names, catalog), catalog, check), missing


# --- names ---------------------------------------------------------------------------------------


def _resolve_names(raw: RawRun, form: SubmissionForm, catalog: Catalog, check: _Check) -> _Names | None:
    """Every name the run gives, resolved; the unknown or ambiguous ones noted in `check`. None when
    the GPU, model or quant is absent (the missing fields say so)."""
    gpu_res = _resolved_gpu(raw, form.gpu, catalog, check) if form.gpu is not None else None
    model_res = _resolved_model(raw, form.model, catalog, check) if form.model is not None else None
    quant_res = _resolved_quant(raw, form.quant, catalog, check) if form.quant is not None else None
    fw_res = _resolved_framework(raw, form.framework or "llama.cpp", catalog, check)
    if gpu_res is None or model_res is None or quant_res is None:
        return None
    return _Names(gpu_res, model_res, quant_res, fw_res)


def _resolved_gpu(raw: RawRun, text: str, catalog: Catalog, check: _Check) -> Resolution:
    res = _resolve("gpu", raw, text, catalog)
    if not res.found or not res.confident:
        check.unknown("gpu", text, res, catalog.gpus)
    return res


def _resolved_model(raw: RawRun, text: str, catalog: Catalog, check: _Check) -> Resolution:
    res = _resolve("model", raw, text, catalog)
    ok = res.best_id is not None and res.confident
    if res.best_id is not None and ok and MODEL_FROM_ARCH in raw.caveats:
        # llama-bench names the architecture and size ("llama 8B"): only a reading with no
        # rival and the printed parameter count is taken; otherwise the submitter says model=...
        params_b = catalog.models[res.best_id].params_b
        params_off = raw.params_b is not None and abs(params_b - raw.params_b) > 0.1 * params_b
        ok = not res.also and not params_off
    if not ok:
        check.unknown("model", text, res, catalog.models)
    return res


def _resolved_quant(raw: RawRun, text: str, catalog: Catalog, check: _Check) -> Resolution:
    res = _resolve("quant", raw, text, catalog)
    if not res.found or not res.confident:
        check.unknown("quant", text, res, catalog.quants)
    return res


def _resolved_framework(raw: RawRun, text: str, catalog: Catalog, check: _Check) -> Resolution:
    res = _resolve("framework", raw, text, catalog)
    if not res.found:
        known = ", ".join(sorted(catalog.frameworks))
        check.problems.append(Note("submit.unknown_framework", {"text": text, "known": known}))
        check.candidates["framework"] = [c for c, _ in res.candidates]
    return res


def _found_id(res: Resolution) -> str:
    """The id of a name that resolved (callers check `found` first, through the problems noted)."""
    if res.best_id is None:
        raise ValueError("a name without a catalog id reached the checks")
    return res.best_id


def _run(raw: RawRun, text: str, form: SubmissionForm, names: _Names, catalog: Catalog) -> _Run:
    lim = limits(catalog)
    gpu = catalog.gpus[_found_id(names.gpu)]
    if form.decode is None:
        raise ValueError("a run without a decode speed reached the checks")  # decode is required
    return _Run(
        raw=raw,
        text=text,
        form=form,
        gpu=gpu,
        model=catalog.models[_found_id(names.model)],
        quant=_found_id(names.quant),
        framework=_found_id(names.framework),
        count=form.count or 1,
        memory=form.memory or names.gpu.memory_gib,
        sizes=tuple(sorted(set(gpu.memory_options_gib or ()) | {gpu.memory_gib})),
        kv_est=lim.kv.priced(form.kv),
        decode=form.decode,
        speculative=bool(lim.speculative.search(" ".join(filter(None, (form.notes, form.framework, text))))),
    )


# --- checks --------------------------------------------------------------------------------------


def _checked_draft(run: _Run, catalog: Catalog, check: _Check) -> Draft | None:
    """The run's draft with its flags, or None with the reason it is refused in `check`."""
    lim = limits(catalog)
    problem = _setup_problem(run)
    if problem is not None:
        check.problems.append(problem)
        return None
    flags: Flags = []
    # Physical ceilings: refused, whatever the estimate says.
    above = _above_decode_ceiling(run, lim, catalog)
    if above is not None:
        if not run.speculative:
            check.problems.append(Note("submit.above_ceiling", above))
            return None
        flags.append(("speculative_above_ceiling", above))
    problem = _above_prefill_ceiling(run, lim)
    if problem is not None:
        check.problems.append(problem)
        return None
    try:
        row = _row(run.form, run.gpu, run.model, run.quant, run.framework, run.memory, run.kv_est, catalog)
    except SetupError as exc:
        check.problems.append(Note("submit.bad_setup", {"reason": str(exc)}))
        return None
    snap = _snapshot(row, catalog)
    flags += _estimate_flags(run, row, snap, lim)
    flags += _caveat_flags(run, above_ceiling=above is not None)
    codes = tuple(dict.fromkeys(code for code, _ in flags))
    notes_out = tuple(Note(f"submit.flag.{code}", params) for code, params in flags)
    return Draft(_measurement(run, lim), snap, codes, notes_out)


def _setup_problem(run: _Run) -> Note | None:
    """A memory size the card doesn't come in, or a depth beyond the context."""
    memory, form = run.memory, run.form
    if memory is not None and not any(abs(memory - s) <= 0.5 for s in run.sizes):
        sizes = ", ".join(f"{s:g}" for s in run.sizes)
        return Note("submit.memory_not_offered", {"gpu": run.gpu.name, "value": memory, "sizes": sizes})
    if form.depth is not None and form.ctx is not None and form.depth > form.ctx:
        return Note("submit.depth_over_context", {"depth": form.depth, "ctx": form.ctx})
    return None


def _above_decode_ceiling(run: _Run, lim: SubmitLimits, catalog: Catalog) -> dict[str, Any] | None:
    """The numbers for the refusal when the decode speed beats memory bandwidth; None when it doesn't."""
    depth = run.form.depth or 0
    engine = catalog.frameworks[run.framework].engine
    ceiling = decode_ceiling(run.gpu, run.count, run.model, run.quant, depth, run.kv_est, engine, catalog)
    if run.decode <= ceiling * lim.ceiling_margin:
        return None
    per_token = quant_bytes_per_token(run.model, run.quant, depth, run.kv_est, catalog)
    return {
        "decode": run.decode,
        "gpus": _gpus_label(run.gpu, run.count),
        "size_gb": round(per_token / 1e9, 1),
        "max": round(ceiling),
        "bandwidth": run.gpu.bandwidth_gbs,
    }


def _above_prefill_ceiling(run: _Run, lim: SubmitLimits) -> Note | None:
    """The refusal when the prefill speed beats the card's peak matrix rate; None when it doesn't."""
    prefill = run.form.prefill
    if prefill is None:
        return None
    p_ceiling = prefill_ceiling(run.gpu, run.count, run.model)
    if p_ceiling is None or prefill <= p_ceiling * lim.ceiling_margin:
        return None
    return Note(
        "submit.prefill_above_ceiling",
        {
            "prefill": prefill,
            "gpus": _gpus_label(run.gpu, run.count),
            "tflops": peak_tflops(run.gpu),
            "params_b": run.model.active_params_b,
            "max": round(p_ceiling),
        },
    )


def _estimate_flags(run: _Run, row: Row, snap: EstimateSnapshot | None, lim: SubmitLimits) -> Flags:
    """Numbers far from the estimate's range, and a setup the estimator says doesn't fit."""
    flags: Flags = []
    decode = run.decode
    if snap is not None and not (lim.far_low * snap.decode_low <= decode <= lim.far_high * snap.decode_high):
        flags.append(
            (
                "far_from_estimate",
                {"decode": decode, "low": snap.decode_low, "mid": snap.decode_mid, "high": snap.decode_high},
            )
        )
    prefill = run.form.prefill
    if prefill is not None and row.prefill_tps is not None:
        p = row.prefill_tps
        if not lim.far_low * p.low <= prefill <= lim.far_high * p.high:
            flags.append(
                (
                    "prefill_far_from_estimate",
                    {"prefill": prefill, "low": p.low, "mid": p.mid, "high": p.high},
                )
            )
    if row.status == "no_fit":
        flags.append(("no_fit_estimated", {"total": row.total_gib, "usable": row.usable_gib}))
    return flags


def _caveat_flags(run: _Run, above_ceiling: bool) -> Flags:
    """Partial offload, the paste's caveats, speculative decoding, a context beyond the model's."""
    raw, model, form = run.raw, run.model, run.form
    flags: Flags = []
    partial = PARTIAL_OFFLOAD in raw.caveats or (
        raw.n_gpu_layers is not None and 0 <= raw.n_gpu_layers < model.layers
    )
    if partial:
        flags.append((PARTIAL_OFFLOAD, {"layers": raw.n_gpu_layers, "total": model.layers}))
    flags.extend((caveat, {}) for caveat in raw.caveats if caveat != PARTIAL_OFFLOAD)
    if run.speculative and not above_ceiling:
        flags.append(("speculative", {}))
    if form.ctx is not None and form.ctx > max(model.max_context, model.rope_scaled_context or 0):
        flags.append(("context_beyond_model", {"ctx": form.ctx, "native": model.max_context}))
    return flags


def _measurement(run: _Run, lim: SubmitLimits) -> Measurement:
    form = run.form
    evidence = form.evidence
    if evidence is None and run.raw.tool is not None:
        evidence = run.text.strip()[: lim.evidence_max_chars]  # the paste itself is the evidence
    return Measurement(
        gpu_id=run.gpu.id,
        model_id=run.model.id,
        quant=run.quant,
        decode_tps=run.decode,
        gpu_count=run.count,
        memory_gib=run.memory if len(run.sizes) > 1 else None,
        context=form.ctx,
        depth=form.depth,
        framework=run.framework,
        framework_version=form.version,
        backend=form.backend,
        os=form.os,
        prefill_tps=form.prefill,
        prompt_tokens=form.prompt if form.prefill is not None else None,
        kv_type=form.kv,
        flash_attn=form.fa,
        memory_used_gib=form.mem_used,
        evidence=evidence,
        notes=form.notes,
    )


# --- entry points --------------------------------------------------------------------------------


def read_submission(text: str, catalog: Catalog, fields: dict[str, str] | None = None) -> SubmitReading:
    """Everything a `/submit` says, checked: drafts that passed, and what is wrong or missing.

    A paste holding several measurements (a llama-bench table) gives one draft per measurement;
    those that pass come back even when others were refused, with the refusals in `problems`.
    """
    parsed = parse_submission(text, catalog, fields)
    lim = limits(catalog)
    problems: list[Note] = [
        Note("submit.unknown_key", {"key": k, "known": ", ".join(sorted(sections(catalog).submit.keys))})
        for k in parsed.unknown_keys
    ]
    candidates: dict[str, list[str]] = {}
    missing: set[str] = set()
    drafts: list[Draft] = []
    seen: set[Measurement] = set()
    for raw in parsed.runs:
        check = _Check([], candidates)
        draft, run_missing = _read_run(raw, parsed.text, catalog, check)
        problems.extend(p for p in check.problems if p not in problems)
        missing |= run_missing
        if draft is not None and draft.measurement not in seen:
            seen.add(draft.measurement)
            drafts.append(draft)
    ordered_missing = tuple(k for k in lim.required if k in missing)
    # Missing fields are not problems: the caller asks for them (the /submit dialogue). A batch
    # throughput is a problem: no field would make it usable.
    if "decode" in missing and any(THROUGHPUT_ONLY in raw.caveats for raw in parsed.runs):
        problems.append(Note("submit.throughput_not_decode"))
    return SubmitReading(tuple(drafts), tuple(problems), ordered_missing, candidates)


def fingerprint(submitter_key: str, m: Measurement) -> str:
    """Equal for duplicate submissions: the same person, the same setup, the same numbers.

    Evidence and notes are left out (a resend with another link is still a duplicate); speeds are
    rounded to what tools print so 128.52 and 128.5 count as one.
    """
    parts = [
        submitter_key,
        m.gpu_id,
        str(m.gpu_count),
        f"{m.memory_gib:g}" if m.memory_gib else "",
        m.model_id,
        m.quant,
        str(m.context or ""),
        str(m.depth or 0),
        m.framework,
        m.framework_version or "",
        m.backend or "",
        m.os or "",
        m.kv_type or "",
        "" if m.flash_attn is None else str(int(m.flash_attn)),
        f"{m.decode_tps:.1f}",
        f"{m.prefill_tps:.0f}" if m.prefill_tps is not None else "",
        str(m.prompt_tokens or ""),
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


# Re-exported: callers and tests use one entry point for everything about reading a submission.
__all__ = [
    "Draft",
    "SubmitLimits",
    "SubmissionForm",
    "SubmitReading",
    "decode_ceiling",
    "engine_version",
    "fingerprint",
    "limits",
    "peak_tflops",
    "prefill_ceiling",
    "read_form",
    "read_submission",
]
