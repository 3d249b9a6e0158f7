"""Issue 24: a hostile repo on a stand-in Hub (tests/fakes/hf_hub.py on 127.0.0.1) can't hurt the bot.

Every case here succeeded as an attack before: a runaway config read for ever in a thread, nonsense
configs were answered with a table, a deep nesting or an odd date was "Something went wrong", the
Hub reads shared (and filled) the event loop's default executor, and a process with a read in flight
didn't exit. No test here times anything: bounds are checked by counts, tiny limits and a counting
clock.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.hub.hf_read import Deadline, read_repo
from bot.hub.hf_source import HuggingFaceSource
from core.catalog.hub_limits import ConfigLimits, HubLimits, ReadLimits
from core.catalog.model_source import ModelSourceError
from tests.fakes.hf_hub import FakeHub, serving

ROOT = Path(__file__).parents[3]
FIXTURES = ROOT / "tests" / "core" / "catalog" / "hf_configs"
GOOD = json.loads((FIXTURES / "Qwen__Qwen3-4B-Instruct-2507" / "config.json").read_text())
WEIGHTS = {"model.safetensors": 8_000_000_000}


def _config(**change: Any) -> bytes:
    return json.dumps({**GOOD, **change}).encode()


HOSTILE: dict[str, bytes] = {
    "runaway layers": _config(num_hidden_layers=10**18),
    "negative layers": _config(num_hidden_layers=-4),
    "negative vocab": _config(vocab_size=-1_000_000_000),
    "huge hidden": _config(hidden_size=10**12),
    "zero heads": _config(num_attention_heads=0, head_dim=128),
    "more kv heads than heads": _config(num_key_value_heads=64),
    "NaN rope factor": _config(rope_scaling={"factor": float("nan"), "original_max_position_embeddings": 8}),
    "a layer list of 100,000": _config(layer_types=["full_attention"] * 100_000),
    "nested 100,000 deep": b'{"model_type": "qwen3", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not an object": b"[1, 2, 3]",
}


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeHub]:
    fake = FakeHub()
    fake.add_repo("good/Tiny-4B", {"config.json": _config(), **WEIGHTS})
    for n, body in enumerate(HOSTILE.values()):
        fake.add_repo(f"mallory/Evil-{n}", {"config.json": body, **WEIGHTS})
    async with serving(fake, monkeypatch):
        yield fake


def _source(tmp_path: Path, **limits: Any) -> HuggingFaceSource:
    # 60 s: a hang guard, not a speed test.
    return HuggingFaceSource(budget_s=60.0, cache_dir=tmp_path / "hf", limits=replace(HubLimits(), **limits))


@pytest.mark.parametrize(("n", "case"), list(enumerate(HOSTILE)))
async def test_a_config_outside_any_real_model_cannot_be_read(
    hub: FakeHub, tmp_path: Path, n: int, case: str
) -> None:
    with pytest.raises(ModelSourceError) as caught:
        await _source(tmp_path).lookup(f"mallory/Evil-{n}")
    assert caught.value.kind == "malformed", (case, caught.value)


async def test_fifty_runaway_configs_leave_no_thread_running(hub: FakeHub, tmp_path: Path) -> None:
    for n in range(50):
        hub.add_repo(f"mallory/Runaway-{n}", {"config.json": _config(num_hidden_layers=10**18), **WEIGHTS})
    source = _source(tmp_path)
    results = await asyncio.gather(
        *(source.lookup(f"mallory/Runaway-{n}") for n in range(50)), return_exceptions=True
    )
    kinds = [getattr(r, "kind", type(r).__name__) for r in results]
    # Refused at once, or (a full pool) refused before reading: never read for ever.
    assert set(kinds) <= {"malformed", "busy"} and kinds.count("malformed") >= source.limits.reads.workers
    assert source.pool.alive() <= source.limits.reads.workers
    found = await source.lookup("good/Tiny-4B")  # the Hub still answers
    assert found.model.layers == GOOD["num_hidden_layers"]


async def test_a_config_over_the_size_limit_is_never_downloaded(hub: FakeHub, tmp_path: Path) -> None:
    source = _source(tmp_path, config=ConfigLimits(max_bytes=100))
    with pytest.raises(ModelSourceError) as caught:
        await source.lookup("good/Tiny-4B")
    assert caught.value.kind == "malformed" and hub.count("resolve") == 0


async def test_a_model_info_date_that_is_no_date_is_malformed(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_repo("mallory/Odd-Date", {"config.json": _config(), **WEIGHTS}, created_at="yesterday-ish")
    with pytest.raises(ModelSourceError) as caught:
        await _source(tmp_path).lookup("mallory/Odd-Date")
    assert caught.value.kind == "malformed"


async def test_a_read_past_its_deadline_stops_at_its_next_step(hub: FakeHub, tmp_path: Path) -> None:
    """The read checks its deadline between steps: a counting clock, one tick per check."""
    ticks = iter(range(100))
    source = _source(tmp_path)
    deadline = Deadline(0.5, clock=lambda: float(next(ticks)))
    with pytest.raises(ModelSourceError) as caught:
        await asyncio.to_thread(read_repo, "good/Tiny-4B", source.settings(), deadline)
    assert caught.value.kind == "timeout" and hub.count("resolve") == 0  # config.json never asked


async def test_hub_reads_never_use_the_default_executor(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the Hub read used asyncio.to_thread (the default executor)")

    source = _source(tmp_path)
    monkeypatch.setattr(asyncio, "to_thread", refused)
    found = await source.lookup("good/Tiny-4B")
    assert found.listing.read and await source.search("tiny", 5)


async def test_a_full_pool_refuses_at_once(hub: FakeHub, tmp_path: Path) -> None:
    gate = hub.hold()
    source = _source(tmp_path, reads=ReadLimits(workers=1, queue=1))
    tasks = [asyncio.ensure_future(source.lookup(f"mallory/Evil-{n}")) for n in range(4)]
    while sum(t.done() for t in tasks) < 2:  # the ones with no room fail without waiting on the Hub
        await asyncio.sleep(0.01)
    busy = [t for t in tasks if t.done() and getattr(t.exception(), "kind", "") == "busy"]
    assert len(busy) >= 2 and source.pool.alive() == 1
    gate.set()
    await asyncio.gather(*tasks, return_exceptions=True)


def test_a_read_in_flight_does_not_hold_the_process_at_exit() -> None:
    """A Hub read that never ends (a thread nobody can stop) and the process still exits."""
    script = textwrap.dedent(
        """
        import asyncio, threading
        from bot.hub.pool import HubPool

        async def main():
            pool = HubPool(1, 1)
            try:
                await asyncio.wait_for(pool.run("x", threading.Event().wait), 0.05)
            except TimeoutError:
                print("gave up waiting")

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "gave up waiting" in done.stdout, done.stderr
