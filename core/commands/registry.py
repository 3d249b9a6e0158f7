"""Every command the bot has, in the order /help lists them: the declarations each feature module
makes (its `SPEC` / `SPECS`), collected. Everything per-command elsewhere is generated from this:
the router's table, /help, Discord's slash commands, Telegram's handlers and menus."""

from __future__ import annotations

from collections.abc import Mapping

from core.commands import accuracy, ask, export, help, model, review, submit, subscribe
from core.commands.spec import ActionSpec, CommandSpec

SPECS: tuple[CommandSpec, ...] = (
    ask.SPEC,
    submit.SPEC,
    *review.SPECS,
    *subscribe.SPECS,
    accuracy.SPEC,
    export.SPEC,
    model.SPEC,
    help.SPEC,
)
COMMANDS: tuple[str, ...] = tuple(spec.name for spec in SPECS)
BY_NAME: Mapping[str, CommandSpec] = {spec.name: spec for spec in SPECS}
ACTIONS: Mapping[str, ActionSpec] = {action.prefix: action for spec in SPECS for action in spec.actions}
# The command whose buttons an action prefix is (metrics: "button:ask", "button:review").
ACTION_OWNERS: Mapping[str, str] = {action.prefix: spec.name for spec in SPECS for action in spec.actions}

assert len(BY_NAME) == len(SPECS), "two commands with one name"


def is_slow_action(action: str) -> bool:
    """Whether a button's answer takes a while (the platform should defer at once)."""
    spec = ACTIONS.get(action.partition(":")[0])
    return spec is not None and spec.is_slow(action)
