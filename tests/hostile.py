"""Hostile HTTP/1.x bytes shared by the gateway's and the scaler's socket tests: malformed requests
(each carrying a marker that must never come back) and raw-socket helpers."""

from __future__ import annotations

import asyncio

MARK = b"ZQXMARK"


def request(head: bytes, body: bytes = b"") -> bytes:
    return head + b"\r\n\r\n" + body


MALFORMED: list[tuple[str, bytes]] = [
    ("bad-request-line", request(b"GARBAGE" + MARK)),
    ("http-9.9", request(b"GET /healthz HTTP/9.9\r\nHost: " + MARK)),
    ("bad-version", request(b"GET /healthz HTTP/1.x\r\nHost: " + MARK)),
    ("nul-in-header", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00" + MARK)),
    ("cr-in-header", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r" + MARK)),
    ("huge-url", request(b"GET /" + MARK * 4000 + b" HTTP/1.1\r\nHost: x")),
    (
        "bad-content-length",
        request(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + MARK),
    ),
    (
        "negative-content-length",
        request(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1"),
    ),
    ("float-content-length", request(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3")),
    (
        "duplicate-content-length",
        request(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4", MARK),
    ),
    (
        "content-length-and-chunked",
        request(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked",
            b"3\r\n" + MARK + b"\r\n0\r\n\r\n",
        ),
    ),
    (
        "bad-chunk-size",
        request(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked", b"zz" + MARK + b"\r\n"
        ),
    ),
    (
        "chunk-size-overflow",
        request(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked", b"F" * 40 + b"\r\n"
        ),
    ),
    (
        "unknown-transfer-encoding",
        request(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + MARK, b"abc"),
    ),
    (
        "too-many-headers",
        request(b"GET /healthz HTTP/1.1\r\nHost: x" + b"\r\nX-H: " + MARK * 1 + b"" + b"\r\nX-H: a" * 300),
    ),
    ("header-too-long", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + MARK * 3000)),
    ("header-name-too-long", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX" + MARK * 3000 + b": a")),
    ("unknown-method", request(b"BREW" + MARK + b" /healthz HTTP/1.1\r\nHost: x")),
    ("method-with-bad-char", request(b"GE(T /healthz HTTP/1.1\r\nHost: " + MARK)),
    ("http2-preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + MARK),
    ("space-before-colon", request(b"GET /healthz HTTP/1.1\r\nHost : " + MARK)),
    ("obs-fold", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n " + MARK)),
    ("bad-header-name", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX(A): " + MARK)),
    ("del-in-header-name", request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX\x7fA: " + MARK)),
    ("bad-absolute-target", request(b"GET http://[::1" + MARK + b" HTTP/1.1\r\nHost: x")),
    ("binary-garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + MARK + b"\r\n\r\n"),
    (
        "expect-unknown",
        request(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
            b"Content-Type: application/json\r\nExpect: " + MARK,
            b"{}",
        ),
    ),
]


async def exchange(url: str, data: bytes, *, within: float = 5.0) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(data)
        await writer.drain()
        async with asyncio.timeout(within):
            return await reader.read()  # every error closes the connection
    finally:
        writer.close()


def parse(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body
