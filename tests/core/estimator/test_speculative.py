"""Speculative-decoding options on inline models against the shipped framework catalog."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.catalog.loader import default_catalog
from core.catalog.model import Model
from core.catalog.quant import Quant
from core.estimator.speculative import speculative_options, weights_gib

BASE = default_catalog()


def model(**kw) -> Model:
    base = dict(
        id="big", family="Fam", name="Big-70B", aliases=(), params_b=70.0, active_params_b=70.0,
        layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, vocab=128256, max_context=131072,
        hf_repo="org/Big-70B", gguf_file_stem="Big-70B",
    )  # fmt: skip
    return Model(**(base | kw))


SMALL = model(id="small", name="Small-1B", params_b=1.0, active_params_b=1.0, layers=16,
              hf_repo="org/Small-1B", gguf_file_stem="Small-1B")  # fmt: skip
BIG = model(draft_models=("small",))
MTP = model(id="mtp", family="DeepSeek-V3", name="DS", params_b=671.0, layers=61, mtp_layers=1)
LONE = model(id="lone", family="Solo", vocab=99999)


@pytest.fixture(scope="module")
def catalog():
    models = dict(BASE.models) | {m.id: m for m in (SMALL, BIG, MTP, LONE)}
    return replace(BASE, models=models)


def by_kind(opts):
    return {o.kind: o for o in opts}


def test_llamacpp_draft_flags_and_memory(catalog):
    q8 = Quant(id="Q8_0", format="gguf", aliases=(), bpw=8.5)
    opts = by_kind(speculative_options(BIG, "llama.cpp", catalog, quant=q8))
    draft = opts["draft"]
    assert draft.flags == "-md Small-1B-Q8_0.gguf -ngld 99 --draft-max 16 --draft-min 5"
    assert draft.draft_model == "small" and not draft.inferred
    assert draft.extra_memory_gib == pytest.approx(weights_gib(1.0, 8.5))
    assert draft.extra_memory_gib == pytest.approx(0.99, abs=0.01)
    assert "fw.spec.gain" in {n.code for n in draft.notes}
    assert opts["ngram"].flags == "--spec-type ngram-simple --draft-max 64"
    assert "fw.spec.no_mtp" in {n.code for n in opts["ngram"].notes}


def test_vllm_draft_mtp_and_ngram(catalog):
    opts = by_kind(speculative_options(BIG, "vllm", catalog))
    assert (
        opts["draft"].flags
        == '--speculative-config \'{"model": "org/Small-1B", "num_speculative_tokens": 5}\''
    )
    assert opts["draft"].extra_memory_gib == pytest.approx(weights_gib(1.0, 16.0))
    assert '"method": "ngram"' in opts["ngram"].flags
    mtp = by_kind(speculative_options(MTP, "vllm", catalog))["mtp"]
    assert '"method": "deepseek_mtp"' in mtp.flags
    assert mtp.extra_memory_gib > 10  # one DeepSeek-V3 layer is about 11B parameters


def test_mtp_unsupported_in_llamacpp(catalog):
    mtp = by_kind(speculative_options(MTP, "llama.cpp", catalog))["mtp"]
    assert mtp.flags == "" and mtp.notes[0].code == "fw.spec.mtp_unsupported"


def test_sglang_eagle_names_the_published_head(catalog):
    qwen = catalog.models["qwen3-32b"]
    opts = by_kind(speculative_options(qwen, "sglang", catalog))
    assert (
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path RedHatAI/Qwen3-32B-speculator.eagle3"
        in opts["eagle"].flags
    )
    assert opts["eagle"].draft_repo == "RedHatAI/Qwen3-32B-speculator.eagle3"
    assert "<" not in opts["eagle"].command, "no placeholder in a launch command"
    opts = by_kind(speculative_options(BIG, "sglang", catalog))
    assert (
        "--speculative-algorithm STANDALONE --speculative-draft-model-path org/Small-1B"
        in opts["draft"].flags
    )


def test_no_eagle_option_without_a_published_head(catalog):
    """A head drafts for its own target only: a model nobody trained one for gets no EAGLE line,
    and a neighbour's (Qwen3-32B's for Qwen2.5-32B) is never borrowed."""
    assert "eagle" not in by_kind(speculative_options(BIG, "sglang", catalog))
    assert "eagle" not in by_kind(speculative_options(catalog.models["qwen2.5-32b"], "vllm", catalog))
    oss = by_kind(speculative_options(catalog.models["gpt-oss-120b"], "vllm", catalog))["eagle"]
    assert '"model": "RedHatAI/gpt-oss-120b-speculator.eagle3"' in oss.flags
    assert "RedHatAI/gpt-oss-120b-speculator.eagle3" in oss.notes[0].text("zh")


def test_every_eagle_head_belongs_to_a_catalog_model(catalog):
    rows = catalog.tables["eagle_drafts"]["eagle"]
    assert rows and all(r["model"] in catalog.models and r["repo"].count("/") == 1 for r in rows)
    assert all(r["source"].strip() for r in rows)


def test_inferred_draft_from_family_and_vocab(catalog):
    cousin = model(id="cousin", draft_models=())  # same family + vocab as SMALL, no listed draft
    cat = replace(catalog, models=dict(catalog.models) | {"cousin": cousin})
    draft = by_kind(speculative_options(cousin, "llama.cpp", cat))["draft"]
    assert draft.inferred and draft.draft_model == "small"
    assert "fw.spec.draft_inferred" in {n.code for n in draft.notes}


def test_no_mtp_no_draft_says_so(catalog):
    opts = speculative_options(LONE, "llama.cpp", catalog)
    assert [o.kind for o in opts] == ["ngram"]
    assert opts[0].notes[0].code == "fw.spec.none_in_catalog"
    assert opts[0].notes[0].text("zh").startswith("Big-70B 无原生 MTP 层")


def test_framework_without_speculation(catalog):
    opts = speculative_options(BIG, "ollama", catalog)
    assert len(opts) == 1 and opts[0].kind == "none" and opts[0].notes[0].code == "fw.spec.unsupported"


def test_drafts_are_a_tenth_of_the_active_size_and_commands_name_the_program(catalog):
    from core.estimator.speculative import draft_candidates

    assert not any(
        d.id == "gpt-oss-20b" for d, _ in draft_candidates(catalog.models["gpt-oss-120b"], catalog)
    )
    opts = speculative_options(catalog.models["qwen3-32b"], "llama.cpp", catalog)
    draft = next(o for o in opts if o.kind == "draft")
    assert draft.command.startswith("llama-server -m ") and draft.command.endswith(draft.flags)
