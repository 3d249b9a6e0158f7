"""Where the command line writes files a chat would attach (charts, /export): never the working
directory. `TOKBOT_OUT_DIR` when set, else `tokbot-out` under the system's temporary folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ENV = "TOKBOT_OUT_DIR"


def output_dir() -> Path:
    folder = Path(os.environ.get(ENV) or Path(tempfile.gettempdir()) / "tokbot-out")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
