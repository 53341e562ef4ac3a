"""Cold answers: what the gateway answers itself on a cold route while the backend is cold.

A cold route (``cold_routes``: ``GET /v1/models`` answering the served model, ``/health``-style
routes answering a status) is answered here while the backend is cold: it takes no queue slot and
opens no lease. Warm, it is proxied like any other path (``handler``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from aiohttp import web

from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import errors

METHODS = frozenset({"GET", "HEAD"})
"""The methods a cold route answers (any other method of its path is proxied)."""
ColdAnswer = Callable[[web.Request], web.Response]

_HEADERS = {"Cache-Control": "no-store"}


def cold_answers(config: gateway_contract.GatewaySettings) -> dict[str, ColdAnswer]:
    """The cold routes by path: what the gateway answers itself while the backend is cold.

    A ``models`` route needs ``served_model``; without it the route is proxied (and wakes the
    backend) like any other."""
    created = int(time.time())
    answers: dict[str, ColdAnswer] = {}
    for route in config.cold_routes:
        if route.answer == "models":
            if config.served_model is None:
                continue
            listing = json.dumps(
                {
                    "object": "list",
                    "data": [
                        {
                            "id": config.served_model,
                            "object": "model",
                            "created": created,
                            "owned_by": "noctaya",
                        }
                    ],
                }
            ).encode()

            def models(_request: web.Request, body: bytes = listing) -> web.Response:
                return web.Response(body=body, content_type=errors.JSON_TYPE, headers=_HEADERS)

            answers[route.path] = models
        else:

            def status(_request: web.Request, code: int = route.status) -> web.Response:
                return web.Response(status=code, headers=_HEADERS)

            answers[route.path] = status
    return answers
