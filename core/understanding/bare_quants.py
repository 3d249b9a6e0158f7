"""A bare width or precision word read as the quant the named framework runs at that width.

"4bit" alone is the GGUF Q4_K_M (catalogs/understanding.toml [quant.synonyms]); said with vLLM it is
an AWQ checkpoint, with transformers bitsandbytes NF4, and "bf16" with a framework that serves
Hugging Face checkpoints is the released repo, not a GGUF file. What each framework means is data
(catalogs/frameworks.toml `bare_quants`); this module only tells a bare word from a named format.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.catalog.loader import Catalog

# Only these words are bare: a width ("4bit", "4-bit", "4 bit", "4位", "4比特"), an int width ("int4")
# and the 16-bit precisions. A named format ("q4_k_m", "awq", "nf4", "mlx 4bit", "gptq int4") is
# a word of its own in the quant vocabulary and never reaches the rewrite.
# "q4" / "q8" alone are widths too ("deepseek v3.1 q4 mlx" asks for MLX 4-bit, "vllm q4" an AWQ
# checkpoint); "q4_0", "q4_k_m" name GGUF formats and never match.
_WIDTH = re.compile(r"(int\s*)?q?(\d{1,2})\s*-?\s*(?:bits?|位|比特)?")
_PRECISION = {"bf16": "bf16", "fp16": "fp16", "半精度": "fp16"}  # "半精度": half precision, FP16


def bare_key(word: str) -> str | None:
    """The `bare_quants` key a quant word is ("4-bit" -> "4", "int8" -> "int8", "半精度" -> "fp16"),
    None for a word that names a format."""
    said = word.strip().lower()
    if said in _PRECISION:
        return _PRECISION[said]
    m = _WIDTH.fullmatch(said)
    if m is None:
        return None
    return f"int{m.group(2)}" if m.group(1) else m.group(2)


def framework_quant(word: str, frameworks: Iterable[str], catalog: Catalog) -> str | None:
    """The quant a bare `word` means with the frameworks the question names, None to keep the word's
    own reading. Every framework named must agree ("vllm or sglang 4bit" is AWQ for both); one
    that keeps the GGUF reading ("vllm vs llama.cpp 4bit", "vllm ... gguf 4bit") keeps it for all,
    since the question then asks about a GGUF too."""
    key = bare_key(word)
    named = set(frameworks)
    if key is None or not named:
        return None
    targets = {fw.bare_quants.get(key) if (fw := catalog.frameworks.get(f)) else None for f in named}
    target = targets.pop() if len(targets) == 1 else None
    return target if target in catalog.quants else None


__all__ = ["bare_key", "framework_quant"]
