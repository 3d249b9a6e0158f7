"""A vLLM / SGLang setup fits only if its weights, activation / graph reserve and a minimum KV pool fit
inside memory x the share it launches with (`--gpu-memory-utilization`, `--mem-fraction-static`).
8x A100 80GB with DeepSeek-R1 FP8 (627 GiB of weights) under SGLang's 0.88 (563 GiB) can't load.

The rule lives in core/estimator/memory.py `serving_share` (SGLang's share is its command's 0.88,
catalogs/frameworks.toml) and core/estimator/estimate.py `_fixed` (vLLM and SGLang keep an activation
+ CUDA-graph reserve)."""

from __future__ import annotations

import re

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()
_SHARE = re.compile(r"--(?:mem-fraction-static|gpu-memory-utilization) ([0-9.]+)")


def _loads(question: str, cards: int, card_gib: float) -> None:
    reply = answer(question, CATALOG)
    assert reply.plan is not None, reply.text
    quant, command = reply.plan["quant"], reply.plan["command"] or ""
    m = _SHARE.search(command)
    assert m is not None, command
    weights = next(
        float(line.split()[1])
        for line in reply.text.splitlines()
        if line.startswith(quant + " ") and re.match(r"^\S+\s+[0-9.]+\s", line)
    )
    assert weights < float(m.group(1)) * cards * card_gib, reply.text


def test_sglang_plan_loads_at_its_fraction() -> None:
    _loads("8x A100 80GB deepseek r1 sglang", 8, 80.0)


def test_vllm_plan_loads_at_its_utilization() -> None:
    _loads("8x H100 deepseek r1 vllm", 8, 80.0)
