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
import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.community.pasted import MODEL_FROM_ARCH, PARTIAL_OFFLOAD, THROUGHPUT_ONLY
from core.community.records import EstimateSnapshot, Measurement
from core.community.submit_parse import RawRun, parse_submission
from core.estimator.estimate import EstimateRequest, Row, estimate
from core.estimator.memory import kv_read_bytes
from core.estimator.query import parse_context
from core.estimator.setup import SetupError, build_setup
from core.estimator.weights import weight_breakdown
from core.i18n import Note
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


# --- settings ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    required: tuple[str, ...]
    max_count: int
    min_context: int
    max_context: int
    default_context: int
    max_speed: float
    max_memory_gib: float
    evidence_max_chars: int
    notes_max_chars: int
    ceiling_margin: float
    far_low: float
    far_high: float
    tp_engines: frozenset[str]
    speculative: re.Pattern[str]
    backends: dict[str, str]
    kv_types: dict[str, str]


@cache
def limits(catalog: Catalog) -> Limits:
    table = catalog.tables["submit"]
    s = table["submit"]
    words = "|".join(re.escape(w) for w in s["speculative_words"])
    return Limits(
        required=tuple(s["required"]),
        max_count=int(s["max_count"]),
        min_context=int(s["min_context"]),
        max_context=int(s["max_context"]),
        default_context=int(s["default_context"]),
        max_speed=float(s["max_speed"]),
        max_memory_gib=float(s["max_memory_gib"]),
        evidence_max_chars=int(s["evidence_max_chars"]),
        notes_max_chars=int(s["notes_max_chars"]),
        ceiling_margin=float(s["ceiling_margin"]),
        far_low=float(s["far_low_factor"]),
        far_high=float(s["far_high_factor"]),
        tp_engines=frozenset(s["tensor_parallel_engines"]),
        speculative=re.compile(rf"(?<![a-z])(?:{words})", re.I),
        backends=dict(table["backends"]),
        kv_types=dict(table["kv_types"]),
    )


@cache
def engine_version(catalog: Catalog) -> str:
    """Names the calibration an estimate came from: its row count plus a hash of its content, so two
    fits with the same number of rows still differ (accuracy reports group by this)."""
    cal = catalog.tables.get("calibration", {})
    digest = hashlib.sha256(json.dumps(cal, sort_keys=True, default=str).encode()).hexdigest()[:10]
    rows = cal.get("meta", {}).get("rows", "?")
    return f"cal-{rows}r-{digest}"


# --- the form (pydantic edge) --------------------------------------------------------------------

_NUMBER = re.compile(r"^\s*~?\s*(\d+(?:[.,]\d+)?)\s*([a-z/ ]*?)\s*$", re.I)
_SPEED_UNITS = ("", "t/s", "tok/s", "tokens/s", "token/s", "tps", "tk/s", "toks/s")
_TRUE = {"1", "on", "true", "yes", "y", "enabled", "开"}
_FALSE = {"0", "off", "false", "no", "n", "disabled", "关"}
_OS = {"win": "windows", "windows": "windows", "linux": "linux", "ubuntu": "linux", "wsl": "linux",
       "mac": "macos", "macos": "macos", "osx": "macos"}  # fmt: skip


def _err(code: str, **params: Any) -> PydanticCustomError:
    return PydanticCustomError(code, code, params)


def _limits_of(info: ValidationInfo) -> Limits:
    return info.context["limits"]  # type: ignore[index]


def _number(value: Any, field: str, units: tuple[str, ...] = ("",)) -> float:
    """ "128.5", "128,5 t/s", 128 -> float; a decimal comma is read as a point ("1,234" is 1234)."""
    if isinstance(value, bool):
        raise _err("submit.not_a_number", field=field, value=value)
    if isinstance(value, int | float):
        return float(value)
    m = _NUMBER.match(str(value))
    if not m or m.group(2).lower().replace(" ", "") not in units:
        raise _err("submit.not_a_number", field=field, value=str(value)[:40])
    digits = m.group(1)
    if "," in digits:
        whole, frac = digits.split(",")
        digits = whole + frac if len(frac) == 3 else f"{whole}.{frac}"
    return float(digits)


