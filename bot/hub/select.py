"""Which model source the bot gets: the Hugging Face Hub or ModelScope when the deployment turns one
on, else none.

The site: TOKBOT_MODEL_SOURCE (`huggingface`, the default, or `modelscope`). The Hub is on when the
`hub` setting (TOKBOT_HUB) is true, or when it is unset and HF_ENDPOINT is set (a mirror named is a
Hub configured). ModelScope, being chosen by name, is on unless TOKBOT_HUB is false. Off by default
so a bot started without either -- tests, CI, a machine with no way out -- never reaches for the
network; the reply then says no Hub is configured. The Docker and systemd deployments ship with the
Hub on (deploy/.env.example).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # imported only when a source is on: huggingface_hub costs ~0.35 s to import
    from bot.hub.hf_source import HuggingFaceSource

_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}
SourceName = Literal["huggingface", "modelscope"]


def _named_source() -> SourceName:
    word = (os.environ.get("TOKBOT_MODEL_SOURCE") or "").strip().lower()
    return "modelscope" if word in {"modelscope", "ms"} else "huggingface"


def model_source_for(hub: bool | None, source: SourceName | None = None) -> HuggingFaceSource | None:
    """The source for the `hub` setting: True on, False off, None on only with HF_ENDPOINT set (the
    Hub) or always (ModelScope, chosen by name); `source` None reads TOKBOT_MODEL_SOURCE (the
    command-line tools and bot/app.py, whose Settings validated it)."""
    source = source or _named_source()
    if source == "modelscope":
        if hub is False:
            return None
        from bot.hub.ms_source import ModelScopeSource

        return ModelScopeSource()
    if hub is None:
        hub = bool(os.environ.get("HF_ENDPOINT"))
    if not hub:
        return None
    from bot.hub.hf_source import HuggingFaceSource

    return HuggingFaceSource()


def model_source_from_env() -> HuggingFaceSource | None:
    """The same rule read straight from TOKBOT_HUB (the command-line tools have no Settings)."""
    switch = (os.environ.get("TOKBOT_HUB") or "").strip().lower()
    return model_source_for(True if switch in _ON else False if switch in _OFF else None)
