"""The speed model's lookups: which fitted factors apply to a setup, matrix throughput, bands."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.estimator import speed


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
        assert set(table[phase]) - {"backend"} <= set(speed.TERMS)


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
    measured = speed.band_for(gpu, "cuda", cal, "decode", "ollama")
    unmeasured = speed.band_for(gpu, "cuda", cal, "decode", "exllamav3")
    assert unmeasured.low <= measured.low and unmeasured.high >= measured.high
    assert speed.band_for(gpu, "cuda", cal, "decode", "lmstudio") == speed.band_for(gpu, "cuda", cal)


def test_prefill_flops_grow_with_depth() -> None:
    model = default_catalog().models["llama-3-8b"]
    assert speed.prefill_flops(model, 512, 32768) > speed.prefill_flops(model, 512, 0) * 1.5