class SubmissionForm(BaseModel):
    """The raw fields of one measurement, typed. Names stay text: resolving them needs the catalog."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    gpu: str | None = None
    count: int | None = None
    memory: float | None = None
    model: str | None = None
    quant: str | None = None
    ctx: int | None = None
    depth: int | None = None
    framework: str | None = None
    version: str | None = None
    backend: str | None = None
    os: str | None = None
    decode: float | None = None
    prefill: float | None = None
    prompt: int | None = None
    kv: str | None = None
    fa: bool | None = None
    mem_used: float | None = None
    evidence: str | None = None
    notes: str | None = None

    @field_validator("gpu", "model", "quant", "framework", "version", mode="before")
    @classmethod
    def _name(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        text = str(value).strip()
        if len(text) > 200:
            raise _err("submit.too_long", field=info.field_name, max=200)
        return text

    @field_validator("decode", "prefill", mode="before")
    @classmethod
    def _speed(cls, value: Any, info: ValidationInfo) -> float | None:
        if value is None or str(value).strip() == "":
            return None
        speed = _number(value, str(info.field_name), _SPEED_UNITS)
        if not speed > 0:
            raise _err("submit.not_positive", field=info.field_name, value=value)
        top = _limits_of(info).max_speed
        if speed > top:
            raise _err("submit.speed_absurd", field=info.field_name, value=speed, max=top)
        return speed

    @field_validator("count", mode="before")
    @classmethod
    def _count(cls, value: Any, info: ValidationInfo) -> int | None:
        if value is None or str(value).strip() == "":
            return None
        text = str(value).strip().lower().strip("x×*张卡 ")
        top = _limits_of(info).max_count
        if not text.isdigit() or not 1 <= int(text) <= top:
            raise _err("submit.bad_count", value=str(value)[:20], max=top)
        return int(text)

    @field_validator("memory", "mem_used", mode="before")
    @classmethod
    def _memory(cls, value: Any, info: ValidationInfo) -> float | None:
        if value is None or str(value).strip() == "":
            return None
        m = _NUMBER.match(str(value))
        unit = m.group(2).lower().replace(" ", "") if m else ""
        scale = {"": 1.0, "g": 1.0, "gb": 1.0, "gib": 1.0, "mib": 1 / 1024, "mb": 1 / 1024}.get(unit)
        top = _limits_of(info).max_memory_gib
        if m is None or scale is None:
            raise _err("submit.bad_memory", field=info.field_name, value=str(value)[:20], max=top)
        gib = float(m.group(1).replace(",", ".")) * scale
        if not 0 < gib <= top:
            raise _err("submit.bad_memory", field=info.field_name, value=str(value)[:20], max=top)
        return round(gib, 2)

    @field_validator("ctx", mode="before")
    @classmethod
    def _ctx(cls, value: Any, info: ValidationInfo) -> int | None:
        if value is None or str(value).strip() == "":
            return None
        lim = _limits_of(info)
        try:
            tokens = parse_context(value)
        except ValueError:
            tokens = -1
        if not lim.min_context <= tokens <= lim.max_context:
            raise _err("submit.bad_context", value=str(value)[:20], min=lim.min_context, max=lim.max_context)
        return tokens

    @field_validator("depth", "prompt", mode="before")
    @classmethod
    def _tokens(cls, value: Any, info: ValidationInfo) -> int | None:
        if value is None or str(value).strip() == "":
            return None
        text = str(value).strip().lower().removeprefix("d").removeprefix("pp")
        lim = _limits_of(info)
        try:
            tokens = 0 if text == "0" else parse_context(text)
        except ValueError:
            tokens = -1
        low = 0 if info.field_name == "depth" else 1
        if not low <= tokens <= lim.max_context:
            raise _err("submit.bad_tokens", field=info.field_name, value=str(value)[:20], max=lim.max_context)
        return tokens

    @field_validator("kv", mode="before")
    @classmethod
    def _kv(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        key = str(value).strip().lower().replace("-", "_")
        known = _limits_of(info).kv_types
        if key not in known:
            raise _err("submit.bad_kv", value=str(value)[:20], known=", ".join(sorted(set(known))))
        return key

    @field_validator("fa", mode="before")
    @classmethod
    def _fa(cls, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("", "auto"):
            return None  # llama.cpp's default "auto": we can't tell what it chose
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise _err("submit.bad_flag", field="fa", value=str(value)[:20])

    @field_validator("backend", mode="before")
    @classmethod
    def _backend(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        known = _limits_of(info).backends
        # llama-bench prints lists like "Metal,BLAS" or "RPC,CUDA": the first GPU backend counts.
        parts = [p.strip().lower() for p in re.split(r"[,+/ ]+", str(value)) if p.strip()]
        gpu_first = sorted(parts, key=lambda p: known.get(p) == "cpu")
        for part in gpu_first:
            if part in known:
                return known[part]
        raise _err("submit.bad_backend", value=str(value)[:20], known=", ".join(sorted(set(known.values()))))

    @field_validator("os", mode="before")
    @classmethod
    def _os(cls, value: Any) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        key = str(value).strip().lower()
        if key not in _OS:
            raise _err("submit.bad_os", value=str(value)[:20])
        return _OS[key]

    @field_validator("evidence", "notes", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        lim = _limits_of(info)
        top = lim.evidence_max_chars if info.field_name == "evidence" else lim.notes_max_chars
        return str(value).strip()[:top]  # cut, not refused: a long log is still good evidence


def _form_problems(exc: ValidationError) -> tuple[list[Note], set[str]]:
    notes: list[Note] = []
    bad: set[str] = set()
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else "?"
        bad.add(field)
        code = err["type"]
        if code.startswith("submit."):
            notes.append(Note(code, dict(err.get("ctx") or {})))
        else:
            notes.append(Note("submit.bad_value", {"field": field, "value": str(err.get("input"))[:40]}))
    return notes, bad


def read_form(fields: dict[str, str], catalog: Catalog) -> tuple[SubmissionForm, list[Note], set[str]]:
    """Type the fields; a bad field is reported and left out, the rest still comes through."""
    ctx = {"limits": limits(catalog)}
    try:
        return SubmissionForm.model_validate(fields, context=ctx), [], set()
    except ValidationError as exc:
        notes, bad = _form_problems(exc)
    good = {k: v for k, v in fields.items() if k not in bad}
    return SubmissionForm.model_validate(good, context=ctx), notes, bad


# --- ceilings ------------------------------------------------------------------------------------


def bytes_per_token(model: Model, quant_id: str, depth: int, kv_type: str, catalog: Catalog) -> float:
    """Bytes one decoded token must read: active weights plus the KV cache at that depth."""
    weights = weight_breakdown(model, catalog.quants[quant_id], catalog)
    return weights.active_bytes_per_token + kv_read_bytes(model, depth, kv_type, catalog)


def decode_ceiling(
    gpu: Gpu, count: int, model: Model, quant_id: str, depth: int, kv_type: str, engine: str, catalog: Catalog
) -> float:
    """The fastest decode physics allows (tok/s): peak bandwidth over bytes per token, efficiency 1.

    Layer split (llama.cpp, Ollama) reads the layers one card after the other, so one card's
    bandwidth bounds it however many cards there are; tensor-parallel engines read every card's
    slice at once and the bandwidth adds.
    """
    bandwidth = gpu.bandwidth_gbs * 1e9
    if count > 1 and engine in limits(catalog).tp_engines:
        bandwidth *= count
    return bandwidth / bytes_per_token(model, quant_id, depth, kv_type, catalog)


def peak_tflops(gpu: Gpu) -> float | None:
    """The highest matrix rate the card lists (FP16 with FP16 accumulate, INT8 for MMQ kernels)."""
    rates = [r for r in (gpu.fp16_tflops, gpu.int8_tops, gpu.fp32_tflops) if r]
    return max(rates) if rates else None


def prefill_ceiling(gpu: Gpu, count: int, model: Model) -> float | None:
    """The fastest prefill physics allows (tok/s): peak FLOPS over 2 x active params per token.

    Every card counts: llama.cpp pipelines prompt batches across a layer split and tensor parallel
    splits the matmuls, so both can use all cards' compute. None when the card lists no rate.
    """
    peak = peak_tflops(gpu)
    if peak is None or model.active_params_b <= 0:
        return None
    return peak * 1e12 * count / (2.0 * model.active_params_b * 1e9)


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
    per_token = bytes_per_token(model, quant, form.depth or 0, kv_est, catalog)
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
