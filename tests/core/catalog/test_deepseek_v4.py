"""DeepSeek-V4 (deepseek_v4) read from the real Flash and Pro configs (fixtures with SOURCE.txt):
the tensor layout against the checkpoints' stored element counts (exact), the logical counts against
the model cards, the KV cache against vLLM's published figure, and the weights at the native FP8."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.catalog.architectures.deepseek_v4 import stored_elements
from core.catalog.from_config import ConfigError, read_config
from core.catalog.loader import default_catalog
from core.estimator.memory import kv_cache_bytes, kv_read_bytes, kv_shape
from core.estimator.weights import weight_breakdown

FIXTURES = Path(__file__).parent / "hf_configs"
CATALOG = default_catalog()
FLASH, PRO = "deepseek-ai__DeepSeek-V4-Flash", "deepseek-ai__DeepSeek-V4-Pro"

# "参数总量" of the weight scans quoted in each SOURCE.txt: stored tensor elements (FP4 experts
# packed two per byte plus their scales, FP8 block scales), MTP block included.
STORED = {FLASH: 158_069_433_298, PRO: 861_608_274_846}
# Model cards (huggingface.co/deepseek-ai/DeepSeek-V4-*): Flash 284B total / 13B activated, Pro 1.6T /
# 49B. The totals leave out the MTP block; the activated counts leave out the input embedding.
CARD = {FLASH: (284e9, 13e9, 0.5e9), PRO: (1.6e12, 49e9, 0.5e9)}
# Checkpoint bytes in the same SOURCE.txt ("148.66 GB" / "805.33 GB", in GiB), MTP block included.
CHECKPOINT_GIB = {FLASH: 148.66, PRO: 805.33}


def _config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / name / "config.json").read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("name", [FLASH, PRO])
def test_layout_reproduces_the_stored_element_count_exactly(name: str) -> None:
    assert stored_elements(_config(name)) == STORED[name]


@pytest.mark.parametrize("name", [FLASH, PRO])
def test_counts_match_the_model_card(name: str) -> None:
    reading = read_config(_config(name), repo=name.replace("__", "/"))
    total, active, rounding = CARD[name]
    m = reading.model
    embedding = m.vocab * m.hidden
    if name == FLASH:  # "284B": three digits, the 0.5 % goal applies
        assert abs(reading.params.decoder / total - 1) <= 0.005
    else:  # "1.6T" is rounded to 0.05T
        assert abs(reading.params.decoder - total) <= 0.05e12
    assert abs(reading.params.active - embedding - active) <= rounding
    assert reading.params.mtp > 0 and m.mtp_layers == 1


def test_flash_fields() -> None:
    m = read_config(_config(FLASH)).model
    assert (m.attention, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim) == ("csa", 43, 4096, 64, 1, 512)
    assert (m.experts, m.experts_active, m.shared_experts, m.moe_intermediate_size) == (256, 6, 1, 2048)
    assert (m.q_lora_rank, m.o_lora_rank, m.o_groups, m.hc_mult, m.hash_layers) == (1024, 1024, 8, 4, 3)
    assert len(m.kv_compress_ratios) == 43 and m.kv_compress_ratios[:4] == (0, 0, 4, 128)
    assert (m.native_quant, m.native_expert_quant, m.max_context, m.tied_embeddings) == (
        "FP8",
        "MXFP4",
        1048576,
        False,
    )
    assert m.params_b == 284.33 and m.active_params_b == 13.8


def test_kv_cache_matches_vllm_figure_for_pro_at_1m() -> None:
    # vLLM's DeepSeek-V4 blog (vllm.ai/blog/deepseek-v4): ~9.62 GiB per sequence in BF16 at 1M.
    m = read_config(_config(PRO)).model
    assert kv_shape(m).full_values_per_token == 30 * (128 + 32) + 31 * 4
    gib = kv_cache_bytes(m, 2**20, "bf16", CATALOG) / 2**30
    assert gib == pytest.approx(9.62, rel=0.01)


def test_kv_read_picks_top_k_in_csa_layers() -> None:
    m = read_config(_config(FLASH)).model
    # short context: everything cached is read, the window holds all of it
    short = kv_read_bytes(m, 64, "f16", CATALOG) - kv_shape(m).state_bytes
    assert short == 2 * (64 * 512 * 43 + 21 * 16 * (128 + 512) + 20 * 0)
    # 64K deep: a ratio-4 layer reads its 16,384 indexer keys but only 512 of its 16,384 entries
    deep = kv_read_bytes(m, 65536, "f16", CATALOG) - kv_shape(m).state_bytes
    expected = 128 * 512 * 43 + 21 * (16384 * 128 + 512 * 512) + 20 * 512 * 512
    assert deep == 2 * expected
    assert deep < kv_cache_bytes(m, 65536, "f16", CATALOG)


@pytest.mark.parametrize("name", [FLASH, PRO])
def test_native_fp8_weights_match_the_checkpoint(name: str) -> None:
    reading = read_config(_config(name))
    wb = weight_breakdown(reading.model, CATALOG.quants["FP8"], CATALOG)
    # the checkpoint also holds the MTP block (at the same 4.25 / 8 bits mix) and FP8 block scales
    mtp_share = reading.params.mtp / (reading.params.decoder + reading.params.mtp)
    checkpoint = CHECKPOINT_GIB[name] * 2**30 * (1 - mtp_share)
    assert abs(wb.total_bytes / checkpoint - 1) <= 0.005
    # FP4 experts: far below an all-FP8 file
    assert wb.total_bytes < 0.6 * reading.params.decoder


def test_refuses_what_the_layout_does_not_cover() -> None:
    config = _config(FLASH)
    with pytest.raises(ConfigError, match="deepseek_v4: compress_ratios"):
        read_config(dict(config, compress_ratios=[0, 4]))
    with pytest.raises(ConfigError, match="deepseek_v4: num_key_value_heads"):
        read_config(dict(config, num_key_value_heads=8))


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("ds-v4-flash", "deepseek-v4-flash"),
        ("DeepSeek V4 Pro", "deepseek-v4-pro"),
        ("dsv4 flash", "deepseek-v4-flash"),
    ],
)
def test_catalog_aliases_resolve(text: str, model_id: str) -> None:
    from core.understanding.resolve import resolve_model

    found = resolve_model(text, CATALOG)
    assert found.confident and found.best_id == model_id


def test_bare_v4_asks_between_flash_and_pro_never_v3() -> None:
    from core.understanding.resolve import resolve_model

    found = resolve_model("deepseek v4", CATALOG)
    assert not found.confident
    assert {found.candidates[0][0], found.candidates[1][0]} == {"deepseek-v4-flash", "deepseek-v4-pro"}
