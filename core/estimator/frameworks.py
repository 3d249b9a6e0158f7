"""Which inference frameworks run a setup, with what caveats, overhead and a filled launch command.

Hard gates (OS, a backend for the GPU's vendor on that OS, minimum CUDA compute, quant format) are
read from the Framework fields; combination-specific caveats ("FP8 below compute 8.9 is
weight-only", "BF16 on Volta -> --dtype half") are `Rule`s in catalogs/frameworks.toml, so adding
one is a data edit with its source. Everything the user reads is a `Note` (catalogs/messages/
frameworks.toml); this module never builds sentences.

Commands are `str.format` templates from the catalog. Their field names are parsed once per
template (cached) and the values are plain string operations, so rendering a whole grid of
answers stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from string import Formatter
from typing import Literal

from core.catalog.framework import Framework, Rule
from core.catalog.gpu import Gpu
from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog, default_catalog
from core.catalog.model import Model
from core.catalog.platforms import OsFamily
from core.catalog.published_files import PublishedFile, published_file, published_repo
from core.catalog.quant import Quant
from core.catalog.sections import sections
from core.i18n import Note

OsName = OsFamily  # core/catalog/platforms.py

# What each backend can drive. Vulkan is vendor-neutral; Apple is reached through Metal only.
BACKEND_VENDORS: dict[str, tuple[str, ...]] = {
    "cuda": ("NVIDIA",),
    "rocm": ("AMD",),
    "metal": ("Apple",),
    "sycl": ("Intel",),
    "vulkan": ("NVIDIA", "AMD", "Intel"),
    "cann": ("Huawei",),  # Ascend NPUs: llama.cpp's CANN backend, the vllm-ascend plugin
    "cpu": ("NVIDIA", "AMD", "Intel", "Apple"),
}

# Every placeholder a command template may use (the catalog test checks templates against this).
PLACEHOLDERS = frozenset(
    {
        "ctx",
        "quant",
        "gpu_count",
        # llama.cpp
        "model_arg",
        "ngl",
        "fa_flags",
        "kv_flags",
        "moe_flags",
        "split_flags",
        # ik_llama.cpp (the llama.cpp values plus its own flags)
        "ik_moe_flags",
        "ik_flags",
        # vLLM / SGLang
        "serve_model",
        "gpu_util",
        "tp_flags",
        "dtype_flags",
        "quant_flags",
        "kv_dtype_flags",
        # Ollama, LM Studio, MLX, ExLlama (TabbyAPI)
        "ollama_env",
        "ollama_model",
        "lms_model",
        "lms_gpu",
        "mlx_repo",
        "exl_model",
        "exl_cache",
        "exl_tp_flags",
        # KTransformers (SGLang + KT-Kernel)
        "repo",
        "local_dir",
        "kt_method",
    }
)

# Quants that are the released weights (served from the model's own repo, no quant flag); ids of
# catalogs/quants.toml plus the plain spellings.
_UNQUANTIZED = frozenset({"HF-BF16", "HF-FP16", "HF-MXFP4", "FP16", "F16", "BF16", "FP32", "F32"})
# Serving quants vLLM/SGLang create on the fly from the original repo.
_ONLINE_QUANT_FLAGS = {
    "FP8": "fp8",
    "BNB-NF4": "bitsandbytes",
    "BNB-INT8": "bitsandbytes",
    "BITSANDBYTES": "bitsandbytes",
}
_EXL_CACHE = {"f16": "FP16", "q8_0": "Q8", "q4_0": "Q4"}
_OLLAMA_DEFAULT_QUANT = "Q4_K_M"  # what a bare library tag downloads


@dataclass(frozen=True, slots=True)
class FrameworkQuery:
    """The setup and run configuration one answer is about."""

    gpu: Gpu
    model: Model
    quant: Quant
    context: int
    os: OsName = "linux"
    gpu_count: int = 1
    kv_cache: KvCacheType = "f16"
    fits_on_gpu: bool = True  # weights + KV + buffers fit in GPU memory
    n_gpu_layers: int | Literal["all"] = "all"  # layers offloaded to the GPU(s)
    # MoE: number of layers whose routed experts stay in CPU RAM (llama.cpp --n-cpu-moe);
    # >= model.layers means all of them (--cpu-moe). None/0 = experts on the GPU.
    n_cpu_moe: int | None = None
    # The backend the user named (estimate --backend, "on vulkan"): a framework runs the setup only
    # on that backend. None: each framework takes its first backend that drives the card.
    backend: str | None = None
    # CPU only (no GPU layers): the threads llama.cpp runs (-t N, the physical cores; 0 = its own
    # default) and whether the RAM spans NUMA nodes (2+ sockets: --numa distribute).
    cpu_only: bool = False
    cpu_threads: int = 0
    numa: bool = False

    @property
    def fully_on_gpu(self) -> bool:
        layers_ok = self.n_gpu_layers == "all" or self.n_gpu_layers >= self.model.layers
        return self.fits_on_gpu and layers_ok and not self.n_cpu_moe


@dataclass(frozen=True, slots=True)
class FrameworkOption:
    """One framework judged against a query."""

    framework: str  # Framework.id
    runnable: bool
    notes: tuple[Note, ...]  # why not / caveats / tips, most important first
    overhead_gib: tuple[float, float]  # beyond weights + KV + compute buffer, all GPUs together
    command: str  # filled launch command ("" when it can't run)
    backend: str | None = None  # the backend it would use: "cuda", "rocm", "vulkan", ...
    strengths: tuple[Note, ...] = ()
    weaknesses: tuple[Note, ...] = ()


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The framework to suggest for single-user chat on this setup."""

    framework: str | None  # None when nothing runs
    reason: Note
    easy: str | None = None  # the point-and-click alternative (Ollama / LM Studio) when it runs
    alternatives: tuple[str, ...] = ()  # other runnable frameworks, catalog order
    hints: tuple[Note, ...] = ()


