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
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.community.ceilings import decode_ceiling, peak_tflops, prefill_ceiling, quant_bytes_per_token
from core.community.pasted import MODEL_FROM_ARCH, PARTIAL_OFFLOAD, THROUGHPUT_ONLY
from core.community.submission_form import SubmissionForm, read_form
from core.community.submit_limits import SubmitLimits, engine_version, limits
from core.community.submit_parse import RawRun, parse_submission
from core.estimator.estimate import EstimateRequest, Row, estimate
from core.estimator.setup import SetupError, build_setup
from core.i18n import Note
from core.records import EstimateSnapshot, Measurement
from core.understanding.resolve import (
    Resolution,
    resolve_framework,
    resolve_gpu,
    resolve_model,
    resolve_quant,
)


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

    def missing_note(self) -> Note | None:
        """A one-line hint for what is missing ("submit.empty" when nothing was recognised)."""
        if not self.missing:
            return None
        if len(self.missing) == len(("gpu", "model", "quant", "decode")) and not self.drafts:
            return Note("submit.empty")
        return Note("submit.missing", {"fields": ", ".join(self.missing)})


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
    kv: str,
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


def _read_run(raw: RawRun, text: str, catalog: Catalog, check: _Check) -> tuple[Draft | None, set[str]]:
    """A draft for one run, or None with its problems in `check`; also the missing required fields."""
    lim = limits(catalog)
    form, notes, bad = read_form(raw.fields, catalog)
    check.problems.extend(notes)
    values = form.model_dump()
    missing = {k for k in lim.required if values.get(k) is None and k not in bad}

    # Names are resolved even when something else is wrong, so one reply lists every problem.
    gpu_res = model_res = quant_res = None
    if form.gpu is not None:
        gpu_res = _resolve("gpu", raw, form.gpu, catalog)
        if not gpu_res.found or not gpu_res.confident:
            check.unknown("gpu", form.gpu, gpu_res, catalog.gpus)
    if form.model is not None:
        model_res = _resolve("model", raw, form.model, catalog)
        model_ok = model_res.found and model_res.confident
        if model_ok and MODEL_FROM_ARCH in raw.caveats:
            # llama-bench names the architecture and size ("llama 8B"): only a reading with no
            # rival and the printed parameter count is taken; otherwise the submitter says model=...
            params_b = catalog.models[model_res.best_id].params_b  # type: ignore[index]
            params_off = raw.params_b is not None and abs(params_b - raw.params_b) > 0.1 * params_b
            model_ok = not model_res.also and not params_off
        if not model_ok:
            check.unknown("model", form.model, model_res, catalog.models)
    if form.quant is not None:
        quant_res = _resolve("quant", raw, form.quant, catalog)
        if not quant_res.found or not quant_res.confident:
            check.unknown("quant", form.quant, quant_res, catalog.quants)
    fw_text = form.framework or "llama.cpp"
    fw_res = _resolve("framework", raw, fw_text, catalog)
    if not fw_res.found:
        known = ", ".join(sorted(catalog.frameworks))
        check.problems.append(Note("submit.unknown_framework", {"text": fw_text, "known": known}))
        check.candidates["framework"] = [c for c, _ in fw_res.candidates]
    if check.problems or missing or gpu_res is None or model_res is None or quant_res is None:
        return None, missing

    gpu = catalog.gpus[gpu_res.best_id]  # type: ignore[index]
    model = catalog.models[model_res.best_id]  # type: ignore[index]
    quant: str = quant_res.best_id  # type: ignore[assignment]
    framework: str = fw_res.best_id  # type: ignore[assignment]
    count = form.count or 1
    memory = form.memory or gpu_res.memory_gib
    sizes = sorted(set(gpu.memory_options_gib or ()) | {gpu.memory_gib})
    if memory is not None and not any(abs(memory - s) <= 0.5 for s in sizes):
        check.problems.append(
            Note(
                "submit.memory_not_offered",
                {"gpu": gpu.name, "value": memory, "sizes": ", ".join(f"{s:g}" for s in sizes)},
            )
        )
        return None, missing
    if form.depth is not None and form.ctx is not None and form.depth > form.ctx:
        check.problems.append(Note("submit.depth_over_context", {"depth": form.depth, "ctx": form.ctx}))
        return None, missing

    kv_est = lim.kv_types[form.kv] if form.kv else "f16"
    engine = catalog.frameworks[framework].engine
    decode: float = form.decode  # type: ignore[assignment]
    flags: list[tuple[str, dict[str, Any]]] = []

    # Physical ceilings: refused, whatever the estimate says.
    per_token = quant_bytes_per_token(model, quant, form.depth or 0, kv_est, catalog)
    ceiling = decode_ceiling(gpu, count, model, quant, form.depth or 0, kv_est, engine, catalog)
    speculative = bool(lim.speculative.search(" ".join(filter(None, (form.notes, form.framework, text)))))
    if decode > ceiling * lim.ceiling_margin:
        params = {
            "decode": decode,
            "gpus": _gpus_label(gpu, count),
            "size_gb": round(per_token / 1e9, 1),
            "max": round(ceiling),
            "bandwidth": gpu.bandwidth_gbs,
        }
        if not speculative:
            check.problems.append(Note("submit.above_ceiling", params))
            return None, missing
        flags.append(("speculative_above_ceiling", params))
    if form.prefill is not None:
        p_ceiling = prefill_ceiling(gpu, count, model)
        if p_ceiling is not None and form.prefill > p_ceiling * lim.ceiling_margin:
            check.problems.append(
                Note(
                    "submit.prefill_above_ceiling",
                    {
                        "prefill": form.prefill,
                        "gpus": _gpus_label(gpu, count),
                        "tflops": peak_tflops(gpu),
                        "params_b": model.active_params_b,
                        "max": round(p_ceiling),
                    },
                )
            )
            return None, missing

    try:
        row = _row(form, gpu, model, quant, framework, memory, kv_est, catalog)
    except SetupError as exc:
        check.problems.append(Note("submit.bad_setup", {"reason": str(exc)}))
        return None, missing
    snap = _snapshot(row, catalog)

    if snap is not None and not (lim.far_low * snap.decode_low <= decode <= lim.far_high * snap.decode_high):
        flags.append(
            ("far_from_estimate", {"decode": decode, "low": snap.decode_low, "mid": snap.decode_mid,
                                   "high": snap.decode_high})
        )  # fmt: skip
    if form.prefill is not None and row.prefill_tps is not None:
        p = row.prefill_tps
        if not lim.far_low * p.low <= form.prefill <= lim.far_high * p.high:
            params = {"prefill": form.prefill, "low": p.low, "mid": p.mid, "high": p.high}
            flags.append(("prefill_far_from_estimate", params))
    if row.status == "no_fit":
        flags.append(("no_fit_estimated", {"total": row.total_gib, "usable": row.usable_gib}))
    partial = PARTIAL_OFFLOAD in raw.caveats or (
        raw.n_gpu_layers is not None and 0 <= raw.n_gpu_layers < model.layers
    )
    if partial:
        flags.append((PARTIAL_OFFLOAD, {"layers": raw.n_gpu_layers, "total": model.layers}))
    for caveat in raw.caveats:
        if caveat != PARTIAL_OFFLOAD:
            flags.append((caveat, {}))
    if speculative and not any(code == "speculative_above_ceiling" for code, _ in flags):
        flags.append(("speculative", {}))
    if form.ctx is not None and form.ctx > max(model.max_context, model.rope_scaled_context or 0):
        flags.append(("context_beyond_model", {"ctx": form.ctx, "native": model.max_context}))

    evidence = form.evidence
    if evidence is None and raw.tool is not None:
        evidence = text.strip()[: lim.evidence_max_chars]  # the paste itself is the evidence
    measurement = Measurement(
        gpu_id=gpu.id,
        model_id=model.id,
        quant=quant,
        decode_tps=decode,
        gpu_count=count,
        memory_gib=memory if len(sizes) > 1 else None,
        context=form.ctx,
        depth=form.depth,
        framework=framework,
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
    codes = tuple(dict.fromkeys(code for code, _ in flags))
    notes_out = tuple(Note(f"submit.flag.{code}", params) for code, params in flags)
    return Draft(measurement, snap, codes, notes_out), missing


# --- entry points --------------------------------------------------------------------------------


def read_submission(text: str, catalog: Catalog, fields: dict[str, str] | None = None) -> SubmitReading:
    """Everything a `/submit` says, checked: drafts that passed, and what is wrong or missing.

    A paste holding several measurements (a llama-bench table) gives one draft per measurement;
    those that pass come back even when others were refused, with the refusals in `problems`.
    """
    parsed = parse_submission(text, catalog, fields)
    lim = limits(catalog)
    problems: list[Note] = [
        Note("submit.unknown_key", {"key": k, "known": ", ".join(sorted(catalog.tables["submit"]["keys"]))})
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
    # Missing fields are not problems: the caller asks for them (a dialogue, or "submit.missing" /
    # "submit.empty" as a hint). A batch throughput is a problem: no field would make it usable.
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
