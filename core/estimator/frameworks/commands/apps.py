"""LM Studio, MLX and ExLlama (TabbyAPI) command values: model names, LM Studio's GPU share and
ExLlama's cache type and tensor parallel."""

from __future__ import annotations

from core.catalog.published_files import published_repo
from core.estimator.frameworks.commands.sources import base_repo_name
from core.estimator.frameworks.query import FrameworkQuery

# ExLlama's cache types by the KV cache types of the query.
_EXL_CACHE = {"f16": "FP16", "q8_0": "Q8", "q4_0": "Q4"}


def _first_int(text: str) -> int | None:
    """The first run of digits in `text` ("Q4_K_M" -> 4), None when it has none."""
    digits = ""
    for ch in text:
        if ch.isdigit():
            digits += ch
        elif digits:
            break
    return int(digits) if digits else None


def app_values(q: FrameworkQuery) -> dict[str, str]:
    """LM Studio, MLX and ExLlama (TabbyAPI): model names, LM Studio's GPU share, ExLlama's cache."""
    model, quant = q.model, q.quant
    # LM Studio: --gpu takes max or the fraction of layers to offload.
    lms_gpu = "max"
    if isinstance(q.n_gpu_layers, int) and q.n_gpu_layers < model.layers:
        lms_gpu = f"{max(q.n_gpu_layers, 0) / model.layers:.2f}"
    # MLX community repos are named by bits: the quant's first number, else its rounded bpw.
    bits = _first_int(quant.id) or max(round(quant.bpw), 1)
    return {
        "lms_model": model.gguf_repo or base_repo_name(model),
        "lms_gpu": lms_gpu,
        "mlx_repo": published_repo(model, quant.id) or f"mlx-community/{base_repo_name(model)}-{bits}bit",
        "exl_model": f"{base_repo_name(model)}-{quant.id.lower()}",
        "exl_cache": _EXL_CACHE[q.kv_cache],
        "exl_tp_flags": " --tensor-parallel True" if q.gpu_count > 1 else "",
    }
