"""GLM-4 9B in transformers' own form (`glm`, GlmForCausalLM: THUDM/glm-4-9b-chat-hf, glm-4-9b-hf).

q/k/v carry a bias (GlmConfig's default), the MLP is a fused gate_up, two norms per layer (no
sandwich norms: those are GLM-4-0414's `glm4`), partial rotary (changes neither count nor KV).
Checked against glm-4-9b-chat-hf (9,399,951,360). THUDM's remote-code `chatglm` form is not read.
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config
from core.catalog.architectures.registry import Architecture, register


def _as_llama(t: Config, mt: str) -> Config:
    return {**t, "attention_bias": bool(t.get("attention_bias", True))}


register(Architecture("glm", model_types=frozenset({"glm"}), normalise=_as_llama, base="dense"))
