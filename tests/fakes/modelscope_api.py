"""A stand-in ModelScope on 127.0.0.1 (aiohttp), for offline tests of bot/hub's ModelScope source.

The adapter reaches it through MODELSCOPE_DOMAIN alone, as ModelScope's users point their clients
at a site ("www.modelscope.cn", "modelscope.ai", or here "http://127.0.0.1:PORT"):

    ms = FakeModelScope()
    ms.add_repo("Qwen/Qwen3-Coder-30B-A3B-Instruct", {"config.json": b"{...}", "model.safetensors": 10})
    await ms.start()                  # monkeypatch.setenv("MODELSCOPE_DOMAIN", ms.endpoint)
    ms.fail("files", 429, repo="Qwen/X")  # that repo's next file listing answers 429 once
    gate = ms.hold()                  # no answer until gate.set() or stop()

Answers the calls the adapter makes, in ModelScope's own shapes (the ones its `modelscope` client
reads): `GET /api/v1/models/{repo}/repo/files?Revision=&Recursive=` (`{"Code": 200, "Data":
{"Files": [{"Name", "Path", "Size", "Type", "Revision"}]}, "Success": true}`), `GET
/api/v1/models/{repo}/repo?Revision=&FilePath=` (the file itself) and `GET /openapi/v1/models?search=`
(`{"success": true, "data": {"models": [{"id", "downloads"}], "total_count"}}`). A missing repo or
file is a 404 with `Success: false`, as the site answers; a gated one 401 without a token.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class MsRepo:
    repo: str
    files: dict[str, bytes | int]  # path -> content, or a size for a weight file never downloaded
    downloads: int = 0
    gated: bool = False
    sha: str = ""

    def size(self, path: str) -> int:
        value = self.files[path]
        return value if isinstance(value, int) else len(value)


@dataclass
class MsRequest:
    kind: str  # "search" | "files" | "file"
    path: str
    query: dict[str, str] = field(default_factory=dict)


class FakeModelScope:
    def __init__(self) -> None:
        self.repos: dict[str, MsRepo] = {}
        self.requests: list[MsRequest] = []
        self.delay = 0.0
        self._failures: dict[tuple[str, str], list[int]] = {}
        self._holds: list[asyncio.Event] = []
        self._runner: web.AppRunner | None = None
        self.endpoint = ""

    def add_repo(self, repo: str, files: dict[str, bytes | int], **kwargs: Any) -> MsRepo:
        sha = kwargs.pop("sha", "") or hashlib.sha1(repo.encode()).hexdigest()
        entry = MsRepo(repo, dict(files), sha=sha, **kwargs)
        self.repos[repo.lower()] = entry
        return entry

    def fail(self, kind: str, status: int, times: int = 1, repo: str = "") -> None:
        """The next `times` requests of `kind` (about `repo`, when named) answer `status`: naming the
        repo keeps the quant listing's requests, asked at the same time, from taking the failure."""
        self._failures.setdefault((kind, repo.lower()), []).extend([status] * times)

    def hold(self) -> asyncio.Event:
        gate = asyncio.Event()
        self._holds.append(gate)
        return gate

    def count(self, kind: str, repo: str = "") -> int:
        return sum(1 for r in self.requests if r.kind == kind and repo.lower() in r.path.lower())

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/openapi/v1/models", self._search)
        app.router.add_get("/api/v1/models/{org}/{name}/repo/files", self._files)
        app.router.add_get("/api/v1/models/{org}/{name}/repo", self._file)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.endpoint = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"  # type: ignore[attr-defined]

    async def stop(self) -> None:
        for gate in self._holds:
            gate.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _enter(self, kind: str, request: web.Request) -> web.Response | None:
        self.requests.append(MsRequest(kind, request.path, dict(request.query)))
        for gate in self._holds:
            await gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        asked = f"{request.match_info.get('org', '')}/{request.match_info.get('name', '')}".lower()
        pending = next(
            (p for (k, repo), p in self._failures.items() if k == kind and p and repo in {"", asked}), None
        )
        if pending:
            status = pending.pop(0)
            return web.json_response(
                {"Code": status, "Message": "fake failure", "Success": False}, status=status
            )
        return None

    def _repo(self, request: web.Request) -> MsRepo | web.Response:
        repo = self.repos.get(f"{request.match_info['org']}/{request.match_info['name']}".lower())
        if repo is None:
            return web.json_response(
                {"Code": 10010205001, "Message": "model not exists", "Success": False}, status=404
            )
        if repo.gated and not request.headers.get("Authorization"):
            return web.json_response(
                {"Code": 10010205002, "Message": "login required", "Success": False}, status=401
            )
        return repo

    async def _search(self, request: web.Request) -> web.Response:
        failed = await self._enter("search", request)
        if failed:
            return failed
        query = request.query.get("search", "").lower()
        hits = sorted((r for r in self.repos.values() if query in r.repo.lower()), key=lambda r: -r.downloads)
        size = int(request.query.get("page_size", "10"))
        models = [{"id": r.repo, "downloads": r.downloads} for r in hits[:size]]
        return web.json_response({"success": True, "data": {"models": models, "total_count": len(hits)}})

    async def _files(self, request: web.Request) -> web.Response:
        failed = await self._enter("files", request)
        if failed:
            return failed
        repo = self._repo(request)
        if isinstance(repo, web.Response):
            return repo
        files = [
            {
                "Name": p.rsplit("/", 1)[-1],
                "Path": p,
                "Size": repo.size(p),
                "Type": "blob",
                "Revision": repo.sha,
            }
            for p in repo.files
        ]
        return web.json_response({"Code": 200, "Data": {"Files": files}, "Success": True})

    async def _file(self, request: web.Request) -> web.Response:
        failed = await self._enter("file", request)
        if failed:
            return failed
        repo = self._repo(request)
        if isinstance(repo, web.Response):
            return repo
        path = request.query.get("FilePath", "")
        content = repo.files.get(path)
        if not isinstance(content, bytes):
            return web.json_response(
                {"Code": 10010205003, "Message": "file not exists", "Success": False}, status=404
            )
        return web.Response(body=content, content_type="application/octet-stream")


@asynccontextmanager
async def serving_modelscope(fake: FakeModelScope, monkeypatch: Any) -> AsyncIterator[FakeModelScope]:
    """The stand-in started and the adapter pointed at it by MODELSCOPE_DOMAIN alone; no Hub set."""
    await fake.start()
    monkeypatch.setenv("MODELSCOPE_DOMAIN", fake.endpoint)
    for name in ("MODELSCOPE_ENDPOINT", "MODELSCOPE_API_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield fake
    finally:
        await fake.stop()
