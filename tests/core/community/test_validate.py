"""read_submission: drafts, refusals (with en and zh text), flags, fingerprints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.catalog.loader import default_catalog
from core.community.validate import (
    decode_ceiling,
    engine_version,
    fingerprint,
    prefill_ceiling,
    read_submission,
)
from core.i18n import messages
from core.storage.records import Measurement
from tests.core.community.test_pasted import (
    BENCH_4090,
    BENCH_DEPTH,
    OLLAMA_MISTRAL,
    VLLM_SERVE_SINGLE,
    VLLM_THROUGHPUT,
)

CATALOG = default_catalog()
LINE = 'gpu="RTX 4090" model="llama 3 8b" quant=Q4_K_M ctx=4096 decode=128.5 framework=llama.cpp'


def _codes(reading) -> list[str]:
    return [n.code for n in reading.problems]


def _only_draft(text: str, fields: dict[str, str] | None = None):
    reading = read_submission(text, CATALOG, fields)
    assert reading.problems == () and reading.missing == (), [n.text() for n in reading.problems]
    assert len(reading.drafts) == 1
    return reading.drafts[0]


# --- accepted ------------------------------------------------------------------------------------


def test_key_value_line_becomes_a_measurement_with_an_estimate():
    draft = _only_draft(LINE)
    m = draft.measurement
    assert (m.gpu_id, m.model_id, m.quant, m.decode_tps, m.context, m.framework) == (
        "rtx-4090", "llama-3-8b", "Q4_K_M", 128.5, 4096, "llama.cpp",
    )  # fmt: skip
    est = draft.estimate
    assert est is not None and est.decode_low < est.decode_mid < est.decode_high
    assert est.fits == "smooth" and est.prefill_mid and est.engine_version == engine_version(CATALOG)
    assert draft.flags == ()


def test_sentences_en_and_zh():
    m = _only_draft("4090 llama 3 8b q4_k_m 128 tok/s").measurement
    assert (m.gpu_id, m.model_id, m.quant, m.decode_tps) == ("rtx-4090", "llama-3-8b", "Q4_K_M", 128.0)
    m = _only_draft("双3090 跑 llama3 70b q4 17 token/s").measurement
    assert (m.gpu_id, m.gpu_count, m.model_id, m.decode_tps) == ("rtx-3090", 2, "llama-3-70b", 17.0)


def test_llama_bench_paste_gives_one_draft_per_model_with_the_paste_as_evidence():
    reading = read_submission(BENCH_4090, CATALOG)
    assert reading.problems == ()
    got = [(d.measurement.quant, d.measurement.decode_tps, d.measurement.prefill_tps) for d in reading.drafts]
    assert got == [
        ("F16", 61.03, 11048.22),
        ("Q8_0", 98.13, 7664.0),
    ]
    d = reading.drafts[0]
    assert d.measurement.gpu_id == "rtx-4090" and d.measurement.backend == "cuda"
    assert d.measurement.model_id == "llama-2-7b" and d.measurement.prompt_tokens == 512
    assert "model_from_arch" in d.flags  # "llama 7B" is an architecture name: the moderator checks
    assert "Device 0: NVIDIA GeForce RTX 4090" in (d.measurement.evidence or "")


def test_paste_without_a_gpu_line_completed_by_fields():
    reading = read_submission('gpu="RX 7900 XTX" model="qwen3 30b a3b"\n' + BENCH_DEPTH, CATALOG)
    assert reading.problems == () and reading.missing == ()
    assert [d.measurement.depth for d in reading.drafts] == [0, 4096, 8192, 16384, 32768]
    assert {d.measurement.gpu_id for d in reading.drafts} == {"rx-7900-xtx"}
    assert reading.drafts[0].measurement.backend == "rocm"
    assert "model_from_arch" not in reading.drafts[0].flags


def test_ollama_paste_flags_the_assumed_quant():
    draft = _only_draft(OLLAMA_MISTRAL, {"gpu": "RTX 3060"})
    assert draft.measurement.framework == "ollama" and draft.measurement.decode_tps == 24.61
    assert "quant_assumed" in draft.flags


def test_vllm_serve_single_user():
    draft = _only_draft(VLLM_SERVE_SINGLE, {"gpu": "MI50 32G"})
    m = draft.measurement
    assert (m.framework, m.model_id, m.quant) == ("vllm", "gemma-3-27b", "AWQ")
    assert m.decode_tps == pytest.approx(19.44, abs=0.01)
    assert "batched" not in draft.flags


# --- refused: physics ----------------------------------------------------------------------------


def test_decode_above_the_bandwidth_ceiling_is_refused_with_both_numbers():
    reading = read_submission('gpu=V100 model="gemma 3 27b" quant=Q4_K_M decode=4000', CATALOG)
    assert reading.drafts == ()
    (note,) = reading.problems
    assert note.code == "submit.above_ceiling"
    gpu = CATALOG.gpus["tesla-v100-16g-pcie"]
    model = CATALOG.models["gemma-3-27b"]
    ceiling = decode_ceiling(gpu, 1, model, "Q4_K_M", 0, "f16", "llama.cpp", CATALOG)
    assert 45 < ceiling < 60  # 900 GB/s over ~16.5 GB
    assert note.params["max"] == round(ceiling)
    en, zh = note.text("en"), note.text("zh")
    assert "4000 tok/s" in en and f"max ~{round(ceiling)} tok/s" in en and "V100" in en
    assert "4000 token/s" in zh and f"最多约 {round(ceiling)} token/s" in zh


def test_just_under_the_ceiling_is_accepted():
    gpu, model = CATALOG.gpus["rtx-4090"], CATALOG.models["llama-3-8b"]
    ceiling = decode_ceiling(gpu, 1, model, "Q4_K_M", 0, "f16", "llama.cpp", CATALOG)
    ok = read_submission(f"gpu=4090 model='llama 3 8b' quant=Q4_K_M decode={ceiling:.1f}", CATALOG)
    assert ok.drafts and ok.problems == ()
    refused = read_submission(f"gpu=4090 model='llama 3 8b' quant=Q4_K_M decode={ceiling * 1.2:.1f}", CATALOG)
    assert _codes(refused) == ["submit.above_ceiling"]


def test_layer_split_does_not_add_bandwidth_but_tensor_parallel_does():
    gpu, model = CATALOG.gpus["rtx-3090"], CATALOG.models["llama-3-70b"]
    one = decode_ceiling(gpu, 1, model, "Q4_K_M", 0, "f16", "llama.cpp", CATALOG)
    assert decode_ceiling(gpu, 2, model, "Q4_K_M", 0, "f16", "llama.cpp", CATALOG) == one
    assert decode_ceiling(gpu, 2, model, "Q4_K_M", 0, "f16", "vllm", CATALOG) == pytest.approx(2 * one)
    too_fast = f"gpu=3090 count=2 model='llama 3 70b' quant=Q4_K_M decode={one * 1.5:.0f}"
    assert _codes(read_submission(too_fast, CATALOG)) == ["submit.above_ceiling"]
    assert read_submission(too_fast + " framework=vllm", CATALOG).drafts


def test_kv_cache_at_depth_lowers_the_ceiling():
    gpu, model = CATALOG.gpus["rtx-4090"], CATALOG.models["llama-3-8b"]
    shallow = decode_ceiling(gpu, 1, model, "Q4_K_M", 0, "f16", "llama.cpp", CATALOG)
    deep = decode_ceiling(gpu, 1, model, "Q4_K_M", 65536, "f16", "llama.cpp", CATALOG)
    assert deep < shallow * 0.7


def test_speculative_decoding_is_not_refused_but_flagged():
    text = "gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=400 notes='speculative decoding, 1B draft'"
    draft = _only_draft(text)
    assert "speculative_above_ceiling" in draft.flags


def test_prefill_above_the_compute_ceiling_is_refused():
    gpu, model = CATALOG.gpus["rtx-4090"], CATALOG.models["llama-3-8b"]
    ceiling = prefill_ceiling(gpu, 1, model)
    assert ceiling is not None
    reading = read_submission(
        f"gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=120 prefill={ceiling * 1.5:.0f}", CATALOG
    )
    assert _codes(reading) == ["submit.prefill_above_ceiling"]
    assert f"~{round(ceiling)} tok/s" in reading.problems[0].text("en")
    assert "算力极限" in reading.problems[0].text("zh")


# --- accepted but flagged ------------------------------------------------------------------------


def test_far_from_estimate_is_accepted_and_flagged_with_both_numbers():
    draft = _only_draft("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=30")
    assert draft.flags == ("far_from_estimate",)
    note = draft.flag_notes[0]
    assert note.params["decode"] == 30 and note.params["low"] == draft.estimate.decode_low
    assert "measured 30 tok/s" in note.text("en") and "实测 30 token/s" in note.text("zh")
    # Inside the band: no flag.
    mid = draft.estimate.decode_mid
    assert _only_draft(f"gpu=4090 model='llama 3 8b' quant=Q4_K_M decode={mid}").flags == ()


def test_model_that_does_not_fit_is_flagged():
    draft = _only_draft("gpu=4090 model='llama 3 70b' quant=Q8_0 decode=2")
    assert "no_fit_estimated" in draft.flags
    assert draft.estimate is None or draft.estimate.fits == "no_fit"


def test_partial_offload_from_ngl_is_flagged():
    text = BENCH_4090.replace("|  99 |", "|  20 |")
    reading = read_submission(text, CATALOG)
    assert all("partial_offload" in d.flags for d in reading.drafts)


def test_batched_benchmark_is_flagged():
    from tests.core.community.test_pasted import VLLM_SERVE_LOADED

    draft = _only_draft(VLLM_SERVE_LOADED, {"gpu": "H100", "quant": "BF16"})
    assert "batched" in draft.flags


# --- refused: fields -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=fast", "submit.not_a_number"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=0", "submit.not_positive"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=-5", "submit.not_a_number"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=5000000", "submit.speed_absurd"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 prefill=abc", "submit.not_a_number"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 count=0", "submit.bad_count"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 count=17", "submit.bad_count"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 ctx=12", "submit.bad_context"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 ctx=99999999", "submit.bad_context"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=1 ctx=4k depth=8k", "submit.depth_over_context"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 memory=48", "submit.memory_not_offered"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 kv=q3", "submit.bad_kv"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 backend=opencl", "submit.bad_backend"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 os=beos", "submit.bad_os"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 fa=maybe", "submit.bad_flag"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 fw=tensorrt", "submit.unknown_framework"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 modle=x", "submit.unknown_key"),
        ("gpu=4090 model='llama 3 8b' quant=Q4_K_M decode=100 mem_used=lots", "submit.bad_memory"),
    ],
)
def test_bad_fields_are_refused_specifically(text: str, code: str):
    reading = read_submission(text, CATALOG)
    assert code in _codes(reading)
    assert reading.drafts == () or code == "submit.unknown_key"
    for note in reading.problems:
        en, zh = note.text("en"), note.text("zh")
        assert en != note.code and zh != note.code and en != zh
        assert "{" not in en and "{" not in zh  # every placeholder was filled


def test_units_and_commas_in_numbers_are_read():
    text = "gpu=4090 model='llama 3 8b' quant=Q4_K_M decode='128,5 t/s' mem_used=20500MiB"
    m = _only_draft(text).measurement
    assert m.decode_tps == 128.5 and m.memory_used_gib == pytest.approx(20.02, abs=0.01)


def test_unknown_gpu_lists_closest_candidates():
    reading = read_submission("gpu='RTX 9999 Hyper' model='llama 3 8b' quant=Q4_K_M decode=100", CATALOG)
    assert _codes(reading) == ["submit.unknown_gpu"]
    assert reading.candidates["gpu"]
    assert "RTX 9999 Hyper" in reading.problems[0].text("en")
    assert "不认识显卡" in reading.problems[0].text("zh")


def test_ambiguous_model_lists_candidates_closest_first():
    # "qwen 7b" names no generation (Qwen2-7B is catalogued too, so "qwen2 7b" is that one exactly)
    reading = read_submission("gpu=4090 model='qwen 7b' quant=Q4_K_M decode=100", CATALOG)
    assert _codes(reading) == ["submit.ambiguous_model"]
    # The plain model first; its 7B variants (Coder, VL, ...) follow in the resolver's order.
    candidates = reading.candidates["model"]
    assert candidates[0] == "qwen2.5-7b" and "qwen2.5-coder-7b" in candidates[:3]
    assert "Qwen2.5 7B" in reading.problems[0].text("en") or "qwen2.5-7b" in reading.problems[0].text("en")


def test_unknown_quant_with_suggestion():
    reading = read_submission("gpu=4090 model='llama 3 8b' quant=Q4_K_Z decode=100", CATALOG)
    assert _codes(reading) == ["submit.unknown_quant"] and "Q4_K_M" in reading.candidates["quant"]


def test_all_problems_at_once():
    reading = read_submission("gpu=4090 decode=abc model='zzzz unknown'", CATALOG)
    assert set(_codes(reading)) == {"submit.not_a_number", "submit.unknown_model"}
    assert reading.missing == ("quant",)


def test_missing_fields_are_not_problems():
    reading = read_submission("gpu=4090", CATALOG)
    assert reading.problems == () and reading.drafts == ()
    assert reading.missing == ("model", "quant", "decode")
    empty = read_submission("hello there", CATALOG)
    assert empty.missing == ("gpu", "model", "quant", "decode")


def test_batch_throughput_is_explained():
    form = {"gpu": "H100", "model": "llama 3 8b", "quant": "FP8"}
    reading = read_submission(VLLM_THROUGHPUT, CATALOG, form)
    assert _codes(reading) == ["submit.throughput_not_decode"] and reading.missing == ("decode",)
    assert "Mean TPOT" in reading.problems[0].text("en")


def test_odd_input_never_raises():
    odd = ["", "=", "gpu=", 'gpu="unterminated', "decode=1e400", "\x00\x01", "| model | test | t/s |"]
    odd += ["/submit", "decode=nan", "decode=inf", "ctx=-1", "count=1.5"]
    for text in odd:
        read_submission(text, CATALOG)


# --- fingerprint ---------------------------------------------------------------------------------


def test_fingerprint_equal_for_duplicates_only():
    m = _only_draft(LINE).measurement
    same = _only_draft(LINE + " url=https://other.link notes='again'").measurement
    assert fingerprint("telegram:1", m) == fingerprint("telegram:1", same)
    assert fingerprint("telegram:1", m) != fingerprint("telegram:2", m)
    slower = _only_draft(LINE.replace("128.5", "120")).measurement
    assert fingerprint("telegram:1", m) != fingerprint("telegram:1", slower)
    rounding = Measurement(**{**{f: getattr(m, f) for f in m.__slots__}, "decode_tps": 128.52})
    assert fingerprint("telegram:1", rounding) == fingerprint("telegram:1", m)


def test_engine_version_names_the_calibration():
    version = engine_version(CATALOG)
    rows = CATALOG.tables["calibration"]["meta"]["rows"]
    assert version.startswith(f"cal-{rows}r-") and version == engine_version(CATALOG)


# --- messages ------------------------------------------------------------------------------------


def test_every_submit_code_has_english_and_chinese():
    source = "".join(
        p.read_text() for p in Path("core/community").glob("*.py") if p.name in ("validate.py", "pasted.py")
    )
    codes = set(re.findall(r'"(submit\.[a-z_.]+)"', source))
    flags = set(re.findall(r'^\s*(?:[A-Z_]+ = )?"([a-z_]+)"\s*(?:#|$)', source, re.M))
    table = messages()
    for code in codes | {f"submit.flag.{f}" for f in flags if f"submit.flag.{f}" in table}:
        assert code in table, code
        assert table[code].get("en") and table[code].get("zh"), code
    for code, entry in table.items():
        if code.startswith("submit."):
            assert set(re.findall(r"{(\w+)", entry["en"])) == set(re.findall(r"{(\w+)", entry["zh"])), code
