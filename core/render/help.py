"""/help text: every kind of question with an example in each language (catalogs/messages/help.toml),
then every declared command's syntax with an example (catalogs/messages/commands.toml). The web's
front page lists the same kinds (`question_kinds`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from core.i18n import Lang, translate
from core.render.doc import Doc, Para
from core.render.message import split


class HelpEntry(Protocol):
    """What /help shows of a declared command (core.commands.spec.CommandSpec is one): a protocol,
    so the renderer doesn't import the command layer that imports it."""

    @property
    def name(self) -> str: ...
    @property
    def usage_key(self) -> str: ...
    @property
    def summary_key(self) -> str: ...
    @property
    def example_key(self) -> str: ...


# Every kind of question the bot answers, in the order /help lists them.
QUESTION_KINDS = ("fit", "which_model", "which_hardware", "compare", "ttft", "concurrency", "memory_only")


@dataclass(frozen=True, slots=True)
class QuestionKind:
    key: str
    title: str  # in the asker's language
    example_en: str  # an example question in English
    example_zh: str  # and one in Chinese


def question_kinds(lang: Lang) -> tuple[QuestionKind, ...]:
    return tuple(
        QuestionKind(
            key,
            translate(f"help.kind.{key}", lang),
            translate(f"help.kind.{key}.example", "en"),
            translate(f"help.kind.{key}.example", "zh"),
        )
        for key in QUESTION_KINDS
    )


def kinds_doc(lang: Lang) -> Doc:
    """The kinds of question, one line each with both examples."""
    lines = [
        Para(translate("help.kind.line", lang, title=k.title, en=k.example_en, zh=k.example_zh))
        for k in question_kinds(lang)
    ]
    return (Para(translate("help.kinds.title", lang)), *lines)


def command_line(spec: HelpEntry, lang: Lang) -> str:
    return translate(
        "help.line",
        lang,
        usage=translate(spec.usage_key, lang),
        summary=translate(spec.summary_key, lang),
        example=translate(spec.example_key, lang),
    )


def help_doc(specs: Sequence[HelpEntry], lang: Lang, only: str | None = None) -> Doc:
    """All commands, or the one named in `only` ("/submit", "submit@tokbot"); an unknown name says so
    and lists them all."""
    by_name: Mapping[str, HelpEntry] = {spec.name: spec for spec in specs}
    if only:
        name = only.lstrip("/").split("@")[0].lower()
        if name in by_name:
            return (Para(command_line(by_name[name], lang)),)
        return (Para(translate("help.unknown", lang, name=name)), *help_doc(specs, lang))
    return (
        Para(translate("help.title", lang)),
        *kinds_doc(lang),
        *(Para(command_line(spec, lang)) for spec in specs),
        Para(translate("help.footer", lang)),
    )


def help_text(specs: Sequence[HelpEntry], lang: Lang, only: str | None, target: str) -> list[str]:
    """The help as few messages as the target allows, never cutting a command's line."""
    return split(help_doc(specs, lang, only), target)
