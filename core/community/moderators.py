"""Who may moderate: configured user ids per platform, and (Discord) role ids.

`TOKBOT_MODERATORS=console:bob,telegram:123,discord:456` lists users; `TOKBOT_MODERATOR_ROLES`
lists Discord role ids. The check runs in the command layer on every moderation action, whatever
the button or command claimed, so a forged callback from a non-moderator does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.storage.records import Actor


@dataclass(frozen=True, slots=True)
class ModeratorPolicy:
    users: frozenset[str] = frozenset()  # "platform:user_id"
    discord_roles: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, users: str | list[str] = "", discord_roles: str | list[str] = "") -> ModeratorPolicy:
        """From comma-separated settings; raises ValueError naming the malformed entry."""
        return cls(frozenset(_entries(users, need_platform=True)), frozenset(_entries(discord_roles)))

    def allows(self, actor: Actor) -> bool:
        if actor.key in self.users:
            return True
        return actor.platform == "discord" and any(role in self.discord_roles for role in actor.roles)


def _entries(value: str | list[str], need_platform: bool = False) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    out = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        if need_platform:
            platform, sep, user = item.partition(":")
            if not sep or not user.strip() or platform.strip() not in ("console", "telegram", "discord"):
                raise ValueError(
                    f"moderator {item!r} must look like platform:id"
                    " with platform console, telegram or discord"
                )
            item = f"{platform.strip()}:{user.strip()}"
        out.append(item)
    return out
