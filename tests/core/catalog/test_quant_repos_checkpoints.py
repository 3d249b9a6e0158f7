"""Published quantized checkpoints listed in catalogs/quant_repos.toml [checkpoints] (beside the older
rows of catalogs/estimator.toml [checkpoints]): every row names a catalog model's repo and catalog
quants, cites where it was read, and the engine serves it instead of "no AWQ checkpoint is listed".

The end-to-end cases were written before the rows were added (first-run count in the session's
report): well-known AWQ / FP8 / NVFP4 checkpoints of the MoE and dense models people serve with vLLM
and SGLang (GLM-4.5 / 4.5-Air / 4.6, Qwen3-235B-2507, Qwen3-30B-A3B-2507, Qwen3-Coder, Qwen3-Next,
DeepSeek-V3.1 / V3.2, MiniMax-M2, Llama-3.3-70B FP8, Mistral Small 3.2, gemma-3-27b FP8)."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.catalog.sections import sections
from core.estimator.frameworks.commands.sources import published_checkpoint

CAT = default_catalog()
TABLE: dict[str, dict[str, str]] = CAT.tables["quant_repos"].get("checkpoints", {})
OLD: dict[str, dict[str, str]] = sections(CAT).estimator.checkpoints
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


def test_rows_name_catalog_models_and_quants_with_a_source() -> None:
    repos = {m.hf_repo for m in CAT.models.values()}
    assert TABLE, "catalogs/quant_repos.toml has no [checkpoints]"
    for base, row in TABLE.items():
        assert base in repos, f"{base}: no catalog model has this hf_repo"
        assert row.get("source", "").strip(), f"{base}: no source"
        listed = {k: v for k, v in row.items() if k != "source"}
        assert listed, base
        for quant, repo in listed.items():
            assert quant in CAT.quants and CAT.quants[quant].format == "serving", (base, quant)
            assert REPO_ID.match(repo), (base, repo)


def test_no_checkpoint_listed_in_both_files() -> None:
    """One place per (repo, quant): the newer file never silently overrides the older one."""
    for base, row in TABLE.items():
        for quant in row:
            if quant != "source":
                assert quant not in OLD.get(base, {}), f"{base} {quant} is listed in both files"


def test_the_loader_reads_both_files() -> None:
    assert published_checkpoint("zai-org/GLM-4.5-Air", "AWQ") == "cyankiwi/GLM-4.5-Air-AWQ-4bit"
    assert published_checkpoint("zai-org/GLM-4.6", "FP8") == "zai-org/GLM-4.6-FP8"  # estimator.toml
    assert published_checkpoint("zai-org/GLM-4.6", "AWQ") == "QuantTrio/GLM-4.6-AWQ"  # quant_repos.toml


@pytest.mark.parametrize(
    ("question", "repo"),
    [
        (
            "4x 3090 GLM-4.5-Air AWQ vllm tensor parallel how many tok/s for 8 concurrent users",
            "cyankiwi/GLM-4.5-Air-AWQ-4bit",
        ),
        ("2x 3090 qwen3-30b-a3b-instruct-2507 awq vllm", "cyankiwi/Qwen3-30B-A3B-Instruct-2507-AWQ-4bit"),
        ("用 vllm 在 2张 4090 上跑 qwen3-coder-30b awq", "cyankiwi/Qwen3-Coder-30B-A3B-Instruct-AWQ-4bit"),
        ("2x h100 qwen3 next 80b fp8 vllm", "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8"),
        ("8x h100 glm 4.5 fp8 sglang", "zai-org/GLM-4.5-FP8"),
        ("8x a100 80g deepseek v3.1 awq vllm", "QuantTrio/DeepSeek-V3.1-AWQ"),
        ("4x h100 minimax m2 awq vllm", "QuantTrio/MiniMax-M2-AWQ"),
        ("2x l40s llama 3.3 70b fp8 vllm", "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic"),
        ("qwen3 235b 2507 awq 4x a6000 vllm", "QuantTrio/Qwen3-235B-A22B-Instruct-2507-AWQ"),
        ("8张 h20 用 sglang 部署 glm 4.6 awq", "QuantTrio/GLM-4.6-AWQ"),
        # added after the first run, with the Kimi K2 row
        ("8x a100 80g kimi k2 gptq vllm", "RedHatAI/Kimi-K2-Instruct-quantized.w4a16"),
    ],
)
def test_listed_checkpoint_is_served(question: str, repo: str) -> None:
    text = answer(question, CAT).text
    engine = "python -m sglang.launch_server --model-path " if "sglang" in question else "vllm serve "
    assert engine + repo in text, text


def test_glm_air_on_four_3090s_is_tensor_parallel() -> None:
    text = answer(
        "4x 3090 GLM-4.5-Air AWQ vllm tensor parallel how many tok/s for 8 concurrent users", CAT
    ).text
    assert "no AWQ checkpoint" not in text, text
    command = next(line for line in text.splitlines() if "vllm serve" in line)
    assert "--tensor-parallel-size 4" in command, command


def test_l40s_qwen3_next_prices_the_listed_awq() -> None:
    """The AWQ checkpoint exists: vLLM's line is priced from it (the estimate holds its ~42 GiB of
    weights in the 44 GiB vLLM takes, tight), never "no AWQ checkpoint is listed"."""
    text = answer("L40S 48G qwen3-next-80b-a3b fits? vllm or llama.cpp", CAT).text
    assert "is listed" not in text and "vLLM: AWQ" in text, text
    zh = answer("L40S 48G 用 vllm 跑 qwen3-next-80b-a3b awq 能装下吗", CAT).text
    assert "没有已发布" not in zh and "cyankiwi/Qwen3-Next-80B-A3B-Instruct-AWQ-4bit" in zh, zh


def test_a_listed_checkpoint_too_big_for_the_cards_is_not_called_unlisted() -> None:
    text = answer("GLM 4.6 awq 4x4090 vllm", CAT).text
    assert "is listed" not in text, text


def test_the_refusal_names_what_is_listed_and_why_not() -> None:
    """No AWQ of gemma-3-27b is listed, but its FP8 is and fits two 3090s: the line says so instead
    of "its other weights don't fit or don't run"."""
    text = answer("2x 3090 gemma 3 27b awq vllm", CAT).text
    assert "RedHatAI/gemma-3-27b-it-FP8-dynamic" in text and "ask for FP8" in text, text
    # Nothing listed at all: the old line, as before.
    t4 = answer("T4 gemma 2 9b vllm", CAT).text
    assert "no AWQ checkpoint of google/gemma-2-9b-it is listed" in t4, t4
