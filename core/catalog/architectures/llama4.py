"""Llama 4 (`llama4`, Meta: Scout 17B-16E, Maverick 17B-128E): interleaved MoE, chunked attention with
NoPE layers, and a vision tower beside the text model.

Read as the generic MoE layout once its keys are renamed: `intermediate_size` is the expert width,
`intermediate_size_mlp` the dense layers' FFN, one shared expert per MoE layer, every
`interleave_moe_layer_step`-th layer MoE (`moe_layers`, when listed, must be that pattern). q/k are
L2-normed without weights (use_qk_norm adds no parameters).

Attention: the RoPE layers (`no_rope_layers[i]` 1) attend within chunks of `attention_chunk_size`
tokens, the NoPE layers (0; every 4th by default) over the whole context. A chunked layer never
holds more than one chunk, so it is sized as a sliding-window layer of that width (`swa_hybrid`:
the chunk is the window, the NoPE layers are the global ones) -- what llama.cpp's chunked SWA cache
holds too; an actual chunk can hold fewer tokens, never more.

The catalog's params_b is the text decoder alone (Scout 107.77B, Maverick 400.71B); the vision
tower and projector (871,932,416 in both) are the reading's `vision`, which Meta's "109B / 400B
total" include. Checked in tests/core/catalog/test_typed_architectures.py.
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config, ConfigError, LayerwiseReading, int_field, opt_int
from core.catalog.architectures.registry import Architecture, register
from core.catalog.architectures.transformer import read_moe

_NOPE_INTERVAL = 4  # Llama4TextConfig's no_rope_layer_interval default


def _moe_step(t: Config, mt: str, layers: int) -> int:
    step = opt_int(t, "interleave_moe_layer_step", 1) or 1
    listed = t.get("moe_layers")
    if isinstance(listed, list) and listed != list(range(step - 1, layers, step)):
        raise ConfigError(f"{mt}: moe_layers {listed} is not every {step}-th layer (not representable)")
    return step


def _layer_types(t: Config, mt: str, layers: int) -> list[str]:
    """transformers' layer_types: chunked where RoPE is used, full attention in the NoPE layers."""
    rope = t.get("no_rope_layers")
    if not isinstance(rope, list) or not rope:
        interval = opt_int(t, "no_rope_layer_interval", _NOPE_INTERVAL) or _NOPE_INTERVAL
        rope = [int((i + 1) % interval != 0) for i in range(layers)]
    if len(rope) != layers:
        raise ConfigError(f"{mt}: no_rope_layers has {len(rope)} entries for {layers} layers")
    return ["chunked_attention" if uses else "full_attention" for uses in rope]


def _as_moe(t: Config, mt: str) -> Config:
    layers = int_field(t, "num_hidden_layers", mt)
    out = {
        **t,
        "moe_intermediate_size": int_field(t, "intermediate_size", mt),  # the expert width
        "intermediate_size": int_field(t, "intermediate_size_mlp", mt),  # the dense layers' FFN
        "n_shared_experts": 1,
        "decoder_sparse_step": _moe_step(t, mt, layers),
        "sliding_window": None,
        "layer_types": None,
    }
    chunk = opt_int(t, "attention_chunk_size")
    if chunk:  # no chunk size: every layer attends over the whole context
        out.update(sliding_window=chunk, layer_types=_layer_types(t, mt, layers))
    return out


def _vision(mt: str, v: Config) -> int:
    """ViT with LayerNorm and biased attention/MLP, a class token and learned positions, the
    pixel-shuffle adapter MLP and the projector into the text width (the last two without bias)."""
    hidden, inter = int_field(v, "hidden_size", mt), int_field(v, "intermediate_size", mt)
    patch, image = int_field(v, "patch_size", mt), int_field(v, "image_size", mt)
    channels = opt_int(v, "num_channels", 3) or 3
    embed = channels * patch * patch * hidden + hidden + ((image // patch) ** 2 + 1) * hidden
    block = 4 * (hidden * hidden + hidden) + 2 * hidden * inter + inter + hidden + 4 * hidden
    ratio = v.get("pixel_shuffle_ratio", 0.5)
    if not isinstance(ratio, int | float) or ratio <= 0:
        raise ConfigError(f"{mt}: pixel_shuffle_ratio {ratio!r} is not a positive number")
    shuffled = int(hidden / ratio**2)
    adapter_in, out = int_field(v, "projector_input_dim", mt), int_field(v, "projector_output_dim", mt)
    adapter = shuffled * adapter_in + adapter_in * out
    projector = int_field(v, "vision_output_dim", mt) * int_field(v, "text_hidden", mt)
    return embed + 4 * hidden + int_field(v, "num_hidden_layers", mt) * block + adapter + projector


def read_llama4(text: Config, vision: Config | None, mt: str) -> LayerwiseReading:
    reading = read_moe(_as_moe(text, mt), None, mt)
    if vision is None:
        return reading
    towered = {**vision, "text_hidden": int_field(text, "hidden_size", mt)}
    return LayerwiseReading(
        fields=reading.fields,
        total=reading.total,
        active=reading.active,
        vision=_vision(mt, towered),
        mtp=reading.mtp,
        extra=reading.extra,
    )


register(Architecture("llama4", model_types=frozenset({"llama4", "llama4_text"}), read=read_llama4))
