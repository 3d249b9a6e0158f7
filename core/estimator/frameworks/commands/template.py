"""Command templates: the placeholders one may use, parsing a template's field names (once per
template, cached, so rendering a grid of answers stays cheap) and filling it."""

from __future__ import annotations

from functools import lru_cache
from string import Formatter

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
        "ub_flags",
        "np_flags",
        "server_ctx",
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
        "seq_flags",
        # Ollama, LM Studio, MLX, ExLlama (TabbyAPI)
        "ollama_env",
        "ollama_model",
        "lms_model",
        "lms_gpu",
        "mlx_repo",
        "exl_model",
        "exl_cache",
        "exl_tp_flags",
        # Hugging Face transformers, MLC LLM, gpt-fast (priced when named; commands/torch_apps.py)
        "hf_quant_import",
        "hf_quant_kwargs",
        "mlc_model",
        "mlc_tp_flags",
        "gf_repo",
        "gf_quantize",
        "gf_checkpoint",
        "gf_launch",
        # KTransformers (SGLang + KT-Kernel)
        "repo",
        "local_dir",
        "kt_method",
        "gguf_repo",
        "gguf_dir",
    }
)


@lru_cache(maxsize=256)
def template_fields(template: str) -> frozenset[str]:
    """Placeholder names used by a command template, parsed once per template."""
    return frozenset(name for _, name, _, _ in Formatter().parse(template) if name)


def render_command(template: str, values: dict[str, str]) -> str:
    """Fill a template; unknown placeholders stay visible as {name} instead of raising."""
    fields = template_fields(template)
    missing = {name: "{" + name + "}" for name in fields if name not in values}
    text = template.format_map(values | missing if missing else values)
    return " ".join(text.split())
