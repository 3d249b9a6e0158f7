"""What a chat question was read into: the cards (count, memory size), the model, the rest typed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.catalog.kv_cache import KvCacheType
from core.catalog.platforms import OsFamily
from core.understanding.query import Intent
from core.understanding.resolution import Resolution

MIN_FUZZY_WORD = 5  # letters a leftover word needs before it may be read as a misspelt model word
MAX_COUNT = 64  # "128卡" is a cluster question, not a count we can estimate; larger numbers are noise
MIN_CONTEXT, MAX_CONTEXT = 256, 16 * 1024 * 1024  # tokens; outside this a "context" is a typo or a joke
MAX_CARD_MEMORY_GIB = 4096.0  # what an estimate accepts (core/estimator/setup.py)
_CJK_PIECE = re.compile(r"^[\u3400-\u9fff\uf900-\ufaff]$")


@dataclass(frozen=True, slots=True)
class ParsedCard:
    """One kind of card the question names, how many, and how it joins the one before it: "+" (in
    the same machine: "5090 + 4090"), "/" (either: "A100/A800 80G"), "vs" (compared), "" (first)."""

    res: Resolution
    count: int = 1
    joiner: str = ""


@dataclass(frozen=True, slots=True)
class ParsedQuestion:
    raw: str
    gpu: Resolution | None = None
    gpu_count: int = 1
    model: Resolution | None = None
    quants: tuple[str, ...] = ()  # quant ids the user asked for, in the order given
    contexts: tuple[int, ...] = ()  # context lengths in tokens ("32k" -> 32768)
    os: OsFamily | None = None
    framework: str | None = None
    intent: Intent = "general"
    cards: tuple[ParsedCard, ...] = ()  # every card named, the first is `gpu` x `gpu_count`
    machines: int = 1  # "3台8*L20": machines, each with the cards
    host_ram_gib: float | None = None  # system RAM ("+ 64gb ram", "内存 128G"), never the card's
    host_ram_type: str | None = None  # "DDR4" / "DDR5" / "LPDDR5X" when said
    host_ram_channels: int | None = None  # "双通道", "8-channel": memory channels when said
    kv_type: KvCacheType | None = None  # "q8 kv", "-ctk q8_0": the KV cache, not the weights
    laptop: bool = False  # a laptop word, or a laptop card
    size_b: float | None = None  # a model size as typed ("72B", "140亿" -> 14.0)
    notes: tuple[tuple[str, str], ...] = ()  # (code, what was typed): values read but not used
    backend: str | None = None  # "on vulkan", "用rocm", "纯CPU" -> vulkan / rocm / cpu (backend_words.py)
    backends: tuple[str, ...] = ()  # every backend named, in order ("ROCm vs Vulkan": rocm, vulkan)
    cpu: str | None = None  # host CPU id (catalogs/cpus.toml): "7950X", "双路 Xeon Gold 6138" (cpu_words.py)
    cpu_sockets: int | None = None  # "2x EPYC 7763", "双路": sockets said next to the CPU
    # Serving flags pasted with the question (parse_flags.py): `--n-cpu-moe N` (layers whose routed
    # experts sit in RAM) and `--gpu-memory-utilization 0.7` (vLLM's share of each card it takes).
    cpu_moe_layers: int | None = None
    gpu_memory_utilization: float | None = None
    split_mode: str | None = None  # `-sm graph` / `--split-mode row` pasted: multi_gpu.SPLITS' name
    link: str | None = None  # "nvlink" said: what joins the cards (multi_gpu.link_of's names)
    ubatch: int | None = None  # `-ub 4096` pasted: llama.cpp's physical batch
