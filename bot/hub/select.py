"""Which model source the bot gets: the Hugging Face Hub when the deployment turns it on, else none.

On when TOKBOT_HUB is 1/true/on, or when HF_ENDPOINT is set (a mirror named is a Hub configured)
and TOKBOT_HUB isn't 0/false/off. Off by default so a bot started without either -- tests, CI, a
machine with no way out -- never reaches for the network; the reply then says no Hub is configured.
"""

from __future__ import annotations

import os

from bot.hub.hf_source import HuggingFaceSource

_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}


def model_source_from_env() -> HuggingFaceSource | None:
    switch = (os.environ.get("TOKBOT_HUB") or "").strip().lower()
    if switch in _OFF:
        return None
    if switch in _ON or os.environ.get("HF_ENDPOINT"):
        return HuggingFaceSource()
    return None
