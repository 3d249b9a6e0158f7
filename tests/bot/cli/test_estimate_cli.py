"""`python -m bot estimate` as other tools use it: JSON shape, exit codes, batch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bot.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
ROW_KEYS = {
    "quant",
    "context",
    "weights_gib",
    "kv_gib",
    "overhead_gib",
    "total_gib",
    "usable_gib",
    "status",
    "decode_tps",
    "prefill_tps",
    "framework",
    "command",
    "notes",
}


def test_json_answer_shape(capsys):
    code = main(
        [
            "estimate",
            "--gpu",
            "V100 32G",
            "--model",
            "gemma 3 27b",
            "--quant",
            "Q4_K_M",
            "--ctx",
            "32k",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["gpu"] == {
        "id": "tesla-v100-32g-pcie",
        "name": out["gpu"]["name"],
        "memory_gib": 32.0,
        "count": 1,
    }
    assert set(out["model"]) == {"id", "name", "params_b", "active_params_b"}
    (row,) = out["rows"]
    assert ROW_KEYS <= set(row)
    assert row["context"] == 32768 and row["quant"] == "Q4_K_M"
    assert set(row["decode_tps"]) == {"low", "mid", "high"}


def test_unknown_gpu_fails_with_candidates(capsys):
    code = main(["estimate", "--gpu", "Voodoo5 6000", "--model", "llama 3 8b", "--json"])
    err = json.loads(capsys.readouterr().err)
    assert code != 0 and "unknown GPU" in err["error"] and err["candidates"]["gpu"]


def test_batch_keeps_going_after_a_bad_line(tmp_path, capsys):
    batch = tmp_path / "req.jsonl"
    batch.write_text(
        '{"gpu": "4090", "model": "llama 3.1 8b", "quant": "Q4_K_M", "ctx": 4096}\n'
        "not json\n"
        '{"gpu": "nonexistent card", "model": "llama 3.1 8b"}\n'
        '{"gpu": "3090", "model": "qwen3 32b", "quant": ["Q4_K_M", "Q6_K"], "ctx": [8192]}\n'
    )
    code = main(["estimate", "--batch", str(batch)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and len(lines) == 4
    assert lines[0]["rows"][0]["quant"] == "Q4_K_M"
    assert "error" in lines[1] and "error" in lines[2]
    assert len(lines[3]["rows"]) == 2


def test_module_entry_point_runs():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "estimate",
            "--gpu",
            "4090",
            "--model",
            "llama 3.1 8b",
            "--quant",
            "Q4_K_M",
            "--ctx",
            "4096",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Q4_K_M" in proc.stdout


def test_a_card_name_it_is_not_sure_of_exits_1_with_candidates() -> None:
    """`estimate` is a stable interface: "RTX 6090" is refused with the closest cards, never a 3090."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "bot", "estimate", "--gpu", "RTX 6090", "--model", "qwen3 8b", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    err = json.loads(done.stderr)
    assert "RTX 6090" in err["error"] and "rtx-3090" in err["candidates"]["gpu"]


def test_a_made_up_card_of_another_vendor_is_refused_too() -> None:
    """An unseen spelling of the same trap: "GTX 2090" is no RTX 2080 or 3090."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "bot", "estimate", "--gpu", "GTX 2090", "--model", "qwen3 8b", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "GTX 2090" in json.loads(done.stderr)["error"]


def test_mixed_cards_are_named_each_in_the_text_and_listed_in_the_json(capsys):
    """'3090+3060' is two cards of their own memory (not 2× their average), and a card whose own
    name has a '+' ('Ryzen AI Max+ 395') is one card, not a mix."""
    assert main(["estimate", "--gpu", "3090+3060", "--model", "qwen2.5 32b", "--quant", "Q4_K_M"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("GeForce RTX 3090 + GeForce RTX 3060 12GB (36 GiB) · ")
    assert main(["estimate", "--gpu", "3090+3060", "--model", "qwen2.5 32b", "--json"]) == 0
    mix = json.loads(capsys.readouterr().out)["gpu"]["mix"]
    assert [(c["name"], c["memory_gib"]) for c in mix] == [
        ("GeForce RTX 3090", 24.0),
        ("GeForce RTX 3060 12GB", 12.0),
    ]
    assert main(["estimate", "--gpu", "Ryzen AI Max+ 395", "--model", "qwen3 30b a3b", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)["gpu"]
    assert one["id"] == "ryzen-ai-max-395" and "mix" not in one
