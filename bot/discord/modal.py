"""A `Prompt` (one line of text, e.g. a rejection reason) as a modal; its answer runs a command."""

from __future__ import annotations

import discord

from core.commands.spec import ArgKind, CommandSpec
from core.commands.types import ArgValue, Prompt
from core.i18n import Lang, translate

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


class FormModal(discord.ui.Modal):
    """A command with a guided form (`CommandSpec.form`, /submit), called without options. Discord
    can't collect answers in a channel without the message-content intent, so the core's
    step-by-step dialogue becomes one modal with the form's fields and a box for anything else
    (pasted output, key=value fields); the answers go to the router as typed arguments."""

    def __init__(self, spec: CommandSpec, lang: Lang):
        keys = spec.form_messages
        super().__init__(title=translate(f"{keys}.title", lang)[:TITLE_MAX], timeout=1800)
        self.spec = spec
        self.inputs: dict[str, discord.ui.TextInput[FormModal]] = {}
        for name in spec.form:
            field: discord.ui.TextInput[FormModal] = discord.ui.TextInput(
                label=translate(f"{keys}.{name}", lang)[:LABEL_MAX], required=True, max_length=100,
                placeholder=translate(f"{keys}.{name}.example", lang)[:PLACEHOLDER_MAX],
            )  # fmt: skip
            self.inputs[name] = field
            self.add_item(field)
        self.more: discord.ui.TextInput[FormModal] = discord.ui.TextInput(
            label=translate(f"{keys}.more", lang)[:LABEL_MAX], style=discord.TextStyle.paragraph,
            required=False, max_length=4000,
            placeholder=translate(f"{keys}.more.example", lang)[:PLACEHOLDER_MAX],
        )  # fmt: skip
        self.add_item(self.more)

    def values(self) -> dict[str, ArgValue]:
        """The answers as the command's arguments (a speed as a number, like the slash option)."""
        out: dict[str, ArgValue] = {}
        for name, field in self.inputs.items():
            value = field.value.strip()
            if value:
                out[name] = _typed(self.spec.arg(name).kind, value)
        more = self.spec.free_text
        if more is not None and self.more.value.strip():
            out[more.name] = self.more.value.strip()
        return out

    async def on_submit(self, interaction: discord.Interaction) -> None:
        from bot.discord.views import adapter_of

        await adapter_of(interaction).run_command(interaction, self.spec, self.values())


def _typed(kind: ArgKind, value: str) -> ArgValue:
    """A form answer as its declared kind when it reads as one; otherwise the text, for the command
    to explain what is wrong with it."""
    if kind is ArgKind.NUMBER:
        try:
            return float(value)
        except ValueError:
            return value
    return value
