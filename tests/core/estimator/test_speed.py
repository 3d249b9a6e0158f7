"""The speed model's lookups: which fitted factors apply to a setup, matrix throughput, bands."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.estimator import speed
from core.estimator.band import band_for


def test_llama_cpp_family_takes_no_framework_factor() -> None:
    for fw in ("llama.cpp", "lmstudio"):
        keys = dict(speed.efficiency_keys("cuda", "ada", "kquant", True, False, fw))
        assert "framework" not in keys and "framework_moe" not in keys
        assert keys["moe_backend"] == "cuda"


def test_ollama_on_moe_has_its_own_factor() -> None:
    keys = dict(speed.efficiency_keys("cuda", "ampere", "mxfp4", True, True, "ollama"))
    assert keys["framework"] == "ollama" and keys["framework_moe"] == "ollama" and keys["hbm"] == "hbm"
    dense = dict(speed.efficiency_keys("cuda", "ampere", "kquant", False, False, "ollama"))
    assert "framework_moe" not in dense and "moe" not in dense


def test_every_fitted_term_is_a_known_term() -> None:
    table = default_catalog().tables["calibration"]
    for phase in ("decode", "prefill"):
        # attention_arch: prefill's attention share per backend/arch, not an efficiency term
        assert set(table[phase]) - {"backend", "attention_arch"} <= set(speed.TERMS)


def test_decode_efficiency_is_capped() -> None:
    catalog = default_catalog()
    cal = speed.calibration(catalog)
    for gpu in list(catalog.gpus.values())[:40]:
        for fw in ("llama.cpp", "ollama", "mlx"):
            assert 0.0 < speed.decode_efficiency(gpu, "cuda", "Q4_K_M", True, cal, fw) <= 0.95


def test_matrix_rate_uses_tensor_cores_when_only_fp32_is_listed() -> None:
    catalog = default_catalog()
    cal = speed.calibration(catalog)
    spark = catalog.gpus["dgx-spark-gb10"]
    assert spark.fp16_tflops is None and spark.fp32_tflops
    assert speed.matrix_tflops(spark, cal) > spark.fp32_tflops * 1.5
    p40 = catalog.gpus["tesla-p40"]  # Pascal: FP16 at 1/64, llama.cpp computes in FP32
    assert speed.matrix_tflops(p40, cal) == p40.fp32_tflops


def test_framework_bands_are_wider_where_unmeasured() -> None:
    catalog = default_catalog()
    cal = speed.calibration(catalog)
    gpu = catalog.gpus["rtx-4090"]
    measured = band_for(gpu, "cuda", cal, "decode", "ollama")
    unmeasured = band_for(gpu, "cuda", cal, "decode", "exllamav3")
    assert unmeasured.low <= measured.low and unmeasured.high >= measured.high
    assert band_for(gpu, "cuda", cal, "decode", "lmstudio") == band_for(gpu, "cuda", cal)


def test_prefill_flops_grow_with_depth() -> None:
    model = default_catalog().models["llama-3-8b"]
    assert speed.prefill_flops(model, 512, 32768) > speed.prefill_flops(model, 512, 0) * 1.5


def test_mha_prefill_at_depth_streams_more_cache_than_gqa() -> None:
    """Llama-2-7B (one K/V head per query head) reads 8x the cache of a GQA model of the same
    width per query row; at depth 0 there is hardly any."""
    models = default_catalog().models
    mha, gqa = models["llama-2-7b"], models["llama-3-8b"]
    assert speed.attention_kv_bytes(mha, 2048, 32768) > 6 * speed.attention_kv_bytes(gqa, 2048, 32768)
    assert speed.attention_kv_bytes(mha, 512, 0) < speed.attention_kv_bytes(mha, 512, 32768) / 50


def test_prefill_at_depth_pays_for_the_cache_it_streams() -> None:
    """The shipped fit has a K/V tile per backend; a 2K-token prompt on 32K of Llama-2-7B cache on
    an MI50 takes longer with it than the FLOPs alone say, and a GQA model loses less."""
    import dataclasses

    catalog = default_catalog()
    cal = speed.calibration(catalog)
    assert cal.prefill.kv_tile_rows("rocm") > 0
    flops_only = dataclasses.replace(cal, prefill=dataclasses.replace(cal.prefill, kv_tile={}))
    mi50 = catalog.gpus["mi50-32g"]

    def slowdown(model_id: str) -> float:
        model = catalog.models[model_id]
        with_cache = speed.prefill_seconds(speed.Runtime(mi50, "rocm", cal), model, "Q4_0", 2048, 32768)
        without = speed.prefill_seconds(speed.Runtime(mi50, "rocm", flops_only), model, "Q4_0", 2048, 32768)
        return with_cache / without

    assert slowdown("llama-2-7b") > 1.3
    assert slowdown("llama-2-7b") > slowdown("llama-3-8b")


def test_hbm_factor_is_ggml_kernels_only() -> None:
    # ggml's kernels under-read HBM; vLLM's and MLX's have their own factor (from 1), not ggml's.
    for fw in ("vllm", "mlx", "sglang", "exllamav2"):
        keys = dict(speed.efficiency_keys("cuda", "hopper", "f16", False, True, fw))
        assert "hbm" not in keys and keys["framework_hbm"] == fw
    for fw in ("llama.cpp", "ollama", "ik_llama.cpp"):
        keys = dict(speed.efficiency_keys("rocm", "cdna3", "kquant", False, True, fw))
        assert keys["hbm"] == "hbm" and "framework_hbm" not in keys
    assert "framework_hbm" not in dict(speed.efficiency_keys("cuda", "ada", "f16", False, False, "vllm"))


def test_tensor_parallel_pays_an_all_reduce_per_layer() -> None:
    # Four MI100s sharing a 3B-active MoE: the bytes per card are tiny, so the per-layer all-reduce,
    # not bandwidth, sets the pace; the fitted cost per layer is well above a kernel launch.
    catalog = default_catalog()
    cal = speed.calibration(catalog)
    gpu = catalog.gpus["mi100"]
    one = speed.token_seconds(speed.Runtime(gpu, "rocm", cal, "vllm"), 48, 1.7e9, 0.0, True, "GPTQ-INT4")
    four = speed.token_seconds(
        speed.Runtime(gpu, "rocm", cal, "vllm", 4, "tensor"), 48, 1.7e9, 0.0, True, "GPTQ-INT4"
    )
    assert cal.tp_us_per_layer >= 60.0
    assert (
        four - (one - 48 * cal.decode.fixed_us("rocm") * 1e-6) / 4 >= 48 * cal.tp_us_per_layer * 1e-6 * 0.99
    )
    # the hand-set layer hand-off still comes from speed.toml
    assert cal.layer_split_us == float(catalog.tables["speed"]["multi_gpu"]["layer_split_us"])
