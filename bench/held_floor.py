"""A bare aiohttp server that holds streaming requests: the floor under the gateway's held figure.

    .venv/bin/python -m bench.held_floor --port PORT [--interval 1.0]

Run by ``bench.gateway`` next to the gateway in its held phase, with the same load, so the gateway's
memory per held request reads beside what aiohttp and uvloop cost by themselves. It does the least a
holding server can: every ``POST`` has its body read, gets 200 + SSE headers and a ``: keepalive``
comment, then one every ``--interval`` from a single ticker, until the client leaves; ``GET
/noctaya/queue`` answers ``{"queued": N}`` as the gateway does, so the load generator can tell when
everything is held. The runner is aiohttp's own, on uvloop, with the gateway's settings
(``handler_cancellation``, no access log); nothing else is imported, and nothing is bounded: it is
a measuring stick, never a server to expose.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import sys

import uvloop
from aiohttp import web

HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


class Holder:
    """The held streams and their ticker."""

    def __init__(self, *, interval: float) -> None:
        self.interval = interval
        self.held: set[web.StreamResponse] = set()

    async def hold(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(status=200, headers=HEADERS)
        await response.prepare(request)
        await response.write(b": keepalive\n\n")
        self.held.add(response)
        try:
            await asyncio.get_running_loop().create_future()  # until the client leaves (cancelled)
        finally:
            self.held.discard(response)
        return response

    async def queue(self, _request: web.Request) -> web.Response:
        return web.json_response({"queued": len(self.held)})

    async def tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            for response in list(self.held):
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await response.write(b": keepalive\n\n")


async def serve(*, port: int, interval: float) -> None:
    holder = Holder(interval=interval)
    app = web.Application()
    app.router.add_get("/healthz", holder.queue)
    app.router.add_get("/noctaya/queue", holder.queue)
    app.router.add_post("/{tail:.*}", holder.hold)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, handle_signals=True)
    await runner.setup()
    gc.freeze()  # as ``noctaya gateway`` does after start
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=4096, reuse_address=True)
    await site.start()
    ticker = asyncio.create_task(holder.tick())
    try:
        await asyncio.get_running_loop().create_future()  # until SIGTERM (handle_signals)
    finally:
        ticker.cancel()
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.held_floor", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between heartbeats")
    args = parser.parse_args(argv)
    with contextlib.suppress(web.GracefulExit, KeyboardInterrupt):
        uvloop.run(serve(port=args.port, interval=args.interval))
    return 0


if __name__ == "__main__":
    sys.exit(main())
