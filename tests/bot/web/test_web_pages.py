"""The web pages over plain HTTP (Starlette's TestClient): every route, the figures against
`estimate --json`, escaping of what the user typed, the vote's same-site check and rate limit."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from starlette.testclient import TestClient

from bot.app import App
from bot.cli.estimate import answer as estimate_json
from bot.web.app import WebLimits, create_app
from core.anchors.export import export_csv, export_json
from tests.bot.web.conftest import make_app

SAME = {"origin": "http://testserver"}
ROW = re.compile(r'<tr class="[^"]*" data-quant="([^"]+)" data-context="(\d+)">(.*?)</tr>', re.S)
CELL = re.compile(r'<td[^>]*data-k="([a-z_]+)" data-v="([^"]*)">([^<]*)</td>')


def table(html: str) -> dict[tuple[str, int], dict[str, tuple[str, str]]]:
    """(quant, context) -> {key: (data value, shown text)} of an answer page's table."""
    return {
        (q, int(c)): {k: (unescape(v), unescape(text)) for k, v, text in CELL.findall(body)}
        for q, c, body in ROW.findall(html)
    }


def expected(request: dict[str, object]) -> dict[tuple[str, int], dict[str, object]]:
    data, ok = estimate_json(request)
    assert ok
    return {(r["quant"], r["context"]): r for r in data["rows"]}


def assert_same_figures(html: str, request: dict[str, object]) -> int:
    shown, engine = table(html), expected(request)
    assert shown.keys() == engine.keys()
    for key, row in engine.items():
        cells = shown[key]
        for name in ("weights_gib", "kv_gib", "total_gib"):
            assert float(cells[name][0]) == row[name]
        assert cells["weights_gib"][1] == f"{row['weights_gib']:.1f}"
        assert cells["kv_gib"][1] == f"{row['kv_gib']:.2f}"
        assert cells["total_gib"][1] == f"{row['total_gib']:.1f}"
        assert cells["status"][0] == row["status"]
        decode, prefill = row["decode_tps"], row["prefill_tps"]
        assert cells["decode_mid"][0] == ("" if decode is None else str(decode["mid"]))
        if decode is not None:
            digits = 1 if decode["high"] < 10 else 0
            low, high = f"{decode['low']:.{digits}f}", f"{decode['high']:.{digits}f}"
            assert cells["decode_mid"][1].startswith(f"{low}–{high}")
        assert cells["prefill_mid"][0] == ("" if prefill is None else str(prefill["mid"]))
    return len(engine)


