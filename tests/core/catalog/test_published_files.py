"""Published quant files: file names -> catalog quant ids, split parts summed, publisher order, lookup."""

from __future__ import annotations

import dataclasses

import pytest

from core.catalog.loader import default_catalog
from core.catalog.published_files import (
    PublishedFile,
    QuantListing,
    catalog_files,
    files_from_listing,
    gguf_repo_names,
    listing_for,
    preferred,
    published_file,
    quant_of_filename,
    remember_listing,
    serving_repo_names,
)

CAT = default_catalog()
IDS = tuple(q.id for q in CAT.quants.values() if q.format == "gguf")
TABLE = CAT.tables["quant_repos"]


@pytest.mark.parametrize(
    ("path", "quant"),
    [
        ("Qwen_Qwen3-30B-A3B-Q4_K_M.gguf", "Q4_K_M"),
        ("Qwen3-30B-A3B.i1-IQ4_XS.gguf", "IQ4_XS"),  # mradermacher imatrix naming
        ("Qwen3-30B-A3B.Q8_0.gguf", "Q8_0"),  # mradermacher static naming
        ("Qwen3-30B-A3B-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"),  # unsloth dynamic: its own catalog quant
        ("UD-Q2_K_XL/Kimi-K2-UD-Q2_K_XL-00002-of-00008.gguf", "UD-Q2_K_XL"),
        ("gpt-oss-20b-mxfp4.gguf", "MXFP4"),  # lower case (ggml-org)
        ("model-bf16.gguf", "BF16"),
        ("Meta-Llama-3.1-8B-Instruct-f16.gguf", "F16"),
        ("Qwen3-32B-Q3_K_XL.gguf", "Q3_K_XL"),  # bartowski's XL: Q8_0 embeddings
        # ik_llama.cpp's own types are catalog quants now (Quant.loaders): their files are priced too
        ("Qwen3-8B-IQ4_KS.gguf", "IQ4_KS"),
        ("IQ2_K_R4/DeepSeek-R1-0528-IQ2_K_R4-00001-of-00005.gguf", "IQ2_K_R4"),
    ],
)
def test_file_names_map_to_catalog_quants(path: str, quant: str) -> None:
    assert quant_of_filename(path, IDS) == quant


@pytest.mark.parametrize(
    "path",
    [
        "mmproj-Qwen2.5-VL-32B-Instruct-f16.gguf",  # the vision projector is no model quant
        "Llama-3.1-8B-Q4_0_4_4.gguf",  # an ARM repack is no Q4_0
        "gpt-oss-20b-MXFP4_MOE.gguf",  # llama.cpp's MXFP4_MOE mix is not our MXFP4
        "Qwen3-8B-Q4_K_M.safetensors",
        "README.md",
    ],
)
def test_names_we_do_not_price_are_skipped(path: str) -> None:
    assert quant_of_filename(path, IDS) is None


def test_split_parts_are_summed_and_folders_read() -> None:
    entries = [
        ("Q8_0/Qwen3-235B-Q8_0-00001-of-00003.gguf", 49_000_000_000),
        ("Q8_0/Qwen3-235B-Q8_0-00003-of-00003.gguf", 19_000_000_000),
        ("Q8_0/Qwen3-235B-Q8_0-00002-of-00003.gguf", 48_000_000_000),
        ("Qwen3-235B-Q4_K_M-00001-of-00002.gguf", 50_000_000_000),  # part 2 missing: not a file
        ("Qwen3-235B-IQ4_XS.gguf", 117_000_000_000),
        ("Qwen3-235B-Q6_K.gguf", None),  # the listing gave no size
        ("README.md", 5_000),
    ]
    found = {f.quant_id: f for f in files_from_listing("bartowski/Qwen_Qwen3-235B-GGUF", entries, IDS)}
    assert set(found) == {"Q8_0", "IQ4_XS"}
    q8 = found["Q8_0"]
    assert q8.bytes == 116_000_000_000 and len(q8.files) == 3
    assert q8.files[0].endswith("00001-of-00003.gguf")
    assert q8.source.endswith("bartowski/Qwen_Qwen3-235B-GGUF/tree/main")


def test_publisher_order() -> None:
    names = gguf_repo_names("Qwen/Qwen3-30B-A3B", TABLE)
    assert names[:5] == (
        "Qwen/Qwen3-30B-A3B-GGUF",
        "ggml-org/Qwen3-30B-A3B-GGUF",
        "bartowski/Qwen_Qwen3-30B-A3B-GGUF",
        "bartowski/Qwen3-30B-A3B-GGUF",
        "unsloth/Qwen3-30B-A3B-GGUF",
    )
    assert names.index("lmstudio-community/Qwen3-30B-A3B-GGUF") < names.index(
        "mradermacher/Qwen3-30B-A3B-GGUF"
    )
    assert ("FP8", "Qwen/Qwen3-30B-A3B-FP8") in serving_repo_names("Qwen/Qwen3-30B-A3B", TABLE)
    assert gguf_repo_names("not-a-repo", TABLE) == ()
    first = PublishedFile("Q4_K_M", "ggml-org/X-GGUF", ("X-Q4_K_M.gguf",), 10)
    later = PublishedFile("Q4_K_M", "unsloth/X-GGUF", ("X-Q4_K_M.gguf",), 11)
    only = PublishedFile("UD-Q4_K_XL", "unsloth/X-GGUF", ("X-UD-Q4_K_XL.gguf",), 12)
    assert preferred([(first,), (later, only)]) == (first, only)


def test_a_hub_listing_is_found_by_the_model_it_was_read_for() -> None:
    model = dataclasses.replace(CAT.models["qwen3-8b"], id="org/fresh-model-7b", hf_repo="org/Fresh-Model-7B")
    file = PublishedFile("Q5_K_M", "bartowski/org_Fresh-Model-7B-GGUF", ("f-Q5_K_M.gguf",), 5_900_000_000)
    remember_listing(model, QuantListing(files=(file,), read=True))
    assert published_file(model, "Q5_K_M") == file
    assert published_file(model, "Q2_K") is None
    # An id reused for another repo never borrows the files.
    other = dataclasses.replace(model, hf_repo="someone/Else-7B")
    assert listing_for(other) is None and published_file(other, "Q5_K_M") is None


def test_curated_catalog_files_cover_catalog_models_only() -> None:
    files = catalog_files()
    assert files, "catalogs/published_gguf.csv is empty"
    for model_id, by_quant in files.items():
        assert model_id in CAT.models, model_id
        for quant_id, f in by_quant.items():
            assert quant_id in CAT.quants and CAT.quants[quant_id].format == "gguf"
            assert f.bytes > 0 and f.source and f.repo.endswith("GGUF")
    # bartowski's own Qwen3-32B repo before mradermacher's; no Thinking-2507 variant for the base model.
    assert files["qwen3-32b"]["Q4_K_M"].repo in {"ggml-org/Qwen3-32B-GGUF", "bartowski/Qwen_Qwen3-32B-GGUF"}
    assert all(
        "2507" not in f.repo and "abliterated" not in f.repo for q in files.values() for f in q.values()
    )
    assert files["qwq-32b"]["Q4_K_M"].repo == "Qwen/QwQ-32B-GGUF"  # the publisher's own GGUF first
