"""`python -m bot estimate --offload auto` (issue 23, "Offload"): the estimator chooses what llama.cpp's
`--fit` would. A row that doesn't fit the card(s) is priced with its own way out that keeps weights in
RAM (a MoE's experts, else whole layers), the same figures and placement the chat's plan runs; a row
that fits offloads nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.cli.main import main

MOE = ["--gpu", "3060", "--model", "qwen3 30b a3b", "--quant", "Q4_K_M", "--ctx", "8k", "--ram", "64"]
DENSE = ["--gpu", "3060", "--model", "qwen3 32b", "--quant", "Q4_K_M", "--ctx", "8k", "--ram", "64"]
FITS = ["--gpu", "4090", "--model", "qwen3 8b", "--quant", "Q4_K_M", "--ctx", "8k"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["estimate", *args, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out if code == 0 else captured.err)


def _row(out: dict[str, Any]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = out["rows"]
    assert len(rows) == 1
    return rows[0]


def test_a_moe_on_a_small_card_gets_its_experts_in_ram(capsys: pytest.CaptureFixture[str]) -> None:
    code, plain = _run(capsys, *MOE)
    assert code == 0 and _row(plain)["status"] == "no_fit"
    way_out = _row(plain)["remedy"]
    assert way_out["kind"] == "expert_offload"
    code, auto = _run(capsys, *MOE, "--offload", "auto")
    assert code == 0 and auto["offload"] == "auto"
    row = _row(auto)
    assert row["status"] in ("smooth", "tight")
    assert row["remedy"]["kind"] == "expert_offload"
    assert row["remedy"]["cpu_moe_layers"] == way_out["cpu_moe_layers"]
    # The figures the plain run's way out gives, now the row's own.
    assert row["decode_tps"] == way_out["decode_tps"]
    assert row["prefill_tps"] is not None
    assert f"--n-cpu-moe {way_out['cpu_moe_layers']}" in row["command"]
    assert row["command"] == _row(plain)["command"]
    assert auto["plan"]["placement"]["kind"] == "experts"
    assert auto["plan"]["placement"]["cpu_moe_layers"] == way_out["cpu_moe_layers"]


def test_the_same_as_naming_the_experts_it_chose(capsys: pytest.CaptureFixture[str]) -> None:
    code, auto = _run(capsys, *MOE, "--offload", "auto")
    k = str(_row(auto)["remedy"]["cpu_moe_layers"])
    code, named = _run(capsys, *MOE, "--offload", "experts", "--cpu-moe-layers", k)
    assert code == 0
    for key in ("status", "decode_tps", "prefill_tps", "total_gib", "weights_gib", "command"):
        assert _row(auto)[key] == _row(named)[key], key


def test_a_dense_model_gets_partial_layer_offload(capsys: pytest.CaptureFixture[str]) -> None:
    code, plain = _run(capsys, *DENSE)
    assert code == 0 and _row(plain)["status"] == "no_fit"
    layers = [
        r
        for r in (_row(plain)["remedy"], *_row(plain)["remedy"].get("alternatives", []))
        if r["kind"] == "offload"
    ]
    assert layers
    code, auto = _run(capsys, *DENSE, "--offload", "auto")
    assert code == 0
    row = _row(auto)
    assert row["status"] in ("smooth", "tight")
    assert row["remedy"]["kind"] == "offload"
    assert row["remedy"]["layers_on_gpu"] == layers[0]["layers_on_gpu"]
    assert row["decode_tps"] == layers[0]["decode_tps"]
    assert f"-ngl {layers[0]['layers_on_gpu']} " in row["command"] + " "
    assert auto["plan"]["placement"]["kind"] == "layers"


def test_a_row_that_fits_offloads_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, plain = _run(capsys, *FITS)
    assert code == 0
    code, auto = _run(capsys, *FITS, "--offload", "auto")
    assert code == 0
    row = _row(auto)
    assert row["status"] in ("smooth", "tight") and row["remedy"] is None
    for key in ("status", "decode_tps", "prefill_tps", "total_gib", "command"):
        assert row[key] == _row(plain)[key], key
    assert "--n-cpu-moe" not in row["command"] and auto["plan"]["placement"]["kind"] == "gpu"


def test_fitting_and_offloaded_rows_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    code, auto = _run(
        capsys,
        "--gpu",
        "3060",
        "--model",
        "qwen3 8b",
        "--quant",
        "Q8_0",
        "--ctx",
        "4k",
        "128k",
        "--ram",
        "64",
        "--offload",
        "auto",
    )
    assert code == 0
    short, long = auto["rows"]
    assert short["remedy"] is None and short["status"] != "no_fit"
    assert long["status"] != "no_fit" and long["remedy"]["kind"] == "offload"


def test_bad_values_are_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["estimate", *MOE, "--offload", "sometimes"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'sometimes'" in err and "auto" in err


def test_a_batch_line_with_a_bad_value_says_what_it_takes(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    batch = tmp_path / "b.jsonl"
    lines = [
        {"gpu": "3060", "model": "qwen3 30b a3b", "quant": "Q4_K_M", "ctx": "8k", "offload": "sometimes"},
        {"gpu": "3060", "model": "qwen3 30b a3b", "quant": "Q4_K_M", "ctx": "8k", "offload": "auto"},
        {"model": "qwen3 8b", "offload": "auto"},
    ]
    batch.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["estimate", "--batch", str(batch)]) == 1
    bad, good, no_card = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert "offload" in bad["error"] and "'auto'" in bad["error"]
    assert good["rows"][0]["remedy"]["kind"] == "expert_offload"
    assert "needs a card" in no_card["error"]
