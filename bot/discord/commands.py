"""The slash commands, generated from the command declarations (core.commands.registry.SPECS).

One slash command per `CommandSpec`, one option per declared argument, typed as declared (an id is
an integer ≥ 1, a speed a number ≥ 0, a card or model name autocompleted from the catalog), and the
values go to the router as typed arguments: nothing is turned back into text. A command with a
guided form (`CommandSpec.form`, /submit) opens it as a modal when called without options.

Callbacks find the adapter through `interaction.client.adapter`, so the same command objects serve
the running bot and `sync.py` (which only uploads their schema). Descriptions come from the i18n
catalog (`cmd.<name>.summary`, `discord.opt.<arg>`), in Chinese for zh-CN / zh-TW clients via
`I18nTranslator`.
"""

from __future__ import annotations

import inspect
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str

from bot.discord.views import adapter_of
from core.commands.complete import Kind, complete
from core.commands.registry import COMMANDS, SPECS
from core.commands.spec import Arg, ArgKind, CommandSpec
from core.i18n import translate

DESCRIPTION_MAX = 100
CHOICES_MAX = 25
_CHINESE = {discord.Locale.chinese, discord.Locale.taiwan_chinese}
# Option types by argument kind, as annotations discord.py resolves in this module's namespace.
_ANNOTATIONS = {ArgKind.ID: "app_commands.Range[int, 1]", ArgKind.NUMBER: "app_commands.Range[float, 0.0]"}


def _description(spec: CommandSpec) -> locale_str:
    return locale_str(translate(spec.summary_key, "en")[:DESCRIPTION_MAX], key=spec.summary_key)


def _opt(arg: Arg) -> locale_str:
    """An option's description: English in the schema, Chinese for zh clients via the translator."""
    return locale_str(translate(arg.description_key, "en")[:DESCRIPTION_MAX], key=arg.description_key)


class I18nTranslator(app_commands.Translator):
    """Command descriptions in the user's Discord language (only used when the tree is synced)."""

    async def translate(
        self, string: locale_str, locale: discord.Locale, context: app_commands.TranslationContextTypes
    ) -> str | None:
        key = string.extras.get("key")
        if not key or locale not in _CHINESE:
            return None
        text = translate(key, "zh")
        return text[:DESCRIPTION_MAX] if text != key else None


async def _complete(
    interaction: discord.Interaction, kind: Kind, current: str, include_all: bool = False
) -> list[Choice[str]]:
    catalog = adapter_of(interaction).app.catalog
    pairs = complete(catalog, kind, current, CHOICES_MAX, include_all=include_all)
    return [Choice(name=label[:100], value=value[:100]) for label, value in pairs]


async def _gpus(interaction: discord.Interaction, current: str) -> list[Choice[str]]:
    return await _complete(interaction, "gpu", current)


async def _models(interaction: discord.Interaction, current: str) -> list[Choice[str]]:
    return await _complete(interaction, "model", current)


async def _targets(interaction: discord.Interaction, current: str) -> list[Choice[str]]:
    return await _complete(interaction, "any", current, include_all=True)


async def _scopes(interaction: discord.Interaction, current: str) -> list[Choice[str]]:
    return await _complete(interaction, "any", current)


def _autocomplete(arg: Arg) -> Any:  # noqa: ANN401 - a discord.py autocomplete callback
    if arg.kind is ArgKind.TARGET:
        return _targets
    return {"gpu": _gpus, "model": _models, "any": _scopes}.get(arg.completes or "")


def _choices(arg: Arg) -> list[Choice[str]]:
    values = COMMANDS if arg.kind is ArgKind.COMMAND else arg.choices
    return [Choice(name=value, value=value) for value in values][:CHOICES_MAX]


def _parameter(arg: Arg) -> inspect.Parameter:
    annotation = _ANNOTATIONS.get(arg.kind, "str")
    if arg.required:
        return inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    return inspect.Parameter(
        arg.name, inspect.Parameter.KEYWORD_ONLY, annotation=f"{annotation} | None", default=None
    )


def slash_command(spec: CommandSpec) -> app_commands.Command:  # type: ignore[type-arg]
    """The slash command for one declaration: its options are its arguments."""

    async def callback(interaction: discord.Interaction, /, **options: Any) -> None:
        given = {name: value for name, value in options.items() if value is not None and value != ""}
        adapter = adapter_of(interaction)
        if spec.form and not given:
            from bot.discord.modal import FormModal

            lang = adapter.app.router.language(adapter.invocation(interaction, spec.name))
            await interaction.response.send_modal(FormModal(spec, lang))
            return
        await adapter.run_command(interaction, spec, given)

    first = inspect.Parameter(
        "interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="discord.Interaction"
    )
    callback.__signature__ = inspect.Signature([first, *(_parameter(a) for a in spec.args)])  # type: ignore[attr-defined]
    command: app_commands.Command = app_commands.Command(  # type: ignore[type-arg]
        name=spec.name, description=_description(spec), callback=callback
    )
    if spec.args:
        app_commands.describe(**{a.name: _opt(a) for a in spec.args})(command)
    completions = {a.name: _autocomplete(a) for a in spec.args if _autocomplete(a) is not None}
    if completions:
        app_commands.autocomplete(**completions)(command)
    choices = {a.name: _choices(a) for a in spec.args if a.choices or a.kind is ArgKind.COMMAND}
    if choices:
        app_commands.choices(**choices)(command)
    return command


def build_commands() -> list[app_commands.Command]:  # type: ignore[type-arg]
    """Fresh command objects (a Command belongs to one tree), one per declared command, in order."""
    return [slash_command(spec) for spec in SPECS]
