"""Buttons: one `DynamicItem` class for every button the command layer makes.

The custom_id is the command layer's action string ("m:a:42", "v:c:1f") and nothing else, so a
button keeps working after a restart (discord.py matches the template against any custom_id it
receives once the class is registered with `client.add_dynamic_items`) and the router sees exactly
what the button carried. Permission is not checked here: the router checks it on every action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from core.commands.types import Button, Response

if TYPE_CHECKING:
    from bot.discord.adapter import DiscordAdapter

TEMPLATE = r"(?P<action>[a-z]:[^\s]{1,98})"  # an action prefix letter, ":", the rest: <= 100 chars
_STYLES = {
    "primary": discord.ButtonStyle.primary,
    "secondary": discord.ButtonStyle.secondary,
    "success": discord.ButtonStyle.success,
    "danger": discord.ButtonStyle.danger,
}
LABEL_MAX = 80  # Discord's button label limit
ROWS_MAX, PER_ROW_MAX = 5, 5


class ActionButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    def __init__(
        self,
        action: str,
        label: str = "",
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        row: int | None = None,
    ):
        super().__init__(
            discord.ui.Button(label=label[:LABEL_MAX] or action, style=style, custom_id=action, row=row)
        )
        self.action = action

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any
    ) -> ActionButton:  # noqa: ANN401 - re.Match from discord.py
        label = getattr(item, "label", None) or ""
        style = getattr(item, "style", discord.ButtonStyle.secondary)
        return cls(match["action"], label, style)

    async def callback(self, interaction: discord.Interaction) -> None:
        await adapter_of(interaction).run_action(interaction, self.action)


def adapter_of(interaction: discord.Interaction) -> DiscordAdapter:
    """The adapter that owns this client (set by TokbotClient); how callbacks reach the router."""
    adapter: DiscordAdapter = interaction.client.adapter  # type: ignore[attr-defined]
    return adapter


def view_for(response: Response) -> discord.ui.View | None:
    """The response's button rows as a View, or None when it has none. timeout=None: the buttons stay
    live; after a restart `add_dynamic_items` keeps them working without this View object."""
    if not response.buttons:
        return None
    view = discord.ui.View(timeout=None)
    for row, buttons in enumerate(response.buttons[:ROWS_MAX]):
        for button in buttons[:PER_ROW_MAX]:
            view.add_item(_item(button, row))
    return view


def _item(button: Button, row: int) -> ActionButton:
    style = _STYLES.get(button.style, discord.ButtonStyle.secondary)
    return ActionButton(button.action, button.label, style, row)
