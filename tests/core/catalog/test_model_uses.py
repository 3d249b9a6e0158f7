"""What a model is tuned for (`uses`, catalogs/models.toml): every tag is a task the question reader
knows (catalogs/intents.toml [task]), and every code-tuned entry of the catalog is tagged. Written
before the implementation."""

from __future__ import annotations

import re

from core.catalog.loader import default_catalog
from core.understanding.intent import intents_table

CATALOG = default_catalog()
CODE_TUNED = {
    "qwen2.5-coder-7b",
    "qwen2.5-coder-14b",
    "qwen2.5-coder-32b",
    "qwen3-coder-30b-a3b",
    "qwen3-coder-480b-a35b",
    "devstral-small-2505",
    "devstral-2-123b",
    "codestral-22b",
    "deepseek-coder-33b",
    "deepseek-coder-v2-lite",
    "codellama-34b",
}
# "decoder" ("text decoder" in a name) is no coder.
_CODE_NAME = re.compile(r"(?<![a-z])coder|devstral|codestral|codellama|code llama", re.IGNORECASE)


def test_every_tag_is_a_known_task() -> None:
    tasks = set(intents_table(CATALOG)["task"]["order"])
    tags = {tag for m in CATALOG.models.values() for tag in m.uses}
    assert tags and tags <= tasks, tags - tasks


def test_the_code_tuned_entries_are_tagged() -> None:
    tagged = {m.id for m in CATALOG.models.values() if "code" in m.uses}
    assert CODE_TUNED <= tagged, CODE_TUNED - tagged
    named = {m.id for m in CATALOG.models.values() if _CODE_NAME.search(f"{m.id} {m.name} {m.family}")}
    assert named <= tagged, named - tagged


def test_general_models_are_not_tagged() -> None:
    for model_id in ("qwen3-32b", "gemma-3-27b", "gpt-oss-20b", "llama-3.3-70b", "qwen3-30b-a3b"):
        assert CATALOG.models[model_id].uses == ()
