"""Notes on a runnable framework that depend on the setup's numbers rather than on a catalog rule:
memory preallocation, Ollama's library tags and context, guessed repos and folders."""

from __future__ import annotations

from core.catalog.framework import Framework
from core.community.pasted import OLLAMA_DEFAULT_QUANT
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery
from core.i18n import Note


def framework_notes(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> list[Note]:
    """Notes that depend on computed numbers rather than on a catalog rule."""
    out: list[Note] = []
    if fw.gpu_memory_utilization:
        util = q.gpu_memory_utilization or fw.gpu_memory_utilization  # the share asked, as the command
        gib = util * q.gpu.memory_gib * q.gpu_count
        out.append(Note("fw.common.preallocates", params | {"util": util, "gib": gib}))
    if fw.library_quants:
        out.extend(_ollama_notes(fw, q, params))
    if fw.engine == "mlx" or (q.quant.format == "mlx" and fw.id == "lmstudio"):
        out.append(Note("fw.mlx.repo_guess", params))
    if fw.engine.startswith("exllama"):
        out.append(Note("fw.exllama.model_dir", params))
    if q.model.is_moe and q.n_cpu_moe and fw.engine != "llama.cpp":
        out.append(Note("fw.common.moe_offload_llamacpp_only", params))
    return out


def _ollama_notes(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> list[Note]:
    """A framework with a model library (Ollama): where the model comes from and its context size."""
    out: list[Note] = []
    if not q.model.ollama_tag or not quant_in(q.quant, (OLLAMA_DEFAULT_QUANT,)):
        out.append(Note(_source_code(fw, q), params | {"tag": q.model.ollama_tag, "repo": q.model.gguf_repo}))
    if q.gpu.memory_gib * q.gpu_count < 24:
        out.append(Note("fw.ollama.default_ctx", params))
    out.append(Note("fw.ollama.num_ctx", params))
    return out


def _source_code(fw: Framework, q: FrameworkQuery) -> str:
    """Which note says where a model that is not the bare library tag comes from."""
    if quant_in(q.quant, fw.library_quants):
        return "fw.ollama.library_variant"
    return "fw.ollama.no_tag" if q.model.gguf_repo else "fw.ollama.no_source"
