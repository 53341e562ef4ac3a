"""WebSocket upgrades (``/v1/realtime`` and any other path): relayed both ways, message by message.

A request asking to upgrade (``GET`` with ``Connection: upgrade`` and ``Upgrade: websocket``) goes
through the same steps as any proxied request — auth, admission (a cold one is held like a
non-streaming request, then upgraded) — and then holds its in-flight slot for as long as the socket is
open. :class:`Sockets` connects to the backend first and only then answers the client's handshake,
so a backend that refuses the upgrade is answered with its own status (OpenAI-shaped), and a connect
that is refused (nothing reached a backend) is held again like any other request.

Bounds: at most ``websocket_max_open`` sockets are open (or opening) at once, and at most
``max_open_per_peer`` of them from one peer (a client host, ``noctaya.serving.peers``: behind trusted
proxies the client their ``X-Forwarded-For`` names), so one client cannot hold them all; one more is
a 429 ``websockets_full`` before anything reaches the backend; each message either way is at most
``websocket_max_message_bytes`` (a larger one, either way, closes the socket with 1009); a socket
with no message either way for ``websocket_idle_timeout`` is closed with 1001; every open socket is
closed with 1001 ("going away") when the gateway starts draining, so a drain is not held up by
sockets that would stay open forever. Ping and pong are answered on each leg (``autoping``); text,
binary and close frames are relayed as they come, close codes included; a leg that drops without a
close frame closes the other with 1011 (1005, 1006 and 1015 only describe a close, a frame never
carries them). A request that asks to upgrade with a handshake that cannot be answered is a 400
before anything is queued.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
from collections.abc import Callable

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from noctaya.gateway import errors, proxy
from noctaya.serving import peers as peers_

logger = logging.getLogger(__name__)

GOING_AWAY = aiohttp.WSCloseCode.GOING_AWAY
_HANDSHAKE = frozenset({"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"})
_PROTOCOL = "Sec-WebSocket-Protocol"


VERSIONS = frozenset({"13", "8", "7"})
"""The ``Sec-WebSocket-Version`` values aiohttp's server takes (13 is RFC 6455's)."""


def wants_upgrade(request: web.BaseRequest) -> bool:
    """A WebSocket opening handshake (RFC 6455 §4.1). One that asks to upgrade but could not be
    answered (no or a malformed ``Sec-WebSocket-Key``, an unknown version) is refused here, a 400
    ``invalid_websocket_handshake``, before anything is queued or opened upstream."""
    if request.method != "GET":
        return False
    if request.headers.get("Upgrade", "").strip().lower() != "websocket":
        return False
    tokens = {t.strip().lower() for v in request.headers.getall("Connection", ()) for t in v.split(",")}
    if "upgrade" not in tokens:
        return False
    _check_handshake(request)
    return True


def _check_handshake(request: web.BaseRequest) -> None:
    """What aiohttp's ``WebSocketResponse.prepare`` checks, with the gateway's own answer (aiohttp's
    is a text/plain 400 that quotes the client's bytes)."""
    headers = request.headers
    version = headers.get("Sec-WebSocket-Version", "").strip()
    if version not in VERSIONS:
        raise errors.invalid_websocket(
            "Sec-WebSocket-Version must be 13", headers={"Sec-WebSocket-Version": "13"}
        )
    key = headers.get("Sec-WebSocket-Key", "").strip()
    try:
        valid = len(base64.b64decode(key, validate=True)) == 16
    except (ValueError, binascii.Error):
        valid = False
    if not valid:
        raise errors.invalid_websocket("Sec-WebSocket-Key must be 16 bytes in base64")


class Sockets:
    """The open relayed sockets: relays one upgrade, closes them all on drain."""

    def __init__(
        self,
        *,
        max_open: int,
        max_open_per_peer: int,
        peers: peers_.Peers,
        max_message_bytes: int,
        idle_timeout: float,
        forward_authorization: bool,
        retry_after: Callable[[], float],
    ) -> None:
        self.max_open = max_open
        self.retry_after = retry_after  # the measured Retry-After now (``history``)
        self._taken = 0  # open or opening: what ``max_open`` bounds
        self.max_open_per_peer = max_open_per_peer
        self.peers = peers
        self._by_peer: dict[str, int] = {}  # open or opening per peer; a peer with none is dropped
        self.max_message_bytes = max_message_bytes
        self.idle_timeout = idle_timeout
        self.forward_authorization = forward_authorization
        self._open: set[asyncio.Task[None]] = set()
        self._closing = False

    @property
    def open(self) -> int:
        return len(self._open)

    def close_all(self) -> None:
        """Drain: end every relay (each closes both legs with 1001); refuse none already running."""
        self._closing = True
        for task in list(self._open):
            task.cancel()

    def _headers(self, request: web.Request) -> CIMultiDict[str]:
        headers = proxy.request_headers(request, forward_authorization=self.forward_authorization)
        for name in list(headers):
            if name.lower() in _HANDSHAKE or name.lower() == _PROTOCOL.lower():
                headers.popall(name, None)
        return headers

    async def relay(
        self,
        request: web.Request,
        *,
        session: aiohttp.ClientSession,
        base_url: str,
        opened: Callable[[web.WebSocketResponse], None] = lambda _socket: None,
    ) -> web.WebSocketResponse:
        """Connect to the backend, answer the client's handshake, relay until either side closes;
        ``opened`` is told the client's socket once its handshake is answered (a relay that ends with
        the client gone ends by cancellation, never returning it)."""
        if self._taken >= self.max_open:
            raise errors.websockets_full(self.max_open, self.retry_after())
        peer = proxy.peer_of(request, peers=self.peers)
        held = self._by_peer.get(peer, 0)
        if held >= self.max_open_per_peer:
            raise errors.websockets_peer_full(self.max_open_per_peer, self.retry_after())
        self._taken += 1
        self._by_peer[peer] = held + 1
        try:
            return await self._relay(request, session=session, base_url=base_url, opened=opened)
        finally:
            self._taken -= 1
            left = self._by_peer[peer] - 1
            if left:
                self._by_peer[peer] = left
            else:
                del self._by_peer[peer]

    async def _relay(
        self,
        request: web.Request,
        *,
        session: aiohttp.ClientSession,
        base_url: str,
        opened: Callable[[web.WebSocketResponse], None],
    ) -> web.WebSocketResponse:
        protocols = tuple(
            p.strip() for v in request.headers.getall(_PROTOCOL, ()) for p in v.split(",") if p.strip()
        )
        try:
            upstream = await self._connect(request, session=session, base_url=base_url, protocols=protocols)
        except aiohttp.WSServerHandshakeError as exc:
            raise errors.websocket_refused(exc.status) from None
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise proxy.ConnectFailed(f"{type(exc).__name__}: {exc}") from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise errors.bad_gateway(
                f"the backend failed the WebSocket upgrade ({type(exc).__name__})"
            ) from None
        client = web.WebSocketResponse(
            protocols=(upstream.protocol,) if upstream.protocol else (),
            max_msg_size=self.max_message_bytes,
            autoping=True,
            autoclose=False,
        )
        try:
            await client.prepare(request)
        except BaseException:
            await upstream.close()
            raise
        opened(client)
        task = asyncio.current_task()
        assert task is not None
        self._open.add(task)
        try:
            if self._closing:
                raise asyncio.CancelledError
            await self._pump_both(client, upstream)
        except asyncio.CancelledError:
            if not self._closing:
                raise  # the client went away: handler cancellation
            await _close(client, code=GOING_AWAY, message=b"the gateway is shutting down")
        finally:
            self._open.discard(task)
            await _close(upstream, code=GOING_AWAY, message=b"")
            await _close(client, code=GOING_AWAY, message=b"")
        return client

    async def _connect(
        self,
        request: web.Request,
        *,
        session: aiohttp.ClientSession,
        base_url: str,
        protocols: tuple[str, ...],
    ) -> aiohttp.ClientWebSocketResponse:
        """The backend's socket; sent once more only when the first write found a pooled connection
        closing (nothing left: ``proxy.not_sent``), as any proxied request."""
        url = base_url + request.rel_url.raw_path_qs
        headers = self._headers(request)

        async def connect() -> aiohttp.ClientWebSocketResponse:
            return await session.ws_connect(
                url,
                headers=headers,
                protocols=protocols,
                max_msg_size=self.max_message_bytes,
                autoping=True,
                autoclose=False,
            )

        try:
            return await connect()
        except proxy.Unanswered as exc:
            if not proxy.not_sent(exc):
                raise
        return await connect()

    async def _pump_both(
        self, client: web.WebSocketResponse, upstream: aiohttp.ClientWebSocketResponse
    ) -> None:
        loop = asyncio.get_running_loop()
        last = [loop.time()]
        pumps = (
            asyncio.ensure_future(_pump(client, upstream, last)),
            asyncio.ensure_future(_pump(upstream, client, last)),
        )
        try:
            while True:
                remaining = last[0] + self.idle_timeout - loop.time()
                if remaining <= 0:
                    await _close(client, code=GOING_AWAY, message=b"idle timeout")
                    await _close(upstream, code=GOING_AWAY, message=b"idle timeout")
                    return
                done, _ = await asyncio.wait(pumps, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                if done:
                    return
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)


_Socket = web.WebSocketResponse | aiohttp.ClientWebSocketResponse


async def _pump(source: _Socket, sink: _Socket, last: list[float]) -> None:
    """Relay messages from ``source`` to ``sink`` until ``source`` closes; its close (code and reason)
    is passed on, a broken bound or protocol ends the socket on both legs."""
    loop = asyncio.get_running_loop()
    while True:
        message = await source.receive()
        last[0] = loop.time()
        kind = message.type
        try:
            if kind is aiohttp.WSMsgType.TEXT:
                await sink.send_str(message.data)
            elif kind is aiohttp.WSMsgType.BINARY:
                await sink.send_bytes(message.data)
            elif kind is aiohttp.WSMsgType.CLOSE:
                code = message.data if isinstance(message.data, int) else aiohttp.WSCloseCode.OK
                await _close(source, code=code, message=b"")
                await _close(sink, code=code, message=_reason(message.extra))
                return
            elif kind is aiohttp.WSMsgType.ERROR:
                # a broken bound or frame: aiohttp returns its WebSocketError as the message (and has
                # closed ``source`` with that error's code); any other failure as ``exception()``
                exc = message.data if isinstance(message.data, BaseException) else source.exception()
                code = (
                    aiohttp.WSCloseCode.MESSAGE_TOO_BIG
                    if isinstance(exc, aiohttp.WebSocketError)
                    and exc.code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
                    else aiohttp.WSCloseCode.INTERNAL_ERROR
                )
                logger.info("WebSocket relay ended: %s", type(exc).__name__)
                await _close(sink, code=code, message=b"message too big" if code == 1009 else b"relay error")
                await _close(source, code=code, message=b"")
                return
            elif kind in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                # the leg went away without a close frame (its connection dropped: aiohttp says 1006)
                await _close(sink, code=source.close_code or aiohttp.WSCloseCode.OK, message=b"")
                return
        except (ConnectionError, RuntimeError):  # the other leg went away
            await _close(source, code=GOING_AWAY, message=b"")
            return


_NOT_ON_THE_WIRE = {
    # RFC 6455 §7.4.1: these only describe a close, a close frame never carries them
    aiohttp.WSCloseCode.ABNORMAL_CLOSURE: aiohttp.WSCloseCode.INTERNAL_ERROR,  # 1006: the leg died
    1005: aiohttp.WSCloseCode.OK,  # no status in the close frame
    1015: aiohttp.WSCloseCode.INTERNAL_ERROR,  # TLS handshake failure
}


def wire_code(code: int) -> int:
    """``code`` as a close frame may carry it: 1005, 1006 and 1015 never are (1006, a leg that
    dropped, becomes 1011), nor anything outside 1000-4999."""
    code = _NOT_ON_THE_WIRE.get(code, code)
    return code if 1000 <= code <= 4999 else aiohttp.WSCloseCode.INTERNAL_ERROR


def _reason(extra: str | None) -> bytes:
    """A close reason passed on: at most 123 bytes (a control frame's bound), whole characters."""
    return (extra or "").encode()[:123].decode("utf-8", "ignore").encode()


async def _close(socket: _Socket, *, code: int, message: bytes) -> None:
    if socket.closed:
        return
    with contextlib.suppress(ConnectionError, RuntimeError, asyncio.TimeoutError, aiohttp.ClientError):
        async with asyncio.timeout(2.0):
            await socket.close(code=wire_code(code), message=message)
