"""A `Prompt` (one line of text, e.g. a rejection reason) as a modal; its answer runs a command."""

from __future__ import annotations

import discord

from core.commands.types import Prompt
from core.i18n import translate

TITLE_MAX, LABEL_MAX, PLACEHOLDER_MAX = 45, 45, 100  # Discord's limits
ANSWER_MAX = 1000


class PromptModal(discord.ui.Modal):
    """Submitting dispatches `/<prompt.command> <answer>`, as if the user had typed that line, so the
    router checks permissions and arguments exactly as for a typed command."""

    def __init__(self, prompt: Prompt):
        title = prompt.title if len(prompt.title) <= TITLE_MAX else prompt.title[: TITLE_MAX - 1] + "…"
        super().__init__(title=title, timeout=900)
        self.command = prompt.command
        self.answer: discord.ui.TextInput[PromptModal] = discord.ui.TextInput(
            label=title[:LABEL_MAX], style=discord.TextStyle.paragraph, required=True, max_length=ANSWER_MAX,
            placeholder=prompt.placeholder[:PLACEHOLDER_MAX] or None,
        )  # fmt: skip
        self.add_item(self.answer)

    def line(self) -> str:
        return f"/{self.command} {self.answer.value.strip()}"

    async def on_submit(self, interaction: discord.Interaction) -> None:
        from bot.discord.views import adapter_of

        await adapter_of(interaction).run_line(interaction, self.line())


class SubmitModal(discord.ui.Modal):
    """`/submit` with no options: the guided form. Discord can't collect answers in a channel without
    the message-content intent, so the core's step-by-step dialogue becomes one modal with the four
    required fields and a box for anything else (pasted output, key=value fields)."""

    FIELDS = ("gpu", "model", "quant", "decode")

    def __init__(self, lang: str):
        super().__init__(title=translate("submission.form.title", lang)[:TITLE_MAX], timeout=1800)
        self.inputs: dict[str, discord.ui.TextInput[SubmitModal]] = {}
        for name in self.FIELDS:
            field: discord.ui.TextInput[SubmitModal] = discord.ui.TextInput(
                label=translate(f"submission.form.{name}", lang)[:LABEL_MAX], required=True, max_length=100,
                placeholder=translate(f"submission.form.{name}.example", lang)[:PLACEHOLDER_MAX],
            )  # fmt: skip
            self.inputs[name] = field
            self.add_item(field)
        self.more: discord.ui.TextInput[SubmitModal] = discord.ui.TextInput(
            label=translate("submission.form.more", lang)[:LABEL_MAX], style=discord.TextStyle.paragraph,
            required=False, max_length=4000,
            placeholder=translate("submission.form.more.example", lang)[:PLACEHOLDER_MAX],
        )  # fmt: skip
        self.add_item(self.more)

    def line(self) -> str:
        from bot.discord.commands import submit_line

        fields: dict[str, str | float | int | None] = {n: f.value for n, f in self.inputs.items()}
        return "/submit " + submit_line(fields, self.more.value)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        from bot.discord.views import adapter_of

        await adapter_of(interaction).run_line(interaction, self.line())
