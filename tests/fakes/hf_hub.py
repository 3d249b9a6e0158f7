"""A fake Hugging Face Hub on 127.0.0.1 (aiohttp), for offline tests of bot/hub.

The real huggingface_hub client reaches it through HF_ENDPOINT alone, exactly as a mirror
(hf-mirror.com) is reached:

    hub = FakeHub()
    hub.add_repo("Qwen/Qwen3-Coder-30B-A3B-Instruct", {"config.json": b"{...}",
                 "model-00001-of-00016.safetensors": 3_900_000_000}, downloads=900_000)
    await hub.start()                       # monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    hub.fail("model_info", 429)             # the next model_info answers 429 once
    hub.fail_repo("bartowski/X-GGUF", 500)  # that repo's next model_info answers 500 once
    hub.add_gguf_repo("unsloth/X-GGUF", {"X-Q4_K_M.gguf": 18_556_686_592,
                      "Q8_0/X-Q8_0-00001-of-00002.gguf": 20_000_000_000, ...})  # a quantizer's repo
    hub.delay = 2.0                         # every answer waits 2 s
    gate = hub.hold(lambda r: "GGUF" in r.path)  # no answer to these until gate.set() or stop()
    await hub.stop()

Answers what the client asks: `GET /api/models?search=&sort=&limit=`, `GET /api/models/{repo}`
(and `/revision/{rev}`; `blobs=true` adds sizes), `GET /api/models/{repo}/tree/{rev}`, and
`HEAD` / `GET /{repo}/resolve/{rev}/{file}` with the `ETag`, `X-Repo-Commit` and `Content-Length`
headers huggingface_hub reads. Errors carry `X-Error-Code` as the Hub's do (GatedRepo,
RepoNotFound, EntryNotFound), so the client raises its real exception classes.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class FakeRepo:
    repo: str
    files: dict[str, bytes | int]  # path -> content, or a size for a weight file never downloaded
    downloads: int = 0
    gated: bool = False
    sha: str = ""
    safetensors_total: int | None = None
    created_at: str = "2025-07-31T00:00:00.000Z"

    def size(self, path: str) -> int:
        value = self.files[path]
        return value if isinstance(value, int) else len(value)


@dataclass
class Request:
    kind: str  # "search" | "model_info" | "tree" | "resolve"
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.requests: list[Request] = []
        self.delay = 0.0
        self.answered = 0  # requests answered so far (after any delay or hold)
        self._holds: list[tuple[Callable[[Request], bool], asyncio.Event]] = []
        self._failures: dict[str, list[int]] = {}
        self._repo_failures: dict[str, list[int]] = {}
        self._runner: web.AppRunner | None = None
        self.endpoint = ""

    # ------------------------------------------------------------ setup

    def add_repo(self, repo: str, files: dict[str, bytes | int], **kwargs: Any) -> FakeRepo:
        sha = kwargs.pop("sha", "") or hashlib.sha1(repo.encode()).hexdigest()
        entry = FakeRepo(repo, dict(files), sha=sha, **kwargs)
        self.repos[repo.lower()] = entry
        return entry

    def fail(self, kind: str, status: int, times: int = 1) -> None:
        """The next `times` requests of `kind` answer `status`."""
        self._failures.setdefault(kind, []).extend([status] * times)

    def fail_repo(self, repo: str, status: int, times: int = 1) -> None:
        """The next `times` model_info requests for `repo` answer `status`."""
        self._repo_failures.setdefault(repo.lower(), []).extend([status] * times)

    def add_gguf_repo(self, repo: str, files: dict[str, int], **kwargs: Any) -> FakeRepo:
        """A quantizer's GGUF repo: sizes only (split parts, folders such as "Q8_0/"), a README."""
        return self.add_repo(repo, {"README.md": b"# GGUF", **files}, **kwargs)

    def hold(self, when: Callable[[Request], bool] = lambda _r: True) -> asyncio.Event:
        """Requests matching `when` get no answer until the returned event is set: a Hub that is
        slower than any time budget, whatever the machine's speed."""
        gate = asyncio.Event()
        self._holds.append((when, gate))
        return gate

    def count(self, kind: str) -> int:
        return sum(1 for r in self.requests if r.kind == kind)

    def count_repo(self, repo: str, kind: str = "model_info") -> int:
        """Requests of `kind` about `repo` itself (the quant listing asks about other repos too)."""
        prefix = f"/api/models/{repo}".lower()
        return sum(
            1
            for r in self.requests
            if r.kind == kind and (r.path.lower() == prefix or r.path.lower().startswith(prefix + "/"))
        )

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/models", self._search)
        app.router.add_get("/api/models/{org}/{name}/tree/{rev}", self._tree)
        app.router.add_get("/api/models/{org}/{name}/revision/{rev}", self._model_info)
        app.router.add_get("/api/models/{org}/{name}", self._model_info)
        app.router.add_get("/{org}/{name}/resolve/{rev}/{path:.+}", self._resolve)  # HEAD too
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.endpoint = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        for _when, gate in self._holds:
            gate.set()  # held answers go out, so the server's shutdown doesn't wait for them
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------ handlers

    async def _enter(self, kind: str, request: web.Request) -> web.Response | None:
        seen = Request(kind, request.method, request.path, dict(request.query))
        self.requests.append(seen)
        for when, gate in self._holds:
            if when(seen):
                await gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        self.answered += 1
        pending = self._failures.get(kind)
        if pending:
            status = pending.pop(0)
            headers = {"Retry-After": "1"} if status == 429 else {}
            return web.json_response({"error": f"fake failure {status}"}, status=status, headers=headers)
        return None

    def _repo(self, request: web.Request) -> FakeRepo | None:
        return self.repos.get(f"{request.match_info['org']}/{request.match_info['name']}".lower())

    @staticmethod
    def _error(code: str, status: int, message: str) -> web.Response:
        return web.json_response({"error": message}, status=status, headers={"X-Error-Code": code})

    async def _search(self, request: web.Request) -> web.Response:
        failed = await self._enter("search", request)
        if failed:
            return failed
        # As the real Hub: the query is a substring of the repo id (case aside), so "olmo-2-13b"
        # finds nothing of "allenai/OLMo-2-1124-13B-Instruct" and the caller must try other forms.
        query = request.query.get("search", "").lower()
        hits = [r for r in self.repos.values() if query in r.repo.lower()]
        hits.sort(key=lambda r: r.downloads, reverse=True)
        limit = int(request.query.get("limit", "20"))
        return web.json_response(
            [{"id": r.repo, "modelId": r.repo, "downloads": r.downloads, "likes": 0} for r in hits[:limit]]
        )

    async def _model_info(self, request: web.Request) -> web.Response:
        failed = await self._enter("model_info", request)
        if failed:
            return failed
        key = f"{request.match_info['org']}/{request.match_info['name']}".lower()
        pending = self._repo_failures.get(key)
        if pending:
            status = pending.pop(0)
            return web.json_response({"error": f"fake failure {status}"}, status=status)
        repo = self._repo(request)
        if repo is None:
            return self._error("RepoNotFound", 404, "Repository not found")
        if repo.gated and not request.headers.get("Authorization"):
            return self._error("GatedRepo", 401, "Access to this gated repo is restricted")
        blobs = request.query.get("blobs") in {"true", "True", "1"}
        siblings = [
            {
                "rfilename": path,
                **({"size": repo.size(path), "blobId": repo.sha[:8] + str(i)} if blobs else {}),
            }
            for i, path in enumerate(repo.files)
        ]
        body: dict[str, Any] = {
            "id": repo.repo,
            "modelId": repo.repo,
            "sha": repo.sha,
            "private": False,
            "gated": "manual" if repo.gated else False,
            "downloads": repo.downloads,
            "likes": 0,
            "createdAt": repo.created_at,
            "lastModified": repo.created_at,
            "tags": [],
            "siblings": siblings,
        }
        if repo.safetensors_total:
            body["safetensors"] = {
                "parameters": {"BF16": repo.safetensors_total},
                "total": repo.safetensors_total,
            }
        return web.json_response(body)

    async def _tree(self, request: web.Request) -> web.Response:
        failed = await self._enter("tree", request)
        if failed:
            return failed
        repo = self._repo(request)
        if repo is None:
            return self._error("RepoNotFound", 404, "Repository not found")
        return web.json_response(
            [{"type": "file", "path": p, "size": repo.size(p), "oid": repo.sha} for p in repo.files]
        )

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        failed = await self._enter("resolve", request)
        if failed:
            return failed
        repo = self._repo(request)
        if repo is None:
            return self._error("RepoNotFound", 404, "Repository not found")
        if repo.gated and not request.headers.get("Authorization"):
            return self._error("GatedRepo", 401, "Access to this gated repo is restricted")
        path = request.match_info["path"]
        if path not in repo.files:
            return self._error("EntryNotFound", 404, f"{path} does not exist")
        content = repo.files[path]
        data = content if isinstance(content, bytes) else b""
        etag = hashlib.sha1(data or path.encode()).hexdigest()
        size = str(repo.size(path))
        headers = {
            "ETag": f'"{etag}"',
            "X-Repo-Commit": repo.sha,
            "X-Linked-Size": size,
            "Content-Length": size,
        }
        if request.method == "HEAD":
            return web.Response(status=200, headers=headers)
        return web.Response(body=data, headers={**headers, "Content-Length": str(len(data))})


@asynccontextmanager
async def serving(fake: FakeHub, monkeypatch: Any) -> AsyncIterator[FakeHub]:
    """The fake started, and huggingface_hub pointed at it by HF_ENDPOINT alone (no token, online),
    the way a deployment points the bot at a mirror."""
    await fake.start()
    monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:
        yield fake
    finally:
        await fake.stop()
