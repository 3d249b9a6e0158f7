"""An inference framework: what it runs, where, with what overhead and launch command.

The hard facts (which OS, which backends, which quant formats, minimum CUDA compute) are plain
fields; everything that depends on a combination ("FP8 below compute 8.9 runs weight-only",
"BF16 on Volta needs --dtype half") is a `Rule` in the catalog, so a new caveat is a data edit with
its source next to it, not a code change. See core/estimator/frameworks/ (gates.py, rules.py) for
how they are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.catalog.kv_cache import KvCacheType
from core.catalog.platforms import OS_FAMILIES

# The words the catalog may use; the catalog test checks every entry against them.
BACKENDS = ("cuda", "rocm", "metal", "vulkan", "sycl", "cann", "cpu")  # cann: Huawei Ascend NPUs
OPERATING_SYSTEMS = OS_FAMILIES  # core/catalog/platforms.py
QUANT_FORMATS = ("gguf", "serving", "mlx")
RuleEffect = Literal["block", "caveat", "tip"]
# The bare words `Framework.bare_quants` may key on: a width ("4" for "4bit", "4-bit", "4位"), an
# "int" width ("int4": GPTQ's own naming, read apart from "4bit" where the framework tells them
# apart) and the two 16-bit precisions ("fp16" also for "半精度").
BARE_QUANT_KEYS = ("2", "3", "4", "5", "6", "8", "int4", "int8", "bf16", "fp16")


@dataclass(frozen=True, slots=True)
class Rule:
    """A condition on the setup and what it means for one framework.

    Every condition that is set must hold (empty tuple / None = don't care). `effect` "block" makes
    the framework not runnable for the setup; "caveat" and "tip" only add the note.
    """

    note: str  # message code in catalogs/messages/frameworks.toml
    effect: RuleEffect = "caveat"
    quants: tuple[str, ...] = ()  # quant ids or aliases, case-insensitive
    formats: tuple[str, ...] = ()  # Quant.format values
    vendors: tuple[str, ...] = ()
    arch_families: tuple[str, ...] = ()
    model_families: tuple[str, ...] = ()  # Model.family values ("DeepSeek-V4"): what the framework runs
    os: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()  # the backend the framework would use on this setup
    compute_below: float | None = None  # NVIDIA compute capability strictly below
    compute_at_least: float | None = None
    kv_cache: tuple[KvCacheType, ...] = ()
    multi_gpu: bool | None = None
    partial_offload: bool | None = None  # not everything on the GPU(s)
    moe: bool | None = None
    source: str = ""
    cpu_only: bool | None = None  # no layer on a card (false: a hybrid CPU + GPU run only)


@dataclass(frozen=True, slots=True)
class SpecSupport:
    """Speculative-decoding flag templates of one framework ("" = not supported)."""

    draft: str = ""  # placeholders: {draft_file}, {draft_repo}, {draft_ngl}
    ngram: str = ""
    mtp: str = ""  # placeholder {mtp_method}
    eagle: str = ""  # placeholder {eagle_repo}
    # Model family -> method name where the framework needs one per family (vLLM's deepseek_mtp...).
    mtp_methods: dict[str, str] = field(default_factory=dict)
    mtp_default_method: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class Framework:
    id: str  # "llama.cpp", "vllm", "ollama", "lmstudio", ...
    name: str
    aliases: tuple[str, ...]
    kind: str  # "cli/server", "server", "desktop", ...
    engine: str  # the engine underneath: ollama and LM Studio run llama.cpp
    quant_formats: tuple[str, ...]  # Quant.format values it loads ("gguf", "serving", "mlx")
    quants: tuple[str, ...]  # explicit quant ids it runs (empty = every quant of its formats)
    backends: tuple[str, ...]  # "cuda", "rocm", "metal", "vulkan", "sycl", "cpu", in preference order
    overhead_gib: tuple[float, float]  # runtime overhead beyond weights + KV + compute (low, high)
    os: tuple[str, ...]  # "linux", "windows", "macos"
    command: str  # launch template with {placeholders} (see core/estimator/frameworks/commands/)
    # Minimum NVIDIA compute capability for its CUDA backend (None = no CUDA backend).
    min_compute_capability: float | None = None
    notes: str = ""
    # Backend -> the OSes it works on for this framework (ROCm is Linux-only in vLLM, not in
    # llama.cpp); a backend not listed works on every OS in `os`.
    backend_os: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Quant format -> the backends that can load it (LM Studio's MLX engine is Metal only).
    format_backends: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # ROCm gfx targets it supports (empty = don't know / any); checked when the GPU has a gfx_target.
    rocm_gfx: tuple[str, ...] = ()
    # Runs in WSL2 on Windows although not natively (vLLM, SGLang).
    wsl: bool = False
    # Quants with a ready-made download in the framework's own library (Ollama tags); a quant of a
    # loadable format outside this list still runs, from a Hugging Face GGUF.
    library_quants: tuple[str, ...] = ()
    # Everything must sit in GPU memory: no partial CPU offload worth using.
    gpu_only: bool = False
    # Keeps a MoE's routed experts in RAM and the rest on the card (llama.cpp --n-cpu-moe / -ot);
    # False: only whole layers go to RAM (Ollama's num_gpu), and a MoE too big for the card is priced so.
    expert_offload: bool = True
    # Fraction of GPU memory it pre-allocates (vLLM --gpu-memory-utilization), None = allocates as
    # needed.
    gpu_memory_utilization: float | None = None
    tensor_parallel: bool = False  # splits each layer across GPUs (adds bandwidth)
    strengths: tuple[str, ...] = ()  # message codes
    weaknesses: tuple[str, ...] = ()  # message codes
    rules: tuple[Rule, ...] = ()
    speculative: SpecSupport | None = None
    url: str = ""
    source: str = ""
    # False: priced when the user names it (transformers, MLC LLM, gpt-fast), never the plan's own
    # pick (core/estimator/frameworks/recommend.py): for one user it is not what the plan would run.
    plan_pick: bool = True
    # The quants its table shows when it is named (empty: the estimator's ladder for its format).
    ladder: tuple[str, ...] = ()
    # Speed-model factors (term -> factor, the terms of core/estimator/speed.py TERMS keyed on this
    # framework: "framework", "framework_hbm", "framework_moe") until the fit has rows of its own:
    # a fitted factor in calibration.toml wins. `prior_source` names the measured rows they rest on.
    decode_prior: dict[str, float] = field(default_factory=dict)
    prefill_prior: dict[str, float] = field(default_factory=dict)
    prior_source: str = ""
    # A bare width or precision word -> the quant it means with this framework (keys in
    # BARE_QUANT_KEYS): "vllm 4bit" is an AWQ checkpoint, "transformers 4bit" bitsandbytes NF4, not
    # the GGUF Q4_K_M the word means alone (core/understanding/bare_quants.py). A key not listed keeps
    # the word's own reading (catalogs/understanding.toml [quant.synonyms]).
    bare_quants: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked at load so a typo fails naming the entry: the target must be a quant the framework
        # lists (a framework that runs every quant of its formats is checked against the quant
        # catalog in tests/core/catalog/test_framework_bare_quants.py: this file has no quants).
        unknown = sorted(set(self.bare_quants) - set(BARE_QUANT_KEYS))
        if unknown:
            raise ValueError(f"bare_quants: unknown key(s) {unknown}; known: {list(BARE_QUANT_KEYS)}")
        listed = {q.upper() for q in self.quants}
        outside = sorted(t for t in self.bare_quants.values() if listed and t.upper() not in listed)
        if outside:
            raise ValueError(f"bare_quants: {outside} not in this framework's quants {list(self.quants)}")
