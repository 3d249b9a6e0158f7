"""The shipped frameworks catalog: templates, vocabularies, ranges, aliases, messages."""

from __future__ import annotations

from core.catalog.framework import BACKENDS, OPERATING_SYSTEMS, QUANT_FORMATS
from core.catalog.kv_cache import KV_CACHE_TYPES
from core.catalog.loader import default_catalog
from core.estimator.frameworks import PLACEHOLDERS, template_fields
from core.i18n import messages

FRAMEWORKS = default_catalog().frameworks
REQUIRED = {"llama.cpp", "vllm", "ollama", "lmstudio", "sglang", "exllamav2", "mlx"}
SPEC_PLACEHOLDERS = {"draft_file", "draft_repo", "draft_ngl", "mtp_method", "eagle_repo"}


def test_required_frameworks_present():
    assert REQUIRED <= set(FRAMEWORKS)


def test_command_templates_use_known_placeholders():
    for fw in FRAMEWORKS.values():
        assert fw.command, fw.id
        assert template_fields(fw.command) <= PLACEHOLDERS, fw.id
        if fw.speculative:
            for tpl in (fw.speculative.draft, fw.speculative.ngram, fw.speculative.mtp, fw.speculative.eagle):
                assert template_fields(tpl) <= SPEC_PLACEHOLDERS, (fw.id, tpl)


def test_known_vocabularies():
    for fw in FRAMEWORKS.values():
        assert set(fw.backends) <= set(BACKENDS), fw.id
        assert set(fw.os) <= set(OPERATING_SYSTEMS), fw.id
        assert set(fw.quant_formats) <= set(QUANT_FORMATS), fw.id
        assert set(fw.backend_os) <= set(fw.backends), fw.id
        for oses in fw.backend_os.values():
            assert set(oses) <= set(fw.os), fw.id
        for fmt, backends in fw.format_backends.items():
            assert fmt in fw.quant_formats and set(backends) <= set(fw.backends), fw.id
        for rule in fw.rules:
            assert rule.effect in ("block", "caveat", "tip"), fw.id
            assert set(rule.formats) <= set(QUANT_FORMATS) and set(rule.os) <= set(OPERATING_SYSTEMS)
            assert set(rule.kv_cache) <= set(KV_CACHE_TYPES)
            assert rule.source, (fw.id, rule.note)
        assert fw.source, fw.id


def test_overhead_ranges():
    for fw in FRAMEWORKS.values():
        low, high = fw.overhead_gib
        assert 0 <= low <= high <= 8, fw.id


def test_aliases_unique():
    seen: dict[str, str] = {}
    for fw in FRAMEWORKS.values():
        for alias in (fw.id, *fw.aliases):
            key = alias.lower()
            assert seen.get(key, fw.id) == fw.id, f"{alias!r} in {seen.get(key)} and {fw.id}"
            seen[key] = fw.id
    for alias in ("llama.cpp", "llamacpp", "llama-server", "vllm", "ollama", "lm studio", "lmstudio",
                  "sglang", "exl2", "mlx"):  # fmt: skip
        assert alias in seen, alias


def test_every_message_code_exists_in_en_and_zh():
    known = messages()
    for fw in FRAMEWORKS.values():
        for code in (*fw.strengths, *fw.weaknesses, *(r.note for r in fw.rules)):
            assert code in known and {"en", "zh"} <= set(known[code]), (fw.id, code)


def test_engine_of_wrappers():
    assert FRAMEWORKS["ollama"].engine == "llama.cpp" and FRAMEWORKS["lmstudio"].engine == "llama.cpp"
    assert FRAMEWORKS["vllm"].os == ("linux",) and FRAMEWORKS["mlx"].os == ("macos",)
