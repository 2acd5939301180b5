"""uvicorn tuned for a function-scoped test server (fast start and stop)."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import uvicorn


class QuickServer(uvicorn.Server):
    """uvicorn with a 10 ms exit poll and a shutdown without fixed sleeps.

    Stock uvicorn polls ``should_exit`` every 100 ms and sleeps another 100 ms
    on shutdown, which adds ~0.2 s to every test using a function-scoped fake.
    This relies on uvicorn internals (``servers``, ``server_state``), pinned in
    pyproject.toml.
    """

    async def main_loop(self) -> None:
        ticks = 0
        should_exit = await self.on_tick(0)
        while not should_exit:
            await asyncio.sleep(0.01)
            ticks += 1
            # on_tick refreshes the Date header when its counter is a multiple of 10
            should_exit = await self.on_tick(0 if ticks % 100 == 0 else 1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # closes idle keep-alive connections at once
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(self.config.timeout_graceful_shutdown or 1)
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            if loop.time() >= deadline:
                break
            await asyncio.sleep(0.005)
        for task in list(state.tasks):
            task.cancel()
        for connection in list(state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()
        for server in self.servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), timeout=1.0)
        await self.lifespan.shutdown()
