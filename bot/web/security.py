"""What keeps the one page that writes (the 👍 / 👎 POST) honest: a same-site check and a rate limit.

Same-site: a browser says where a request came from. `Sec-Fetch-Site` (every current browser) must
be `same-origin`; where it is missing, `Origin` must name this site (the request's own host, or the
public URL the deployment set). A request with neither is refused: cross-site posts come from
browsers, and browsers send them. No cookie, token or session is needed for this, so any number of
web processes can serve the same pages.

The rate limit counts POSTs per client address in a sliding window, in this process's memory: a
vote is cheap to store, but a loop must not fill the feedback table.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def same_site(headers: Mapping[str, str], host_url: str, public_url: str | None = None) -> bool:
    """Whether a POST with these headers came from this site's own pages.

    `host_url`: the request's own scheme and host ("http://127.0.0.1:8080"); `public_url`: the
    address a proxy serves the site at (TOKBOT_PUBLIC_URL), also accepted as the origin."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site == "same-origin"
    origin = headers.get("origin")
    if not origin or origin == "null":
        return False
    allowed = {_origin(host_url)} | ({_origin(public_url)} if public_url else set())
    return origin.lower().rstrip("/") in allowed - {""}


class RateLimit:
    """At most `limit` events per `window_s` seconds per key (a client address); bounded memory:
    the least recently seen keys are forgotten past `max_keys`."""

    def __init__(
        self,
        limit: int,
        window_s: float,
        max_keys: int = 10000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.limit, self.window = limit, window_s
        self.max_keys = max_keys
        self.clock = clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def allow(self, key: str) -> bool:
        """Count one event for `key`; False (and not counted) when it is over the limit."""
        now = self.clock()
        times = self._seen.pop(key, None) or deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        allowed = len(times) < self.limit
        if allowed:
            times.append(now)
        self._seen[key] = times
        while len(self._seen) > self.max_keys:
            self._seen.popitem(last=False)
        return allowed
