"""`python -m bot estimate --cpu NAME` and the batch key `cpu`."""

from __future__ import annotations

import json
import tomllib

import pytest

from bot.cli.main import main
from core.catalog.loader import CATALOG_DIR


def test_cpu_only_on_a_named_cpu(capsys):
    code = main(["estimate", "--model", "qwen3 30b", "--cpu", "7950X", "--quant", "Q4_K_M", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["gpu"]["name"] == "CPU only (AMD Ryzen 9 7950X)" and out["offload"] == "cpu"
    assert out["host"]["cpu"] == "ryzen-9-7950x"
    assert (out["host"]["ram_type"], out["host"]["mt_s"], out["host"]["channels"]) == ("DDR5", 5200, 2)
    assert any("AMD Ryzen 9 7950X" in a for a in out["assumptions"])


def test_the_host_key_cpu_is_null_without_one(capsys):
    code = main(["estimate", "--model", "qwen3 30b", "--offload", "cpu", "--quant", "Q4_K_M", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["host"]["cpu"] is None and out["host"]["preset"] == "ddr4-2ch"


def test_an_unknown_cpu_fails_with_candidates(capsys):
    code = main(["estimate", "--model", "qwen3 30b", "--cpu", "Ryzen 9 7960X", "--json"])
    err = json.loads(capsys.readouterr().err)
    # "Ryzen 9" with a Threadripper's number: not sure, so the closest go back (that one first).
    assert code != 0 and "unknown CPU" in err["error"]
    assert err["candidates"]["cpu"][0] == "threadripper-7960x"


def test_batch_takes_the_cpu_key(tmp_path, capsys):
    batch = tmp_path / "req.jsonl"
    batch.write_text(
        '{"model": "qwen3 30b", "cpu": "2x EPYC 9654", "quant": "Q4_K_M", "ctx": 8192}\n'
        '{"gpu": "4090", "model": "qwen3 235b", "cpu": "Threadripper PRO 7975WX", "offload": "experts",'
        ' "quant": "Q4_K_M", "ctx": 8192}\n'
        '{"model": "qwen3 30b", "cpu": "Pentium 4"}\n'
    )
    code = main(["estimate", "--batch", str(batch)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and len(lines) == 3
    assert lines[0]["host"]["sockets"] == 2 and lines[0]["host"]["channels"] == 12
    assert lines[1]["host"]["cpu"] == "threadripper-pro-7975wx" and lines[1]["host"]["channels"] == 8
    assert "unknown CPU" in lines[2]["error"]


def test_a_named_cpu_carries_the_cpu_fits_range_and_the_text_names_its_ram(capsys):
    """The range is cpus.toml [efficiency.band] (the CPU fit's leave-one-CPU-out spread), not the GPU
    tiers' unseen-family band (~x0.3-2.6 on a CPU run): the same figure in the text and the JSON."""
    band = tomllib.loads((CATALOG_DIR / "cpus.toml").read_text(encoding="utf-8"))["efficiency"]["band"]
    args = ["estimate", "--model", "qwen3 30b", "--cpu", "7950X", "--ram", "64", "--quant", "Q4_K_M"]
    code = main([*args, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    for row in out["rows"]:
        d = row["decode_tps"]
        if d:
            assert d["low"] / d["mid"] == pytest.approx(band["decode"]["low"], abs=0.01)
            assert d["high"] / d["mid"] == pytest.approx(band["decode"]["high"], abs=0.01)
    main(args)
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("CPU only (AMD Ryzen 9 7950X) (64 GiB RAM) · Qwen3-30B-A3B")
