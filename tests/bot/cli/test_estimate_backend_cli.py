"""`python -m bot estimate --backend` and the `backend` key of a --batch line (issue 11 item 3)."""

from __future__ import annotations

import json

import pytest

from bot.cli.main import main

BASE = ["estimate", "--model", "qwen3 8b", "--quant", "Q4_K_M", "--ctx", "8k", "--json"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main([*BASE, *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out if code == 0 else captured.err)


def test_the_flag_prices_the_backend_named_and_says_it_was_asked(capsys: pytest.CaptureFixture[str]) -> None:
    code, vulkan = _run(capsys, "--gpu", "7900 xtx", "--os", "linux", "--backend", "Vulkan")
    assert code == 0 and vulkan["backend"] == "vulkan" and vulkan["framework"] == "llama.cpp"
    assert any("as asked" in a for a in vulkan["assumptions"])
    code, chosen = _run(capsys, "--gpu", "7900 xtx", "--os", "linux")
    assert code == 0 and chosen["backend"] == "rocm"  # Linux: ROCm is what people run there
    assert not any("as asked" in a for a in chosen["assumptions"])
    assert vulkan["rows"][0]["decode_tps"] != chosen["rows"][0]["decode_tps"]


def test_hip_is_rocm(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "--gpu", "rx 7900 xt", "--os", "linux", "--backend", "hip")
    assert code == 0 and out["backend"] == "rocm"


@pytest.mark.parametrize(
    ("gpu", "backend", "os_name", "says"),
    [
        ("4090", "metal", "windows", "Metal runs on Apple GPUs only"),
        ("7900 xtx", "cuda", "linux", "CUDA runs on NVIDIA GPUs only"),
        ("mi50 32g", "rocm", "windows", "Windows HIP build has no kernels for this card (gfx906)"),
        ("m2 max", "vulkan", "macos", "Vulkan runs on NVIDIA / AMD / Intel GPUs only"),
        ("ascend 910b3", "cann", "windows", "CANN is not built for windows"),
    ],
)
def test_a_backend_that_cannot_drive_the_card_is_refused_with_what_can(
    capsys: pytest.CaptureFixture[str], gpu: str, backend: str, os_name: str, says: str
) -> None:
    code, err = _run(capsys, "--gpu", gpu, "--os", os_name, "--backend", backend)
    assert code == 1
    assert says in err["error"] and err["candidates"]["backend"]
    assert backend not in err["candidates"]["backend"]


def test_rocm_on_linux_drives_the_card_windows_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "--gpu", "mi50 32g", "--os", "linux", "--backend", "rocm")
    assert code == 0 and out["backend"] == "rocm"


def test_a_framework_without_the_backend_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, "--gpu", "4090", "--os", "linux", "--framework", "vllm", "--backend", "vulkan")
    assert code == 1 and "has no 'vulkan' backend" in err["error"]
    assert err["candidates"] == {"framework": ["llama.cpp"]}


def test_unknown_backend_names_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, "--gpu", "4090", "--backend", "opencl")
    assert code == 1 and "unknown backend 'opencl'" in err["error"] and "vulkan" in err["error"]


def test_cpu_backend_is_the_cpu_only_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, cpu = _run(capsys, "--gpu", "4090", "--backend", "cpu")
    code2, offload = _run(capsys, "--gpu", "4090", "--offload", "cpu")
    assert code == code2 == 0
    assert cpu["backend"] == offload["backend"] == "cpu" and cpu["offload"] == "cpu"
    assert cpu["rows"][0]["decode_tps"] == offload["rows"][0]["decode_tps"]
    code, err = _run(capsys, "--gpu", "4090", "--backend", "cpu", "--offload", "experts")
    assert code == 1 and "offload 'experts'" in err["error"]


def test_batch_key_backend_with_one_impossible_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "req.jsonl"
    lines = [
        {"gpu": "rx 7900 xtx", "model": "qwen3 8b", "quant": "Q4_K_M", "ctx": "8k", "backend": "vulkan"},
        {"gpu": "rtx 4090", "model": "qwen3 8b", "quant": "Q4_K_M", "ctx": "8k", "backend": "metal"},
        {
            "gpu": "arc a770",
            "model": "qwen3 8b",
            "quant": "Q4_K_M",
            "ctx": "8k",
            "os": "linux",
            "backend": "sycl",
        },
    ]
    batch.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code = main(["estimate", "--batch", str(batch)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and len(out) == 3
    assert out[0]["backend"] == "vulkan"
    assert "Metal runs on Apple GPUs only" in out[1]["error"]
    assert out[2]["backend"] == "sycl"
