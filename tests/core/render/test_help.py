"""/help and 帮助 list every kind of question with an example in each language (issue 25)."""

from __future__ import annotations

from core.commands.registry import SPECS
from core.i18n import messages
from core.render.doc import render
from core.render.help import QUESTION_KINDS, help_doc, question_kinds

KINDS = {"fit", "which_model", "which_hardware", "compare", "ttft", "concurrency"}


def test_every_kind_has_a_title_and_an_example_in_each_language() -> None:
    table = messages()
    assert KINDS <= set(QUESTION_KINDS)
    for key in QUESTION_KINDS:
        assert table[f"help.kind.{key}"]["en"] and table[f"help.kind.{key}"]["zh"]
        example = table[f"help.kind.{key}.example"]
        assert example["en"].isascii() and not example["zh"].isascii()


def test_help_lists_the_kinds_before_the_commands_in_both_languages() -> None:
    for lang in ("en", "zh"):
        text = render(help_doc(SPECS, lang))
        for kind in question_kinds(lang):
            assert kind.title in text and kind.example_en in text and kind.example_zh in text
        assert text.index(question_kinds(lang)[0].title) < text.index(
            "/ask QUESTION" if lang == "en" else "/ask 问题"
        )
    assert "card(s) + model, optional" not in render(help_doc(SPECS, "en")).split("/ask", 1)[0]


def test_the_examples_are_answered() -> None:
    from core.ask.answer import answer
    from core.catalog.loader import default_catalog

    catalog = default_catalog()
    for kind in question_kinds("en"):
        for example in (kind.example_en, kind.example_zh):
            reply = answer(example, catalog)
            assert reply.status == "answer", example
