"""What Telegram can do, for the command layer (kept apart from python-telegram-bot: cheap to import)."""

from __future__ import annotations

from core.commands.types import PlatformCapabilities

# No ephemeral messages, and a bot may only write to someone who opened a private chat with it: so
# private material goes to that chat when there is one, and subscribing happens there.
# A person's private chat with the bot has their user id as its chat id: a notice for someone who
# asked in a group (a /submit's decision, with a rejection's reason) goes there, never to the group.
CAPABILITIES = PlatformCapabilities(ephemeral=False, unprompted_dm=False, private_address="{user_id}")
