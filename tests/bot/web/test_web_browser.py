"""The pages in a real browser: Playwright for Python driving Debian's Chromium (/usr/bin/chromium;
`apt-get install chromium`, never `playwright install`). The app is served by uvicorn on 127.0.0.1
in a thread; nothing here reaches the internet. Without that browser the module is skipped with one
line. Screenshots go to pytest's temporary folder, never into the repository.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import pytest

CHROMIUM = Path(os.environ.get("TOKBOT_TEST_CHROMIUM", "/usr/bin/chromium"))
if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests skipped: no Chromium at {CHROMIUM} (apt-get install -y chromium)",
        allow_module_level=True,
    )
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need the playwright package"
)

import uvicorn  # noqa: E402

from bot.app import App  # noqa: E402
from bot.cli.estimate import answer as estimate_json  # noqa: E402
from bot.web.app import WebLimits, create_app  # noqa: E402
from tests.bot.web.conftest import make_app  # noqa: E402

T = TypeVar("T")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


class Served:
    """The web app on 127.0.0.1:<free port>, its own event loop in a thread."""

    def __init__(self, app: App):
        self.app = app
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        web = create_app(app, own_lifecycle=True, limits=WebLimits(votes=1000))
        self.server = uvicorn.Server(uvicorn.Config(web, log_config=None, access_log=False))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, args=(sock,), daemon=True)
        self.thread.start()

    def _run(self, sock: socket.socket) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve(sockets=[sock]))

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a storage call on the server's own loop (the store belongs to it)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=10)

    def wait_started(self) -> None:
        for _ in range(400):
            if self.server.started:
                return
            threading.Event().wait(0.025)
        raise RuntimeError("uvicorn did not start")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = Served(make_app(tmp_path_factory.mktemp("browser")))
    served.wait_started()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


def shown_rows(page: Any) -> dict[tuple[str, int], dict[str, tuple[str, str]]]:
    rows = page.eval_on_selector_all(
        "table.grid tbody tr",
        """trs => trs.map(tr => [tr.dataset.quant, +tr.dataset.context,
            Object.fromEntries([...tr.querySelectorAll('td[data-k]')].map(td =>
                [td.dataset.k, [td.dataset.v, td.textContent.trim()]]))])""",
    )
    return {(q, c): cells for q, c, cells in rows}


def assert_engine_figures(page: Any, request: dict[str, object]) -> None:
    data, ok = estimate_json(request)
    assert ok
    shown = shown_rows(page)
    assert set(shown) == {(r["quant"], r["context"]) for r in data["rows"]}
    for r in data["rows"]:
        cells = shown[(r["quant"], r["context"])]
        assert cells["weights_gib"] == [str(r["weights_gib"]), f"{r['weights_gib']:.1f}"]
        assert cells["kv_gib"] == [str(r["kv_gib"]), f"{r['kv_gib']:.2f}"]
        assert cells["total_gib"] == [str(r["total_gib"]), f"{r['total_gib']:.1f}"]
        assert cells["status"][0] == r["status"]
        assert cells["decode_mid"][0] == ("" if r["decode_tps"] is None else str(r["decode_tps"]["mid"]))
        assert cells["prefill_mid"][0] == ("" if r["prefill_tps"] is None else str(r["prefill_tps"]["mid"]))


def params(page: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_type_a_question_then_switch_quant_and_os(served: Served, page: Any) -> None:
    page.goto(served.url + "/")
    page.fill("input#q", "4090 qwen3 32b")
    page.click("form.ask button[type=submit]")
    page.wait_for_url(re.compile(r"/ask\?q=4090"))
    assert page.inner_text("h1.title").startswith("GeForce RTX 4090 · Qwen3-32B")
    assert_engine_figures(page, {"gpu": "4090", "model": "qwen3 32b"})

    page.click("a[data-field=quant][data-value=Q4_K_M]")
    page.wait_for_url(re.compile(r"quant=Q4_K_M"))
    assert_engine_figures(page, {"gpu": "4090", "model": "qwen3 32b", "quant": ["Q4_K_M"]})

    page.click("a[data-field=os][data-value=linux]")
    page.wait_for_url(re.compile(r"os=linux"))
    assert params(page)["quant"] == ["Q4_K_M"] and params(page)["q"] == ["4090 qwen3 32b"]
    assert page.inner_text(".switch strong[data-field=os]") == "Linux"
    assert_engine_figures(page, {"gpu": "4090", "model": "qwen3 32b", "quant": ["Q4_K_M"], "os": "linux"})
    # The chart is drawn for the same question (an image of its own, never empty).
    page.locator("img.chart").scroll_into_view_if_needed()  # it loads lazily
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.querySelector('img.chart').naturalWidth") > 0


def test_thumbs_up_is_stored(served: Served, page: Any) -> None:
    before = served.call(served.app.storage.feedback_counts())
    page.goto(served.url + "/ask?q=V100%2032G%2027B%20%E5%A4%9A%E5%B0%91%20token")
    page.click("#feedback button.up")
    page.wait_for_url(re.compile(r"voted=up"))
    assert "已记为有帮助" in page.inner_text("#feedback .thanks")
    after = served.call(served.app.storage.feedback_counts())
    assert after.helpful == before.helpful + 1


def test_anchor_table_filtered(served: Served, page: Any) -> None:
    page.goto(served.url + "/anchors")
    total = page.locator("table.anchors tbody tr").count()
    page.fill("input[name=card]", "4090")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"card=4090"))
    cards = page.eval_on_selector_all(
        "table.anchors tbody tr td:nth-child(2)", "tds => tds.map(t => t.textContent)"
    )
    assert 0 < len(cards) < total
    assert all("4090" in card for card in cards)


def test_phone_width_has_no_horizontal_scroll(served: Served, browser: Any, tmp_path: Path) -> None:
    for viewport, name in ((PHONE, "phone"), (DESKTOP, "desktop")):
        context = browser.new_context(viewport=viewport, device_scale_factor=1)
        page = context.new_page()
        for path in ("/ask?q=V100%2032G%2027B%20%E5%A4%9A%E5%B0%91%20token", "/", "/anchors", "/accuracy"):
            page.goto(served.url + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], (name, path)
        page.goto(served.url + "/ask?q=V100%2032G%2027B%20%E5%A4%9A%E5%B0%91%20token")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(tmp_path / f"{name}.png"))
        page.screenshot(path=str(tmp_path / f"{name}-full.png"), full_page=True)
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
        context.close()
    if os.environ.get("TOKBOT_SCREENSHOTS"):  # a folder outside the repository, to look at them
        out = Path(os.environ["TOKBOT_SCREENSHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        for png in tmp_path.glob("*.png"):
            (out / png.name).write_bytes(png.read_bytes())