# --------------------------------------------------------------------------------------------
# helpers


@lru_cache(maxsize=1024)
def _names(quant_id: str, aliases: tuple[str, ...], family: str = "") -> frozenset[str]:
    return frozenset(n.upper() for n in (quant_id, *aliases, family) if n)


def _quant_in(quant: Quant, ids: Iterable[str]) -> bool:
    """Whether the quant is one of `ids` (ids or aliases); a family id ("EXL2") names its members too."""
    names = _names(quant.id, tuple(quant.aliases), quant.family)
    return any(i.upper() in names for i in ids)


def loads(fw: Framework, quant: Quant) -> bool:
    """Whether the framework can read the quant's files at all: a quant with `loaders` (ik_llama.cpp's
    own types, EXL2/EXL3) is read by those frameworks only."""
    return not quant.loaders or fw.id in quant.loaders


@lru_cache(maxsize=256)
def template_fields(template: str) -> frozenset[str]:
    """Placeholder names used by a command template, parsed once per template."""
    return frozenset(name for _, name, _, _ in Formatter().parse(template) if name)


def _first_int(text: str) -> int | None:
    digits = ""
    for ch in text:
        if ch.isdigit():
            digits += ch
        elif digits:
            break
    return int(digits) if digits else None


def _backend_for(fw: Framework, gpu: Gpu, os: str, asked: str | None = None) -> str | None:
    """The first backend of the framework that drives this GPU on this OS (CPU is not a choice), or,
    when the user named one, that backend if the framework has it for this card and OS (else None:
    a framework without the asked backend does not run the setup; nothing is swapped in)."""
    if asked == "cpu":
        return "cpu" if "cpu" in fw.backends else None
    for backend in fw.backends if asked is None else (asked,):
        if backend not in fw.backends or not _drives(fw, backend, gpu, os):
            continue
        return backend
    return None


def _drives(fw: Framework, backend: str, gpu: Gpu, os: str) -> bool:
    """Whether the framework's `backend` drives this GPU on this OS (vendor, OS, compute, ROCm target)."""
    if backend == "cpu" or gpu.vendor not in BACKEND_VENDORS.get(backend, ()):
        return False
    allowed = fw.backend_os.get(backend)
    if allowed is not None and os not in allowed:
        return False
    if backend == "cuda" and _below_min_compute(fw, gpu):
        return False
    return not (backend == "rocm" and fw.rocm_gfx and gpu.gfx_target and gpu.gfx_target not in fw.rocm_gfx)


@dataclass(frozen=True, slots=True)
class BackendCheck:
    """Whether a backend the user named can drive the card on the OS, and if not, why (a code the
    caller words) and the backends that can."""

    ok: bool
    why: str = ""  # "unknown" | "vendor" | "os" | "compute" | "windows_hip" | "no_gpu"
    possible: tuple[str, ...] = ()


def backend_names(catalog: Catalog) -> dict[str, str]:
    """Backend id -> how a reply writes it (catalogs/backends.toml [names])."""
    names = sections(catalog).backends.names
    return {b: str(names.get(b, b)) for b in BACKEND_VENDORS}


