"""A `Prompt` (one line of text, e.g. a rejection reason) as a modal; its answer runs a command."""

from __future__ import annotations

import discord

from core.commands.types import Prompt

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
