"""llama.cpp and ik_llama.cpp command values: the model file, layers on the GPU, flash attention,
KV cache type, MoE experts in RAM, the split over cards, ik's own flags and CPU-only flags."""

from __future__ import annotations

from core.catalog.framework import Framework
from core.catalog.kv_cache import FULL_PRECISION_KV
from core.estimator.frameworks.commands.sources import gguf_file, published_gguf
from core.estimator.frameworks.query import FrameworkQuery
from core.i18n import Note


def _model_arg(fw: Framework, q: FrameworkQuery, notes: list[Note]) -> str:
    """-hf REPO:QUANT when a repo is known to hold the quant, else -m FILE (a guessed name noted)."""
    model, quant = q.model, q.quant
    published = published_gguf(model, quant)
    if published is not None:
        # A repo known to hold this quant: llama.cpp fetches it (every split part) by its tag.
        return f"-hf {published.repo}:{quant.id}"
    if model.gguf_file_stem:
        return f"-m {gguf_file(model, quant)}"
    if model.gguf_repo:
        return f"-hf {model.gguf_repo}:{quant.id}"
    if quant.format == "gguf" and fw.engine == "llama.cpp":
        notes.append(Note("fw.common.gguf_name_guess", {"file": gguf_file(model, quant)}))
    return f"-m {gguf_file(model, quant)}"


def _moe_flags(q: FrameworkQuery, all_flag: str) -> str:
    """Routed experts in RAM: `all_flag` for every layer's, --n-cpu-moe N for the first N."""
    if not (q.model.is_moe and q.n_cpu_moe):
        return ""
    return f" {all_flag}" if q.n_cpu_moe >= q.model.layers else f" --n-cpu-moe {q.n_cpu_moe}"


def llama_cpp_values(
    fw: Framework, q: FrameworkQuery, backend: str | None, notes: list[Note]
) -> dict[str, str]:
    """llama.cpp family: the model file, layers on the GPU, flash attention, KV type, MoE, split."""
    count = q.gpu_count
    model_arg = _model_arg(fw, q, notes)
    kv_quantized = q.kv_cache != FULL_PRECISION_KV
    split_flag = q.split_flags.get(fw.id, "-sm layer")
    if split_flag.startswith("-sm tensor") and kv_quantized:
        notes.append(Note("fw.llama.tensor_kv", {}))
        split_flag = "-sm layer"
    return {
        "model_arg": model_arg,
        "ngl": str(q.n_gpu_layers) if isinstance(q.n_gpu_layers, int) else "99",
        # A quantized V cache needs flash attention, the CPU backend's too.
        "fa_flags": " -fa on" if backend not in (None, "cpu") or (backend == "cpu" and kv_quantized) else "",
        "kv_flags": f" --cache-type-k {q.kv_cache} --cache-type-v {q.kv_cache}" if kv_quantized else "",
        "moe_flags": _moe_flags(q, "--cpu-moe"),
        # A physical batch other than the default (-b at least as large: llama.cpp caps -ub at -b).
        "ub_flags": f" -b {max(q.ubatch, 2048)} -ub {q.ubatch}" if q.ubatch and q.ubatch != 512 else "",
        # The split mode asked (`-sm tensor`, ik's `-sm graph`), else llama.cpp's default layer split.
        "split_flags": f" {split_flag} -ts {_split(q)}" if count > 1 else "",
        # N users: N parallel slots, and -c is every slot's context together (llama-server --help:
        # "-np, --parallel N: number of parallel sequences to decode"; the context is shared by them).
        "server_ctx": str(q.context * q.users),
        "np_flags": f" -np {q.users}" if q.users > 1 else "",
    }


def _split(q: FrameworkQuery) -> str:
    """-ts ratios: each card's memory for mixed cards (llama.cpp's order), else an even split."""
    if len(q.tensor_split) == q.gpu_count:
        return ",".join(f"{memory:g}" for memory in q.tensor_split)
    return ",".join("1" * q.gpu_count)


def ik_values(q: FrameworkQuery) -> dict[str, str]:
    """ik_llama.cpp's own flags. Experts in RAM: -ot exps=CPU (all of them) or --n-cpu-moe N. MLA
    models (DeepSeek V3/R1, Kimi K2): -mla 3 (its default now, said for older builds) and -amb 512,
    the attention batch cap ubergarm's commands use. -rtr (repack at load, no mmap) only when nothing
    runs on the GPU: its README warns that repacked tensors lose their CUDA kernels in a hybrid run.
    No -fmoe: fused MoE is on by default since PR #863 and current builds reject the flag."""
    flags = " -mla 3 -amb 512" if q.model.attention == "mla" else ""
    if q.cpu_only:
        flags += " -rtr"
    return {"ik_moe_flags": _moe_flags(q, "-ot exps=CPU"), "ik_flags": flags}


def cpu_flags(q: FrameworkQuery) -> str:
    """A CPU-only llama.cpp run: one thread per physical core (SMT threads only contend for the same
    memory bandwidth), and on 2+ sockets the threads spread over the NUMA nodes (docs: --numa)."""
    return (f" -t {q.cpu_threads}" if q.cpu_threads else "") + (" --numa distribute" if q.numa else "")
