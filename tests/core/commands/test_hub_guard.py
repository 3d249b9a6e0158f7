"""Issue 24, the command layer: what one chat user can make the bot do with the Hub.

Against the stand-in Hub (tests/fakes/hf_hub.py on 127.0.0.1). Before: a repo named in one question
joined everyone's name resolution and the database (mallory's network answered everyone's "zeta 9
70b", across restarts), one user added 150 models, every repeat of an unknown repo cost ~13 Hub
requests, and HF_ENDPOINT's password was in every failure reply.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from bot.hub.hf_source import HuggingFaceSource
from bot.logging_setup import TextFormatter
from core.catalog.hub_limits import BudgetLimits, CacheLimits, HubLimits
from core.commands import model as model_cmd
from core.commands.model_lookup import HubModels, to_payload
from tests.core.commands.conftest import Harness
from tests.fakes.hf_hub import FakeHub, serving

FIXTURES = Path(__file__).parents[1] / "catalog" / "hf_configs"
CONFIG = (FIXTURES / "Qwen__Qwen3-4B-Instruct-2507" / "config.json").read_bytes()
WEIGHTS = {"model.safetensors": 8_000_000_000}
ZETA = "mallory/Zeta-9-70B"


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeHub]:
    fake = FakeHub()
    fake.add_repo(ZETA, {"config.json": CONFIG, **WEIGHTS})
    for n in range(6):
        fake.add_repo(f"someone/Model-{n}-4B", {"config.json": CONFIG, **WEIGHTS})
    llama4 = json.dumps({"model_type": "llama4", "hidden_size": 5120}).encode()
    fake.add_repo("meta/Odd-Llama4-17B", {"config.json": llama4, **WEIGHTS})
    async with serving(fake, monkeypatch):
        yield fake


async def _harness(tmp_path: Path, **limits: object) -> Harness:
    h = Harness()
    await h.storage.open()
    h.bot.model_source = HuggingFaceSource(budget_s=60.0, cache_dir=tmp_path / "hf")  # a hang guard
    h.bot.hub_models = HubModels(limits=replace(HubLimits(), **limits))
    h.bot.hub_models._configured = True  # these limits, not the shipped file's
    return h


async def test_a_repo_named_in_a_question_is_not_a_model_for_everyone(hub: FakeHub, tmp_path: Path) -> None:
    h = await _harness(tmp_path)
    [mallory] = await h.say("mallory", f"4090 {ZETA}")
    assert mallory.text.startswith("Zeta-9-70B · Hugging Face"), mallory.text
    assert "mallory/zeta-9-70b" not in h.bot.catalog.models
    assert await h.storage.cached_models() == []  # nor kept across a restart
    # Everyone else's "zeta 9 70b" is a name the catalog doesn't hold, not mallory's network.
    h.bot.model_source = None
    [carol] = await h.say("carol", "4090 zeta 9 70b")
    assert "Zeta-9-70B" not in carol.text and ZETA not in carol.text, carol.text
    # A moderator's /model add is what puts a model there.
    h.bot.model_source = HuggingFaceSource(budget_s=60.0, cache_dir=tmp_path / "hf")
    [added] = await h.say("bob", f"/model add {ZETA}")
    assert added.status == "ok" and "mallory/zeta-9-70b" in h.bot.catalog.models


async def test_buttons_under_a_hub_answer_still_work(hub: FakeHub, tmp_path: Path) -> None:
    h = await _harness(tmp_path)
    [answer] = await h.say("alice", f"4090 {ZETA}")
    quant = next(b for row in answer.buttons for b in row if b.action.startswith("v:q:"))
    [detail] = await h.press("alice", quant.action)
    assert detail.status == "ok" and "expired" not in detail.text.lower(), detail.text


async def test_a_repeated_repo_costs_the_hub_nothing(hub: FakeHub, tmp_path: Path) -> None:
    h = await _harness(tmp_path)
    await h.say("alice", f"4090 {ZETA}")
    asked = len(hub.requests)
    [again] = await h.say("dave", f"3090 {ZETA}")
    assert again.text.startswith("Zeta-9-70B · Hugging Face") and len(hub.requests) == asked


@pytest.mark.parametrize("repo", ["nobody/Nothing-Here-7B", "meta/Odd-Llama4-17B"])
async def test_a_failed_look_up_is_remembered(hub: FakeHub, tmp_path: Path, repo: str) -> None:
    h = await _harness(tmp_path)
    [first] = await h.say("alice", f"4090 {repo}")
    asked = len(hub.requests)
    assert first.status != "ok" and asked >= 1
    [again] = await h.say("mallory", f"4090 {repo}")
    assert again.text == first.text and len(hub.requests) == asked  # no Hub request for the repeat


async def test_each_person_and_chat_has_a_hub_budget(hub: FakeHub, tmp_path: Path) -> None:
    h = await _harness(tmp_path, budget=BudgetLimits(window_s=3600, per_user=2, per_chat=3))
    for n in range(2):
        [ok] = await h.say("mallory", f"4090 someone/Model-{n}-4B", chat="group")
        assert ok.status == "ok", ok.text
    asked = len(hub.requests)
    [refused] = await h.say("mallory", "4090 someone/Model-2-4B", chat="group")
    assert "used up the Hugging Face look-ups" in refused.text and len(hub.requests) == asked
    [cached] = await h.say("mallory", "4090 someone/Model-0-4B", chat="group")  # from memory: free
    assert cached.status == "ok"
    [third] = await h.say("trent", "4090 someone/Model-3-4B", chat="group")  # the chat's third
    assert third.status == "ok"
    [chat_full] = await h.say("oscar", "4090 someone/Model-4-4B", chat="group")
    assert "used up the Hugging Face look-ups" in chat_full.text
    [elsewhere] = await h.say("oscar", "4090 someone/Model-4-4B")  # his own chat has room
    assert elsewhere.status == "ok"


async def test_what_is_remembered_is_capped(hub: FakeHub, tmp_path: Path) -> None:
    h = await _harness(tmp_path, cache=CacheLimits(asked=2, shared=2))
    for n in range(4):
        await h.say("alice", f"4090 someone/Model-{n}-4B")
    assert len(h.bot.hub_models.asked) == 2
    for n in range(3):
        [done] = await h.say("bob", f"/model add someone/Model-{n}-4B")
        assert done.status == "ok"
    assert list(h.bot.hub_models.found) == ["someone/model-1-4b", "someone/model-2-4b"]


async def test_models_a_question_stored_before_are_not_loaded(tmp_path: Path) -> None:
    h = await _harness(tmp_path)
    from core.catalog.from_config import read_config
    from core.catalog.model_source import Provenance, SourcedModel

    reading = read_config(json.loads(CONFIG), model_id="mallory/zeta-9-70b", repo=ZETA)
    sourced = SourcedModel(reading.model, reading.params, Provenance(ZETA, "a", "2026", "e", "u"))
    old = json.loads(to_payload(sourced))
    del old["added_by_moderator"]  # what a question stored before issue 24
    assert await model_cmd.load_stored(h.bot, [json.dumps(old), to_payload(sourced)]) == 1


async def test_the_hub_is_named_without_its_password(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = await _harness(tmp_path)
    monkeypatch.setenv("HF_ENDPOINT", "http://hubuser:s3cr3t-pw@127.0.0.1:9")  # nothing listens there
    [failed] = await h.say("alice", "4090 someone/Model-5-4B")
    assert "couldn't be reached" in failed.text and "127.0.0.1:9" in failed.text, failed.text
    assert "s3cr3t" not in failed.text and "hubuser" not in failed.text
    # A working mirror with credentials: the answer's sources name it by host alone.
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint.replace("http://", "http://hubuser:s3cr3t-pw@"))
    [answer] = await h.say("alice", "4090 someone/Model-0-4B")
    kept = h.bot.hub_models.provenance("someone/model-0-4b")
    assert answer.status == "ok" and kept is not None, answer.text
    assert "s3cr3t" not in kept.provenance.config_url + kept.provenance.endpoint + answer.text


def test_logs_scrub_url_userinfo() -> None:
    record = logging.LogRecord(
        "httpx", logging.INFO, "", 0, "GET http://hubuser:s3cr3t-pw@mirror.example/api/models", None, None
    )
    line = TextFormatter().format(record)
    assert "s3cr3t" not in line and "hubuser" not in line and "mirror.example/api/models" in line
