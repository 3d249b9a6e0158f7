"""The Hub endpoint as people may see it: scheme, host and port, never the userinfo (issue 24).

HF_ENDPOINT may carry credentials (`https://user:password@mirror.example/`) or a path with a key in
it; replies, provenance and the source links name the Hub by `public_endpoint`, and any text that
came back from the HTTP client (an exception's message quotes the URL it asked) goes through
`scrub` before a reply or a log line holds it. The rule itself is core's (the reply layer applies
it too): core.catalog.model_source.
"""

from __future__ import annotations

from core.catalog.model_source import public_endpoint, scrub_userinfo

scrub = scrub_userinfo
__all__ = ["public_endpoint", "scrub"]
