"""key=value fields, sentences and pastes -> raw fields per measurement."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.community.card_count import read_cards
from core.community.pasted import MODEL_FROM_ARCH, QUANT_ASSUMED
from core.community.submit_parse import MIXED_GPUS, parse_submission, sentence_speeds
from core.community.validate import read_submission
from tests.core.community.test_pasted import BENCH_4090, BENCH_DEPTH, VLLM_SERVE_LOADED

CATALOG = default_catalog()


def _fields(text: str, form: dict[str, str] | None = None) -> dict[str, str]:
    parsed = parse_submission(text, CATALOG, form)
    assert len(parsed.runs) == 1
    return parsed.runs[0].fields


def test_key_value_with_quotes_and_aliases() -> None:
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


def test_every_alias_in_the_brief_maps_to_its_key() -> None:
    pairs = {
        "count": "count", "gpus": "count", "mem": "memory", "vram_size": "memory", "q": "quant",
        "ctx": "ctx", "depth": "depth", "fw": "framework", "version": "version", "backend": "backend",
        "os": "os", "decode": "decode", "tps": "decode", "speed": "decode", "prefill": "prefill",
        "prompt": "prompt", "kv": "kv", "fa": "fa", "mem_used": "mem_used", "vram": "mem_used",
        "evidence": "evidence", "url": "evidence", "log": "evidence", "notes": "notes",
    }  # fmt: skip
    for alias, key in pairs.items():
        assert _fields(f"{alias}=7") == {key: "7"}, alias


def test_unknown_keys_are_reported_not_taken() -> None:
    parsed = parse_submission("modle=x gpu=4090", CATALOG)
    assert parsed.unknown_keys == ("modle",)
    assert parsed.runs[0].fields == {"gpu": "4090"}


def test_form_fields_win_over_typed_fields() -> None:
    parsed = parse_submission("gpu=3090 decode=10", CATALOG, {"decode": "12", "Model": "qwen3 8b"})
    run = parsed.runs[0]
    assert run.fields == {"gpu": "3090", "decode": "12", "model": "qwen3 8b"}
    assert run.origin == {"gpu": "field", "decode": "form", "model": "form"}


def test_english_sentence() -> None:
    run = parse_submission("4090 llama 3 8b q4_k_m 128 tok/s", CATALOG).runs[0]
    assert run.fields == {"decode": "128.0", "gpu": "rtx-4090", "model": "llama-3-8b", "quant": "Q4_K_M"}
    assert run.resolved["gpu"].best_id == "rtx-4090"
    assert set(run.origin.values()) == {"sentence"}


def test_chinese_sentence_with_card_count() -> None:
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
def test_sentence_speeds(text: str, decode: float | None, prefill: float | None) -> None:
    d, p, _ = sentence_speeds(text)
    assert (d, p) == (decode, prefill)


def test_paste_with_fields_completing_it() -> None:
    text = 'gpu="RTX 3090" model="qwen3 30b a3b"\n' + BENCH_DEPTH
    parsed = parse_submission(text, CATALOG)
    assert len(parsed.runs) == 5
    first = parsed.runs[0]
    assert first.fields["gpu"] == "RTX 3090" and first.origin["gpu"] == "field"
    assert first.fields["decode"] == "71.58" and first.origin["decode"] == "paste"
    # The submitter named the model: the architecture-name caveat is dropped.
    assert MODEL_FROM_ARCH not in first.caveats


def test_sentence_before_a_paste_fills_what_the_paste_lacks() -> None:
    parsed = parse_submission("my 7900 xtx:\n" + BENCH_DEPTH, CATALOG)
    assert parsed.runs[0].fields["gpu"] == "rx-7900-xtx"
    assert parsed.runs[0].origin["gpu"] == "sentence"


def test_paste_device_line_beats_a_sentence() -> None:
    parsed = parse_submission("on my 3090\n" + BENCH_4090, CATALOG)
    assert parsed.runs[0].fields["gpu"] == "NVIDIA GeForce RTX 4090"


def test_python_reprs_in_logs_are_not_fields() -> None:
    text = (
        "Namespace(subparser='bench', backend='vllm', model='Qwen/Qwen3-0.6B', seed=0)\n" + VLLM_SERVE_LOADED
    )
    parsed = parse_submission(text, CATALOG)
    assert "backend" not in parsed.runs[0].fields
    assert parsed.unknown_keys == ()


def test_text_is_capped() -> None:
    parsed = parse_submission("x " * 100_000, CATALOG)
    assert len(parsed.text) <= 60_000


# --- nothing typed is lost (issue 12) -------------------------------------------------------------


# llama-bench's most common model line: "llama 8B Q4_K - Medium", 4.58 GiB, 8.03 B (Llama 3.x 8B).
BENCH_LLAMA_8B = """\
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes
| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           pp512 |     11920.33 ± 12.34 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           tg128 |        150.12 ± 0.50 |

