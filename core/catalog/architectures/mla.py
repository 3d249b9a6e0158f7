"""Multi-head latent attention (`mla`): DeepSeek-V2/V3/R1/V3.2, Kimi K2/K2.5, GLM-5 (glm_moe_dsa).

Read as the generic MoE layout (`transformer`) with MLA attention: queries through an optional low
rank (q_a, q_a_norm, q_b), keys and values from one compressed latent (kv_a_mqa of kv_lora_rank +
the decoupled rope key, kv_a_norm, kv_b), and for DeepSeek sparse attention (V3.2, GLM-5) the
lightning indexer's weights per layer. llama.cpp and vLLM cache the latent plus the rope key per
token and layer; V is read from the same latent, so nothing else grows.
"""

from __future__ import annotations

from typing import Any

from core.catalog.architectures.fields import Config
from core.catalog.architectures.parts import DEFAULT_Q_LORA_RANK, KvShape, Tensor, gqa_tensors, opt
from core.catalog.architectures.registry import Architecture, register
from core.catalog.architectures.transformer import _int, _moe_fields, _opt_int, generic_reader
from core.catalog.model import Model

MLA_TYPES = frozenset({"deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32", "glm_moe_dsa", "kimi_k25"})


def _mla_fields(t: Config, mt: str) -> dict[str, Any]:
    fields = _moe_fields(t, mt)
    nope, rope = _int(t, "qk_nope_head_dim", mt), _int(t, "qk_rope_head_dim", mt)
    fields.update(
        attention="mla",
        kv_heads=fields["heads"],
        head_dim=nope + rope,
        kv_lora_rank=_int(t, "kv_lora_rank", mt),
        qk_rope_dim=rope,
        qk_nope_dim=nope,
        v_head_dim=_int(t, "v_head_dim", mt),
        q_lora_rank=_opt_int(t, "q_lora_rank"),
        attn_bias=False,
        dsa_index_heads=_opt_int(t, "index_n_heads"),
        dsa_index_head_dim=_opt_int(t, "index_head_dim"),
        dsa_index_topk=_opt_int(t, "index_topk"),
    )
    return fields


def indexer_params(m: Model) -> int:
    """DeepSeek-V3.2 / GLM-5 sparse-attention indexer of one layer: wq_b, wk, weights_proj."""
    heads, dim = m.dsa_index_heads, m.dsa_index_head_dim
    if not heads or not dim:
        return 0
    return (m.q_lora_rank or m.hidden) * heads * dim + m.hidden * dim + m.hidden * heads


def _mixer_params(m: Model, full: bool) -> int:
    """One layer's MLA attention with its q_a / kv_a layernorms and the indexer (k_norm included)."""
    h = m.hidden
    nope, rope, v = m.qk_nope_dim or 0, m.qk_rope_dim or 0, m.v_head_dim or 0
    rank = m.kv_lora_rank or 0
    if m.q_lora_rank:
        q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.heads * (nope + rope)
    else:
        q = h * m.heads * (nope + rope)
    kv = h * (rank + rope) + rank + rank * m.heads * (nope + v)
    attention = q + kv + m.heads * v * h + indexer_params(m)
    norms = (m.q_lora_rank or 0) + (m.kv_lora_rank or 0)  # q_a / kv_a layernorms
    return attention + norms + 2 * (m.dsa_index_head_dim or 0)  # + the indexer's k_norm weight, bias


def _kv_shape(model: Model) -> KvShape:
    per_layer = (model.kv_lora_rank or 512) + (model.qk_rope_dim or 64)
    return KvShape(per_layer * model.layers, 0, 0, 0.0)


def _mixer(model: Model, layer: int) -> list[Tensor]:
    """MLA tensors of one layer as llama.cpp names them (plain GQA when the latent is not given)."""
    if not model.kv_lora_rank:
        return gqa_tensors(model, layer)
    h, nh, hd = model.hidden, model.heads, model.head_dim
    rope = model.qk_rope_dim or 64
    nope = opt(model, "qk_nope_dim") or max(hd - rope, 0)
    v_head = opt(model, "v_head_dim") or nope or hd
    q_lora = opt(model, "q_lora_rank") or DEFAULT_Q_LORA_RANK
    kv_lora = model.kv_lora_rank
    # attn_kv_b counts as attn_v for llama.cpp's rules (newer converters split it into
    # attn_k_b/attn_v_b of the same total size).
    return [
        Tensor("attn_q_a", "other", layer, h, q_lora),
        Tensor("attn_q_a_norm", "other", layer, q_lora, 1, one_d=True),
        Tensor("attn_q_b", "other", layer, q_lora, nh * (nope + rope)),
        Tensor("attn_kv_a_mqa", "other", layer, h, kv_lora + rope),
        Tensor("attn_kv_a_norm", "other", layer, kv_lora, 1, one_d=True),
        Tensor("attn_kv_b", "attn_v", layer, kv_lora, nh * (nope + v_head)),
        Tensor("attn_output", "attn_output", layer, nh * v_head, h),
    ]


register(
    Architecture(
        "mla",
        model_types=MLA_TYPES,
        attention=frozenset({"mla"}),
        read=generic_reader(_mla_fields),
        kv_shape=_kv_shape,
        mixer=_mixer,
        mixer_params=_mixer_params,
    )
)
