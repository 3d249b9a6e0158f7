"""The estimator's front door: one GPU setup x one model x quants x contexts -> rows.

Each row carries memory (weights, KV, overhead, total vs usable), the verdict, decode and prefill
ranges, and when it doesn't fit, the best way out with its own figures (`ways_out/`). What to
run a row with (framework, placement, launch command) is decided in `plan.py`. Everything a row
assumed is a `Note`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Literal

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.pricing_sections import Band
from core.catalog.sections import sections
from core.estimator import multi_gpu, speed
from core.estimator.band import band_for
from core.estimator.frameworks.kernels import kernels_run
from core.estimator.frameworks.serving_setup import serving_quants
from core.estimator.layer_packing import layer_status, worse
from core.estimator.memory import (
    GIB,
    SERVING_ENGINES,
    Usable,
    compute_buffer_bytes,
    constants,
    engine_of,
    kv_cache_bytes,
    serving_share,
    usable_memory,
)
from core.estimator.memory_fit import (
    ForcedOffload,
    LayerPlan,
    cpu_band,
    forced_offload,
    layer_plan,
    split_usable,
    whole_layers,
)
from core.estimator.plan import GGUF_FRAMEWORK, gguf_like, gguf_stand_in, pricing_framework, runs_here
from core.estimator.pricing import Pricing
from core.estimator.token_bytes import decode_bytes
from core.estimator.ways_out.find import cpu_remedy, find_remedy
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.estimator.ways_out.remedy import Remedy
from core.estimator.weights import WeightBreakdown, weight_breakdown
from core.i18n import Note

FitStatus = Literal["smooth", "tight", "no_fit"]


@dataclass(frozen=True, slots=True)
class Host:
    ram_gib: float
    bandwidth_gbs: float  # peak, channels x MT/s x 8 bytes x sockets used
    name: str  # the preset id, "custom" (the user gave type/channels) or "unified"
    ram_type: str = ""  # "DDR5", "LPDDR5X", ...
    mt_s: int = 0
    channels: int = 0  # per socket
    sockets: int = 1
    cpu: str = ""  # catalog id of the CPU (catalogs/cpus.toml) when the user named one
    # The user said how much RAM the box has ("and 64 GB RAM"): `ram_gib` is theirs, not the preset's
    # guess, so a plan may rest on it (experts in RAM where the serving engine fits nothing).
    ram_stated: bool = False


@dataclass(frozen=True, slots=True)
class Setup:
    gpu: Gpu
    count: int
    memory_gib: float  # per card (or the unified-memory size)
    os: str
    host: Host
    os_assumed: bool = True
    os_server: bool = False  # assumed: Linux because the box is a server (core/estimator/setup.py)
    os_only: bool = False  # the card runs this OS only (Apple, datacenter, Jetson): no OS switch
    # Mixed cards (setup.build_mixed_setup): each card's (name, memory GiB) in the order llama.cpp
    # numbers them; `gpu` is then the mix as one card of the mean memory and the layer split's speed.
    mix: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class EstimateRequest:
    setup: Setup
    model: Model
    quants: tuple[str, ...] = ()
    contexts: tuple[int, ...] = ()
    depth: int | None = None  # None: each row's own context (the worst case)
    prompt: int = 512
    framework: str | None = None
    kv_type: KvCacheType = FULL_PRECISION_KV
    # The setup as the user runs it, not chosen for them: "" (on the GPU, ways out when it doesn't
    # fit) | "experts" (MoE experts in RAM) | "layers" (-ngl N) | "cpu" (no GPU layers at all) |
    # "auto" (what llama.cpp's `--fit` does: a row that fits runs on the card(s); one that doesn't is
    # priced as "experts" / "layers" with its own way out's count, `_auto_offload`).
    offload: str = ""
    cpu_moe_layers: int | None = None  # experts: layers whose experts sit in RAM; -1 or None = all
    gpu_layers: int | None = None  # layers: layers on the GPU; None = as many as fit
    # The llama.cpp backend the user named ("cuda", "vulkan", ... ; checked against the card by
    # frameworks.check_backend before it gets here). None: the one people run on this card
    # (speed.choose_backend). "cpu" is a CPU-only run: the same as offload "cpu".
    backend: str | None = None
    users: int | None = None  # N users at once: a serving question (vLLM / SGLang, serving_setup.py)
    ollama_tag: str | None = None  # the Ollama tag the user typed: its command runs that tag
    # The share of each card vLLM / SGLang may take, as the user set it (`--gpu-memory-utilization 0.7`
    # pasted in a question); None: the engine's default share (catalogs/estimator.toml [vllm]).
    gpu_memory_utilization: float | None = None
    # How the cards share the model, as the user asked (`-sm row`, `-sm tensor`, ik_llama.cpp's
    # `-sm graph` = "tensor"; multi_gpu.SPLITS); None: the framework's own (layer for llama.cpp,
    # tensor parallel for vLLM / SGLang / ExLlama).
    split_mode: str | None = None
    # The link between the cards as the user said it ("nvlink" on a bridged 3090 pair); None: the
    # cards' own (multi_gpu.link_of: SXM / OAM modules NVLink / xGMI, two Sparks a network, else PCIe).
    link: str | None = None
    # llama.cpp's physical batch as the user set it (`-ub 4096`); None: the default (512), and for a
    # run with weights in RAM the larger one its command sets (estimator.toml [host] offload_ubatch).
    ubatch: int | None = None
    # Tokens of reply ("2000 in, 500 out"): decode is priced where that reply runs, on top of the
    # prompt and half the reply (the average token's depth), not at each row's full context; the
    # prompt still prefills from an empty context. None: decode at `depth` (or the row's context).
    output: int | None = None


# A speed as (low, mid, high) tokens/s: the same type the speed model returns.
Range = speed.SpeedRange


@dataclass(frozen=True, slots=True)
class Row:
    quant: str
    context: int
    weights_gib: float
    kv_gib: float
    overhead_gib: float
    total_gib: float
    usable_gib: float
    status: FitStatus
    decode_tps: Range | None  # at `depth`
    # The request's prompt from an empty context (time to first token: the average rate over
    # 0..prompt), or on top of the depth the request named (`EstimateRequest.depth`).
    prefill_tps: Range | None
    ttft_s: float | None
    depth: int
    beyond_native: bool  # context above the model's native window (needs rope scaling)
    unsupported: bool  # context above what the model supports even with rope scaling
    remedy: Remedy | None
    notes: tuple[Note, ...] = ()
    framework: str = ""
    # The same prompt sent when the context already holds `depth` tokens (a conversation at the row's
    # full context), where that differs from `prefill_tps`: attention at depth slows it, on a CPU most.
    deep_prefill_tps: Range | None = None
    deep_ttft_s: float | None = None
    # What to run the row with (framework, placement, launch command) is decided on demand by
    # `core.estimator.plan.plan_for`: a chat reply shows one command, so the grid doesn't pay for thirty.


@dataclass(frozen=True, slots=True)
class StandIn:
    """The serving engine an estimate stands in for: it had nothing to serve on this card (or the
    card is too old for it), so the table was priced for llama.cpp's GGUF plan instead."""

    framework: str  # the serving engine that was asked for or implied ("vllm", "sglang")
    reason: Note  # why not that one (plan.nothing_to_serve, fw.gate.compute): the reply's one line
    asked: bool  # the request named it (or a serving quant implied it), not a setup's own pick