def backend_id(text: str, catalog: Catalog) -> str | None:
    """A backend id from a name or alias as typed ("Vulkan", "hip" -> rocm); None when unknown."""
    key = text.strip().lower()
    aliases = sections(catalog).backends.aliases
    key = str(aliases.get(key, key))
    return key if key in BACKEND_VENDORS else None


def _windows_hip(gpu: Gpu, catalog: Catalog) -> bool:
    """Whether llama.cpp's Windows HIP build has kernels for this AMD card (unknown target: yes)."""
    targets = sections(catalog).backends.windows_hip.get("gfx", ())
    return not targets or not gpu.gfx_target or gpu.gfx_target in targets


def card_backends(gpu: Gpu, os: str, catalog: Catalog) -> tuple[str, ...]:
    """The backends llama.cpp (the framework with every backend) drives this card with on this OS, in
    its order of preference, CPU last: what a user may name with --backend."""
    fw = catalog.frameworks.get("llama.cpp")
    family = "linux" if os.startswith("linux") else os
    if fw is None or gpu.memory_gib <= 0:
        return ("cpu",)  # no card (a CPU-only setup): the CPU is the only backend
    hip_ok = family != "windows" or _windows_hip(gpu, catalog)
    out = [b for b in fw.backends if _drives(fw, b, gpu, family) and (b != "rocm" or hip_ok)]
    return (*out, "cpu")


def check_backend(backend: str, gpu: Gpu, os: str, catalog: Catalog) -> BackendCheck:
    """Can `backend` (an id) drive this card on this OS? Never a substitute: the caller refuses."""
    possible = card_backends(gpu, os, catalog)
    if backend in possible:
        return BackendCheck(True, possible=possible)
    fw = catalog.frameworks.get("llama.cpp")
    family = "linux" if os.startswith("linux") else os
    allowed = fw.backend_os.get(backend) if fw is not None else None
    if backend not in BACKEND_VENDORS:
        why = "unknown"
    elif gpu.memory_gib <= 0:
        why = "no_gpu"
    elif gpu.vendor not in BACKEND_VENDORS[backend]:
        why = "vendor"
    elif allowed is not None and family not in allowed:
        why = "os"
    elif backend == "rocm" and family == "windows":
        why = "windows_hip"
    else:
        why = "compute"  # CUDA below llama.cpp's minimum compute capability, or a ROCm target it lacks
    return BackendCheck(False, why, possible)


def _below_min_compute(fw: Framework, gpu: Gpu) -> bool:
    cc, floor = gpu.compute_capability, fw.min_compute_capability
    return cc is not None and floor is not None and cc < floor


def rule_matches(rule: Rule, q: FrameworkQuery, backend: str | None) -> bool:
    """Whether every condition set on the rule holds for the query."""
    # One condition after the other, stopping at the first that fails: most rules fail on their
    # first condition (what runs: quant, card, OS), and this runs for every rule of every framework.
    return _setup_matches(rule, q, backend) and _run_matches(rule, q)


def _setup_matches(rule: Rule, q: FrameworkQuery, backend: str | None) -> bool:
    """The conditions on what is run where: quant, its format, the card, the OS, the backend."""
    gpu = q.gpu
    return (
        (not rule.quants or _quant_in(q.quant, rule.quants))
        and (not rule.formats or q.quant.format in rule.formats)
        and (not rule.vendors or gpu.vendor in rule.vendors)
        and (not rule.arch_families or gpu.arch_family in rule.arch_families)
        and (not rule.model_families or q.model.family in rule.model_families)
        and (not rule.os or q.os in rule.os)
        and (not rule.backends or backend in rule.backends)
    )


def _run_matches(rule: Rule, q: FrameworkQuery) -> bool:
    """The conditions on how it is run: compute capability, KV cache, cards, offload, MoE."""
    cc = q.gpu.compute_capability
    return (
        (rule.compute_below is None or (cc is not None and cc < rule.compute_below))
        and (rule.compute_at_least is None or (cc is not None and cc >= rule.compute_at_least))
        and (not rule.kv_cache or q.kv_cache in rule.kv_cache)
        and (rule.multi_gpu is None or (q.gpu_count > 1) == rule.multi_gpu)
        and (rule.partial_offload is None or (not q.fully_on_gpu) == rule.partial_offload)
        and (rule.moe is None or q.model.is_moe == rule.moe)
        and (rule.cpu_only is None or q.cpu_only == rule.cpu_only)
    )


def _params(fw: Framework, q: FrameworkQuery) -> dict[str, object]:
    return {
        "framework": fw.name,
        "gpu": q.gpu.name,
        "compute": q.gpu.compute_capability,
        "min_compute": fw.min_compute_capability,
        "quant": q.quant.id,
        "ctx": q.context,
        "kv": q.kv_cache,
        "count": q.gpu_count,
        "os": q.os,
        "vendor": q.gpu.vendor,
        "model": q.model.name,
        "loaders": ", ".join(q.quant.loaders),
    }


