"""A backend whose readiness answer says it failed to start ends the activation at once.

Aspects: a readiness answer that is no 2xx and carries ``Noctaya-Backend-Failed`` (as ``noctaya dev``'s
Service sends for a replica that crash-loops) ends every waiting request (through the openai SDK) with
an OpenAI-shaped 502 naming the reason, long before ``activationTimeout``; the reason is printable
ASCII and bounded whatever the backend sent; the lease closes and counts a ``failed`` activation; the
same header on a 2xx answer changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import openai

from noctaya.gateway import activation, keys, readiness, testing


@contextlib.asynccontextmanager
async def failing_backend(header: bytes, *, status: bytes = b"503 Service Unavailable") -> AsyncIterator[str]:
    """Answers every request ``status`` with ``Noctaya-Backend-Failed: <header>`` (raw bytes)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(
                b"HTTP/1.1 " + status + b"\r\nNoctaya-Backend-Failed: " + header + b"\r\n"
                b"Content-Length: 0\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        await server.wait_closed()


async def test_waiting_requests_end_at_once_with_the_reason(sdk: Any) -> None:
    reason = b"replica-3 exited with code 3 (last output: caf\xc3\xa9 " + b"x" * 600 + b")"
    async with (
        failing_backend(reason) as url,
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(activationTimeout="60s")
        client = sdk(gateway)
        started = asyncio.get_running_loop().time()
        results = await asyncio.gather(
            *(client.completions.create(model="m", prompt="hi") for _ in range(2)), return_exceptions=True
        )
        assert asyncio.get_running_loop().time() - started < 30  # not the 60 s activation timeout
        for result in results:
            assert isinstance(result, openai.APIStatusError) and result.status_code == 502, result
            message = result.body["message"]  # type: ignore[index]
            assert message.startswith("the model backend failed to start: replica-3 exited with code 3")
            detail = message.removeprefix("the model backend failed to start: ")
            assert "caf? x" in detail and len(detail) == readiness.MAX_FAILURE_CHARS
            assert all(" " <= c <= "~" for c in message)
        assert gateway.lease_state is activation.LeaseState.CLOSED and gateway.demand.demand() == 0
        registry = gateway.app[keys.METRICS].registry
        failed = registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "failed"})
        assert failed is not None and failed >= 1
        failures = gateway.app[keys.METRICS].failures.document()
        assert str(failures["lastActivationReason"]).startswith(
            "backend_failed: replica-3 exited with code 3"
        )


async def test_the_header_on_a_ready_answer_changes_nothing(sdk: Any) -> None:
    async with (
        failing_backend(b"nothing", status=b"200 OK") as url,
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        assert gateway.app[keys.READINESS].last_problem is None
        registry = gateway.app[keys.METRICS].registry
        assert registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "failed"}) == 0
