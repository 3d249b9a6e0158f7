"""Known families the schema can't describe yet: a config of these types is refused with the reason
(the reply names the repo and says its architecture can't be read), never sized as something else."""

from __future__ import annotations

from core.catalog.architectures.registry import Architecture, register

register(
    Architecture(
        "falcon_h1",
        model_types=frozenset({"falcon_h1"}),
        # Attention and a Mamba-2 mixer side by side in every layer: the KV cache is the attention
        # half's, plus a constant SSM state per layer -- not what any reader here counts.
        unsupported="attention and Mamba-2 in parallel in every layer (hybrid heads not read yet)",
    )
)
register(
    Architecture(
        "nemotron",
        model_types=frozenset({"nemotron"}),
        unsupported="Nemotron/Minitron: squared-ReLU MLP and LayerNorm1P (not read yet)",
    )
)
register(
    Architecture(
        "deci",
        model_types=frozenset({"deci", "nemotron-nas"}),
        unsupported="Nemotron Super/Ultra (DeciLM): a different block per layer (block_configs)",
    )
)
