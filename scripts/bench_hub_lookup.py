"""Look-up time against the fake Hub (tests/fakes/hf_hub.py on 127.0.0.1, found through HF_ENDPOINT):
the first answer for a model no catalog holds (search, config.json and the GGUF / FP8 / AWQ / MLX
listing) and the cached answer, through the same path chat and `ask` use (answer_with_hub).

    .venv/bin/python scripts/bench_hub_lookup.py [--runs N] [--delay S]

--delay adds a per-request latency to the fake (a real Hub answers in ~100-400 ms from most places).
Then names as people type them (issue 22: "4090 falcon3 10b", "4090 olmo 2 13b", ...), searched on the
fake serving the real configs of tests/core/catalog/hub_configs: the first answer (the search forms at
once, then config.json and the listing) and the cached one. Goal: first <= 1.5 s at 300 ms a request.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bot.hub.hf_source import HuggingFaceSource  # noqa: E402
from core.catalog.loader import default_catalog  # noqa: E402
from core.commands.model_lookup import AskSettings, HubModels, answer_with_hub  # noqa: E402
from tests.fakes.hf_hub import FakeHub  # noqa: E402

CONFIG = (REPO / "tests/core/catalog/hf_configs/Qwen__Qwen3-Coder-30B-A3B-Instruct/config.json").read_bytes()


def _add(hub: FakeHub, n: int) -> str:
    repo = f"Acme/Acme{n}-Coder-30B-A3B-Instruct"
    stem = repo.split("/")[1]
    hub.add_repo(
        repo,
        {
            "config.json": CONFIG,
            **{f"model-{i:05d}-of-00016.safetensors": 3_816_515_328 for i in range(1, 17)},
        },
    )
    hub.add_gguf_repo(
        f"bartowski/Acme_{stem}-GGUF",
        {f"Acme_{stem}-Q4_K_M.gguf": 18_631_182_336, f"Acme_{stem}-IQ4_XS.gguf": 16_500_000_000},
    )
    hub.add_gguf_repo(
        f"unsloth/{stem}-GGUF",
        {
            f"{stem}-UD-Q4_K_XL.gguf": 17_700_000_000,
            f"Q8_0/{stem}-Q8_0-00001-of-00002.gguf": 20_000_000_000,
            f"Q8_0/{stem}-Q8_0-00002-of-00002.gguf": 12_480_000_000,
        },
    )
    hub.add_repo(f"{repo}-FP8", {"config.json": CONFIG, "model.safetensors": 31_000_000_000})
    return repo


async def _run(runs: int, delay: float) -> None:
    hub = FakeHub()
    repos = [_add(hub, n) for n in range(runs)]
    await hub.start()
    os.environ["HF_ENDPOINT"] = hub.endpoint
    os.environ.pop("HF_HUB_OFFLINE", None)
    hub.delay = delay
    catalog = default_catalog()
    first: list[float] = []
    cached: list[float] = []
    listed = 0
    with tempfile.TemporaryDirectory() as tmp:
        source = HuggingFaceSource(cache_dir=Path(tmp))
        hub_models = HubModels()
        how = AskSettings("en", "plain")
        for repo in repos:
            question = f"4090 {repo} q4_k_m"
            started = time.perf_counter()
            reply, catalog = await answer_with_hub(catalog, hub_models, source, question, how)
            first.append(time.perf_counter() - started)
            assert reply.status == "answer", reply.text
            kept = hub_models.provenance(repo.lower())  # read for that question (issue 24: not shared)
            listed += bool(kept is not None and kept.listing.read)
            started = time.perf_counter()
            reply, catalog = await answer_with_hub(catalog, hub_models, source, question, how)
            cached.append(time.perf_counter() - started)
    await hub.stop()
    print(
        f"fake Hub, {runs} unknown models, per-request delay {delay * 1000:.0f} ms; "
        f"{listed}/{runs} listings read"
    )
    print(f"first answer ({len(hub.requests) // runs} requests: repo, config.json, the quant listing): "
          f"median {statistics.median(first) * 1000:.0f} ms, max {max(first) * 1000:.0f} ms")  # fmt: skip
    print(f"cached answer: median {statistics.median(cached) * 1000:.1f} ms, max {max(cached) * 1000:.1f} ms")


HUB_CONFIGS = REPO / "tests/core/catalog/hub_configs"
TYPED = {
    "4090 falcon3 10b": ("tiiuae/Falcon3-10B-Instruct", "tiiuae__Falcon3-10B-Instruct"),
    "4090 olmo 2 13b": ("allenai/OLMo-2-1124-13B-Instruct", "allenai__OLMo-2-1124-13B-Instruct"),
    "4090 跑 smollm3 3b 能跑吗": ("HuggingFaceTB/SmolLM3-3B", "HuggingFaceTB__SmolLM3-3B"),
    "4090 minicpm4 8b": ("openbmb/MiniCPM4-8B", "openbmb__MiniCPM4-8B"),
    "4090 exaone 4.0 32b": ("LGAI-EXAONE/EXAONE-4.0-32B", "LGAI-EXAONE__EXAONE-4.0-32B"),
    "4090 phi 3.5 moe": ("microsoft/Phi-3.5-MoE-instruct", "microsoft__Phi-3.5-MoE-instruct"),
}


async def _run_typed(delay: float) -> None:
    hub = FakeHub()
    for repo, fixture in TYPED.values():
        config = (HUB_CONFIGS / fixture / "config.json").read_bytes()
        hub.add_repo(repo, {"config.json": config, "model.safetensors": 6_000_000_000}, downloads=50_000)
    await hub.start()
    os.environ["HF_ENDPOINT"] = hub.endpoint
    hub.delay = delay
    catalog = default_catalog()
    print(f"\ntyped names, fake Hub, per-request delay {delay * 1000:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        source = HuggingFaceSource(cache_dir=Path(tmp))
        hub_models = HubModels()
        how = AskSettings(None, "plain")
        for question in TYPED:
            before = len(hub.requests)
            started = time.perf_counter()
            reply, catalog = await answer_with_hub(catalog, hub_models, source, question, how)
            first = time.perf_counter() - started
            requests = len(hub.requests) - before
            started = time.perf_counter()
            again, catalog = await answer_with_hub(catalog, hub_models, source, question, how)
            cached = time.perf_counter() - started
            head = reply.text.splitlines()[0][:70]
            print(f"  {question:26s} first {first * 1000:5.0f} ms ({requests} requests), "
                  f"cached {cached * 1000:5.1f} ms  {reply.status}: {head}")  # fmt: skip
    await hub.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args(argv)
    asyncio.run(_run(args.runs, args.delay))
    asyncio.run(_run_typed(args.delay))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
