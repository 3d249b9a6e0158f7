"""The page handlers: each reads its URL, asks the core, renders a template. Nothing else decides.

Only `feedback` writes (a 👍 / 👎 into the same storage the chat's buttons use); it is a POST behind
the same-site check and the rate limit (bot/web/security.py), and answers with a redirect back to the
page, so a reload never votes twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
from collections import OrderedDict
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from bot.web.answers import PageAnswer, page_answer
from bot.web.params import PageParams
from bot.web.render import render_page, url_with
from bot.web.security import same_site
from core.anchors.export import export_csv, export_json, rows
from core.ask.answer import estimate_for
from core.community.submit_limits import engine_version
from core.i18n import Lang, is_lang
from core.render.feedback import plain_head
from core.render.help import question_kinds
from core.storage.records import Actor, Feedback

if TYPE_CHECKING:
    from bot.web.app import WebState

log = logging.getLogger(__name__)

VOTER_COOKIE = "tokbot_voter"
FORM_MAX_BYTES = 4096  # a vote's form is the page's parameters: a question and a few switches
ANCHORS_SHOWN = 500
HEALTH_TIMEOUT_S = 2.0


def _state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def _chrome_lang(request: Request, default: Lang) -> Lang:
    """A page without a question: `?lang=`, else the browser's first language, else the default."""
    asked = request.query_params.get("lang")
    if is_lang(asked):
        return asked
    accept = request.headers.get("accept-language", "").lower()
    if accept.startswith("zh"):
        return "zh"
    return "en" if accept.startswith("en") else default


def _html(request: Request, name: str, lang: Lang, status: int = 200, **context: Any) -> HTMLResponse:
    page = render_page(name, lang, path=request.url.path, **context)
    return HTMLResponse(page, status_code=status)


# --- the question box and the answer ---------------------------------------------------------------


async def index(request: Request) -> Response:
    lang = _chrome_lang(request, _state(request).app.bot.default_lang)
    return _html(request, "index.html", lang, kinds=question_kinds(lang), page_params={"lang": lang})


def _voted(request: Request) -> str:
    voted = request.query_params.get("voted", "")
    return voted if voted in ("up", "down", "changed-up", "changed-down") else ""


async def ask(request: Request) -> Response:
    params = PageParams.read(request.query_params)
    if not params.question:
        return RedirectResponse("/", status_code=303)
    answered = await page_answer(_state(request).app.bot, params)
    return _html(
        request, "ask.html", answered.lang, a=answered, page_params=params.as_params(), voted=_voted(request)
    )


# --- 👍 / 👎 -----------------------------------------------------------------------------------------


def _answer_key(answered: PageAnswer) -> str:
    """The same answer gets the same key in every web process (the page is stateless): a hash of
    what was estimated and in which language."""
    query = answered.query.as_json() if answered.query is not None else {}
    text = json.dumps([answered.params.question, query], ensure_ascii=False, sort_keys=True)
    return "web:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _voter(request: Request) -> tuple[str, bool]:
    """(voter id, new): the browser's own random id from its cookie, or a new one."""
    cookie = request.cookies.get(VOTER_COOKIE, "")
    if 8 <= len(cookie) <= 32 and cookie.replace("-", "").replace("_", "").isalnum():
        return cookie, False
    return secrets.token_urlsafe(12), True


async def _form(request: Request) -> dict[str, str] | None:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_MAX_BYTES:
            return None
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def _refused(request: Request, code: str, status: int) -> HTMLResponse:
    lang = _chrome_lang(request, _state(request).app.bot.default_lang)
    return _html(request, "message.html", lang, status=status, code=code, page_params={"lang": lang})


async def feedback(request: Request) -> Response:
    state = _state(request)
    own = f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"
    if not same_site(request.headers, own, state.public_url):
        return _refused(request, "page.feedback.refused", 403)
    client = request.client.host if request.client else "unknown"
    if not state.votes.allow(client):
        return _refused(request, "page.feedback.limited", 429)
    form = await _form(request)
    vote = (form or {}).get("vote")
    params = PageParams.read(form or {})
    if form is None or vote not in ("up", "down") or not params.question:
        return Response("bad vote\n", status_code=400, media_type="text/plain")
    bot = state.app.bot
    answered = await page_answer(bot, params)
    if answered.reply.status != "answer":
        return Response("only an answer can be rated\n", status_code=400, media_type="text/plain")
    voter, new = _voter(request)
    first = await bot.storage.record_feedback(
        Feedback(
            answer_key=_answer_key(answered),
            voter=Actor("web", voter),
            chat_id="web",
            helpful=vote == "up",
            question=params.question,
            query=json.dumps(answered.query.as_json() if answered.query else {}, ensure_ascii=False),
            reply=plain_head(answered.reply.text, "plain"),
            engine_version=engine_version(bot.catalog),
            lang=answered.lang,
            at=bot.clock(),
        )
    )
    voted = vote if first else f"changed-{vote}"
    target = url_with(params.as_params(), voted=voted) + "#feedback"
    response = RedirectResponse(target, status_code=303)
    if new:
        response.set_cookie(VOTER_COOKIE, voter, max_age=365 * 86400, httponly=True, samesite="strict")
    return response