@dataclass(frozen=True, slots=True)
class Estimate:
    request: EstimateRequest
    usable: Usable
    backend: str
    framework: str
    rows: tuple[Row, ...]
    assumptions: tuple[Note, ...] = field(default_factory=tuple)
    # Set when a serving engine had nothing to run here: these rows are llama.cpp's, and every plan
    # of them says why not the engine, so the table, header and command describe one engine.
    stands_in: StandIn | None = None


def default_quants(model: Model, framework: str, catalog: Catalog, gpu: Gpu | None = None) -> tuple[str, ...]:
    """The table's quants when the user named none; with `gpu`, without those the framework's
    kernels can't run on that card (`_ladder_quants`)."""
    own = catalog.frameworks.get(framework)
    if own is not None and own.ladder:  # a framework with a table of its own (transformers, MLC LLM)
        return tuple(n for n in own.ladder if n in catalog.quants)
    return _ladder_quants(model, framework, catalog, gpu)


def _ladder_quants(model: Model, framework: str, catalog: Catalog, gpu: Gpu | None = None) -> tuple[str, ...]:
    ladder = sections(catalog).estimator.ladder
    if framework in ("vllm", "sglang"):
        names = list(ladder.serving)
        native = catalog.quants.get(model.native_quant or "")
        if native is not None and native.format != "serving":
            native = catalog.quants.get(f"HF-{native.id}")  # gpt-oss's MXFP4 as its released repo
        if native is not None and native.format == "serving" and native.id in names:
            # A natively quantized release (DeepSeek / MiniMax FP8) is served as published: no
            # upcast copy above it.
            names = names[names.index(native.id) :]
        elif native is not None and native.format == "serving":
            names = [native.id]  # gpt-oss's MXFP4: its own format only
    elif framework == "ktransformers":
        names = list(ladder.serving if ladder.ktransformers is None else ladder.ktransformers)
    elif framework == "mlx":
        names = list(ladder.mlx)
    else:
        names = list(ladder.gguf_large if model.params_b >= ladder.large_params_b else ladder.gguf)
        native = catalog.quants.get(model.native_quant or "")
        if native is not None and native.format == "gguf" and ladder.native_first:
            # A release quantized natively in a GGUF type (gpt-oss MXFP4) is published in its own
            # format: a Q6_K / IQ3 "ladder" of it is the same bytes under other names. An FP8 release
            # (DeepSeek) is no GGUF: its GGUF table is the quants people make of it.
            names = [native.id]
    known = tuple(n for n in names if n in catalog.quants)
    return _runnable_here(known, model, framework, gpu, catalog)


