"""Speed bands (`core.estimator.band`): narrow where the cross-validated residuals are dense and tight,
the wider parent tier where a tier has too few rows, never narrower for what the data saw less of."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from core.catalog.loader import default_catalog
from core.catalog.pricing_sections import Band
from core.estimator import band, speed


def _half(b: Band) -> float:
    """Half-width relative to the mid figure, as scripts/bench_accuracy_setups.py reports it."""
    return (b.high - b.low) / 2


def _contains(outer: Band, inner: Band) -> bool:
    return outer.low <= inner.low + 1e-9 and outer.high >= inner.high - 1e-9


@pytest.fixture(scope="module")
def shipped() -> speed.Calibration:
    return speed.calibration(default_catalog())


def _has_kind_tiers(cal: speed.Calibration) -> bool:
    """calibration.toml written since the model-kind tiers ("card/cuda/dense"); an older file has none."""
    return any(k.endswith(("/dense", "/moe")) for k in cal.decode_band)


def test_cuda_llama_cpp_dense_decode_on_a_measured_card_is_within_20_percent(
    shipped: speed.Calibration,
) -> None:
    if not _has_kind_tiers(shipped):
        pytest.skip("calibration.toml predates the model-kind tiers: rerun scripts/fit_calibration.py")
    gpu = default_catalog().gpus["rtx-4090"]
    b = band.band_for(gpu, "cuda", shipped, "decode", "llama.cpp", moe=False)
    assert _half(b) <= 0.20, b


def test_vulkan_moe_band_is_wider_than_cuda_dense(shipped: speed.Calibration) -> None:
    gpus = default_catalog().gpus
    cuda = band.band_for(gpus["rtx-4090"], "cuda", shipped, "decode", moe=False)
    vulkan = band.band_for(gpus["ryzen-ai-max-395"], "vulkan", shipped, "decode", moe=True)
    assert _half(vulkan) > _half(cuda)


def test_an_unseen_framework_is_never_narrower_than_a_seen_one(shipped: speed.Calibration) -> None:
    gpu = default_catalog().gpus["rtx-4090"]
    for phase in ("decode", "prefill"):
        for moe in (False, True, None):
            seen = band.band_for(gpu, "cuda", shipped, phase, "ollama", moe=moe)
            unseen = band.band_for(gpu, "cuda", shipped, phase, "no-such-engine", moe=moe)
            assert _half(unseen) >= _half(seen), (phase, moe)


def test_an_unmeasured_card_is_never_narrower_than_a_measured_one(shipped: speed.Calibration) -> None:
    gpus = default_catalog().gpus
    # Same backend and family (Ada on CUDA): the 4060 Ti 16G measured, the 4060 8G (probably) not.
    measured = gpus["rtx-4090"]
    others = [g for g in gpus.values() if g.arch_family == measured.arch_family and g.vendor == "NVIDIA"]
    unmeasured = [g for g in others if g.id not in shipped.seen_decode_cards]
    assert unmeasured, "some Ada card has no decode rows"
    for moe in (False, True):
        a = band.band_for(measured, "cuda", shipped, "decode", moe=moe)
        b = band.band_for(unmeasured[0], "cuda", shipped, "decode", moe=moe)
        assert _half(b) >= _half(a) - 1e-9, moe


def test_several_cards_are_never_narrower_than_one(shipped: speed.Calibration) -> None:
    gpus = default_catalog().gpus
    for gpu_id, backend, fw in (("rtx-3090", "cuda", "llama.cpp"), ("rtx-4090", "cuda", "vllm")):
        for phase in ("decode", "prefill"):
            one = band.band_for(gpus[gpu_id], backend, shipped, phase, fw, moe=False)
            two = band.band_for(gpus[gpu_id], backend, shipped, phase, fw, moe=False, count=2)
            assert _contains(two, one), (gpu_id, phase, one, two)


def _cal(decode: dict[str, Band]) -> speed.Calibration:
    base = speed.calibration(default_catalog())
    return dataclasses.replace(
        base,
        decode_band=decode,
        seen_decode_cards=frozenset({"rtx-4090"}),
        seen_decode=frozenset({"cuda/ada"}),
        seen_decode_frameworks=frozenset({"ollama"}),
    )


def test_a_tier_without_enough_rows_falls_back_to_its_parent() -> None:
    gpu = default_catalog().gpus["rtx-4090"]
    wide, narrow, narrower = Band(0.5, 1.5), Band(0.8, 1.25), Band(0.85, 1.18)
    cal = _cal(
        {
            "card": wide,
            "seen": wide,
            "unseen": wide,
            "framework": wide,
            "framework_unseen": wide,
            "card/cuda": narrow,
            "card/cuda/dense": narrower,  # the fit wrote no "card/cuda/moe": too few rows
        }
    )
    assert band.band_for(gpu, "cuda", cal, moe=False) == narrower
    assert band.band_for(gpu, "cuda", cal, moe=True) == narrow
    assert band.band_for(gpu, "cuda", cal) == narrow  # model kind unknown: the backend's band
    assert band.band_for(gpu, "vulkan", cal, moe=False) == wide  # no vulkan tier at all
    assert band.band_for(gpu, "cuda", cal, "decode", "ollama", moe=True) == wide


def test_the_tier_chain_goes_from_the_narrowest_to_the_pooled_tier() -> None:
    chain = band.tier_chain("card", "cuda", "llama.cpp", moe=True)
    assert chain == ("card/cuda/moe", "card/cuda", "card")
    assert band.tier_chain("framework", "cuda", "ollama", moe=False) == (
        "framework/ollama/dense",
        "framework/ollama",
        "framework",
    )
    assert band.tier_chain("seen", "rocm", "llama.cpp", moe=None) == ("seen/rocm", "seen")


# --- the fit side: scripts/fit_calibration.py writes the tiers ----------------------------------


def _fit_module() -> Any:
    pytest.importorskip("scipy")
    import sys
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[3] / "scripts"
    sys.path.insert(0, str(scripts))
    import fit_calibration

    return fit_calibration


def test_a_fitted_band_covers_about_90_percent_of_its_cross_validated_residuals() -> None:
    fc = _fit_module()
    rng = [math.log(1 + 0.3 * math.sin(i * 1.7)) for i in range(200)]  # a deterministic spread
    b = fc.band(rng)
    inside = sum(b["low"] <= math.exp(r) <= b["high"] for r in rng) / len(rng)
    assert 0.89 <= inside <= 0.95, inside


def test_the_fit_writes_a_sub_tier_only_with_enough_rows() -> None:
    fc = _fit_module()
    thin = fc.BAND_MIN_ROWS - 1
    residuals = {
        "card/cuda/dense": [0.01 * i for i in range(fc.BAND_MIN_ROWS)],
        "card/cuda/moe": [0.0] * thin,
    }
    bands = fc.tier_bands(residuals)
    assert "card/cuda/dense" in bands and "card/cuda/moe" not in bands


def test_several_cards_take_their_backends_multi_card_spread_where_the_fit_wrote_one() -> None:
    table = {
        "card": Band(0.8, 1.2),
        "multi": Band(0.4, 1.6),
        "multi/cuda": Band(0.7, 1.3),
        "multi/framework": Band(0.5, 1.5),
    }
    assert band.resolve(table, "card", "cuda", "llama.cpp", False, count=2) == Band(0.7, 1.3)
    assert band.resolve(table, "card", "vulkan", "llama.cpp", False, count=2) == Band(0.4, 1.6)
    assert band.resolve(table, "card", "cuda", "vllm", False, count=2) == Band(0.5, 1.5)
    assert band.resolve(table, "card", "cuda", "llama.cpp", False, count=1) == Band(0.8, 1.2)