build: 086a63e3a (7340)
"""  # noqa: E501

OLLAMA_STATS = """\
total duration:       1.2s
load duration:        20ms
prompt eval count:    40 token(s)
prompt eval duration: 30ms
prompt eval rate:     1333.33 tokens/s
eval count:           100 token(s)
eval duration:        800ms
eval rate:            125.00 tokens/s
"""


@pytest.mark.parametrize(
    ("text", "name", "count", "mix"),
    [
        ("2x 3090", "3090", 2, ()),
        ("2×4090", "4090", 2, ()),
        ("3090 x2", "3090", 2, ()),
        ("H100x8", "H100", 8, ()),
        ("双3090", "3090", 2, ()),
        ("两张4090", "4090", 2, ()),
        ("dual 3090", "3090", 2, ()),
        ("4090 x 1000", "4090", 1000, ()),  # read as a count, so the form can refuse it with a sentence
        ("3090+3060", "3090", 2, ("3090", "3060")),
        ("4090 + 2x 3090", "4090", 3, ("4090", "2x 3090")),
    ],
)
def test_counts_and_mixes_in_a_card_name(text: str, name: str, count: int, mix: tuple[str, ...]) -> None:
    cards = read_cards(text, CATALOG)
    assert cards is not None and (cards.name, cards.count, cards.mix) == (name, count, mix)


@pytest.mark.parametrize(
    "text", ["RTX 3060", "RX 5700 XT", "RX 7900 XTX", "MI300X", "A100 80GB", "2x", "phone 4090"]
)
def test_card_names_without_a_count_stay_as_they_are(text: str) -> None:
    assert read_cards(text, CATALOG) is None


@pytest.mark.parametrize("gpu", ['"2x 3090"', "2×3090", "'3090 x 2'", "双3090"])
def test_a_count_in_the_gpu_field_is_stored_as_the_count(gpu: str) -> None:
    reading = read_submission(f"gpu={gpu} model='qwen2.5 72b' quant=Q4_K_M decode=16.2", CATALOG)
    assert not reading.problems, [n.text() for n in reading.problems]
    (draft,) = reading.drafts
    assert (draft.measurement.gpu_id, draft.measurement.gpu_count) == ("rtx-3090", 2)


def test_a_count_field_beside_the_card_wins() -> None:
    assert _fields("gpu='2x 3090' count=4")["count"] == "4"


def test_the_guided_dialogue_accepts_its_own_example() -> None:
    reading = read_submission("", CATALOG, {"gpu": "2x 3090", "model": "qwen2.5 72b", "quant": "Q4_K_M",
                                            "decode": "16.2"})  # fmt: skip
    assert [(d.measurement.gpu_id, d.measurement.gpu_count) for d in reading.drafts] == [("rtx-3090", 2)]


def test_a_mix_is_kept_in_the_notes_and_flagged() -> None:
    (run,) = parse_submission("gpu=3090+3060 model='qwen2.5 32b' quant=Q4_K_M decode=16.2", CATALOG).runs
    assert (run.fields["gpu"], run.fields["count"]) == ("3090", "2")
    assert run.gpu_mix == ("3090", "3060") and MIXED_GPUS in run.caveats
    assert "3090 + 3060" in run.fields["notes"]
    (draft,) = read_submission("gpu=3090+3060 model='qwen2.5 32b' quant=Q4_K_M decode=16.2", CATALOG).drafts
    assert MIXED_GPUS in draft.flags and "3090 + 3060" in (draft.measurement.notes or "")


def test_a_mix_of_devices_in_a_paste_is_kept() -> None:
    paste = BENCH_LLAMA_8B.replace(
        "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n",
        "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n"
        "  Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n",
    )
    (run,) = parse_submission(paste, CATALOG).runs
    assert run.fields["count"] == "2" and MIXED_GPUS in run.caveats
    assert run.gpu_mix == ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090")


def test_llama_8b_bench_line_resolves_with_its_size_and_params() -> None:
    reading = read_submission(BENCH_LLAMA_8B, CATALOG)
    assert not reading.problems, [n.text() for n in reading.problems]
    (draft,) = reading.drafts
    m = draft.measurement
    assert (m.gpu_id, m.model_id, m.quant, m.decode_tps) == ("rtx-4090", "llama-3.1-8b", "Q4_K_M", 150.12)
    assert MODEL_FROM_ARCH in draft.flags  # the moderator still sees it was read from the architecture


def test_a_bench_line_whose_numbers_fit_no_candidate_still_asks() -> None:
    # TinyLlama: "llama 1B" with 1.10 B params is not Llama 3.2 1B (1.24 B).
    reading = read_submission(
        BENCH_LLAMA_8B.replace("llama 8B", "llama 1B").replace("8.03 B", "1.10 B"), CATALOG
    )
    assert not reading.drafts and reading.candidates.get("model")


OLLAMA_TAGGED = (
    f"gpu=4090 model=qwen3:8b\n{OLLAMA_STATS}",
    "gpu=4090 model=qwen3:8b decode=100",
    "ollama qwen3:8b on my 4090 100 t/s",
    f"$ ollama run qwen3:8b --verbose\n{OLLAMA_STATS}gpu=4090",
)


def test_an_ollama_tag_implies_its_quant() -> None:
    for text in OLLAMA_TAGGED:
        reading = read_submission(text, CATALOG)
        assert not reading.missing and not reading.problems, (text, reading.missing)
        (draft,) = reading.drafts
        assert (draft.measurement.model_id, draft.measurement.quant) == ("qwen3-8b", "Q4_K_M")
        assert QUANT_ASSUMED in draft.flags


def test_a_tag_with_a_quant_says_it() -> None:
    f = _fields("gpu=4090 model=qwen2.5:7b-instruct-q8_0 decode=100")
    assert f["quant"] == "Q8_0"
    assert "quant" not in _fields("gpu=4090 model='qwen3 8b' decode=100")  # no tag, no framework: asked
