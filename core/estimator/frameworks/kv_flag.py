"""The flag a serving engine takes for its quantized (FP8) KV cache, one home for the command
(commands/serving.py) and the way out's words (ways_out/kv_quant.py, core/render/advice.py), so
the line "KV cache fp8 (--kv-cache-dtype fp8)" names the flag the `$` command carries."""

from __future__ import annotations

from core.catalog.framework import Framework

# vLLM: --kv-cache-dtype fp8 (docs.vllm.ai quantization/quantized_kvcache); SGLang: fp8_e5m2
# (docs.sglang.io advanced_features/server_arguments: "To enable fp8 kv cache quantization, add
# --kv-cache-dtype fp8_e5m2").
_FLAGS = {"vllm": "--kv-cache-dtype fp8", "sglang": "--kv-cache-dtype fp8_e5m2"}


def serving_kv_flag(fw: Framework | None) -> str:
    """The engine's FP8 KV-cache flag; "" for an engine that isn't vLLM / SGLang (llama.cpp says
    its own cache type, q8_0 / q4_0)."""
    return _FLAGS.get(fw.engine, "") if fw is not None else ""


__all__ = ["serving_kv_flag"]