# --------------------------------------------------------------------------------------------
# command values


def _published_gguf(model: Model, quant: Quant) -> PublishedFile | None:
    """The published GGUF file of this quant (the Hub listing or catalogs/published_gguf.csv), for a
    model whose catalog entry names no GGUF repo of its own (a Hub model): a curated repo stays the
    one its commands name."""
    if quant.format != "gguf" or model.gguf_repo or model.gguf_file_stem:
        return None
    return published_file(model, quant.id)


def _gguf_file(model: Model, quant: Quant) -> str:
    published = _published_gguf(model, quant)
    if published is not None and len(published.files) == 1:
        return published.files[0].rsplit("/", 1)[-1]  # the file's real name, not a guess
    stem = model.gguf_file_stem or model.name
    return f"{stem}-{quant.id}.gguf"


@cache
def _checkpoints() -> dict[str, dict[str, str]]:
    """Published quantized checkpoints by base repo and quant (catalogs/estimator.toml [checkpoints])."""
    table = sections(default_catalog()).estimator.checkpoints
    return {repo: {k: v for k, v in row.items() if k != "source"} for repo, row in table.items()}


def _published_checkpoint(repo: str, quant_id: str) -> str:
    return _checkpoints().get(repo, {}).get(quant_id, "")


def _base_repo_name(model: Model) -> str:
    return model.hf_repo.rsplit("/", 1)[-1] if model.hf_repo else model.name


def _command_values(
    fw: Framework, q: FrameworkQuery, backend: str | None
) -> tuple[dict[str, str], list[Note]]:
    """Every placeholder's value, plus notes about guesses made while filling them."""
    notes: list[Note] = []
    values = {"ctx": str(q.context), "quant": q.quant.id, "gpu_count": str(q.gpu_count)}
    values |= _llama_cpp_values(fw, q, backend, notes)
    values |= _ik_values(q)
    values |= _serving_values(fw, q, notes)
    values |= _ollama_values(q)
    values |= _app_values(q)
    if fw.engine == "ktransformers":
        values |= _kt_values(q, notes)
    return values, notes


def _kt_values(q: FrameworkQuery, notes: list[Note]) -> dict[str, str]:
    """KTransformers: the checkpoint in its native precision (an FP8 release, or a published FP8 repo
    of a BF16 one), downloaded once to a local folder both SGLang and KT-Kernel read, and the
    kt-method that precision takes. No FP8 checkpoint known: no command (the caller drops it)."""
    model, quant = q.model, q.quant
    repo = model.hf_repo or model.name
    fp8 = _quant_in(quant, ("FP8",))
    if fp8 and (model.native_quant or "").upper() != "FP8":
        repo = published_repo(model, quant.id) or _published_checkpoint(repo, quant.id)
        if not repo:
            notes.append(
                Note("fw.vllm.no_checkpoint", {"quant": quant.id, "repo": model.hf_repo or model.name})
            )
    local = f"~/models/{repo.rsplit('/', 1)[-1]}" if repo else ""
    # serve_model doubles as "is there something to run": an empty one drops the command.
    return {"repo": repo, "local_dir": local, "kt_method": "FP8" if fp8 else "BF16", "serve_model": repo}


def _llama_cpp_values(
    fw: Framework, q: FrameworkQuery, backend: str | None, notes: list[Note]
) -> dict[str, str]:
    """llama.cpp family: the model file, layers on the GPU, flash attention, KV type, MoE, split."""
    model, quant, count = q.model, q.quant, q.gpu_count
    published = _published_gguf(model, quant)
    if published is not None:
        # A repo known to hold this quant: llama.cpp fetches it (every split part) by its tag.
        model_arg = f"-hf {published.repo}:{quant.id}"
    elif model.gguf_file_stem:
        model_arg = f"-m {_gguf_file(model, quant)}"
    elif model.gguf_repo:
        model_arg = f"-hf {model.gguf_repo}:{quant.id}"
    else:
        model_arg = f"-m {_gguf_file(model, quant)}"
        if quant.format == "gguf" and fw.engine == "llama.cpp":
            notes.append(Note("fw.common.gguf_name_guess", {"file": _gguf_file(model, quant)}))
    moe_flags = ""
    if model.is_moe and q.n_cpu_moe:
        moe_flags = " --cpu-moe" if q.n_cpu_moe >= model.layers else f" --n-cpu-moe {q.n_cpu_moe}"
    kv_quantized = q.kv_cache != FULL_PRECISION_KV
    return {
        "model_arg": model_arg,
        "ngl": str(q.n_gpu_layers) if isinstance(q.n_gpu_layers, int) else "99",
        # A quantized V cache needs flash attention, the CPU backend's too.
        "fa_flags": " -fa on" if backend not in (None, "cpu") or (backend == "cpu" and kv_quantized) else "",
        "kv_flags": f" --cache-type-k {q.kv_cache} --cache-type-v {q.kv_cache}" if kv_quantized else "",
        "moe_flags": moe_flags,
        "split_flags": f" -sm layer -ts {','.join('1' * count)}" if count > 1 else "",
    }


