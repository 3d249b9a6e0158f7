"""Command replies as text for the asker's platform: escaped, and split when too long for one message."""

from __future__ import annotations

from core.render.doc import Doc, Para, Part, fits, render, truncate


def one(target: str, *lines: str) -> str:
    """Lines of prose (which may contain what the user typed) as one message, escaped for `target`."""
    return truncate(tuple(Para(line) for line in lines), target)


def doc_text(doc: Doc, target: str) -> str:
    return truncate(doc, target)


def split(doc: Doc, target: str) -> list[str]:
    """The doc as few messages as possible, never cutting a part: long lists (/help, /review)
    become several messages instead of losing their tail."""
    out: list[str] = []
    current: list[Part] = []
    for part in doc:
        trial = (*current, part)
        if current and not fits(render(trial, target), target):
            out.append(render(tuple(current), target))
            current = [part]
        else:
            current = list(trial)
    if current:
        text = render(tuple(current), target)
        out.append(text if fits(text, target) else truncate(tuple(current), target))
    return out
