"""`Response`s -> an interaction's answer: the first as the interaction response, the rest as followups.

Discord allows exactly one interaction response within 3 s, then webhook followups for 15 minutes.
The states below track which of those is still available:
- "fresh": nothing sent yet: send_message / edit_message (a button's own message) / send_modal;
- "thinking": deferred with a "thinking…" placeholder: the first response replaces it;
- "update": a button press deferred without a placeholder: an edit goes to the button's message;
- "done": everything else is a followup.
"""

from __future__ import annotations

import io
import logging
from typing import Any

import discord

from bot.discord.convert import NO_MENTIONS
from bot.discord.modal import PromptModal
from bot.discord.views import view_for
from core.commands.types import Response

log = logging.getLogger(__name__)

CHART_NAME = "tokbot-chart.png"


def files_of(response: Response) -> list[discord.File]:
    """Fresh File objects each time: discord.py consumes (closes) a File once it is sent."""
    files = []
    if response.photo is not None:
        files.append(discord.File(io.BytesIO(response.photo), filename=CHART_NAME))
    if response.attachment is not None:
        attachment = response.attachment
        files.append(discord.File(io.BytesIO(attachment.data), filename=attachment.filename))
    return files


def _prompt_as_text(response: Response) -> str:
    """A prompt that can't be a modal (after a defer, or in answer to a modal): say what to type."""
    assert response.prompt is not None
    hint = f"`/{response.prompt.command} …`"
    return f"{response.text}\n{hint}" if response.text else hint


class Responder:
    def __init__(self, interaction: discord.Interaction):
        self.interaction = interaction
        self.state = "fresh"
        self.ephemeral = False  # what the "thinking" placeholder was deferred as
        self.showed_form = False  # a prompt went out as a modal

    @property
    def is_component(self) -> bool:
        return self.interaction.type == discord.InteractionType.component

    async def defer(self, ephemeral: bool = False, thinking: bool = True) -> None:
        """Buy time (up to 15 min). A button press deferred without thinking keeps its message as is."""
        if self.state != "fresh":
            return
        if self.is_component and not thinking:
            await self.interaction.response.defer()
            self.state = "update"
        else:
            await self.interaction.response.defer(thinking=True, ephemeral=ephemeral)
            self.state = "thinking"
            self.ephemeral = ephemeral

    async def send_all(self, responses: list[Response]) -> None:
        for response in responses:
            await self.send(response)
        if not responses and self.state == "thinking":  # nothing to say: don't leave "thinking…" up
            await self.interaction.delete_original_response()

    async def send(self, response: Response) -> None:
        i = self.interaction
        text = response.text
        if response.prompt is not None:
            can_modal = self.state == "fresh" and i.type != discord.InteractionType.modal_submit
            if can_modal:
                await i.response.send_modal(PromptModal(response.prompt))
                self.state = "done"
                self.showed_form = True
                return
            text = _prompt_as_text(response)
        view = view_for(response)
        files = files_of(response)
        if not text and not files and view is None:
            return
        if self.state == "fresh":
            if response.edit and i.message is not None:
                # Replaces the text of the message whose button was pressed and drops its buttons
                # (view=None), so a decided submission can't be pressed again.
                kwargs: dict[str, Any] = {"content": text, "view": view, "allowed_mentions": NO_MENTIONS}
                if files:
                    kwargs["attachments"] = files
                await i.response.edit_message(**kwargs)
            else:
                await i.response.send_message(**self._message(text, files, view, response.private))
            self.state = "done"
        elif self.state == "thinking":
            if response.private and not self.ephemeral:
                # A public placeholder can't turn ephemeral: remove it and answer privately.
                await i.delete_original_response()
                await i.followup.send(**self._message(text, files, view, True))
            else:
                await i.edit_original_response(**self._edit(text, files, view))
            self.state = "done"
        elif self.state == "update" and response.edit:
            await i.edit_original_response(**self._edit(text, files, view))
            self.state = "done"
        else:
            await i.followup.send(**self._message(text, files, view, response.private))
            if self.state == "update":
                self.state = "done"

    @staticmethod
    def _message(
        text: str, files: list[discord.File], view: discord.ui.View | None, ephemeral: bool
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"ephemeral": ephemeral, "allowed_mentions": NO_MENTIONS}
        if text:
            kwargs["content"] = text
        if files:
            kwargs["files"] = files
        if view is not None:
            kwargs["view"] = view
        return kwargs

    @staticmethod
    def _edit(text: str, files: list[discord.File], view: discord.ui.View | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"content": text or None, "view": view, "allowed_mentions": NO_MENTIONS}
        if files:
            kwargs["attachments"] = files
        return kwargs
