"""The quant listing against the fake Hub: GGUF sizes per quant (split parts, folders), publisher order,
AWQ / FP8 repos, failures while listing, the cached payload, and the estimator using the sizes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from bot.hub.hf_source import HuggingFaceSource
from core.ask.answer import estimate_for
from core.catalog.loader import default_catalog
from core.catalog.published_files import published_file
from core.commands.model_lookup import AskSettings, HubModels, answer_with_hub, from_payload, to_payload
from core.estimator.serialize import estimate_dict
from core.estimator.weights import gguf_meta_bytes, weight_breakdown
from tests.fakes.hf_hub import FakeHub, serving

FIXTURES = Path(__file__).parents[2] / "core" / "catalog" / "hf_configs"
# A model no catalog holds (Qwen3-Coder's config under a new name): answered through the Hub only.
CODER = "Acme/Acme-Coder-30B-A3B-Instruct"
CODER_CONFIG = (FIXTURES / "Qwen__Qwen3-Coder-30B-A3B-Instruct" / "config.json").read_bytes()
SHARDS = {f"model-{i:05d}-of-00016.safetensors": 3_816_515_328 for i in range(1, 17)}
BARTOWSKI = "bartowski/Acme_Acme-Coder-30B-A3B-Instruct-GGUF"
UNSLOTH = "unsloth/Acme-Coder-30B-A3B-Instruct-GGUF"
STEM = "Acme-Coder-30B-A3B-Instruct"
Q4_BARTOWSKI = 18_631_182_336
Q4_UNSLOTH = 18_556_686_592
CAT = default_catalog()
GIB = 2**30


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeHub]:
    fake = FakeHub()
    fake.add_repo(CODER, {"config.json": CODER_CONFIG, **SHARDS}, downloads=900_000)
    fake.add_gguf_repo(
        BARTOWSKI,
        {f"Acme_{STEM}-Q4_K_M.gguf": Q4_BARTOWSKI, f"Acme_{STEM}-IQ4_XS.gguf": 16_500_000_000},
    )
    fake.add_gguf_repo(
        UNSLOTH,
        {
            f"{STEM}-Q4_K_M.gguf": Q4_UNSLOTH,
            f"{STEM}-UD-Q4_K_XL.gguf": 17_700_000_000,
            f"Q8_0/{STEM}-Q8_0-00001-of-00002.gguf": 20_000_000_000,
            f"Q8_0/{STEM}-Q8_0-00002-of-00002.gguf": 12_480_000_000,
            "mmproj-F16.gguf": 900_000_000,
        },
    )
    fake.add_repo(f"{CODER}-FP8", {"config.json": CODER_CONFIG, "model.safetensors": 31_000_000_000})
    async with serving(fake, monkeypatch):
        yield fake


@pytest.fixture
def source(tmp_path: Path) -> HuggingFaceSource:
    return HuggingFaceSource(budget_s=5.0, cache_dir=tmp_path / "hf-cache")


async def test_the_listing_reads_every_quant_in_publisher_order(
    hub: FakeHub, source: HuggingFaceSource
) -> None:
    found = await source.lookup(CODER)
    listing = found.listing
    assert listing.read and not listing.error
    files = {f.quant_id: f for f in listing.files}
    assert files["Q4_K_M"].repo == BARTOWSKI and files["Q4_K_M"].bytes == Q4_BARTOWSKI  # bartowski first
    assert files["UD-Q4_K_XL"].repo == UNSLOTH  # only unsloth has it
    assert files["Q8_0"].bytes == 32_480_000_000 and len(files["Q8_0"].files) == 2  # a folder, split
    assert set(files) == {"Q4_K_M", "IQ4_XS", "UD-Q4_K_XL", "Q8_0"}  # no mmproj
    assert listing.found == (BARTOWSKI, UNSLOTH)
    assert [(r.quant_id, r.repo) for r in listing.repos] == [("FP8", f"{CODER}-FP8")]
    assert files["Q4_K_M"].source.startswith(hub.endpoint)


async def test_no_gguf_repo_anywhere(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub.add_repo("org/Lonely-7B", {"config.json": CODER_CONFIG, **SHARDS})
    listing = (await source.lookup("org/Lonely-7B")).listing
    assert listing.read and listing.files == () and listing.found == () and listing.repos == ()
    assert "org/Lonely-7B-GGUF" in listing.tried and "bartowski/org_Lonely-7B-GGUF" in listing.tried


async def test_a_hub_failure_while_listing_keeps_the_model(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub.fail_repo(BARTOWSKI, 503)
    found = await source.lookup(CODER)
    assert found.model.layers == 48  # the model still answers
    assert not found.listing.read and BARTOWSKI in found.listing.error
    # Nothing is half-cached: the next look-up asks again and reads the listing in full.
    again = await source.lookup(CODER)
    assert not again.cached and again.listing.read
    assert next(f for f in again.listing.files if f.quant_id == "Q4_K_M").repo == BARTOWSKI


async def test_a_slow_listing_is_cut_at_its_budget(hub: FakeHub, tmp_path: Path) -> None:
    """The quantizers' repos don't answer before the listing's budget (on any machine: held): the
    model is answered from its config without the listing, which is said to have timed out."""
    listing = hub.hold(lambda r: CODER.lower() not in r.path.lower())
    source = HuggingFaceSource(budget_s=60.0, listing_budget_s=0.1, cache_dir=tmp_path)
    found = await source.lookup(CODER)
    assert not listing.is_set()
    assert found.model.layers == 48 and not found.listing.read and "timeout" in found.listing.error


async def test_the_cached_payload_keeps_the_listing(hub: FakeHub, source: HuggingFaceSource) -> None:
    found = await source.lookup(CODER)
    back = from_payload(to_payload(found))
    assert back.listing == found.listing and back.model == found.model
    # A payload stored before listings were kept still loads (the listing counts as not read).
    old = json.loads(to_payload(found))
    del old["listing"]
    assert not from_payload(json.dumps(old)).listing.read


async def test_the_estimator_uses_the_published_size(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub_models = HubModels()
    reply, shared = await answer_with_hub(
        CAT, hub_models, source, f"4090 {CODER} q4_k_m", AskSettings("en", "plain")
    )
    assert reply.status == "answer" and reply.query is not None, reply.text
    catalog = hub_models.catalog_for(shared, reply.query.model_id)  # the question's own catalog
    model = catalog.models[CODER.lower()]
    q4 = published_file(model, "Q4_K_M")
    assert q4 is not None and q4.repo == BARTOWSKI
    wb = weight_breakdown(model, catalog.quants["Q4_K_M"], catalog)
    assert wb.published == q4 and wb.file_bytes == Q4_BARTOWSKI
    # On the GPU: the file less its metadata and the embedding table llama.cpp keeps in host RAM.
    expected = Q4_BARTOWSKI - gguf_meta_bytes(model.vocab) - wb.token_embd_bytes
    assert abs(wb.gpu_bytes_full_offload - expected) <= model.layers  # per-layer rounding
    est = estimate_for(reply.query, catalog)
    rows = [r for r in estimate_dict(est, catalog)["rows"] if r["quant"] == "Q4_K_M"]
    assert rows and all(r["file_gib"] == round(Q4_BARTOWSKI / GIB, 2) for r in rows)
    assert rows[0]["file_source"]["repo"] == BARTOWSKI
    assert rows[0]["weights_gib"] == pytest.approx(wb.gpu_bytes_full_offload / GIB, abs=0.01)
    # A quant nobody published keeps the per-tensor computation.
    q6 = weight_breakdown(model, catalog.quants["Q6_K"], catalog)
    assert q6.published is None and q6.computed_total_bytes == 0


async def test_a_reply_says_when_the_listing_was_not_read(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub.fail_repo(UNSLOTH, 500)
    hub_models = HubModels()
    reply, shared = await answer_with_hub(
        CAT, hub_models, source, f"{CODER} on a 4090", AskSettings("en", "plain")
    )
    assert reply.status == "answer" and reply.query is not None, reply.text
    catalog = hub_models.catalog_for(shared, reply.query.model_id)
    assert "GGUF listing was not read" in reply.text and UNSLOTH in reply.text
    model = catalog.models[CODER.lower()]
    # The repos that did answer are still used (bartowski's Q4_K_M); unsloth's quants are computed.
    assert weight_breakdown(model, catalog.quants["UD-Q4_K_XL"], catalog).published is None


def test_a_model_with_another_repo_never_borrows_the_listing() -> None:
    model = CAT.models["qwen3-30b-a3b"]
    assert published_file(replace(model, id="never-listed/x"), "Q4_K_M") is None


async def test_launch_commands_name_the_repos_that_exist(hub: FakeHub, source: HuggingFaceSource) -> None:
    from core.estimator.frameworks import FrameworkQuery, evaluate

    hub_models = HubModels()
    hub_models.add(await source.lookup(CODER))
    catalog = hub_models.apply(CAT)
    model, gpu = catalog.models[CODER.lower()], catalog.gpus["h100-sxm"]

    def command(framework: str, quant: str) -> str:
        query = FrameworkQuery(gpu=gpu, model=model, quant=catalog.quants[quant], context=32768)
        return evaluate(catalog.frameworks[framework], query).command

    assert f"-hf {BARTOWSKI}:Q4_K_M" in command("llama.cpp", "Q4_K_M")
    assert f"-hf {UNSLOTH}:UD-Q4_K_XL" in command("llama.cpp", "UD-Q4_K_XL")
    assert f"hf.co/{BARTOWSKI}:IQ4_XS" in command("ollama", "IQ4_XS")
    fp8 = command("vllm", "FP8")
    assert f"vllm serve {CODER}-FP8" in fp8 and "--quantization" not in fp8  # already FP8
    assert command("vllm", "AWQ") == ""  # no AWQ repo exists: no command, never a placeholder
    # A quant nobody published: the file name is a guess, and llama.cpp's command says so.
    assert "-m Acme-Coder-30B-A3B-Instruct-Q6_K.gguf" in command("llama.cpp", "Q6_K")