def _runnable_here(
    names: tuple[str, ...], model: Model, framework: str, gpu: Gpu | None, catalog: Catalog
) -> tuple[str, ...]:
    """Without a card (a ladder asked for on its own): `names`. With one, a row the engine can't run
    on it (FP8 on a T4 or V100: no FP8 Marlin below Ampere) is no choice to show; the whole ladder
    stays if it would leave none (the plan then says why)."""
    if gpu is None:
        return names
    fw = catalog.frameworks.get(framework)
    runs = tuple(n for n in names if kernels_run(fw, catalog.quants[n], gpu, model, catalog))
    return runs or names


def default_contexts(model: Model, catalog: Catalog) -> tuple[int, ...]:
    ladder = list(sections(catalog).estimator.ladder.contexts)
    limit = max(model.max_context, model.rope_scaled_context or 0)
    out = [c for c in ladder if c <= limit] or [min(ladder)]
    if model.max_context not in out and model.max_context <= 1_048_576:
        out.append(model.max_context)
    return tuple(sorted(set(out)))


def ram_usable(setup: Setup, catalog: Catalog) -> Usable:
    """A CPU-only run's usable memory: the system RAM less what the OS keeps ([host] os_reserve_gib),
    so a CPU-only row's total and usable figures are RAM figures, judged like a card's."""
    reserve = sections(catalog).estimator.host.os_reserve_gib
    ram = setup.host.ram_gib
    return Usable(ram - reserve, 1, ram, (Note("assume.ram_reserve", {"gib": reserve, "ram": ram}),))


def offloaded(request: EstimateRequest, row: Row) -> bool:
    """Whether `row` runs with weights in system RAM as the request placed it: the offload named, or
    under "auto" a row priced with its way out (a row that fits "auto" has no remedy)."""
    if request.offload == "auto":
        return row.status != "no_fit" and row.remedy is not None
    return bool(request.offload)


def in_ram(est: Estimate) -> bool:
    """Whether the estimate is a CPU-only run: its memory figures are system RAM, not VRAM."""
    return est.request.offload == "cpu"


def framework_overhead_bytes(framework: str, catalog: Catalog) -> float:
    """Runtime memory beyond weights, KV and the compute buffer that the driver context (already
    taken off `usable`) does not cover: e.g. LM Studio's UI-side allocations."""
    fw = catalog.frameworks.get(framework)
    if fw is None:
        return 0.0
    low = float(fw.overhead_gib[0])
    return max(0.0, low - constants(catalog).driver_context_gib) * GIB


@cache
def _low_bit_quants(catalog: Catalog) -> frozenset[str]:
    """Quants below [remedy] low_bit_bpw (IQ2_*, IQ1_*, Q2_K): their rows say plainly that they answer
    worse."""
    limit = sections(catalog).estimator.remedy.low_bit_bpw
    return frozenset(q.id for q in catalog.quants.values() if q.bpw < limit)


