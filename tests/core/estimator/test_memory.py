"""The memory model against what llama.cpp logged (../shared/reference/measured_memory.csv)."""

from __future__ import annotations

import dataclasses

import pytest

from core.catalog.loader import default_catalog
from core.estimator.memory import MIB, compute_buffer_bytes, kv_cache_bytes, kv_read_bytes, usable_memory

CAT = default_catalog()


def model(model_id: str):
    return CAT.models[model_id]


@pytest.mark.parametrize(
    ("model_id", "ctx", "kv_type", "mib"),
    [
        ("qwen3-32b", 8192, "f16", 2048.0),  # vLLM/llama.cpp logs: 2048 MiB
        ("qwen3-235b-a22b", 32768, "f16", 6016.0),  # ik_llama.cpp log on an RTX 5090
        ("qwen3-235b-a22b", 32768, "q8_0", 3196.0),  # q8_0 blocks: 34 bytes per 32 values
    ],
)
def test_kv_cache_matches_logged_buffers(model_id, ctx, kv_type, mib):
    assert kv_cache_bytes(model(model_id), ctx, kv_type, CAT) / MIB == pytest.approx(mib, rel=0.001)


def test_gemma3_sliding_window_layers_hold_window_plus_ubatch():
    gemma = model("gemma-3-27b")
    # Without SWA (an old build) the log showed 15872 MiB at 32k; with it only 10 of 62 layers grow.
    full = dataclasses.replace(gemma, attention="full")
    assert kv_cache_bytes(full, 32768, "f16", CAT) / MIB == pytest.approx(15872.0, rel=0.001)
    swa = kv_cache_bytes(gemma, 32768, "f16", CAT) / MIB
    per_token_layer = 2 * 16 * 128 * 2
    expected = (10 * 32768 + 52 * 1536) * per_token_layer / MIB
    assert swa == pytest.approx(expected)


def test_mla_caches_the_latent_only():
    r1 = model("deepseek-r1")
    per_token = 61 * (512 + 64) * 2
    assert kv_cache_bytes(r1, 4096, "f16", CAT) == pytest.approx(per_token * 4096)


def test_linear_hybrid_has_constant_state():
    nxt = model("qwen3-next-80b-a3b")
    small, big = kv_cache_bytes(nxt, 4096, "f16", CAT), kv_cache_bytes(nxt, 8192, "f16", CAT)
    state = nxt.linear_state_mib * MIB
    assert big - state == pytest.approx(2 * (small - state))


def test_decode_reads_more_cache_deeper_in_the_context():
    m = model("llama-3.1-8b")
    assert kv_read_bytes(m, 0, "f16", CAT) == 0
    assert kv_read_bytes(m, 8192, "f16", CAT) == pytest.approx(2 * kv_read_bytes(m, 4096, "f16", CAT))


def test_compute_buffer_without_flash_attention_matches_v100_log():
    # OpenLLaMA-7B-v2 on a V100 (ggml-org/ci): 70.5 MiB at n_ctx 512 and 164 MiB at 2048, no FA.
    openllama = dataclasses.replace(model("llama-2-7b"), intermediate_size=11008)
    assert compute_buffer_bytes(openllama, 512, CAT, False) / MIB == pytest.approx(70.5, rel=0.1)
    assert compute_buffer_bytes(openllama, 2048, CAT, False) / MIB == pytest.approx(164.0, rel=0.1)


def test_usable_memory_depends_on_os_and_platform():
    v100 = CAT.gpus["tesla-v100-32g-pcie"]
    headless = usable_memory(v100, 32, 1, "linux", CAT).total_gib
    windows = usable_memory(v100, 32, 1, "windows", CAT).total_gib
    assert 31 < headless < 32 and windows < headless
    # The desktop sits on one card: two cards lose it once.
    two = usable_memory(v100, 32, 2, "windows", CAT).total_gib
    assert two == pytest.approx(2 * headless - (headless - windows), rel=1e-6)
    mac = usable_memory(CAT.gpus["apple-m2-ultra"], 192, 1, "macos", CAT).total_gib
    assert mac == pytest.approx(144)
