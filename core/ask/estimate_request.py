"""An estimate asked for by names (CLI flags, a batch line): validated, resolved, run.

pydantic validates the request at the edge; names go through core.understanding's resolver, so
"V100 32G" and "gemma 3 27b" work here exactly as in chat. Unknown or ambiguous names raise
`QueryError` with the closest candidates; nothing here prints or exits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.catalog.cpu import Cpu
from core.catalog.gpu import Gpu
from core.catalog.kv_cache import KV_CACHE_TYPES, KvCacheType
from core.catalog.loader import Catalog, default_catalog
from core.catalog.model import Model
from core.catalog.platforms import os_from_word
from core.catalog.quant import QuantTable, free_bpw_mentions, free_bpw_quant
from core.catalog.sections import sections
from core.estimator.estimate import Estimate, EstimateRequest, Setup, estimate
from core.estimator.frameworks import BACKEND_VENDORS, backend_id, backend_names, check_backend
from core.estimator.multi_gpu import offered
from core.estimator.setup import (
    HostSpec,
    SetupError,
    build_mixed_setup,
    build_setup,
    cpu_only_setup,
    is_serving,
    mixable,
)
from core.understanding.cpu_words import resolve_cpu
from core.understanding.ollama_tags import typed_ollama_tag
from core.understanding.resolution import Resolution
from core.understanding.resolve import resolve_framework, resolve_gpu, resolve_model, resolve_quant
from core.understanding.vocab import kv_spellings, vocab_for

MAX_CONTEXT = 10_485_760
_CTX = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


class QueryError(ValueError):
    """A request that can't be answered: says what was wrong and what was probably meant."""

    def __init__(self, message: str, candidates: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.candidates = candidates or {}


def parse_context(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("context must be a number like 4096 or 32k")
    if isinstance(value, int | float):
        tokens = int(value)
    else:
        m = _CTX.match(str(value))
        if not m:
            raise ValueError(f"context {value!r} is not a number like 4096 or 32k")
        scale = {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
        tokens = int(float(m.group(1)) * scale)
    if tokens < 1 or tokens > MAX_CONTEXT:
        raise ValueError(f"context {value!r} must be between 1 and {MAX_CONTEXT}")
    return tokens


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


class EstimateQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    gpu: str | None = Field(default=None, min_length=1, max_length=200)  # None: CPU only
    model: str = Field(min_length=1, max_length=200)
    count: int | None = Field(default=None, ge=1, le=64)
    memory: float | None = Field(default=None, gt=0, le=4096)
    quant: list[str] = Field(default_factory=list, max_length=40)
    ctx: list[int] = Field(default_factory=list, max_length=20)
    depth: int | None = Field(default=None, ge=0, le=MAX_CONTEXT)
    prompt: int | None = Field(default=None, ge=1, le=MAX_CONTEXT)
    os: str | None = None
    framework: str | None = None
    kv_type: KvCacheType | None = None
    ram: float | None = Field(default=None, gt=0, le=65536)
    ram_type: str | None = Field(default=None, max_length=40)  # "DDR5-6000", "DDR4", "LPDDR5X-8533"
    ram_channels: int | None = Field(default=None, ge=1, le=24)
    sockets: int | None = Field(default=None, ge=1, le=8)
    # "auto": the estimator chooses, as llama.cpp's `--fit` does (EstimateRequest.offload).
    offload: Literal["auto", "experts", "layers", "cpu"] | None = None
    cpu_moe_layers: int | None = Field(default=None, ge=-1, le=1000)  # -1 = all ("all" on input)
    gpu_layers: int | None = Field(default=None, ge=0, le=1000)
    # The llama.cpp backend to price (cuda | rocm | vulkan | metal | sycl | cann | cpu; "hip" = rocm):
    # checked against the card and OS in resolve_request, refused when it can't drive them.
    backend: str | None = Field(default=None, min_length=1, max_length=40)
    # The host CPU ("7950X", "EPYC 9654", "2x Xeon Gold 6138"; catalogs/cpus.toml): its memory is the
    # host's where ram_type / ram_channels don't say, and its cores price a CPU prefill.
    cpu: str | None = Field(default=None, min_length=1, max_length=200)
    # N users at once (`estimate --users N`): each row's batched figures (core/estimator/concurrency.py)
    # beside its single-stream ones; the estimate itself is the same.
    users: int | None = Field(default=None, ge=1, le=4096)
    # How several cards share the model (`-sm layer|row|tensor`, ik_llama.cpp's "graph" = tensor,
    # "pipeline" = layer; catalogs/split_modes.toml); checked against the framework in resolve_request.
    split_mode: str | None = Field(default=None, min_length=1, max_length=20)
    # The link between the cards where it isn't the cards' own (a bridged pair: "nvlink").
    link: Literal["pcie", "nvlink", "xgmi", "network"] | None = None
    # llama.cpp's physical batch (`-ub`): sizes the compute buffer and an offloaded prefill's copies.
    ubatch: int | None = Field(default=None, ge=16, le=65536)
    # Tokens of reply (`estimate --output M`, issue 23): each row's JSON adds the end-to-end output rate
    # (prefill included, core/estimator/end_to_end.py); the estimate itself is the same.
    output: int | None = Field(default=None, ge=1, le=1024 * 1024)

    @field_validator("cpu_moe_layers", mode="before")
    @classmethod
    def _cpu_moe(cls, value: Any) -> Any:
        return -1 if isinstance(value, str) and value.strip().lower() == "all" else value

    @field_validator("quant", mode="before")
    @classmethod
    def _quants(cls, value: Any) -> list[str]:
        return [str(v) for v in _as_list(value)]

    @field_validator("ctx", mode="before")
    @classmethod
    def _contexts(cls, value: Any) -> list[int]:
        return [parse_context(v) for v in _as_list(value)]

    @field_validator("kv_type", mode="before")
    @classmethod
    def _kv(cls, value: str | None) -> KvCacheType | None:
        if value is None:
            return None
        named = kv_spellings(default_catalog()).named(str(value))
        if named is None:
            raise ValueError(f"KV cache type must be one of {', '.join(KV_CACHE_TYPES)}")
        return named

    @field_validator("os")
    @classmethod
    def _os(cls, value: str | None) -> str | None:
        if value is None:
            return None
        named = os_from_word(str(value), vocab_for(default_catalog()).os_words)
        if named is None:
            raise ValueError("OS must be linux, windows or macos")
        return named


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "request"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def _names(ids: list[str], table: Mapping[str, Gpu | Model]) -> list[str]:
    return [f"{table[i].name} ({i})" if hasattr(table[i], "name") else i for i in ids if i in table]


def _unknown(
    kind: str, label: str, text: str, resolution: Resolution, table: Mapping[str, Gpu | Model]
) -> QueryError:
    cands = [c for c, _ in resolution.candidates]
    closest = f"; closest: {', '.join(_names(cands, table))}" if cands else ""
    return QueryError(f"unknown {label} {text!r}{closest}", {kind: cands})


def _cpu(query: EstimateQuery, catalog: Catalog) -> tuple[Cpu | None, int | None]:
    """The CPU the query names and the sockets it says ("2x EPYC 9654"; `sockets` wins), or an
    error listing the closest CPUs the catalog knows."""
    if query.cpu is None:
        return None, query.sockets
    res = resolve_cpu(query.cpu, catalog)
    if res.cpu_id is None:
        names = [f"{catalog.cpus[c].name} ({c})" for c in res.candidates]
        closest = f"; closest: {', '.join(names)}" if names else "; say it like 7950X, i9-13900K or EPYC 9654"
        raise QueryError(f"unknown CPU {query.cpu!r}{closest}", {"cpu": list(res.candidates)})
    return catalog.cpus[res.cpu_id], query.sockets or res.sockets


def _setup(query: EstimateQuery, catalog: Catalog) -> Setup:
    """The card the query names with its host, or (no card) a CPU-only box."""
    cpu, sockets = _cpu(query, catalog)
    box = HostSpec(query.ram, query.ram_type, query.ram_channels, sockets, cpu)
    try:
        if query.gpu is None:
            if query.offload not in (None, "cpu"):
                raise QueryError(f"offload {query.offload!r} needs a card: name one with gpu")
            return cpu_only_setup(catalog, query.os, box)
        serving = is_serving((query.framework or "").lower(), query.users, catalog)
        mix = _mix(query, catalog)
        if mix is not None and mixable([gpu for gpu, _, _ in mix]):
            return build_mixed_setup(mix, catalog, query.os, box, serving)
        gpu_res = resolve_gpu(query.gpu, catalog)
        # A stable interface answers only for a card it is sure of: "RTX 6090" is not a 3090 (the
        # closest candidates go back with the error instead of a silent swap).
        if gpu_res.best_id is None or not gpu_res.confident:
            raise _unknown("gpu", "GPU", query.gpu, gpu_res, catalog.gpus)
        gpu, memory = catalog.gpus[gpu_res.best_id], query.memory or gpu_res.memory_gib
        return build_setup(gpu, catalog, query.count or 1, memory, query.os, box, serving)
    except SetupError as exc:
        raise QueryError(str(exc)) from exc


def _framework(query: EstimateQuery, catalog: Catalog) -> str | None:
    """The framework the query names (None: not named); QueryError when it names none known."""
    if not query.framework:
        return None
    f = resolve_framework(query.framework, catalog)
    if not f.found:
        raise QueryError(
            f"unknown framework {query.framework!r}; known: {', '.join(sorted(catalog.frameworks))}",
            {"framework": [c for c, _ in f.candidates]},
        )
    return f.best_id


def _mix(query: EstimateQuery, catalog: Catalog) -> list[tuple[Gpu, float, int]] | None:
    """ "3090+3060": mixed cards, priced card by card (each part one card of its own memory); None
    when the "+" belongs to one card's name ("Ryzen AI Max+ 395") or a part names no card surely."""
    if query.gpu is None or "+" not in query.gpu or query.count is not None or query.memory is not None:
        return None
    try:
        return [_sure_gpu(part.strip(), catalog) for part in query.gpu.split("+")]
    except QueryError:
        return None  # the whole name is then resolved as one card (and refused as one if unknown)


def _sure_gpu(text: str, catalog: Catalog) -> tuple[Gpu, float, int]:
    """(card, memory GiB, 1) of one part of a mixed "gpu"; QueryError when it names no card surely."""
    res = resolve_gpu(text, catalog)
    if res.best_id is None or not res.confident:
        raise _unknown("gpu", "GPU", text, res, catalog.gpus)
    gpu = catalog.gpus[res.best_id]
    return gpu, float(res.memory_gib or gpu.memory_gib), 1


def _offload(query: EstimateQuery) -> str:
    """The offload the query names, or implies (a layer count, no card at all)."""
    if query.offload:
        return query.offload
    if query.gpu is None:
        return "cpu"
    if query.cpu_moe_layers is not None:
        return "experts"
    return "layers" if query.gpu_layers is not None else ""


_WHY = {
    "vendor": "{name} runs on {vendors} GPUs only",
    "os": "{name} is not built for {os}",
    "windows_hip": "llama.cpp's Windows HIP build has no kernels for this card ({gfx})",
    "compute": "llama.cpp's {name} backend does not support this card",
    "no_gpu": "there is no card in this setup (name one with gpu)",
}


def _backend(query: EstimateQuery, setup: Setup, catalog: Catalog) -> str | None:
    """The backend the query names, checked against the card and OS: one that can't drive them is
    refused with what can, never swapped for another."""
    if query.backend is None:
        return None
    known = ", ".join(BACKEND_VENDORS)
    backend = backend_id(query.backend, catalog)
    if backend is None:
        raise QueryError(
            f"unknown backend {query.backend!r}; known: {known}", {"backend": list(BACKEND_VENDORS)}
        )
    if backend == "cpu" and query.offload not in (None, "cpu"):
        raise QueryError(
            f"backend 'cpu' runs nothing on the card: it can't go with offload {query.offload!r}"
        )
    check = check_backend(backend, setup.gpu, setup.os, catalog)
    if check.ok:
        return backend
    names = backend_names(catalog)
    why = _WHY.get(check.why, "").format(
        name=names[backend],
        vendors=" / ".join(BACKEND_VENDORS[backend]),
        os=setup.os.split("_")[0],
        gfx=setup.gpu.gfx_target,
    )
    can = ", ".join(check.possible)
    raise QueryError(
        f"backend {backend!r} can't drive the {setup.gpu.name} on {setup.os.split('_')[0]}: {why}. "
        f"This card runs: {can} (say --backend with one of them)",
        {"backend": list(check.possible)},
    )


def _free_bpw_quant(text: str, framework: str | None, catalog: Catalog) -> str | None:
    """An EXL2/EXL3 member named with its bpw; a bare "4.65bpw" is the asked ExLlama's family. A bpw
    outside the family's range is refused (the fuzzy reading would quietly price the family's 4.0)."""
    if not isinstance(catalog.quants, QuantTable):
        return None
    fw = resolve_framework(framework, catalog).best_id if framework else None
    family = "EXL3" if fw == "exllamav3" else "EXL2" if fw == "exllamav2" else ""
    member = free_bpw_quant(text, catalog.quants, family)
    said = [m for m in free_bpw_mentions(text) if m.family or family]
    base = catalog.quants.get(said[0].family or family) if said and member is None else None
    if base is not None and base.free_bpw is not None:
        low, high = base.free_bpw
        raise QueryError(
            f"{base.id} takes {low:g}-{high:g} bits per weight, not {said[0].bpw:g} ({text!r})",
            {"quant": [base.id]},
        )
    return member


def _model(typed: str, catalog: Catalog) -> Model:
    """The catalog model `typed` names, read as the chat reads it (core.understanding.hub_rule): a
    reading that lacks a part of the name ("llama 9 13b" -> Llama-2-13B lacks the "9") is a silent
    swap and refused, never run. "closest" offers only the family typed ("falcon3 10b" is no
    ChatGLM3-6B; a size alone is no neighbour), those that lack nothing of the name first."""
    from dataclasses import replace as _with

    from core.understanding.hub_rule import family_candidates, lacking, model_need

    model_res = resolve_model(typed, catalog)
    if model_res.best_id is not None:
        _, need = model_need(typed, model_res, catalog)
        if need is None:
            return catalog.models[model_res.best_id]
    family = family_candidates(typed, model_res.candidates, catalog)
    fits = tuple(c for c in family if not lacking(typed, catalog.models[c[0]], catalog))
    ranked = (*fits, *(c for c in family if c not in fits))
    if model_res.best_id is not None:
        missing = " ".join(lacking(typed, catalog.models[model_res.best_id], catalog))
        cands = [c for c, _ in ranked]
        closest = f"; closest: {', '.join(_names(cands, catalog.models))}" if cands else ""
        best = catalog.models[model_res.best_id].name
        raise QueryError(
            f"not sure which model {typed!r} is ({best} has no {missing!r}){closest}", {"model": cands}
        )
    raise _unknown("model", "model", typed, _with(model_res, candidates=ranked), catalog.models)


def resolve_request(query: EstimateQuery, catalog: Catalog) -> EstimateRequest:
    setup = _setup(query, catalog)
    backend = _backend(query, setup, catalog)
    model = _model(query.model, catalog)
    quants: list[str] = []
    for text in query.quant:
        # "EXL2-4.25", "exl3 3.0bpw": a free-bpw family member (made on demand, not an alias).
        member = _free_bpw_quant(text, query.framework, catalog)
        q = Resolution(member, ((member, 100.0),), True) if member else resolve_quant(text, catalog)
        if q.best_id is None:
            cands = [c for c, _ in q.candidates]
            raise QueryError(
                f"unknown quantization {text!r}" + (f"; closest: {', '.join(cands)}" if cands else ""),
                {"quant": cands},
            )
        if q.best_id not in quants:
            quants.append(q.best_id)
    framework = _framework(query, catalog)
    # "model": "qwen3:32b" with Ollama: the command runs that tag (a bare tag downloads Q4_K_M).
    tag = typed_ollama_tag(query.model, model.id, catalog) if framework == "ollama" else None
    if tag is not None and not quants:
        quants.append(tag[1])
    fw = catalog.frameworks.get(framework or "")
    if backend is not None and fw is not None and backend not in fw.backends:
        raise QueryError(
            f"framework {framework!r} has no {backend!r} backend (it has: {', '.join(fw.backends)}); "
            "llama.cpp has every backend",
            {"framework": ["llama.cpp"]},
        )
    return EstimateRequest(
        setup=setup,
        model=model,
        quants=tuple(quants),
        contexts=tuple(dict.fromkeys(query.ctx)),
        depth=query.depth,
        prompt=query.prompt or 512,
        framework=framework,
        kv_type=query.kv_type or "f16",
        offload=_offload(query),
        cpu_moe_layers=query.cpu_moe_layers,
        gpu_layers=query.gpu_layers,
        backend=backend,
        ollama_tag=tag[0] if tag is not None and tag[1] in quants else None,
        split_mode=_split_mode(query, framework, catalog),
        link=query.link,
        ubatch=query.ubatch,
        output=query.output,
    )


def _split_mode(query: EstimateQuery, framework: str | None, catalog: Catalog) -> str | None:
    """The split mode asked, as multi_gpu.SPLITS spells it; QueryError for a word that names none or
    a mode the framework doesn't run (vLLM has no row split)."""
    if query.split_mode is None:
        return None
    table = sections(catalog).split_modes
    mode = table.mode_for(query.split_mode)
    if mode is None:
        raise QueryError(f"unknown split mode {query.split_mode!r}; known: layer, row, tensor (graph)")
    name = framework or "llama.cpp"
    fw = catalog.frameworks.get(name)
    modes = offered(name, fw.engine if fw else name, table)
    if mode not in modes:
        raise QueryError(f"{name} has no {mode!r} split mode (it runs: {', '.join(modes)})")
    return mode


def run_query(raw: dict[str, Any], catalog: Catalog) -> Estimate:
    """Validate a request given by names and estimate it; raises QueryError with a clear message."""
    try:
        query = EstimateQuery.model_validate(raw)
    except ValidationError as exc:
        raise QueryError(validation_message(exc)) from exc
    return estimate(resolve_request(query, catalog), catalog)
