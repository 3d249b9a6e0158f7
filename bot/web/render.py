"""The Jinja2 environment: autoescaping on for every template, the page's few filters and helpers.

User text reaches a page only through `{{ }}` (escaped by Jinja2) or `linkify` (escapes first, then
wraps the http(s) links it finds); no template marks anything safe itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from core.i18n import Lang, translate
from core.render.doc import Cmd, Para, Pre

TEMPLATES = Path(__file__).resolve().parent / "templates"
_URL = re.compile(r"https?://[^\s<>()\"'“”]+[^\s<>()\"'“”.,;:!?)]")


def linkify(text: str) -> Markup:
    """The text escaped, its http(s) links made clickable (rel=nofollow: they are other people's)."""
    out: list[str] = []
    last = 0
    for m in _URL.finditer(text):
        out.append(str(escape(text[last : m.start()])))
        url = str(escape(m.group(0)))
        out.append(f'<a href="{url}" rel="nofollow noopener">{url}</a>')
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def url_with(base: Mapping[str, str], path: str = "/ask", **changes: str | None) -> str:
    """`path` with the page's parameters, some changed (None drops one): a switch keeps the rest."""
    params = {k: v for k, v in base.items() if v is not None}
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return f"{path}?{urlencode(params)}" if params else path


def part_kind(part: object) -> str:
    """What a Doc part is, for the template: para | pre | cmd."""
    if isinstance(part, Pre):
        return "pre"
    if isinstance(part, Cmd):
        return "cmd"
    return "para" if isinstance(part, Para) else "para"


def translator(lang: Lang) -> Any:
    def t(code: str, **params: Any) -> str:
        return translate(code, lang, **params)

    return t


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every template, whatever its name
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["linkify"] = linkify
    env.globals["url_with"] = url_with
    env.globals["part_kind"] = part_kind
    return env


def render_page(name: str, lang: Lang, **context: Any) -> str:
    return environment().get_template(name).render(lang=lang, t=translator(lang), **context)