def _ik_values(q: FrameworkQuery) -> dict[str, str]:
    """ik_llama.cpp's own flags. Experts in RAM: -ot exps=CPU (all of them) or --n-cpu-moe N. MLA
    models (DeepSeek V3/R1, Kimi K2): -mla 3 (its default now, said for older builds) and -amb 512,
    the attention batch cap ubergarm's commands use. -rtr (repack at load, no mmap) only when nothing
    runs on the GPU: its README warns that repacked tensors lose their CUDA kernels in a hybrid run.
    No -fmoe: fused MoE is on by default since PR #863 and current builds reject the flag."""
    model = q.model
    moe_flags = ""
    if model.is_moe and q.n_cpu_moe:
        moe_flags = " -ot exps=CPU" if q.n_cpu_moe >= model.layers else f" --n-cpu-moe {q.n_cpu_moe}"
    flags = " -mla 3 -amb 512" if model.attention == "mla" else ""
    if q.cpu_only:
        flags += " -rtr"
    return {"ik_moe_flags": moe_flags, "ik_flags": flags}


def _serving_values(fw: Framework, q: FrameworkQuery, notes: list[Note]) -> dict[str, str]:
    """vLLM / SGLang: what to serve, tensor parallel, dtype, online quantization, KV dtype."""
    model, quant, count = q.model, q.quant, q.gpu_count
    online = next((flag for key, flag in _ONLINE_QUANT_FLAGS.items() if _quant_in(quant, (key,))), None)
    repo = model.hf_repo or model.name
    listed = published_repo(model, quant.id)  # an FP8 / AWQ repo the Hub listing found
    if listed and online:
        online = None  # the published checkpoint is already quantized: serve it as it is
    if quant.format == "gguf":
        serve_model = f"./{_gguf_file(model, quant)} --tokenizer {repo}"
    elif listed:
        serve_model = listed
    elif quant.id.upper() in _UNQUANTIZED or _quant_in(quant, _UNQUANTIZED) or online:
        serve_model = repo
    else:
        published = _published_checkpoint(repo, quant.id)
        if fw.engine in ("vllm", "sglang"):
            # No placeholder in a command people paste: a listed repo, or no command and a note
            # saying none is listed (the caller drops a command whose model is "").
            serve_model = published
            if not published:
                notes.append(Note("fw.vllm.no_checkpoint", {"quant": quant.id, "repo": repo}))
        else:
            serve_model = published or f"<{quant.id} checkpoint of {repo}>"
    tp_flags = ""
    if count > 1 and fw.tensor_parallel:
        tp_flags = f" --tp {count}" if fw.engine == "sglang" else f" --tensor-parallel-size {count}"
    cc = q.gpu.compute_capability
    kv_dtype_flags = ""
    if q.kv_cache != FULL_PRECISION_KV:
        kv_dtype_flags = " --kv-cache-dtype fp8_e5m2" if fw.engine == "sglang" else " --kv-cache-dtype fp8"
    return {
        "serve_model": serve_model,
        "gpu_util": f"{fw.gpu_memory_utilization:g}" if fw.gpu_memory_utilization else "",
        "tp_flags": tp_flags,
        "dtype_flags": " --dtype half" if q.gpu.vendor == "NVIDIA" and cc is not None and cc < 8.0 else "",
        "quant_flags": f" --quantization {online}" if online else "",
        "kv_dtype_flags": kv_dtype_flags,
    }