@cache
def _engine(framework: str, catalog: Catalog) -> str:
    return engine_of(framework, catalog)


def split_and_link(request: EstimateRequest, framework: str, count: int, catalog: Catalog) -> tuple[str, str]:
    """How the request's cards share the model and what joins them, on `count` cards (the request's
    own, or a way out's): multi_gpu.layout with the mode and link the user named (resolve_request
    refuses a mode the framework lacks)."""
    asked = (request.split_mode, request.link)
    kv_quantized = request.kv_type != FULL_PRECISION_KV
    engine, table = _engine(framework, catalog), sections(catalog).split_modes
    return multi_gpu.layout(framework, engine, asked, kv_quantized, request.setup.gpu, count, table)


def estimate(request: EstimateRequest, catalog: Catalog) -> Estimate:
    if request.backend == "cpu" and not request.offload:
        # One home for "CPU only": a CPU backend is a run with no GPU layers (offload = cpu).
        request = replace(request, offload="cpu")
    setup = request.setup
    gpu, model = setup.gpu, request.model
    framework = request.framework or pricing_framework(
        request, request.quants or default_quants(model, "llama.cpp", catalog), catalog
    )
    engine = _engine(framework, catalog)
    request = _as_served(request, engine, catalog)
    if engine == "ktransformers" and model.is_moe and request.offload in ("", "auto"):
        # KTransformers is expert offload by design: every routed expert on the CPU
        # (--kt-num-gpu-experts 0), attention and shared weights on the GPU.
        request = replace(request, offload="experts")
    usable = usable_memory(gpu, setup.memory_gib, setup.count, setup.os, catalog)
    if request.offload == "cpu":
        usable = ram_usable(setup, catalog)
    # No GPU layers: the CPU runs it (the speed model prices only the host side then).
    backend = (
        "cpu" if request.offload == "cpu" else speed.choose_backend(gpu, setup.os, catalog, request.backend)
    )
    cal = speed.calibration(catalog)
    quants = request.quants or default_quants(model, framework, catalog, gpu)
    contexts = request.contexts or default_contexts(model, catalog)
    split, link = split_and_link(request, framework, setup.count, catalog)
    fixed = _fixed(request, usable, backend, engine, framework, cal, catalog)
    runtime = speed.Runtime(gpu, backend, cal, framework, setup.count, split, link)
    pricing = Pricing(request, usable, runtime, catalog)
    fixed = _with_cards(fixed, pricing)
    rows = []
    for quant_id in quants:
        quant = catalog.quants[quant_id]
        weights = weight_breakdown(model, quant, catalog)
        for ctx in contexts:
            rows.append(_row(pricing, fixed, quant_id, weights, ctx))
    assumptions = list(usable.notes)
    # A backend the user named is said as theirs, not as something assumed.
    code = "assume.backend" if request.backend is None else "assume.backend_given"
    assumptions.append(Note(code, {"backend": backend, "framework": framework}))
    assumptions.append(
        Note(
            "assume.host",
            {"ram": setup.host.ram_gib, "bw": setup.host.bandwidth_gbs, "name": setup.host.name},
        )
    )
    if setup.host.cpu in catalog.cpus:
        # The CPU the user named: its memory and cores priced the host side, so the answer says which.
        sockets = f"{setup.host.sockets}x " if setup.host.sockets > 1 else ""
        assumptions.append(Note("assume.cpu", {"cpu": sockets + catalog.cpus[setup.host.cpu].name}))
    if request.kv_type != FULL_PRECISION_KV:
        assumptions.append(Note("assume.kv_type", {"kv": request.kv_type}))
    est = Estimate(request, usable, backend, framework, tuple(rows), tuple(assumptions))
    return _served_elsewhere(est, catalog)


def _served_elsewhere(est: Estimate, catalog: Catalog) -> Estimate:
    """A serving engine's estimate whose plan falls back to llama.cpp (nothing listed to serve, or
    a card the engine doesn't drive): priced again for llama.cpp, so the table shows the GGUF quants
    and speeds of the command below it rather than vLLM's (`gguf_stand_in` in plan.py decides)."""
    fw = catalog.frameworks.get(est.framework)
    if fw is None or not fw.gpu_only or est.request.offload == "cpu":
        return est
    found = gguf_stand_in(est, catalog) or _gguf_where_nothing_fits(est, catalog)
    if found is None:
        return est
    request, reason = found
    asked = est.request.framework is not None
    gguf = estimate(request, catalog)
    if reason.code == _NOTHING_FITS and not _fits_on_the_cards(gguf, catalog):
        # llama.cpp runs it here only with something assumed (experts in RAM the user never stated,
        # a 1-2-bit file): the engine's own verdict and its way out (more cards) stand.
        return est
    return replace(gguf, stands_in=StandIn(est.framework, reason, asked))


