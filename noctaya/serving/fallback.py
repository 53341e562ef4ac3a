"""The route of last resort: every request no other route matched goes to one handler of ours.

aiohttp answers a request its router cannot place with its own text/plain 404 or 405, and some
requests no path pattern can place: a decoded path holding a line feed (``/v1/x%0ay``: a route
pattern's ``.`` does not match it) or the asterisk form of a request target (``OPTIONS *``).
:class:`Fallback` is a resource that matches every request, whatever its method and path;
registered last (:func:`install`), it is tried after every other route, so what reaches it is what
nothing else took, and the server's own handler answers it. (``CONNECT``, whose authority-form
target has no path for the router to walk, is refused before routing, by ``connections``.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web, web_urldispatcher
from yarl import URL

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Fallback(web_urldispatcher.AbstractResource):
    """A resource matching every request (any method, any target), answered by ``handler``."""

    def __init__(self, handler: Handler) -> None:
        super().__init__(name=None)
        self._route = web_urldispatcher.ResourceRoute(hdrs.METH_ANY, handler, self)

    @property
    def canonical(self) -> str:
        return "/"  # indexed where every path's walk through the router ends

    def url_for(self, **kwargs: str) -> URL:
        raise RuntimeError("the fallback resource has no URL")

    def add_prefix(self, prefix: str) -> None:
        raise RuntimeError("the fallback resource takes no prefix")

    def get_info(self) -> web_urldispatcher._InfoDict:
        return {}

    def raw_match(self, path: str) -> bool:
        return False  # never reused by add_resource for another route

    async def resolve(self, request: web.Request) -> tuple[web_urldispatcher.UrlMappingMatchInfo, set[str]]:
        return web_urldispatcher.UrlMappingMatchInfo({}, self._route), {hdrs.METH_ANY}

    def __len__(self) -> int:
        return 1

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([self._route])


def install(app: web.Application, *, handler: Handler) -> None:
    """Register a :class:`Fallback` answered by ``handler`` after every route of ``app`` so far."""
    app.router.register_resource(Fallback(handler))