def test_every_route_answers(client: TestClient) -> None:
    for url in (
        "/",
        "/?lang=zh",
        "/ask?q=4090+qwen3+32b",
        "/anchors",
        "/anchors?card=4090",
        "/anchors.csv",
        "/anchors.json",
        "/accuracy",
        "/accuracy?lang=zh",
        "/chart.svg?q=4090+qwen3+32b+q4+32k",
        "/healthz",
        "/static/style.css",
        "/static/copy.js",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert "content-security-policy" in response.headers
        assert response.headers["server-timing"].startswith("app;dur=")
    assert client.get("/healthz").json() == {"status": "ok", "db": True}
    assert client.get("/ask", follow_redirects=False).status_code == 303  # no question: the box
    assert client.get("/nowhere").status_code == 404
    assert client.get("/feedback").status_code == 405  # writing is POST only


def test_answer_page_figures_equal_estimate_json(client: TestClient) -> None:
    html = client.get("/ask", params={"q": "4090 qwen3 32b"}).text
    assert assert_same_figures(html, {"gpu": "4090", "model": "qwen3 32b"}) == 36
    html = client.get("/ask", params={"q": "4090 qwen3 32b", "quant": "Q4_K_M", "os": "linux"}).text
    request = {"gpu": "4090", "model": "qwen3 32b", "quant": ["Q4_K_M"], "os": "linux"}
    assert assert_same_figures(html, request) == 6
    html = client.get("/ask", params={"q": "V100 32G 27B 多少 token", "kv": "q8_0", "ctx": "65536"}).text
    request = {"gpu": "V100 32G", "model": "gemma 3 27b", "kv_type": "q8_0", "ctx": [65536]}
    assert assert_same_figures(html, request) == 6


def test_answer_page_has_what_the_seed_page_has(client: TestClient) -> None:
    html = client.get("/ask", params={"q": "V100 32G 27B 多少 token"}).text
    assert '<html lang="zh-Hans">' in html
    for section in (
        "plan",
        "table",
        "chart",
        "quant",
        "frameworks",
        "speculative",
        "anchors",
        "sources",
        "feedback",
    ):
        assert f'id="{section}"' in html, section
    assert "这条内容有帮助吗?" in html and "来源链接" in html and "投机解码" in html
    assert 'class="copy"' in html and "llama-server -m google_gemma-3-27b-it" in html
    assert 'href="https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json"' in html
    english = client.get("/ask", params={"q": "V100 32G 27B 多少 token", "lang": "en"}).text
    assert "Was this helpful?" in english and "Speculative decoding" in english


def test_the_page_names_what_runs_well_instead_of_a_poor_pick(client: TestClient) -> None:
    # as the chat does (core/render/family_fallback.py): Llama-3.1-70B beside IQ1_S at 0.8 tok/s
    html = unescape(client.get("/ask", params={"q": "rtx 6000 ada llama 3.1 405b"}).text)
    assert "A smaller model of the family runs well here: Llama-3.1-70B" in html
    assert "Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf" in html


def test_switch_links_keep_the_rest_of_the_question(client: TestClient) -> None:
    html = unescape(client.get("/ask", params={"q": "4090 qwen3 32b", "kv": "q8_0"}).text)
    links = dict(re.findall(r'href="(/ask\?[^"]+)" data-field="quant" data-value="([^"]+)"', html))
    link = next(href for href, value in links.items() if value == "Q5_K_M")
    assert "q=4090+qwen3+32b" in link and "kv=q8_0" in link and "quant=Q5_K_M" in link
    os_link = re.search(r'href="(/ask\?[^"]+)" data-field="os" data-value="linux"', html)
    assert os_link is not None and "kv=q8_0" in os_link.group(1)
    one = client.get(link.replace("&amp;", "&")).text
    assert set(q for q, _ in table(one)) == {"Q5_K_M"}


def test_other_replies_are_shown_as_the_chat_shows_them(client: TestClient) -> None:
    compare = client.get("/ask", params={"q": "4090 vs 5090 for qwen3 32b"}).text
    assert 'id="reply"' in compare and "GeForce RTX 5090" in compare
    unclear = client.get("/ask", params={"q": "hello"}).text
    assert 'id="reply"' in unclear and 'id="feedback"' not in unclear


def test_user_text_is_escaped_everywhere(client: TestClient) -> None:
    evil = '<script>alert(1)</script> "><img src=x onerror=alert(2)> 4090 qwen3 32b'
    for url, params in (
        ("/ask", {"q": evil}),
        ("/anchors", {"card": evil, "model": evil}),
        ("/", {"lang": evil}),
    ):
        html = client.get(url, params=params).text
        assert "<script>alert" not in html and "<img src=x" not in html, url
    html = client.get("/ask", params={"q": evil}).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_vote_is_stored_like_the_chat_s(client: TestClient, web_app: App) -> None:
    form = {"q": "4090 qwen3 32b", "quant": "Q4_K_M", "vote": "up"}
    before = client.portal.call(web_app.storage.feedback_counts) if client.portal else None
    response = client.post("/feedback", data=form, headers=SAME, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/ask?q=4090+qwen3+32b&quant=Q4_K_M&voted=up")
    assert client.portal is not None
    after = client.portal.call(web_app.storage.feedback_counts)
    assert before is not None and after.helpful == before.helpful + 1
    # The same browser (its cookie) changing its mind: one vote, changed.
    again = client.post("/feedback", data={**form, "vote": "down"}, headers=SAME, follow_redirects=False)
    assert "voted=changed-down" in again.headers["location"]
    final = client.portal.call(web_app.storage.feedback_counts)
    assert (final.helpful, final.unhelpful) == (before.helpful, before.unhelpful + 1)
    stored = client.portal.call(web_app.storage.unhelpful_feedback, 5)
    assert stored[0].voter.platform == "web" and stored[0].question == "4090 qwen3 32b"
    assert json.loads(stored[0].query)["quants"] == ["Q4_K_M"]
    page = client.get(again.headers["location"]).text
    assert 'class="thanks"' in page


def test_vote_refused_from_another_site(client: TestClient) -> None:
    form = {"q": "4090 qwen3 32b", "vote": "up"}
    for headers in (
        {"origin": "https://evil.example"},
        {"sec-fetch-site": "cross-site", "origin": "http://testserver"},
        {"sec-fetch-site": "same-site"},
        {},  # neither header: not a page of this site
        {"origin": "null"},
    ):
        response = client.post("/feedback", data=form, headers=headers, follow_redirects=False)
        assert response.status_code == 403, headers
    ok = client.post(
        "/feedback", data=form, headers={"sec-fetch-site": "same-origin"}, follow_redirects=False
    )
    assert ok.status_code == 303
    bad = client.post("/feedback", data={"q": "4090 qwen3 32b", "vote": "maybe"}, headers=SAME)
    assert bad.status_code == 400


def test_votes_are_rate_limited(tmp_path: Path) -> None:
    web = create_app(make_app(tmp_path), own_lifecycle=True, limits=WebLimits(votes=3, votes_window_s=60))
    with TestClient(web, base_url="http://testserver") as c:
        codes = [
            c.post(
                "/feedback", data={"q": "4090 qwen3 32b", "vote": "up"}, headers=SAME, follow_redirects=False
            ).status_code
            for _ in range(5)
        ]
    assert codes == [303, 303, 303, 429, 429]


def test_anchor_downloads_are_the_export(client: TestClient, web_app: App) -> None:
    assert client.portal is not None
    approved = client.portal.call(web_app.storage.submissions, "approved")
    assert client.get("/anchors.csv").content == export_csv(approved)
    assert client.get("/anchors.json").content == export_json(approved)
    assert len(client.get("/anchors.json").json()["anchors"]) == len(approved) > 500


def test_anchor_table_filters(client: TestClient) -> None:
    html = client.get("/anchors", params={"card": "4090", "quant": "q4_k_m"}).text
    ids = re.findall(r'<tr data-id="(\d+)">', html)
    rows = [r for r in client.get("/anchors.json").json()["anchors"]]
    want = [
        str(r["id"])
        for r in rows
        if "4090" in f"{r['gpu_name']} {r['gpu_id']}".lower() and "q4_k_m" in (r["quant"] or "").lower()
    ]
    assert ids == want and len(ids) > 3
    assert "No anchor matches" in client.get("/anchors", params={"model": "no-such-model-x"}).text


def test_accuracy_page_draws_the_charts_in_the_language_asked(client: TestClient) -> None:
    en = client.get("/accuracy").text
    assert en.count("<svg") == 3 and "Estimated vs measured" in en
    zh = client.get("/accuracy", params={"lang": "zh"}).text
    assert zh.count("<svg") == 3 and "估算 vs 实测" in zh and "按框架的中位误差" in zh


def test_chart_is_never_empty_and_speaks_the_asker_s_language(client: TestClient) -> None:
    svg = client.get("/chart.svg", params={"q": "4090 qwen3 32b q4 32k"}).text
    assert svg.lstrip().startswith("<?xml") and "usable 22.6 GiB" in svg
    for label in ("Q5_K_M", "Q4_K_M", "IQ4_XS", "16K", "32K", "40K"):
        assert label in svg
    zh = client.get("/chart.svg", params={"q": "V100 32G 27B 多少 token"}).text
    assert "上下文" in zh and "可用 31.6 GiB" in zh
    assert client.get("/chart.svg", params={"q": "hello"}).status_code == 404


def test_front_page_lists_every_kind_of_question(client: TestClient) -> None:
    html = unescape(client.get("/", headers={"accept-language": "zh-CN,zh;q=0.9"}).text)
    kinds = re.findall(r'<li data-kind="([a-z_]+)">', html)
    assert kinds == ["fit", "which_model", "which_hardware", "compare", "ttft", "concurrency", "memory_only"]
    assert "这张卡能跑哪些模型" in html and "8GB VRAM what's the biggest model I can run" in html
    assert "能跑多少B的模型" in html
