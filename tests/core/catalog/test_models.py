"""Consistency checks for catalogs/models.toml.

Every check is parametrised by model id so a failure names the entry; the parameter recount is the
check that catches a bad edit of an architecture constant.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict

import pytest

from core.catalog.loader import CATALOG_DIR, load_catalog
from core.catalog.model import Model

CATALOG = load_catalog()
MODELS = CATALOG.models
IDS = sorted(MODELS)
REFERENCE_DIR = CATALOG_DIR.parent.parent / "shared" / "reference"

# Relative tolerance of the recount. The reference rounds params_b to 2 decimals (0.49 for
# Qwen2.5-0.5B is 0.8 % off the exact 0.494); every catalog row recounts within 1 %.
PARAM_TOLERANCE = 0.015


def normalise_alias(text: str) -> str:
    """How aliases are compared: case, spaces, '-', '_', ':' and '/' do not count; dots do
    ('qwen2.5-1.5b' must not meet a hypothetical 'qwen25-15b')."""
    return re.sub(r"[\s\-_:/]+", "", text.strip().lower())


# ---------------------------------------------------------------- parameter recount


def _attention(m: Model, layer: int) -> int:
    h = m.hidden
    if m.attention == "linear_hybrid" and not _is_global(m, layer):
        return _linear_attention(m)
    if m.attention == "csa":
        return _csa_attention(m, layer)
    if m.attention == "mla":
        assert m.qk_nope_dim and m.v_head_dim and m.kv_lora_rank and m.qk_rope_dim
        qk = m.qk_nope_dim + m.qk_rope_dim
        if m.q_lora_rank:
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.heads * qk
        else:
            q = h * m.heads * qk
        kv = h * (m.kv_lora_rank + m.qk_rope_dim) + m.kv_lora_rank
        kv += m.kv_lora_rank * m.heads * (m.qk_nope_dim + m.v_head_dim)
        indexer = 0
        if m.dsa_index_heads and m.dsa_index_head_dim:  # DeepSeek sparse attention: wq_b, wk, weights
            rank = m.q_lora_rank or h
            indexer = (rank * m.dsa_index_heads + h) * m.dsa_index_head_dim + h * m.dsa_index_heads
        return q + kv + m.heads * m.v_head_dim * h + indexer
    dim, kv_heads = m.head_dim, m.kv_heads
    if m.attention == "swa_hybrid" and _is_global(m, layer):  # Gemma 4: own KV shape on global layers
        dim, kv_heads = m.global_head_dim or dim, m.global_kv_heads or kv_heads
    q_dim = m.heads * dim
    kv_dim = kv_heads * dim
    q = h * q_dim * (2 if m.attn_output_gate else 1)
    bias = q_dim + 2 * kv_dim if m.attn_bias else 0
    return q + 2 * h * kv_dim + q_dim * h + bias


def _csa_attention(m: Model, layer: int) -> int:
    """DeepSeek-V4: low-rank q, one K=V head, grouped low-rank output; the compressor (wkv, wgate
    of twice the width at ratio 4) and at ratio 4 the indexer (wq_b, weights_proj, its compressor)."""
    h, hd, rank = m.hidden, m.head_dim, m.q_lora_rank or 0
    attn = h * rank + rank * m.heads * hd + h * hd + m.heads * hd * (m.o_lora_rank or 0)
    attn += (m.o_groups or 0) * (m.o_lora_rank or 0) * h
    ratio = m.kv_compress_ratios[layer]
    if ratio:
        attn += 2 * h * hd * (2 if ratio == 4 else 1)
    if ratio == 4:
        index = (m.dsa_index_heads or 0) * (m.dsa_index_head_dim or 0)
        attn += rank * index + h * (m.dsa_index_heads or 0) + 2 * h * 2 * (m.dsa_index_head_dim or 0)
    return attn


def _linear_attention(m: Model) -> int:
    h = m.hidden
    if m.linear_kind == "lightning":
        d = m.heads * m.head_dim  # q, k, v, output gate, out projection, norm
        return 5 * h * d + d
    nk, nv = m.linear_key_heads, m.linear_value_heads
    dk, dv, kernel = m.linear_key_head_dim, m.linear_value_head_dim, m.linear_conv_kernel
    assert nk and nv and dk and dv and kernel, f"{m.id}: linear_* shapes missing"
    in_proj = h * (2 * nk * dk + 2 * nv * dv) + h * 2 * nv  # qkvz + beta/alpha
    conv = (2 * nk * dk + nv * dv) * kernel
    return in_proj + conv + 2 * nv + dv + nv * dv * h


def _is_global(m: Model, layer: int) -> bool:
    """Full-attention layers of a hybrid are evenly spaced, the last of each period."""
    if not m.global_layers:
        return False
    period = m.layers // m.global_layers
    return layer % period == period - 1 and layer // period < m.global_layers


def _ffn(h: int, width: int, kind: str) -> int:
    return (3 if kind == "gated" else 2) * h * width


def _pattern_recount(m: Model) -> tuple[float, float]:
    """Block-per-layer hybrids (Nemotron-H): one norm per layer and the block its character names."""
    h, kernel = m.hidden, m.linear_conv_kernel or 0
    groups, state = m.linear_key_heads or 0, m.linear_key_head_dim or 0
    heads, inner = m.linear_value_heads or 0, (m.linear_value_heads or 0) * (m.linear_value_head_dim or 0)
    bc = 2 * groups * state
    mamba = h * (2 * inner + bc + heads) + (inner + bc) * (kernel + 1) + 3 * heads + inner + inner * h
    expert = _ffn(h, m.moe_intermediate_size or 0, m.ffn_kind)
    always = (m.shared_experts or 0) * expert + h * (m.experts or 0) + (m.experts or 0)  # + router bias
    if m.moe_latent_size:  # LatentMoE: routed experts in the latent width, two projections around them
        expert = _ffn(m.moe_latent_size, m.moe_intermediate_size or 0, m.ffn_kind)
        always += 2 * h * m.moe_latent_size
    q_dim, kv_dim = m.heads * m.head_dim, m.kv_heads * m.head_dim
    attention = 2 * h * q_dim + 2 * h * kv_dim + ((q_dim + 2 * kv_dim) if m.attn_bias else 0)
    stored = {"M": mamba, "*": attention, "-": _ffn(h, m.intermediate_size or 0, m.ffn_kind)}
    used = dict(stored, E=(m.experts_active or 0) * expert + always)
    stored["E"] = (m.experts or 0) * expert + always
    head = m.vocab * h * (1 if m.tied_embeddings else 2) + h
    total = head + sum(stored[c] + h for c in m.layer_pattern)
    active = head + sum(used[c] + h for c in m.layer_pattern)
    # Granite 4.0-H: each layer's FFN (and its norm) follows the mixer, named by layer_ffn.
    total += sum(stored[c] + h for c in m.layer_ffn)
    active += sum(used[c] + h for c in m.layer_ffn)
    return total / 1e9, active / 1e9


def recount(m: Model) -> tuple[float, float]:
    """(total, active) parameters in billions from the architecture fields alone."""
    if m.layer_pattern:
        return _pattern_recount(m)
    h = m.hidden
    embeddings = m.vocab * h * (1 if m.tied_embeddings else 2)
    total = active = embeddings
    if m.per_layer_input_size:  # Per-Layer Embeddings: the table is looked up, not computed with
        width = m.per_layer_input_size * m.layers
        projections = h * width + m.layers * 2 * h * m.per_layer_input_size  # model proj, gate + proj
        total += m.vocab * width + projections
        active += projections
    first_wide = m.layers - m.kv_shared_layers if m.double_wide_mlp else m.layers
    for layer in range(m.layers):
        attn = _attention(m, layer) + 2 * h  # two norms
        total += attn
        active += attn
        step = m.moe_layer_step
        if m.is_moe and layer >= (m.dense_layers or 0) and layer % step == step - 1:
            assert m.moe_intermediate_size and m.experts_active
            expert = _ffn(h, m.moe_intermediate_size, m.ffn_kind)
            always = (m.shared_experts or 0) * expert + h * (m.experts or 0)  # shared + router
            total += (m.experts or 0) * expert + always
            active += m.experts_active * expert + always
        else:
            assert m.intermediate_size, f"{m.id}: intermediate_size missing"
            dense = _ffn(h, m.intermediate_size * (2 if layer >= first_wide else 1), m.ffn_kind)
            total += dense
            active += dense
    return total / 1e9, active / 1e9


@pytest.mark.parametrize("model_id", IDS)
def test_params_recount_from_architecture(model_id: str) -> None:
    m = MODELS[model_id]
    total, active = recount(m)
    assert abs(total / m.params_b - 1) <= PARAM_TOLERANCE, (
        f"{model_id}: params_b {m.params_b} but architecture gives {total:.2f}"
    )
    assert abs(active / m.active_params_b - 1) <= PARAM_TOLERANCE, (
        f"{model_id}: active_params_b {m.active_params_b} but architecture gives {active:.2f}"
    )


# ---------------------------------------------------------------- per-entry shape checks


@pytest.mark.parametrize("model_id", IDS)
def test_active_and_moe_fields(model_id: str) -> None:
    m = MODELS[model_id]
    assert 0 < m.active_params_b <= m.params_b, f"{model_id}: active_params_b > params_b"
    if m.is_moe:
        assert m.experts and m.experts_active, f"{model_id}: experts / experts_active"
        assert m.experts > m.experts_active > 0, f"{model_id}: experts must exceed experts_active > 0"
        assert m.moe_intermediate_size, f"{model_id}: moe_intermediate_size missing"
        assert m.active_params_b < m.params_b, f"{model_id}: MoE active_params_b must be < params_b"
        if m.dense_layers:
            assert m.intermediate_size, f"{model_id}: dense_layers need intermediate_size"
    elif m.per_layer_input_size:
        # Per-Layer Embeddings: the per-layer table is a lookup, no part of the compute per token
        table = m.vocab * m.layers * m.per_layer_input_size / 1e9
        assert abs(m.active_params_b - (m.params_b - table)) < 0.01 * m.params_b, model_id
    else:
        assert m.active_params_b == m.params_b, f"{model_id}: dense model needs active == total"
        assert m.experts_active is None and not m.shared_experts, f"{model_id}: expert fields on dense"
    assert m.intermediate_size or m.is_moe, f"{model_id}: intermediate_size missing"


@pytest.mark.parametrize("model_id", IDS)
def test_heads(model_id: str) -> None:
    m = MODELS[model_id]
    assert m.heads % m.kv_heads == 0, f"{model_id}: kv_heads {m.kv_heads} must divide heads {m.heads}"
    # Real range: Gemma 3 27B 0.76x hidden ... GLM-4.5-Air 3.0x (96 heads x 128 on 4096); MLA uses
    # the value head (DeepSeek 128 x 128 on 7168 = 2.3x).
    per_head = m.v_head_dim if m.attention == "mla" and m.v_head_dim else m.head_dim
    ratio = m.heads * per_head / m.hidden
    if m.attention == "csa" and m.o_groups and m.o_lora_rank:
        # DeepSeek-V4: 64-128 heads of 512 (8-9x hidden) leave through a grouped low rank, whose
        # width (o_groups x o_lora_rank, 2.0-2.3x hidden) is the real output projection.
        ratio = m.o_groups * m.o_lora_rank / m.hidden
    assert 0.5 <= ratio <= 3.2, f"{model_id}: heads x head_dim = {ratio:.2f} x hidden, implausible"


@pytest.mark.parametrize("model_id", IDS)
def test_attention_kind_fields(model_id: str) -> None:
    m = MODELS[model_id]
    if m.attention == "swa_hybrid":
        assert m.sliding_window, f"{model_id}: sliding_window missing"
        assert m.global_layers is not None, f"{model_id}: global_layers missing"
    if m.global_layers is not None:
        assert 0 <= m.global_layers <= m.layers, f"{model_id}: global_layers > layers"
    if m.attention == "mla":
        assert m.kv_lora_rank and m.qk_rope_dim, f"{model_id}: kv_lora_rank / qk_rope_dim missing"
        assert m.qk_nope_dim and m.v_head_dim, f"{model_id}: qk_nope_dim / v_head_dim missing"
    if m.attention == "linear_hybrid":
        assert m.linear_state_mib and m.linear_state_mib > 0, f"{model_id}: linear_state_mib missing"
        assert m.global_layers, f"{model_id}: global_layers missing"
        assert m.linear_kind, f"{model_id}: linear_kind missing"
    else:
        assert m.linear_state_mib is None, f"{model_id}: linear_state_mib on a non-hybrid model"


def _gdn_state_mib(m: Model) -> float:
    """Gated DeltaNet per-sequence state as llama.cpp sizes it: ssm (v_heads x dk x dv) plus conv
    ((kernel - 1) x (2 k_heads dk + v_heads dv)) values in f32, for every linear layer."""
    assert m.linear_key_heads and m.linear_value_heads and m.linear_key_head_dim
    assert m.linear_value_head_dim and m.linear_conv_kernel and m.global_layers is not None
    ssm = m.linear_value_heads * m.linear_key_head_dim * m.linear_value_head_dim
    conv_channels = 2 * m.linear_key_heads * m.linear_key_head_dim
    conv_channels += m.linear_value_heads * m.linear_value_head_dim
    conv = (m.linear_conv_kernel - 1) * conv_channels
    return (m.layers - m.global_layers) * (ssm + conv) * 4 / 2**20


@pytest.mark.parametrize(
    "model_id", [i for i in IDS if MODELS[i].linear_kind == "gated_deltanet"] or ["none"]
)
def test_gated_deltanet_state_matches_shapes(model_id: str) -> None:
    if model_id == "none":
        pytest.skip("no Gated DeltaNet models")
    m = MODELS[model_id]
    assert m.linear_state_mib == pytest.approx(_gdn_state_mib(m), rel=1e-6), (
        f"{model_id}: linear_state_mib {m.linear_state_mib} != {_gdn_state_mib(m):.3f} from shapes"
    )


@pytest.mark.parametrize("model_id", IDS)
def test_context_and_metadata(model_id: str) -> None:
    m = MODELS[model_id]
    assert m.rope_scaled_context is not None, f"{model_id}: rope_scaled_context missing"
    assert m.rope_scaled_context >= m.max_context, f"{model_id}: rope_scaled_context < max_context"
    assert re.fullmatch(r"20\d\d-(0[1-9]|1[0-2])", m.release), f"{model_id}: release {m.release!r}"
    assert 0 <= m.popularity <= 100, f"{model_id}: popularity out of range"
    assert m.hf_repo.count("/") == 1, f"{model_id}: hf_repo {m.hf_repo!r}"
    assert bool(m.gguf_repo) == bool(m.gguf_file_stem), f"{model_id}: gguf_repo / gguf_file_stem pair"
    if m.gguf_file_stem:
        assert not m.gguf_file_stem.endswith(".gguf"), f"{model_id}: gguf_file_stem is a stem"
    if m.ollama_tag:
        assert re.fullmatch(r"[a-z0-9.\-]+:[a-z0-9.\-]+", m.ollama_tag), f"{model_id}: ollama_tag"
    assert m.source, f"{model_id}: source missing"
    assert m.mtp_layers >= 0, f"{model_id}: mtp_layers"


@pytest.mark.parametrize("model_id", IDS)
def test_draft_models(model_id: str) -> None:
    m = MODELS[model_id]
    for draft in m.draft_models:
        assert draft in MODELS, f"{model_id}: draft_models names unknown id {draft!r}"
        d = MODELS[draft]
        assert d.params_b < m.params_b, f"{model_id}: draft {draft} is not smaller"
        # llama.cpp accepts a draft whose vocabulary differs by at most 128 tokens.
        assert abs(d.vocab - m.vocab) <= 128, f"{model_id}: draft {draft} vocabulary differs"


# ---------------------------------------------------------------- catalog-wide checks


def test_aliases_unique_after_normalisation() -> None:
    owners: dict[str, set[str]] = defaultdict(set)
    for m in MODELS.values():
        for text in (m.id, *m.aliases):
            owners[normalise_alias(text)].add(m.id)
    clashes = {key: sorted(ids) for key, ids in owners.items() if len(ids) > 1}
    assert not clashes, f"aliases shared by several models: {clashes}"


@pytest.mark.parametrize("model_id", IDS)
def test_no_bare_size_aliases(model_id: str) -> None:
    # A bare "27b" is resolved by popularity, never pinned to one model.
    for alias in MODELS[model_id].aliases:
        assert not re.fullmatch(r"[\d.]+\s*[bm]", alias.strip().lower()), (
            f"{model_id}: bare size alias {alias!r}"
        )


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        ("gemma-3-27b", "gemma-2-27b"),
        ("qwen3-32b", "qwen2.5-32b"),
        ("qwen3-32b", "deepseek-r1-distill-qwen-32b"),
        ("llama-3.3-70b", "llama-3-70b"),
        ("llama-3.3-70b", "llama-3.1-70b"),
        ("llama-3.1-8b", "llama-3-8b"),
        ("qwen3-8b", "qwen2.5-7b"),
        ("qwen3-14b", "qwen2.5-14b"),
        ("deepseek-r1", "deepseek-v3"),
    ],
)
def test_popularity_orders_same_size_readings(winner: str, loser: str) -> None:
    assert MODELS[winner].popularity > MODELS[loser].popularity, f"{winner} should outrank {loser}"


def test_every_reference_model_is_present() -> None:
    path = REFERENCE_DIR / "models.csv"
    if not path.exists():
        pytest.skip(f"reference not available at {path}")
    with path.open(newline="", encoding="utf-8") as fh:
        reference_ids = {row["id"] for row in csv.DictReader(fh)}
    missing = sorted(reference_ids - set(MODELS))
    assert not missing, f"reference model ids missing from models.toml: {missing}"


def test_writer_reproduces_every_entry() -> None:
    """`models sync` rewrites entries with core.catalog.model_toml: it must write the file's own layout,
    so replacing one entry leaves the others byte for byte."""
    from core.catalog.model_toml import entry_id, model_to_toml, split_entries, upsert

    text = (CATALOG_DIR / "models.toml").read_text(encoding="utf-8")
    _, tables = split_entries(text)
    for table in tables:
        assert model_to_toml(MODELS[entry_id(table)]).rstrip("\n") == table, entry_id(table)
    assert upsert(text, MODELS[IDS[0]]) == text