def _ollama_values(q: FrameworkQuery) -> dict[str, str]:
    """Ollama: a bare library tag downloads Q4_K_M; any other GGUF comes from Hugging Face."""
    model, quant = q.model, q.quant
    published = _published_gguf(model, quant)
    if model.ollama_tag and _quant_in(quant, (_OLLAMA_DEFAULT_QUANT,)):
        ollama_model = model.ollama_tag
    elif published is not None:
        ollama_model = f"hf.co/{published.repo}:{quant.id}"
    elif model.gguf_repo:
        ollama_model = f"hf.co/{model.gguf_repo}:{quant.id}"
    else:
        ollama_model = model.ollama_tag or model.name
    ollama_env = f"OLLAMA_CONTEXT_LENGTH={q.context} "
    if q.kv_cache != FULL_PRECISION_KV:
        ollama_env += f"OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE={q.kv_cache} "
    return {"ollama_env": ollama_env, "ollama_model": ollama_model}


def _app_values(q: FrameworkQuery) -> dict[str, str]:
    """LM Studio, MLX and ExLlama (TabbyAPI): model names, LM Studio's GPU share, ExLlama's cache."""
    model, quant = q.model, q.quant
    # LM Studio: --gpu takes max or the fraction of layers to offload.
    lms_gpu = "max"
    if isinstance(q.n_gpu_layers, int) and q.n_gpu_layers < model.layers:
        lms_gpu = f"{max(q.n_gpu_layers, 0) / model.layers:.2f}"
    bits = _first_int(quant.id) or max(round(quant.bpw), 1)
    return {
        "lms_model": model.gguf_repo or model.name,
        "lms_gpu": lms_gpu,
        "mlx_repo": published_repo(model, quant.id) or f"mlx-community/{_base_repo_name(model)}-{bits}bit",
        "exl_model": f"{_base_repo_name(model)}-{quant.id.lower()}",
        "exl_cache": _EXL_CACHE[q.kv_cache],
        "exl_tp_flags": " --tensor-parallel True" if q.gpu_count > 1 else "",
    }


def render_command(template: str, values: dict[str, str]) -> str:
    """Fill a template; unknown placeholders stay visible as {name} instead of raising."""
    fields = template_fields(template)
    missing = {name: "{" + name + "}" for name in fields if name not in values}
    text = template.format_map(values | missing if missing else values)
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------
# gating


def evaluate(fw: Framework, q: FrameworkQuery, with_command: bool = True) -> FrameworkOption:
    """Judge one framework for the query. `with_command=False` skips filling the launch command and
    its notes: choosing a framework needs only whether each one runs, and filling eight commands
    was most of the cost of an answer."""
    params = _params(fw, q)
    blockers, wsl_only = _os_blockers(fw, q, params)
    fmt_ok = _format_blockers(fw, q, params, blockers)
    # Under WSL the GPU is reached as on Linux, so judge the backend for Linux there.
    backend = _backend_for(fw, q.gpu, "linux" if wsl_only else q.os, q.backend)
    if backend is None and (q.os in fw.os or wsl_only):
        blockers.append(_no_backend(fw, q, params))
    if backend is not None and fmt_ok:
        allowed = fw.format_backends.get(q.quant.format)
        if allowed is not None and backend not in allowed:
            blockers.append(Note("fw.gate.format_backend", params | {"backends": ", ".join(allowed)}))
    if fw.gpu_only and not q.fully_on_gpu:
        blockers.append(Note("fw.gate.needs_full_gpu", params))
    notes: list[Note] = []
    for rule in fw.rules:
        if rule_matches(rule, q, backend):
            (blockers if rule.effect == "block" else notes).append(Note(rule.note, params))

    runnable = not blockers
    command = ""
    show_command = runnable or (wsl_only and len(blockers) == 1)
    if not show_command:
        notes = []  # caveats of a combination that doesn't run only distract from why it doesn't
    if show_command and with_command:
        values, fill_notes = _command_values(fw, q, backend)
        command = render_command(fw.command, values) if values.get("serve_model", "-") else ""
        if command and q.cpu_only and "ngl" in template_fields(fw.command):
            command += _cpu_flags(q)
        notes.extend(fill_notes)
        notes.extend(_framework_notes(fw, q, params))

    # Every card holds its own CUDA context and buffers.
    low, high = fw.overhead_gib
    overhead = (low * q.gpu_count, high * q.gpu_count)
    # Blockers first: they are the answer to "why not".
    return FrameworkOption(
        framework=fw.id,
        runnable=runnable,
        notes=tuple(blockers + notes),
        overhead_gib=overhead,
        command=command,
        backend=backend,
        strengths=tuple(Note(code, params) for code in fw.strengths),
        weaknesses=tuple(Note(code, params) for code in fw.weaknesses),
    )


def _cpu_flags(q: FrameworkQuery) -> str:
    """A CPU-only llama.cpp run: one thread per physical core (SMT threads only contend for the same
    memory bandwidth), and on 2+ sockets the threads spread over the NUMA nodes (docs: --numa)."""
    return (f" -t {q.cpu_threads}" if q.cpu_threads else "") + (" --numa distribute" if q.numa else "")