# The serving engine's rows all need other hardware (A100 40GB with a 70B: AWQ needs 37 GiB of weights
# plus vLLM's graph reserve inside 0.92 of the card), while llama.cpp's GGUF ladder runs there (IQ4_XS,
# or layers in RAM): that plan, under one line saying why not the engine.
_NOTHING_FITS = "plan.serving_does_not_fit"


# Besides the ways out that keep every weight on the cards and run there (`Facts.on_card` and
# `has_command`: a quantized KV cache, a shorter context, a smaller file), the one that needs RAM the
# user said they have: a MoE's routed experts there, the rest on the cards.
_ON_STATED_RAM = frozenset({WayOutKind.EXPERT_OFFLOAD})


def _fits_on_the_cards(gguf: Estimate, catalog: Catalog) -> bool:
    """Whether llama.cpp's plan runs here without resting on something assumed: on the cards, or with
    a way out that keeps every weight there; experts in RAM (`--n-cpu-moe`) too when the user stated
    the RAM they sit in, since that is what one runs there. Never plain layers in RAM: a dense model
    split to RAM crawls (a few tok/s), no plan to put in place of the engine's own verdict."""
    from core.estimator.choice import choose  # choice.py imports this module

    row = choose(gguf, catalog).row
    if row.status != "no_fit":
        return True
    if row.remedy is None:
        return False
    kind = row.remedy.kind
    on_cards = facts(kind).on_card and facts(kind).has_command
    return on_cards or (gguf.request.setup.host.ram_stated and kind in _ON_STATED_RAM)


def _gguf_where_nothing_fits(est: Estimate, catalog: Catalog) -> tuple[EstimateRequest, Note] | None:
    if any(runs_here(r) for r in est.rows) or not est.rows:
        return None
    gpu = est.request.setup.gpu
    name = catalog.frameworks[est.framework].name
    reason = Note(_NOTHING_FITS, {"framework": name, "gpu": gpu.name})
    return replace(est.request, framework=GGUF_FRAMEWORK, quants=gguf_like(est.request, catalog)), reason


@dataclass(frozen=True, slots=True)
class _Fixed:
    """What every row of one estimate shares, looked up once instead of once per row."""

    vllm: bool  # a serving engine (vLLM, SGLang): weights whole on the cards, its reserve, no ggml buffer
    vllm_overhead: float  # vLLM / SGLang: activations + CUDA graphs (+ NCCL) bytes, all cards
    usable_bytes: float  # what the engine may fill, in bytes
    flash_attention: bool
    framework_overhead: float  # llama.cpp family: bytes beyond the compute buffers
    smooth_fraction: float
    band: Band
    prefill_band: Band
    # Each card's usable bytes when the rows run a llama.cpp layer split over several cards (whole
    # layers per card, layer_packing); () otherwise.
    card_usable: tuple[float, ...] = ()


def _with_cards(fixed: _Fixed, pricing: Pricing) -> _Fixed:
    """`fixed` with each card's usable bytes where the rows run a llama.cpp layer split over several
    cards: whole layers per card, so each row packs them (layer_packing)."""
    request = pricing.request
    count = request.setup.count
    if count < 2 or not whole_layers(pricing):
        return fixed
    return replace(fixed, card_usable=split_usable(request, fixed.usable_bytes, count))


def _serving_reserve_bytes(setup: Setup, catalog: Catalog) -> float:
    """A serving engine's activation peak + CUDA graphs (+ tensor parallel's NCCL buffers), all cards:
    estimator.toml [vllm], vLLM's logged figures. SGLang gets the same: its docs (docs.sglang.io
    server_arguments) say only that the rest of the card beyond `--mem-fraction-static` holds them,
    with no figure of their own."""
    const, count = constants(catalog), setup.count
    per_card = const.vllm_activation_gib[0] + const.vllm_cuda_graph_gib
    if count > 1:
        per_card += _nccl_per_gpu_gib(setup.gpu, catalog)
    return per_card * GIB * count


