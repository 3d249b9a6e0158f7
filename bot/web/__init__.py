"""The web page: the answer as a page, like the seed page (issue 25).

`python -m bot web` (or `python -m bot run` with TOKBOT_WEB_PORT set) serves read-mostly pages from
the same core and database as the bots: `/` and `/ask?q=…` (the full answer), `/anchors` (+ `.csv`,
`.json`: the export), `/accuracy`, `/chart.svg`, `/healthz`, and the 👍 / 👎 POST. Stateless: every
page is computed from its URL, so several processes can serve one PostgreSQL database behind a proxy.

Starlette, Jinja2 and uvicorn are imported only from this package, and this package only when the
web starts: `python -m bot ask` stays as light as before.
"""
