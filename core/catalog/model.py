"""A language model's architecture constants and family facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# csa: DeepSeek-V4 compressed sparse attention (per-layer KV compression, see kv_compress_ratios).
AttentionKind = Literal["full", "swa_hybrid", "mla", "linear_hybrid", "csa"]


@dataclass(frozen=True, slots=True)
class Model:
    id: str  # e.g. "gemma-3-27b"
    family: str  # e.g. "Gemma 3"
    name: str  # e.g. "gemma-3-27b-it"
    aliases: tuple[str, ...]
    params_b: float  # total parameters, billions
    active_params_b: float  # parameters used per token (== params_b for dense models)
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int  # explicit: Gemma/Qwen3 differ from hidden/heads
    vocab: int
    max_context: int  # native context (what the model was trained / configured for)
    attention: AttentionKind = "full"
    # Largest context usable with rope scaling (YaRN etc.); == max_context when none is documented.
    rope_scaled_context: int | None = None
    sliding_window: int | None = None  # swa_hybrid: window of the local layers
    global_layers: int | None = None  # swa_hybrid / linear_hybrid: layers with full softmax attention
    kv_lora_rank: int | None = None  # mla: latent size
    qk_rope_dim: int | None = None  # mla: decoupled rope key size
    # linear_hybrid: constant recurrent state of all linear-attention layers, per sequence, in MiB
    # (f32, as llama.cpp allocates it).
    linear_state_mib: float | None = None
    intermediate_size: int | None = None  # dense FFN width
    experts: int | None = None  # routed experts (MoE)
    experts_active: int | None = None  # routed experts per token
    shared_experts: int | None = None
    moe_intermediate_size: int | None = None  # width of one expert
    dense_layers: int | None = None  # MoE models whose first k layers are dense
    # LatentMoE (Nemotron 3 Super / Ultra): the routed experts work in this smaller width, between
    # a down projection hidden -> latent and an up projection latent -> hidden (ffn_latent_down/up,
    # shared by all experts of a layer); the router and the shared expert stay at hidden. None: the
    # experts read and write the hidden width.
    moe_latent_size: int | None = None
    tied_embeddings: bool = False  # output head shares the embedding matrix
    release: str = ""  # "YYYY-MM"
    popularity: int = 50  # 0..100, breaks ties between readings of the same name ("27B")
    mtp_layers: int = 0  # native multi-token-prediction layers usable for speculative decoding
    draft_models: tuple[str, ...] = ()  # catalog ids of small same-tokenizer models
    hf_repo: str = ""  # original weights, e.g. "google/gemma-3-27b-it"
    gguf_repo: str = ""  # a well-known GGUF repo, e.g. "bartowski/google_gemma-3-27b-it-GGUF"
    gguf_file_stem: str = ""  # file name without quant, e.g. "google_gemma-3-27b-it"
    ollama_tag: str = ""  # e.g. "gemma3:27b"
    # Native format of the released weights when not BF16 (e.g. "MXFP4" for gpt-oss, "FP8" DeepSeek).
    native_quant: str = ""
    # --- Per-tensor shape details (additive; used to size weights tensor by tensor) ---
    # MLA (DeepSeek V3/R1, Kimi K2): query low-rank size (None = plain q projection), the non-rope
    # part of each query/key head and the value head size. Per-layer K/V come from kv_lora_rank.
    q_lora_rank: int | None = None
    qk_nope_dim: int | None = None
    v_head_dim: int | None = None
    attn_bias: bool = False  # q/k/v projections carry biases (Qwen2/2.5, GLM, gpt-oss)
    attn_output_gate: bool = False  # q_proj is doubled to gate the attention output (Qwen3-Next/3.5)
    ffn_kind: Literal["gated", "plain"] = "gated"  # gated: gate+up+down (SwiGLU/GeGLU); plain: up+down
    # MoE layer placement: after the first `dense_layers` layers, every `moe_layer_step`-th layer is MoE
    # (index % step == step - 1); the others use the dense FFN. Llama 4 Maverick alternates (2).
    moe_layer_step: int = 1
    # linear_hybrid: kind of the linear-attention layers and their shapes. Gated DeltaNet (Qwen3-Next,
    # Qwen3.5): key/value heads and head dims plus the short conv kernel. Lightning (MiniMax-M1) uses
    # heads x head_dim like softmax attention.
    # Mamba-2 (Nemotron-H, Granite 4 hybrid, Falcon-H1): linear_value_heads x linear_value_head_dim is
    # the SSM width, linear_key_heads x linear_key_head_dim the grouped B/C width (n_groups x d_state).
    linear_kind: Literal["", "gated_deltanet", "lightning", "mamba2"] = ""
    linear_key_heads: int | None = None
    linear_value_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel: int | None = None
    # Hybrids whose layers are single blocks, not a mixer + an FFN each (Nemotron-H's
    # hybrid_override_pattern): one character per layer, "M" a Mamba-2 mixer, "*" softmax attention,
    # "-" a dense MLP, "E" a MoE (routed + shared experts). Empty: every layer is mixer + FFN. The
    # weights are built layer by layer from it and the KV cache grows in the "*" layers only.
    layer_pattern: str = ""
    # Pattern hybrids whose every layer is a mixer *and* an FFN (Granite 4.0-H): one character per
    # layer for the FFN after the layer_pattern mixer, "E" routed experts + shared experts (no
    # routing bias), "-" a dense FFN of intermediate_size. Empty: layer_pattern's single blocks.
    layer_ffn: str = ""
    # MLA with DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the lightning indexer's heads and
    # head size per layer (its weights; it also caches one index_head_dim key per token and layer)
    # and how many past tokens each query attends to.
    dsa_index_heads: int | None = None
    dsa_index_head_dim: int | None = None
    dsa_index_topk: int | None = None
    # swa_hybrid whose global layers have their own KV shape (Gemma 4: 4 KV heads of 512 on the full
    # layers, 16 of 256 on the sliding ones). None: the same as kv_heads / head_dim.
    global_kv_heads: int | None = None
    global_head_dim: int | None = None
    # Per-Layer Embeddings (Gemma 3n, Gemma 4 E2B / E4B; config.json hidden_size_per_layer_input): a
    # second token table of vocab x (layers x this) values, one slice per layer. It is looked up, not
    # multiplied: llama.cpp keeps it in host memory with the token embedding (per_layer_token_embd)
    # and a token reads one row of it, so it counts in the weights but not in the bytes a decoded
    # token reads. Each layer adds a gate (hidden -> this) and a projection back (this -> hidden),
    # the model one projection hidden -> layers x this. None: no per-layer inputs.
    per_layer_input_size: int | None = None
    # KV sharing (num_kv_shared_layers): the last this-many layers reuse the K/V of the last earlier
    # layer of their kind and cache nothing themselves (their k/v weights are still stored).
    kv_shared_layers: int = 0
    # use_double_wide_mlp (Gemma 4 E2B): the KV-shared layers' FFN is twice intermediate_size wide.
    double_wide_mlp: bool = False
    # csa (DeepSeek-V4): per decoder layer, how many tokens pool into one cached entry of head_dim
    # (0: the sliding window only). Every layer also keeps the last `sliding_window` tokens whole,
    # and ratio-4 layers cache one dsa_index_head_dim indexer key per 4 tokens.
    kv_compress_ratios: tuple[int, ...] = ()
    # csa: grouped low-rank output projection (o_groups blocks -> o_lora_rank each), the number of
    # hyper-connection residual streams, and the leading layers routed by a token-id table.
    o_lora_rank: int | None = None
    o_groups: int | None = None
    hc_mult: int | None = None
    hash_layers: int = 0
    # Native type of the routed experts when it differs from native_quant (DeepSeek-V4: FP8 weights
    # with FP4 experts, stored in the MXFP4 layout of e2m1 + one ue8m0 scale per 32).
    native_expert_quant: str = ""
    # What the release is tuned for, beyond general chat: tasks a question can name (catalogs/intents.toml
    # [task], e.g. "code"). A which-model list asked for that task puts these models first; the
    # estimate never reads it.
    uses: tuple[str, ...] = ()
    notes: str = ""
    source: str = ""

    @property
    def is_moe(self) -> bool:
        return bool(self.experts)