# --- the chart ---------------------------------------------------------------------------------------


class ChartCache:
    """Drawn SVGs by (query, anchor version): matplotlib takes 0.1–0.6 s, the same chart is asked for
    again by every visitor of a shared link."""

    def __init__(self, size: int = 128):
        self._items: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self.size = size

    def get(self, key: tuple[Any, ...]) -> str | None:
        svg = self._items.get(key)
        if svg is not None:
            self._items.move_to_end(key)
        return svg

    def put(self, key: tuple[Any, ...], svg: str) -> None:
        self._items[key] = svg
        while len(self._items) > self.size:
            self._items.popitem(last=False)


def _draw(answered: PageAnswer, state: WebState) -> str:
    from core.anchors.calibrate import calibrate
    from core.render.chart import chart_svg

    bot = state.app.bot
    assert answered.query is not None
    est = estimate_for(answered.query, bot.catalog)
    if bot.anchors is not None:
        est = calibrate(est, bot.anchors, bot.catalog)[0]
    return chart_svg(est, answered.lang, bot.catalog)


async def chart(request: Request) -> Response:
    state = _state(request)
    params = PageParams.read(request.query_params)
    answered = await page_answer(state.app.bot, params)
    if answered.page is None or answered.query is None:
        return Response("no chart for this question\n", status_code=404, media_type="text/plain")
    anchors = state.app.bot.anchors
    key = (answered.query, answered.lang, getattr(anchors, "version", 0))
    svg = state.charts.get(key)
    if svg is None:
        svg = await asyncio.to_thread(_draw, answered, state)  # off the loop: other pages keep going
        state.charts.put(key, svg)
    return Response(svg, media_type="image/svg+xml", headers={"cache-control": "public, max-age=300"})


# --- the open data set ------------------------------------------------------------------------------

FILTERS = ("card", "model", "quant", "framework")


def _matches(row: dict[str, Any], wanted: dict[str, str]) -> bool:
    fields = {
        "card": f"{row['gpu_name'] or ''} {row['gpu_id']}",
        "model": f"{row['model_name'] or ''} {row['model_id']}",
        "quant": row["quant"] or "",
        "framework": row["framework"] or "",
    }
    return all(value in fields[key].lower() for key, value in wanted.items())


async def _approved(state: WebState) -> list[Any]:
    return await state.app.storage.submissions(status="approved")


async def anchors(request: Request) -> Response:
    state = _state(request)
    lang = _chrome_lang(request, state.app.bot.default_lang)
    wanted = {k: v.strip().lower() for k in FILTERS if (v := request.query_params.get(k, "")).strip()}
    every = rows(await _approved(state))  # the export's own rows: the page and /export agree
    shown = [r for r in every if _matches(r, wanted)]
    filters = {k: request.query_params.get(k, "") for k in FILTERS}
    return _html(
        request,
        "anchors.html",
        lang,
        rows=shown[:ANCHORS_SHOWN],
        matched=len(shown),
        total=len(every),
        limit=ANCHORS_SHOWN,
        filters=filters,
        page_params={"lang": lang, **{k: v for k, v in filters.items() if v}},
    )


async def anchors_csv(request: Request) -> Response:
    data = export_csv(await _approved(_state(request)))
    headers = {"content-disposition": 'attachment; filename="tokbot-anchors.csv"'}
    return Response(data, media_type="text/csv; charset=utf-8", headers=headers)


async def anchors_json(request: Request) -> Response:
    data = export_json(await _approved(_state(request)))
    return Response(data, media_type="application/json")


# --- accuracy and health -----------------------------------------------------------------------------


async def accuracy(request: Request) -> Response:
    from bot.web.accuracy import accuracy_view

    state = _state(request)
    lang = _chrome_lang(request, state.app.bot.default_lang)
    view = await accuracy_view(state, lang)
    return _html(request, "accuracy.html", lang, view=view, page_params={"lang": lang})


async def healthz(request: Request) -> Response:
    storage = _state(request).app.storage
    try:
        await asyncio.wait_for(storage.outbox_stats(), HEALTH_TIMEOUT_S)
        db = True
    except Exception:  # noqa: BLE001 - any failure means "not reachable"; the reason goes to the log
        log.warning("web health: database check failed", exc_info=True)
        db = False
    body = {"status": "ok" if db else "degraded", "db": db}
    return JSONResponse(body, status_code=200 if db else 503)
