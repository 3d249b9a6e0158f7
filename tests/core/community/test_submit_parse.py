"""key=value fields, sentences and pastes -> raw fields per measurement."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.community.pasted import MODEL_FROM_ARCH
from core.community.submit_parse import parse_submission, sentence_speeds
from tests.core.community.test_pasted import BENCH_4090, BENCH_DEPTH, VLLM_SERVE_LOADED

CATALOG = default_catalog()


def _fields(text: str, form: dict[str, str] | None = None) -> dict[str, str]:
    parsed = parse_submission(text, CATALOG, form)
    assert len(parsed.runs) == 1
    return parsed.runs[0].fields


def test_key_value_with_quotes_and_aliases():
    f = _fields(
        "gpu=\"RTX 4090\" model='llama 3 8b' q=Q4_K_M context=32k tg=128.5 pp=3500 fw=llama.cpp "
        "gpus=2 vram_size=24 kv_type=q8_0 flash_attn=on link=https://x.y/z?a=b notes=“fresh build”"
    )
    assert f == {
        "gpu": "RTX 4090",
        "model": "llama 3 8b",
        "quant": "Q4_K_M",
        "ctx": "32k",
        "decode": "128.5",
        "prefill": "3500",
        "framework": "llama.cpp",
        "count": "2",
        "memory": "24",
        "kv": "q8_0",
        "fa": "on",
        "evidence": "https://x.y/z?a=b",
        "notes": "fresh build",
    }


def test_every_alias_in_the_brief_maps_to_its_key():
    pairs = {
        "count": "count", "gpus": "count", "mem": "memory", "vram_size": "memory", "q": "quant",
        "ctx": "ctx", "depth": "depth", "fw": "framework", "version": "version", "backend": "backend",
        "os": "os", "decode": "decode", "tps": "decode", "speed": "decode", "prefill": "prefill",
        "prompt": "prompt", "kv": "kv", "fa": "fa", "mem_used": "mem_used", "vram": "mem_used",
        "evidence": "evidence", "url": "evidence", "log": "evidence", "notes": "notes",
    }  # fmt: skip
    for alias, key in pairs.items():
        assert _fields(f"{alias}=7") == {key: "7"}, alias


def test_unknown_keys_are_reported_not_taken():
    parsed = parse_submission("modle=x gpu=4090", CATALOG)
    assert parsed.unknown_keys == ("modle",)
    assert parsed.runs[0].fields == {"gpu": "4090"}


def test_form_fields_win_over_typed_fields():
    parsed = parse_submission("gpu=3090 decode=10", CATALOG, {"decode": "12", "Model": "qwen3 8b"})
    run = parsed.runs[0]
    assert run.fields == {"gpu": "3090", "decode": "12", "model": "qwen3 8b"}
    assert run.origin == {"gpu": "field", "decode": "form", "model": "form"}


def test_english_sentence():
    run = parse_submission("4090 llama 3 8b q4_k_m 128 tok/s", CATALOG).runs[0]
    assert run.fields == {"decode": "128.0", "gpu": "rtx-4090", "model": "llama-3-8b", "quant": "Q4_K_M"}
    assert run.resolved["gpu"].best_id == "rtx-4090"
    assert set(run.origin.values()) == {"sentence"}


def test_chinese_sentence_with_card_count():
    f = _fields("双3090 跑 llama3 70b q4 17 token/s")
    assert f == {"decode": "17.0", "gpu": "rtx-3090", "count": "2", "model": "llama-3-70b", "quant": "Q4_K_M"}


@pytest.mark.parametrize(
    ("text", "decode", "prefill"),
    [
        ("128 tok/s", 128.0, None),
        ("tg 120 t/s, pp 3500 t/s", 120.0, 3500.0),
        ("120 tok/s decode, 3500 tok/s prefill", 120.0, 3500.0),
        ("pp512 3500 t/s tg128 120 t/s", 120.0, 3500.0),
        ("prefill 900 tokens per second, generation 30 tokens per second", 30.0, 900.0),
        ("生成 17.5 token/秒,预填充 300 token/s", 17.5, 300.0),
        ("每秒 25 个token", 25.0, None),
        ("42 tps", 42.0, None),
        ("70b q4 on 2 cards", None, None),
    ],
)
def test_sentence_speeds(text: str, decode: float | None, prefill: float | None):
    d, p, _ = sentence_speeds(text)
    assert (d, p) == (decode, prefill)


def test_paste_with_fields_completing_it():
    text = 'gpu="RTX 3090" model="qwen3 30b a3b"\n' + BENCH_DEPTH
    parsed = parse_submission(text, CATALOG)
    assert len(parsed.runs) == 5
    first = parsed.runs[0]
    assert first.fields["gpu"] == "RTX 3090" and first.origin["gpu"] == "field"
    assert first.fields["decode"] == "71.58" and first.origin["decode"] == "paste"
    # The submitter named the model: the architecture-name caveat is dropped.
    assert MODEL_FROM_ARCH not in first.caveats


def test_sentence_before_a_paste_fills_what_the_paste_lacks():
    parsed = parse_submission("my 7900 xtx:\n" + BENCH_DEPTH, CATALOG)
    assert parsed.runs[0].fields["gpu"] == "rx-7900-xtx"
    assert parsed.runs[0].origin["gpu"] == "sentence"


def test_paste_device_line_beats_a_sentence():
    parsed = parse_submission("on my 3090\n" + BENCH_4090, CATALOG)
    assert parsed.runs[0].fields["gpu"] == "NVIDIA GeForce RTX 4090"


def test_python_reprs_in_logs_are_not_fields():
    text = (
        "Namespace(subparser='bench', backend='vllm', model='Qwen/Qwen3-0.6B', seed=0)\n" + VLLM_SERVE_LOADED
    )
    parsed = parse_submission(text, CATALOG)
    assert "backend" not in parsed.runs[0].fields
    assert parsed.unknown_keys == ()


def test_text_is_capped():
    parsed = parse_submission("x " * 100_000, CATALOG)
    assert len(parsed.text) <= 60_000
