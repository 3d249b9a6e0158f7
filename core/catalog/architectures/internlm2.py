"""InternLM2 / 2.5 (`internlm2`, Shanghai AI Lab): the llama layout under other tensor names.

wqkv is q, k and v fused (heads + 2 x kv_heads rows of head_dim), w1/w3/w2 the gated MLP, two
RMSNorms per layer; the config keys are llama's. `bias: true` would add biases to wqkv, wo and the
MLP, which the schema can't say: refused. Checked against internlm2_5-7b-chat (7,737,708,544).
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config, ConfigError
from core.catalog.architectures.registry import Architecture, register


def _as_llama(t: Config, mt: str) -> Config:
    if t.get("bias"):
        raise ConfigError(f"{mt}: bias (wqkv, wo and MLP biases) is not representable")
    return t


register(Architecture("internlm2", model_types=frozenset({"internlm2"}), normalise=_as_llama, base="dense"))
