"""An Ollama tag the user typed ("ollama run qwen3:32b", "用 ollama 跑 qwen2.5:14b"): the tag itself,
kept for the reply's command, and the quant it downloads (a bare library tag: Q4_K_M; a tag naming its
quant, "qwen3:14b-q8_0": that one)."""

from __future__ import annotations

import re

from core.catalog.loader import Catalog
from core.community.pasted import OLLAMA_DEFAULT_QUANT, ollama_tag
from core.understanding.resolve import resolve_model

# name:variant, the name starting with a letter, the variant holding a digit ("32b", "14b-q8_0").
# ASCII bounds: a Chinese character is a word character, and "跑qwen2.5:14b" has no space.
_TAG = re.compile(
    r"(?<![A-Za-z0-9_./:-])([a-z][a-z0-9._-]*(?:/[a-z0-9._-]+)?:[a-z0-9][a-z0-9._-]*)(?![A-Za-z0-9_/:])", re.I
)


def typed_ollama_tag(raw: str, model_id: str | None, catalog: Catalog) -> tuple[str, str] | None:
    """(tag, quant id) of the first Ollama tag in `raw` that names the model read (`model_id`), None
    when the question types none: then the reply may pick one."""
    if model_id is None:
        return None
    for m in _TAG.finditer(raw):
        tag = m.group(1).rstrip(".,-")
        if not re.search(r"\d", tag.partition(":")[2]):
            continue
        name, quant = ollama_tag(tag)
        if model_id not in (resolve_model(tag, catalog).best_id, resolve_model(name, catalog).best_id):
            continue
        quant_id = quant or _library_default(model_id, catalog)
        if quant_id not in catalog.quants:
            continue
        return tag.lower(), quant_id
    return None


def _library_default(model_id: str, catalog: Catalog) -> str:
    """The quant a bare library tag downloads: Q4_K_M, or the release's own GGUF type where it was
    quantized natively (gpt-oss:120b is the MXFP4 file, ollama.com/library/gpt-oss)."""
    model = catalog.models.get(model_id)
    native = catalog.quants.get(model.native_quant or "") if model is not None else None
    return native.id if native is not None and native.format == "gguf" else OLLAMA_DEFAULT_QUANT