def _serving_room(
    request: EstimateRequest, usable: Usable, engine: str, reserve: float, catalog: Catalog
) -> float:
    """The bytes a row may fill (weights + KV + the engine's reserve), judged as the command launches.
    vLLM's `--gpu-memory-utilization` bounds everything it allocates, reserve included; SGLang's
    `--mem-fraction-static` bounds weights + KV pool only ("reduce the memory usage of the KV cache
    pool by setting a smaller value of --mem-fraction-static", docs.sglang.io server_arguments), its
    activations and CUDA graphs take the rest of the card: so the reserve sits beyond its share, and
    the whole must still fit what the card lets it allocate."""
    setup = request.setup
    total = usable.total_gib * GIB
    share = serving_share(engine, request.gpu_memory_utilization, catalog)
    if share is None:
        return total
    room = setup.memory_gib * setup.count * share * GIB
    if engine == "sglang":
        room += reserve
    return min(total, room)


def _fixed(
    request: EstimateRequest,
    usable: Usable,
    backend: str,
    engine: str,
    framework: str,
    cal: speed.Calibration,
    catalog: Catalog,
) -> _Fixed:
    setup, count = request.setup, request.setup.count
    const = constants(catalog)
    serving = engine in SERVING_ENGINES
    reserve = _serving_reserve_bytes(setup, catalog) if serving else 0.0
    return _Fixed(
        vllm=serving,
        vllm_overhead=reserve,
        usable_bytes=_serving_room(request, usable, engine, reserve, catalog),
        flash_attention=const.flash_attention,
        framework_overhead=0.0 if serving else framework_overhead_bytes(framework, catalog),
        smooth_fraction=const.smooth_fraction,
        band=band_for(setup.gpu, backend, cal, "decode", framework, moe=request.model.is_moe, count=count),
        prefill_band=band_for(
            setup.gpu, backend, cal, "prefill", framework, moe=request.model.is_moe, count=count
        ),
    )


def _as_served(request: EstimateRequest, engine: str, catalog: Catalog) -> EstimateRequest:
    """ "fp16" served by vLLM / SGLang is the released weights' repo, not a GGUF file."""
    if engine not in ("vllm", "sglang") or not request.quants:
        return request
    return replace(request, quants=serving_quants(request.quants, catalog))


def _nccl_per_gpu_gib(gpu: Gpu, catalog: Catalog) -> float:
    """Tensor parallel's non-torch memory per card: NVLink boxes keep custom all-reduce buffers, PCIe
    cards ([vllm] pcie_segments) only NCCL's."""
    rules = sections(catalog).estimator.vllm
    return rules.nccl_pcie_per_gpu_gib if gpu.segment in rules.pcie_segments else rules.nccl_per_gpu_gib


