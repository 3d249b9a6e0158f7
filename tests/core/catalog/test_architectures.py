"""The architecture registry: every model_type and attention kind has exactly one module."""

from __future__ import annotations

from typing import get_args

import pytest

from core.catalog.architectures.fields import ConfigError
from core.catalog.architectures.registry import (
    Architecture,
    architectures,
    base_reader,
    reader_for,
    register,
    sizing_for,
)
from core.catalog.model import AttentionKind


def test_every_attention_kind_is_sized_by_its_own_module() -> None:
    for kind in get_args(AttentionKind):
        arch = sizing_for(kind)
        assert kind in arch.attention
        assert arch.kv_shape is not None


def test_every_reader_can_read_or_says_why_not() -> None:
    for arch in architectures():
        if not arch.model_types:
            continue
        if arch.unsupported:
            assert arch.read is None
            continue
        assert base_reader(arch) is not None
        if arch.normalise is not None:
            assert arch.base and arch.read is None


def test_lookups_by_model_type_and_text_type() -> None:
    assert reader_for("deepseek_v4", "deepseek_v4").name == "deepseek_v4"
    assert reader_for("qwen3_vl", "qwen3_vl_text").name == "dense"  # the wrapper's type names it
    assert reader_for("some_wrapper", "qwen3_moe").name == "moe"  # else the text config's
    assert reader_for("gemma4_text", "gemma4_text").name == "gemma4"
    with pytest.raises(ConfigError, match="not supported yet"):
        reader_for("some_wrapper", "falcon_h1")  # unsupported, named by the text type
    with pytest.raises(ConfigError, match="unknown model_type 'chatglm'"):
        reader_for("chatglm", "chatglm")


def test_a_model_type_or_attention_kind_claimed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="already"):
        register(Architecture("another_llama", model_types=frozenset({"llama"})))
    with pytest.raises(ValueError, match="already"):
        register(Architecture("another_mla", attention=frozenset({"mla"})))
