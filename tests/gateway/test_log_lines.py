"""What a client can put in the gateway's log lines: nothing that is not text.

Aspects: a decoded path carrying CR, ESC, BEL, DEL, a C1 control and a Unicode line separator, sent
over a real socket to a gateway whose backend then fails mid-response, reaches the warning and the
access line only escaped (``\\r``, ``\\x1b``, ``\\u2028``), through the one escaping function every
handler's filter applies; the escaping function itself on every control character.
"""

from __future__ import annotations

import logging
import pathlib
import sys
from collections.abc import Iterator

import pytest
from aiohttp import web

from noctaya.gateway import testing
from noctaya.serving import redaction

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.gateway.conftest import ServeApp  # noqa: E402
from tests.hostile import exchange, request  # noqa: E402

CONTROLS = "\r\x1b\x07\x7f\x85\u2028\u202e\x0b\x00"


class Lines(logging.Handler):
    """Log lines as a handler of the process writes them (with the redactor, as ``install`` sets)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler = Lines()
    root = logging.getLogger()
    root.addHandler(handler)
    redaction.install(root)
    level = root.level
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.setLevel(level)
        root.removeHandler(handler)


async def _breaks_mid_response(request: web.Request) -> web.StreamResponse:
    if request.path == "/health":
        return web.json_response({})
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.content_length = 1000
    await response.prepare(request)
    await response.write(b'{"partial": ')
    assert request.transport is not None
    request.transport.abort()
    return response


async def test_control_characters_of_a_path_reach_log_lines_escaped(
    serve_app: ServeApp, gateways: testing.GatewayStarter, lines: Lines
) -> None:
    backend = web.Application()
    backend.router.add_route("*", "/{tail:.*}", _breaks_mid_response)
    gateway = await gateways.start(wait_ready=True, backendUrl=await serve_app(backend), accessLog="on")
    path = b"/v1/x%0d2026-12-01%20ERROR%20forged%1b]0;title%07%7f%c2%85%e2%80%a8%e2%80%ae%0b%00"
    await exchange(gateway.url, request(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close"))
    await gateway.wait_idle()
    mine = [line for line in lines.lines if "forged" in line]
    assert any(line.startswith("WARNING noctaya.gateway") for line in mine), lines.lines
    for line in lines.lines:
        assert not any(char in line for char in CONTROLS), repr(line)
    warning = next(line for line in mine if line.startswith("WARNING"))
    assert "\\r2026-12-01 ERROR forged\\x1b]0;title\\x07\\x7f\\x85\\u2028\\u202e\\x0b\\x00" in warning


@pytest.mark.parametrize("code", [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0x202E, 0x2066])
def test_the_one_escaping_function_escapes_every_control(code: int) -> None:
    escaped = redaction.escape(f"a{chr(code)}b")
    assert escaped.startswith("a\\") and escaped.endswith("b") and chr(code) not in escaped
    assert escaped.isprintable()
    kept = redaction.escape("x\ny\rz", keep_newlines=True)
    assert kept == "x\ny\\rz"
    assert redaction.escape("plain text, é, 日本") == "plain text, é, 日本"
