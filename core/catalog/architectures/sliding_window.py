"""Sliding-window hybrids (`swa_hybrid`): local layers attend over the last `sliding_window` tokens,
`global_layers` of them (every n-th) over the whole context.

Read by the generic readers from layer_types / sliding_window_pattern (Gemma 2/3, Cohere 2,
gpt-oss, ...) and by `gemma4` (whose global layers have their own KV head count and head size:
`global_kv_heads`, `global_head_dim`). Sized here: the local layers cache at most window + ubatch
tokens (llama.cpp's SWA cache), the global layers the whole context.
"""

from __future__ import annotations

from core.catalog.architectures.parts import KvShape, Tensor, full_kv_shape, gqa_tensors, is_global, opt
from core.catalog.architectures.registry import Architecture, register
from core.catalog.model import Model


def _kv_shape(model: Model) -> KvShape:
    if not (model.sliding_window and model.global_layers):
        return full_kv_shape(model)
    per_layer = 2 * model.kv_heads * model.head_dim  # K and V
    # KV sharing (Gemma 3n, Gemma 4 E models): the last kv_shared_layers layers read an earlier
    # layer's cache and hold none, so only the layers before them are counted.
    shared = max(int(opt(model, "kv_shared_layers") or 0), 0)
    cached = model.layers - shared
    n_global = sum(1 for i in range(cached) if is_global(model, i)) if shared else model.global_layers
    local = cached - n_global
    # Gemma 4: the global layers have their own KV head count and size.
    per_global = 2 * (model.global_kv_heads or model.kv_heads) * (model.global_head_dim or model.head_dim)
    return KvShape(per_global * n_global, per_layer * local, model.sliding_window, 0.0)


def _mixer(model: Model, layer: int) -> list[Tensor]:
    if is_global(model, layer):
        # Gemma 4: the global layers have their own head size and KV head count.
        head_dim = opt(model, "global_head_dim") or model.head_dim
        return gqa_tensors(model, layer, head_dim, opt(model, "global_kv_heads") or model.kv_heads)
    return gqa_tensors(model, layer)


register(Architecture("swa_hybrid", attention=frozenset({"swa_hybrid"}), kv_shape=_kv_shape, mixer=_mixer))
