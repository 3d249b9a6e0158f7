"""The slash commands: one per name in COMMANDS, each turning its options into the command's text.

Callbacks find the adapter through `interaction.client.adapter`, so the same command objects serve
the running bot and `sync.py` (which only uploads their schema). Descriptions come from the i18n
catalog (`cmd.<name>.summary`), in Chinese for zh-CN / zh-TW clients via `I18nTranslator`.
"""

from __future__ import annotations

import re

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str

from bot.discord.views import adapter_of
from core.commands.complete import Kind, complete
from core.commands.types import COMMANDS
from core.i18n import translate

DESCRIPTION_MAX = 100
CHOICES_MAX = 25
_CHINESE = {discord.Locale.chinese, discord.Locale.taiwan_chinese}
_PLAIN_VALUE = re.compile(r"^[^\s\"'=]+$")

# Commands whose work may pass Discord's 3 s answer window: they always defer. True: the first
# answer is private anyway (the "thinking…" placeholder is made ephemeral to match).
SLOW: dict[str, bool] = {"submit": False, "review": True, "export": True, "accuracy": False}
SUBMIT_FIELDS = ("gpu", "model", "quant", "decode", "prefill", "ctx", "framework", "notes", "evidence")


def _description(name: str) -> locale_str:
    key = f"cmd.{name}.summary"
    return locale_str(translate(key, "en")[:DESCRIPTION_MAX], key=key)


def _opt(name: str) -> locale_str:
    """An option's description: English in the schema, Chinese for zh clients via the translator."""
    key = f"discord.opt.{name}"
    return locale_str(translate(key, "en")[:DESCRIPTION_MAX], key=key)


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


def submit_line(fields: dict[str, str | float | int | None], text: str | None = None) -> str:
    """The /submit options as the `key=value` line the command layer reads; `text` (pasted tool output
    or more fields) follows on its own lines. Values with spaces are quoted; a double quote inside a
    value becomes a single one so the line stays parseable."""
    parts = []
    for key, value in fields.items():
        if value is None:
            continue
        raw = f"{value:g}" if isinstance(value, float) else str(value)
        raw = raw.strip().replace('"', "'")
        if not raw:
            continue
        parts.append(f"{key}={raw}" if _PLAIN_VALUE.match(raw) else f'{key}="{raw}"')
    line = " ".join(parts)
    extra = (text or "").strip()
    return f"{line}\n{extra}".strip() if extra else line


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


async def _run(interaction: discord.Interaction, name: str, text: str | None = "") -> None:
    await adapter_of(interaction).run_command(interaction, name, (text or "").strip())


def build_commands() -> list[app_commands.Command]:  # type: ignore[type-arg]
    """Fresh command objects (a Command belongs to one tree)."""

    @app_commands.command(name="ask", description=_description("ask"))
    @app_commands.describe(question=_opt("ask.question"))
    async def ask(interaction: discord.Interaction, question: str) -> None:
        await _run(interaction, "ask", question)

    @app_commands.command(name="submit", description=_description("submit"))
    @app_commands.describe(
        gpu=_opt("submit.gpu"), model=_opt("submit.model"), quant=_opt("submit.quant"),
        decode=_opt("submit.decode"), prefill=_opt("submit.prefill"), ctx=_opt("submit.ctx"),
        framework=_opt("submit.framework"), notes=_opt("submit.notes"), evidence=_opt("submit.evidence"),
        text=_opt("submit.text"),
    )  # fmt: skip
    @app_commands.autocomplete(gpu=_gpus, model=_models)
    async def submit(
        interaction: discord.Interaction, gpu: str | None = None, model: str | None = None,
        quant: str | None = None, decode: app_commands.Range[float, 0.0] | None = None,
        prefill: app_commands.Range[float, 0.0] | None = None, ctx: str | None = None,
        framework: str | None = None, notes: str | None = None, evidence: str | None = None,
        text: str | None = None,
    ) -> None:  # fmt: skip
        values = (gpu, model, quant, decode, prefill, ctx, framework, notes, evidence)
        if all(v is None for v in values) and not text:
            from bot.discord.convert import lang_of
            from bot.discord.modal import SubmitModal

            await interaction.response.send_modal(SubmitModal(lang_of(interaction.locale) or "en"))
            return
        await _run(interaction, "submit", submit_line(dict(zip(SUBMIT_FIELDS, values, strict=True)), text))

    @app_commands.command(name="review", description=_description("review"))
    async def review(interaction: discord.Interaction) -> None:
        await _run(interaction, "review")

    @app_commands.command(name="approve", description=_description("approve"))
    @app_commands.describe(id=_opt("id.submission"))
    async def approve(interaction: discord.Interaction, id: app_commands.Range[int, 1]) -> None:  # noqa: A002
        await _run(interaction, "approve", str(id))

    @app_commands.command(name="reject", description=_description("reject"))
    @app_commands.describe(id=_opt("id.submission"), reason=_opt("reject.reason"))
    async def reject(
        interaction: discord.Interaction,
        id: app_commands.Range[int, 1],  # noqa: A002
        reason: str | None = None,
    ) -> None:
        await _run(interaction, "reject", f"{id} {reason or ''}")

    @app_commands.command(name="withdraw", description=_description("withdraw"))
    @app_commands.describe(id=_opt("id.anchor"), reason=_opt("withdraw.reason"))
    async def withdraw(
        interaction: discord.Interaction,
        id: app_commands.Range[int, 1],  # noqa: A002
        reason: str | None = None,
    ) -> None:
        await _run(interaction, "withdraw", f"{id} {reason or ''}")

    @app_commands.command(name="subscribe", description=_description("subscribe"))
    @app_commands.describe(target=_opt("target"))
    @app_commands.autocomplete(target=_targets)
    async def subscribe(interaction: discord.Interaction, target: str) -> None:
        await _run(interaction, "subscribe", target)

    @app_commands.command(name="unsubscribe", description=_description("unsubscribe"))
    @app_commands.describe(target=_opt("target"))
    @app_commands.autocomplete(target=_targets)
    async def unsubscribe(interaction: discord.Interaction, target: str) -> None:
        await _run(interaction, "unsubscribe", target)

    @app_commands.command(name="subscriptions", description=_description("subscriptions"))
    async def subscriptions(interaction: discord.Interaction) -> None:
        await _run(interaction, "subscriptions")

    @app_commands.command(name="accuracy", description=_description("accuracy"))
    @app_commands.describe(scope=_opt("accuracy.scope"))
    @app_commands.autocomplete(scope=_scopes)
    async def accuracy(interaction: discord.Interaction, scope: str | None = None) -> None:
        await _run(interaction, "accuracy", scope)

    @app_commands.command(name="export", description=_description("export"))
    @app_commands.describe(format=_opt("export.format"))
    @app_commands.choices(format=[Choice(name="CSV", value="csv"), Choice(name="JSON", value="json")])
    async def export(interaction: discord.Interaction, format: str = "csv") -> None:  # noqa: A002
        await _run(interaction, "export", format)

    @app_commands.command(name="help", description=_description("help"))
    @app_commands.describe(command=_opt("help.command"))
    @app_commands.choices(command=[Choice(name=name, value=name) for name in COMMANDS])
    async def help_(interaction: discord.Interaction, command: str | None = None) -> None:
        await _run(interaction, "help", command)

    built = [
        ask,
        submit,
        review,
        approve,
        reject,
        withdraw,
        subscribe,
        unsubscribe,
        subscriptions,
        accuracy,
        export,
        help_,
    ]
    assert tuple(c.name for c in built) == COMMANDS, "one slash command per command, in COMMANDS order"
    return built