def _os_blockers(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> tuple[list[Note], bool]:
    """The OS gate: (blockers so far, whether it runs only under WSL)."""
    if q.os in fw.os:
        return [], False
    if fw.wsl and q.os == "windows":
        return [Note("fw.gate.wsl", params)], True
    return [Note("fw.gate.os", params | {"supported": ", ".join(fw.os)})], False


def _format_blockers(
    fw: Framework, q: FrameworkQuery, params: dict[str, object], blockers: list[Note]
) -> bool:
    """The quant gate: whether the framework reads this quant's format (and list); why not in `blockers`."""
    if q.quant.format not in fw.quant_formats:
        blockers.append(Note("fw.gate.format", params | {"formats": ", ".join(fw.quant_formats)}))
        return False
    if not loads(fw, q.quant):
        blockers.append(Note("fw.gate.quant_loader", params))
        return False
    if fw.quants and not _quant_in(q.quant, fw.quants):
        blockers.append(Note("fw.gate.quant_list", params | {"quants": ", ".join(fw.quants)}))
        return False
    return True


def _no_backend(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> Note:
    """Why no backend of the framework drives this card: compute too old, ROCm target, or none."""
    gpu = q.gpu
    if q.backend is not None:
        return Note("fw.gate.asked_backend", params | {"backend": q.backend})
    if gpu.vendor == "NVIDIA" and "cuda" in fw.backends and _below_min_compute(fw, gpu):
        return Note("fw.gate.compute", params)
    rocm_listed = gpu.vendor == "AMD" and "rocm" in fw.backends and fw.rocm_gfx
    if rocm_listed and gpu.gfx_target and gpu.gfx_target not in fw.rocm_gfx:
        return Note("fw.gate.rocm_gfx", params | {"gfx": gpu.gfx_target})
    return Note("fw.gate.no_backend", params)


def runs(fw: Framework, q: FrameworkQuery) -> bool:
    """`evaluate(fw, q).runnable`, without building a single note: the same gates in the same order,
    answering at the first blocker. Choosing a framework needs no more than this."""
    if q.os not in fw.os:
        return False  # blocked outright, or runnable only under WSL: a blocker either way
    if q.quant.format not in fw.quant_formats:
        return False
    if not loads(fw, q.quant) or fw.quants and not _quant_in(q.quant, fw.quants):
        return False
    backend = _backend_for(fw, q.gpu, q.os, q.backend)
    if backend is None:
        return False
    allowed = fw.format_backends.get(q.quant.format)
    if allowed is not None and backend not in allowed:
        return False
    if fw.gpu_only and not q.fully_on_gpu:
        return False
    for rule in fw.rules:
        if rule.effect == "block" and rule_matches(rule, q, backend):
            return False
    return True


def _framework_notes(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> list[Note]:
    """Notes that depend on computed numbers rather than on a catalog rule."""
    out: list[Note] = []
    if fw.gpu_memory_utilization:
        gib = fw.gpu_memory_utilization * q.gpu.memory_gib * q.gpu_count
        out.append(Note("fw.common.preallocates", params | {"util": fw.gpu_memory_utilization, "gib": gib}))
    if fw.library_quants:
        if not q.model.ollama_tag or not _quant_in(q.quant, (_OLLAMA_DEFAULT_QUANT,)):
            code = (
                "fw.ollama.library_variant" if _quant_in(q.quant, fw.library_quants) else "fw.ollama.no_tag"
            )
            if not q.model.gguf_repo and code == "fw.ollama.no_tag":
                code = "fw.ollama.no_source"
            out.append(Note(code, params | {"tag": q.model.ollama_tag, "repo": q.model.gguf_repo}))
        if q.gpu.memory_gib * q.gpu_count < 24:
            out.append(Note("fw.ollama.default_ctx", params))
        out.append(Note("fw.ollama.num_ctx", params))
    if fw.engine == "mlx" or (q.quant.format == "mlx" and fw.id == "lmstudio"):
        out.append(Note("fw.mlx.repo_guess", params))
    if fw.engine.startswith("exllama"):
        out.append(Note("fw.exllama.model_dir", params))
    if q.model.is_moe and q.n_cpu_moe and fw.engine != "llama.cpp":
        out.append(Note("fw.common.moe_offload_llamacpp_only", params))
    return out


def framework_options(
    q: FrameworkQuery, catalog: Catalog | None = None, with_commands: bool = True
) -> tuple[FrameworkOption, ...]:
    """Every catalog framework judged for the query, in catalog order."""
    frameworks = (catalog or default_catalog()).frameworks
    return tuple(evaluate(fw, q, with_commands) for fw in frameworks.values())


# --------------------------------------------------------------------------------------------
# recommendation


def recommend(
    q: FrameworkQuery,
    options: Iterable[FrameworkOption] | None = None,
    catalog: Catalog | None = None,
) -> Recommendation:
    """The best framework for one user chatting on this setup (latency, not throughput)."""
    ok = _runnable(q, options, catalog)
    if not ok:
        return Recommendation(None, Note("fw.rec.none", {"quant": q.quant.id, "gpu": q.gpu.name}))
    params = {"count": q.gpu_count, "quant": q.quant.id, "gpu": q.gpu.name}
    hints: list[Note] = []
    pick, reason = _pick_for_format(ok, q, params, hints)
    if pick is None:
        pick, reason = next(iter(ok)), "fw.rec.only_option"

    easy = _first(ok, ("ollama", "lmstudio") if q.gpu.vendor != "Apple" else ("lmstudio", "ollama"))
    if easy == pick:
        easy = None
    if q.gpu_count == 1 and pick in ("vllm", "sglang"):
        hints.append(Note("fw.rec.hint_concurrency", params))
    alternatives = tuple(fid for fid in ok if fid not in (pick, easy))
    return Recommendation(pick, Note(reason, params | {"framework": pick}), easy, alternatives, tuple(hints))


def _runnable(
    q: FrameworkQuery, options: Iterable[FrameworkOption] | None, catalog: Catalog | None
) -> dict[str, object]:
    """The frameworks that run, by id, in catalog order."""
    if options is not None:
        return {o.framework: o for o in options if o.runnable}
    # Only which frameworks run matters here: ask just that (`runs`), in catalog order.
    frameworks = (catalog or default_catalog()).frameworks
    return {fw.id: fw for fw in frameworks.values() if runs(fw, q)}


def _pick_for_format(
    ok: dict[str, object], q: FrameworkQuery, params: dict[str, object], hints: list[Note]
) -> tuple[str | None, str]:
    """(framework, reason code) by the card and the quant's format; None when none of the usual
    picks runs. A multi-card GGUF setup that tensor parallel would suit gets a hint."""
    fmt = q.quant.format
    if q.quant.loaders and not _quant_in(q.quant, ("EXL2", "EXL3")):
        # Only some engines read the file (ik_llama.cpp's own types): the first of them that runs.
        return _first(ok, q.quant.loaders), "fw.rec.quant_loader"
    if q.gpu.vendor == "Apple":
        return _first(ok, ("mlx", "llama.cpp")), "fw.rec.apple"
    if fmt == "serving":
        if _quant_in(q.quant, ("EXL2", "EXL3")):
            return _first(ok, ("exllamav3", "exllamav2")), "fw.rec.exllama"
        reason = "fw.rec.vllm_tp" if q.gpu_count > 1 else "fw.rec.serving"
        return _first(ok, ("vllm", "sglang", "exllamav2")), reason
    if fmt == "gguf":
        nvidia_tp = q.gpu.vendor == "NVIDIA" and (q.gpu.compute_capability or 0) >= 7.5
        if q.gpu_count > 1 and nvidia_tp and q.os == "linux" and q.fully_on_gpu:
            hints.append(Note("fw.rec.hint_vllm_tp", params))
        reason = "fw.rec.llamacpp_multi" if q.gpu_count > 1 else "fw.rec.llamacpp"
        if q.model.is_moe and q.n_cpu_moe and not q.cpu_only and "ik_llama.cpp" in ok and "llama.cpp" in ok:
            # A MoE model with its experts in RAM: the paired measurements show the ik_llama.cpp fork
            # ahead (1.1-1.7x prefill, 1.1x decode on the same box), but mainline is what people run
            # (prebuilt for every OS, `--n-cpu-moe`): it stays the pick and its line names the fork
            # (fw.rec.llamacpp_ik); ik is the pick where only it reads the file, or when asked for.
            # On the CPU alone the CPU line names ik the same way (fw.rec.llamacpp_cpu).
            reason = "fw.rec.llamacpp_ik"
        if q.cpu_only:
            reason = "fw.rec.llamacpp_cpu"
        return _first(ok, ("llama.cpp",)), reason
    if fmt == "mlx":
        return _first(ok, ("mlx", "lmstudio")), "fw.rec.apple"
    return None, ""


def _first(ok: dict[str, object], order: tuple[str, ...]) -> str | None:
    return next((fid for fid in order if fid in ok), None)
