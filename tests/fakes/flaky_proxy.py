"""A TCP proxy on 127.0.0.1 in front of a fake platform, to play a network that is down or drops.

    proxy = await FlakyProxy(fake_port).start()
    proxy.refuse(3)      # the next 3 connections are closed as soon as they are accepted
    proxy.cut()          # drop every connection open now (a network that went away)
    proxy.refused        # how many it refused so far

A refused connection is accepted and closed at once, without a byte: the client sees "server
disconnected" / "connection reset", as it would through a dead link or a restarting load balancer.
"""

from __future__ import annotations

import asyncio
import contextlib


class FlakyProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.to_refuse = 0
        self.refused = 0
        self.accepted = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self) -> FlakyProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    def refuse(self, n: int) -> None:
        self.to_refuse += n

    def cut(self) -> None:
        for writer in list(self._open):
            writer.transport.abort()  # no FIN handshake: the connection is simply gone
        self._open.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.to_refuse > 0:
            self.to_refuse -= 1
            self.refused += 1
            writer.transport.abort()
            return
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, up_writer))
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(src, dst))
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._open.discard(dst)
            with contextlib.suppress(Exception):
                dst.transport.abort()