def _depths(request: EstimateRequest, ctx: int) -> tuple[int, int]:
    """(decode depth, the prompt's prefill depth) of a row: the depth named, else a reply's own
    (`output`), else the row's full context (the worst case); the prompt prefills from an empty
    context unless the request named a depth (TTFT's meaning)."""
    if request.depth is not None:
        depth = min(request.depth, ctx)
        return depth, depth
    if request.output:
        return min(request.prompt + request.output // 2, ctx), 0
    return ctx, 0


def _on_gpu_figures(
    pricing: Pricing, fixed: _Fixed, quant_id: str, weights: WeightBreakdown, depth: int, p_depth: int
) -> tuple[Range, Range | None, float | None, Range | None, float | None]:
    """(decode at `depth`, prefill and TTFT of the prompt at `p_depth`, the same at `depth` where it
    differs) of a row fully on the card(s), at the request's ubatch (llama.cpp's default unless set)."""
    request, catalog, rt = pricing.request, pricing.catalog, pricing.runtime
    model = request.model
    gpu_bytes = decode_bytes(model, weights, depth, request.kv_type, catalog)
    mid = 1.0 / speed.token_seconds(rt, model.layers, gpu_bytes, 0.0, model.is_moe, quant_id)
    band = fixed.band
    high = min(mid * band.high, max(speed.peak_tps(rt, gpu_bytes), mid))
    decode = Range(round(mid * band.low, 1), round(mid, 1), round(high, 1))
    ub = request.ubatch or constants(catalog).ubatch
    p_seconds = speed.prefill_seconds(rt, model, quant_id, request.prompt, p_depth, ub)
    prefill, ttft = _prefill_range(request.prompt, p_seconds, fixed.prefill_band)
    deep = deep_ttft = None
    if p_depth != depth:
        d_seconds = speed.prefill_seconds(rt, model, quant_id, request.prompt, depth, ub)
        deep, deep_ttft = _prefill_range(request.prompt, d_seconds, fixed.prefill_band)
    return decode, prefill, ttft, deep, deep_ttft


def _row(pricing: Pricing, fixed: _Fixed, quant_id: str, weights: WeightBreakdown, ctx: int) -> Row:
    request, catalog, rt = pricing.request, pricing.catalog, pricing.runtime
    model, count, framework = request.model, request.setup.count, rt.framework
    depth, p_depth = _depths(request, ctx)
    kv: float = kv_cache_bytes(model, ctx, request.kv_type, catalog)
    notes: list[Note] = []
    usable_bytes = fixed.usable_bytes
    weights_gpu: float
    if fixed.vllm:
        weights_gpu = weights.total_bytes
        overhead = fixed.vllm_overhead
    else:
        weights_gpu = weights.gpu_bytes_full_offload
        buffer = compute_buffer_bytes(model, ctx, catalog, fixed.flash_attention, request.ubatch or 0)
        overhead = buffer * count
        overhead += fixed.framework_overhead
    total = weights_gpu + kv + overhead
    # The verdict, with its constant looked up once per estimate.
    status: FitStatus
    if total <= usable_bytes * fixed.smooth_fraction:
        status = "smooth"
    elif total <= usable_bytes:
        status = "tight"
    else:
        status = "no_fit"
    status = _packed(status, fixed, weights, kv, overhead / count)

    if quant_id in _low_bit_quants(catalog):
        notes.append(Note("row.low_bit", {"quant": quant_id}))
    beyond = ctx > model.max_context
    unsupported = ctx > max(model.max_context, model.rope_scaled_context or model.max_context)
    if beyond and not unsupported:
        notes.append(Note("row.rope_scaling", {"native": model.max_context}))
    if unsupported:
        notes.append(Note("row.beyond_model", {"native": model.max_context}))

    decode = prefill = deep = None
    ttft = deep_ttft = None
    remedy = None
    # "auto" on a row that doesn't fit: the request names the offload it chose from here on.
    pricing, found = _auto_offload(pricing, quant_id, weights, ctx, depth, status)
    request = pricing.request
    if request.offload == "cpu":
        # CPU only: every byte is in RAM, so the row's memory figures are the RAM the run needs
        # (weights + KV + compute buffer) against the usable RAM (`ram_usable`).
        forced = forced_offload(pricing, quant_id, weights, ctx, depth, p_depth)
        status, remedy = forced.status, forced.plan
        weights_gpu, total = weights.total_bytes, forced.host_bytes
        overhead = total - weights_gpu - kv
        if status != "no_fit":
            p_band = cpu_band(request, catalog, "prefill") or fixed.prefill_band
            decode, prefill, ttft, deep, deep_ttft = _forced_figures(
                forced, request.prompt, p_band, p_depth != depth
            )
        else:
            remedy = cpu_remedy(pricing, quant_id, weights, ctx, forced)
    elif request.offload in ("experts", "layers"):
        forced = forced_offload(pricing, quant_id, weights, ctx, depth, p_depth)
        status, remedy = forced.status, forced.plan
        weights_gpu, kv, total = forced.weights_gpu, forced.kv_gpu, forced.gpu_bytes
        overhead = total - weights_gpu - kv
        if status != "no_fit":
            decode, prefill, ttft, deep, deep_ttft = _forced_figures(
                forced, request.prompt, fixed.prefill_band, p_depth != depth
            )
    elif status != "no_fit":
        decode, prefill, ttft, deep, deep_ttft = _on_gpu_figures(
            pricing, fixed, quant_id, weights, depth, p_depth
        )
    else:
        # The offload plan is part of the way out too: worked out once for both ("auto" found them).
        remedy, plan = found if found is not None else _way_out(pricing, quant_id, weights, ctx, depth)
        if plan.layers_on_gpu == 0:
            notes.append(Note("row.no_gpu_layers"))
    return Row(
        quant=quant_id,
        context=ctx,
        weights_gib=round(weights_gpu / GIB, 2),
        kv_gib=round(kv / GIB, 2),
        overhead_gib=round(overhead / GIB, 2),
        total_gib=round(total / GIB, 2),
        usable_gib=round(max(usable_bytes, 0.0) / GIB, 2),  # CPU only: the usable RAM
        status=status,
        decode_tps=decode,
        prefill_tps=prefill,
        ttft_s=ttft,
        depth=depth,
        beyond_native=beyond,
        unsupported=unsupported,
        remedy=remedy,
        notes=tuple(notes),
        framework=framework,
        deep_prefill_tps=deep,
        deep_ttft_s=deep_ttft,
    )


def _packed(
    status: FitStatus, fixed: _Fixed, weights: WeightBreakdown, kv: float, per_card: float
) -> FitStatus:
    """A verdict that the sum fits, on a llama.cpp layer split, checked card by card: whole layers
    per card must fit too (a DeepSeek-V3 Q4_K_M MoE layer is 6-7 GiB; layer_packing)."""
    if not fixed.card_usable or status == "no_fit":
        return status
    return worse(status, layer_status(weights, kv, fixed.card_usable, per_card, fixed.smooth_fraction))


def _way_out(
    pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, depth: int
) -> tuple[Remedy, LayerPlan]:
    """A row's best way out off the card(s) and its layer plan (worked out once for both)."""
    plan = layer_plan(pricing.request, pricing.usable, weights, ctx, pricing.catalog)
    return find_remedy(pricing, quant_id, weights, ctx, depth, plan), plan


def _auto_offload(
    pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, depth: int, status: FitStatus
) -> tuple[Pricing, tuple[Remedy, LayerPlan] | None]:
    """Offload "auto" for a row that doesn't fit the card(s): what llama.cpp's `--fit` does, i.e. the
    row's own way out that keeps weights in RAM (a MoE's experts of the fewest layers, else as many
    whole layers on the card(s) as fit), as a request naming it ("experts" + cpu_moe_layers, "layers"
    + gpu_layers): the row is then priced exactly as `--offload experts|layers` with that count, its
    figures and placement the way out's (the chat's plan runs the same). Where no such way out runs
    here (unified memory, vLLM, too little RAM) the row stays as offload "" prices it, with the way
    out found. `pricing` comes back unchanged (and no way out) for any other row or offload."""
    request = pricing.request
    if request.offload != "auto" or status != "no_fit":
        return pricing, None
    remedy, plan = _way_out(pricing, quant_id, weights, ctx, depth)
    ways = (remedy, *remedy.alternatives)
    experts = next((w for w in ways if w.kind == WayOutKind.EXPERT_OFFLOAD), None)
    layers = next((w for w in ways if w.kind == WayOutKind.OFFLOAD), None)
    if experts is not None:
        chosen = replace(request, offload="experts", cpu_moe_layers=experts.cpu_moe_layers)
    elif layers is not None:
        chosen = replace(request, offload="layers", gpu_layers=layers.layers_on_gpu)
    else:
        return pricing, (remedy, plan)
    return replace(pricing, request=chosen), None


def _prefill_range(prompt: int, seconds: float, p_band: Band) -> tuple[Range, float]:
    """(prefill tok/s range, seconds) of a prompt that takes `seconds` to prefill."""
    pmid = prompt / seconds
    return Range(round(pmid * p_band.low, 0), round(pmid, 0), round(pmid * p_band.high, 0)), round(seconds, 2)


def _forced_figures(
    forced: ForcedOffload, prompt: int, p_band: Band, with_deep: bool
) -> tuple[Range | None, Range | None, float | None, Range | None, float | None]:
    """(decode, prefill, time to first token, and with `with_deep` the prefill and seconds of the
    same prompt at the row's full depth) of a row run with the offload the user named."""
    plan = forced.plan
    if plan.decode_mid is None:
        return None, None, None, None, None
    decode = Range(plan.decode_low or 0.0, plan.decode_mid, plan.decode_high or 0.0)
    prefill, seconds = _prefill_range(prompt, forced.prefill_seconds, p_band)
    if not with_deep:
        return decode, prefill, seconds, None, None
    deep, deep_seconds = _prefill_range(prompt, forced.deep_prefill_seconds, p_band)
    return decode, prefill, seconds, deep, deep_seconds
