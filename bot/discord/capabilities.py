"""What Discord can do, for the command layer (kept apart from discord.py: cheap to import)."""

from __future__ import annotations

from core.commands.types import PlatformCapabilities

# Interactions answer ephemerally; a bot may open a DM with any member of a guild it shares, and
# notices for something said in a channel go there ("user:<id>", read by DiscordNotifier).
CAPABILITIES = PlatformCapabilities(ephemeral=True, unprompted_dm=True, private_address="user:{user_id}")
