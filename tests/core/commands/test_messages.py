"""Every message code the command layer uses exists, in English and Chinese."""

from __future__ import annotations

import re
from pathlib import Path

from core.commands.registry import COMMANDS
from core.i18n import messages

ROOT = Path(__file__).resolve().parents[3]
LITERAL = re.compile(r"""translate\(\s*"([a-z_.]+)\"""")
SOURCES = [
    *ROOT.glob("core/commands/*.py"),
    *ROOT.glob("core/community/*.py"),
    ROOT / "core/render/moderation.py",
    ROOT / "core/render/help.py",
    ROOT / "core/render/accuracy.py",
    ROOT / "bot/cli/console.py",
]


def test_literal_codes_exist_in_both_languages():
    table = messages()
    used = {code for path in SOURCES for code in LITERAL.findall(path.read_text())}
    assert len(used) > 40
    missing = sorted(c for c in used if c not in table)
    assert not missing
    half = sorted(c for c in used if not (table[c].get("en") and table[c].get("zh")))
    assert not half


def test_generated_codes_exist():
    table = messages()
    codes = [f"cmd.{n}.{part}" for n in COMMANDS for part in ("summary", "usage", "example")]
    codes += [f"status.{s}" for s in ("pending", "approved", "rejected", "withdrawn")]
    codes += [f"review.done.{v}" for v in ("approve", "reject", "withdraw")]
    codes += [f"review.prompt.{v}" for v in ("reject", "withdraw")]
    codes += [f"submission.dialogue.ask.{f}" for f in ("gpu", "model", "quant", "decode")]
    codes += [f"notice.{s}" for s in ("approved", "rejected", "withdrawn")]
    codes += [f"ask.button.os.{o}" for o in ("linux", "windows")]
    codes += [f"subscribe.unsure.{k}" for k in ("gpu", "model")]
    assert [c for c in codes if c not in table or not table[c].get("zh")] == []


def test_codes_the_declarations_name_exist():
    """What the router and the adapters read from a CommandSpec: help lines, option descriptions,
    the private-chat refusal, a form's labels."""
    from core.commands.registry import SPECS
    from core.commands.spec import Place

    table = messages()
    codes: list[str] = []
    for spec in SPECS:
        codes += [spec.usage_key, spec.summary_key, spec.example_key]
        codes += [arg.description_key for arg in spec.args]
        if spec.place is Place.PRIVATE_CHAT:
            codes.append(f"{spec.name}.private_only")
        if spec.form:
            keys = spec.form_messages
            codes += [f"{keys}.title", f"{keys}.more", f"{keys}.more.example"]
            codes += [f"{keys}.{name}{part}" for name in spec.form for part in ("", ".example")]
    assert [c for c in codes if c not in table or not table[c].get("zh")] == []
