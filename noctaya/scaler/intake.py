"""The aggregate scaler's report endpoint (HTTP ``:9091``): authenticated demand reports in.

``POST /v1/reports`` takes one JSON report (schema: ``proto/demand-report.schema.json``)::

    {"service": {"name": "qwen", "namespace": "ai"}, "member": "<process-unique id>",
     "sequence": 42, "demand": 3}                    # or "withdraw": true instead of demand

Checks, cheapest first, each refusal counted by reason: concurrency bound (503 ``busy``), Bearer
token in constant time against the Secret file (401 ``unauthorized``) before any body is read,
body size (413 ``too_large``), JSON shape and ranges (400 ``bad_request``), service (400
``wrong_service``), then membership rules (409 ``stale_sequence``, 422 ``demand_out_of_range``,
429 ``too_many_members``). Refusals are OpenAI-shaped JSON errors and leave the sum untouched.
``GET /healthz`` and ``GET /metrics`` are open for probes and scraping.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import prometheus_client
from aiohttp import web

from noctaya.contract import fields
from noctaya.scaler import membership as membership_mod
from noctaya.scaler import metrics as metrics_mod
from noctaya.scaler import tokens as tokens_mod
from noctaya.serving import bearer, connections

logger = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

MEMBER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_SEQUENCE = 2**63 - 1
BODY_TIMEOUT = 5.0
REPORT_KEYS = {"service", "member", "sequence", "demand", "withdraw"}

_STATUS = {
    membership_mod.Outcome.STALE_SEQUENCE: 409,
    membership_mod.Outcome.DEMAND_OUT_OF_RANGE: 422,
    membership_mod.Outcome.TOO_MANY_MEMBERS: 429,
}


class Refused(Exception):
    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class Report:
    __slots__ = ("demand", "member", "sequence", "withdraw")

    def __init__(self, *, member: str, sequence: int, demand: int, withdraw: bool) -> None:
        self.member, self.sequence, self.demand, self.withdraw = member, sequence, demand, withdraw


def parse_report(raw: bytes, *, service: fields.ServiceRef, max_demand: int) -> Report:
    """Validate one report body; :class:`Refused` names the offending field."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Refused(400, "bad_request", f"body is not JSON: {exc}") from None
    except RecursionError:  # a few KiB of brackets reach the decoder's nesting limit
        raise Refused(400, "bad_request", "body is nested too deeply") from None
    if not isinstance(body, dict):
        raise Refused(400, "bad_request", "body must be a JSON object")
    unknown = set(body) - REPORT_KEYS
    if unknown:
        raise Refused(400, "bad_request", f"unknown field {sorted(unknown)[0][:64]!r}")
    ref = body.get("service")
    if (
        not isinstance(ref, dict)
        or set(ref) != {"name", "namespace"}
        or not all(isinstance(v, str) for v in ref.values())
    ):
        raise Refused(400, "bad_request", 'service must be {"name": str, "namespace": str}')
    if (ref["name"], ref["namespace"]) != (service.name, service.namespace):
        raise Refused(400, "wrong_service", f"this scaler aggregates {service}")
    member = body.get("member")
    if not isinstance(member, str) or not MEMBER_PATTERN.fullmatch(member):
        raise Refused(400, "bad_request", "member must be 1-128 characters of [A-Za-z0-9._:-]")
    sequence = body.get("sequence")
    if type(sequence) is not int or not 1 <= sequence <= MAX_SEQUENCE:
        raise Refused(400, "bad_request", "sequence must be an integer from 1 to 2^63-1")
    withdraw = body.get("withdraw", False)
    if type(withdraw) is not bool:
        raise Refused(400, "bad_request", "withdraw must be a boolean")
    demand = body.get("demand", 0 if withdraw else None)
    if type(demand) is not int:
        raise Refused(400, "bad_request", "demand must be an integer")
    if withdraw and demand != 0:
        raise Refused(400, "bad_request", "a withdraw carries no demand")
    if not 0 <= demand <= max_demand:
        raise Refused(422, "demand_out_of_range", f"demand must be from 0 to {max_demand}")
    return Report(member=member, sequence=sequence, demand=demand, withdraw=withdraw)


class Intake:
    """Turns HTTP reports into membership changes, within its bounds."""

    def __init__(
        self,
        *,
        membership: membership_mod.Membership,
        tokens: tokens_mod.TokenFile,
        service: fields.ServiceRef,
        max_concurrent: int,
        max_body_bytes: int,
        metrics: metrics_mod.ScalerMetrics,
        registry: prometheus_client.CollectorRegistry,
    ) -> None:
        self.membership = membership
        self.tokens = tokens
        self.service = service
        self.max_concurrent = max_concurrent
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics
        self.registry = registry
        self._in_flight = 0
        #: the engine signal for ``/healthz`` when this scaler reads the engines
        self.engine_document: Callable[[], dict[str, Any]] | None = None
        metrics.max_reports_in_flight.set(max_concurrent)
        metrics.max_members.set(membership.max_members)
        metrics.reports_in_flight.set_function(lambda: self._in_flight)  # read at scrape time
        metrics.members.set_function(lambda: len(membership))
        removed = {"expired": metrics.expired_members, "withdrawn": metrics.withdrawn_members}
        membership.on_removed = lambda _member, cause: removed[cause].inc()

    async def handle_report(self, request: web.Request) -> web.StreamResponse:
        if self._in_flight >= self.max_concurrent:
            return self._refuse(Refused(503, "busy", f"more than {self.max_concurrent} reports at once"))
        self._in_flight += 1
        try:
            return await self._process(request)
        except Refused as refusal:
            return self._refuse(refusal)
        except ConnectionError:  # the reporter left in the middle of its body: nothing to answer
            logger.debug("a reporter disconnected before its report arrived whole")
            return web.Response(status=499)
        finally:
            self._in_flight -= 1

    async def _process(self, request: web.Request) -> web.Response:
        token = bearer.token(request.headers.get("Authorization"))
        if token is None or not self.tokens.matches(token):
            raise Refused(401, "unauthorized", "missing or wrong Bearer token")
        if request.content_length is not None and request.content_length > self.max_body_bytes:
            raise Refused(413, "too_large", f"report larger than {self.max_body_bytes} bytes")
        try:
            async with asyncio.timeout(BODY_TIMEOUT):
                raw = await _read_body(request, limit=self.max_body_bytes + 1)
        except TimeoutError:
            raise Refused(400, "bad_request", "report body not received in time") from None
        if len(raw) > self.max_body_bytes:
            raise Refused(413, "too_large", f"report larger than {self.max_body_bytes} bytes")
        report = parse_report(raw, service=self.service, max_demand=self.membership.max_member_demand)
        if report.withdraw:
            outcome = self.membership.withdraw(member=report.member, sequence=report.sequence)
        else:
            outcome = self.membership.report(
                member=report.member, sequence=report.sequence, demand=report.demand
            )
        if outcome is not membership_mod.Outcome.ACCEPTED:
            raise Refused(_STATUS[outcome], outcome.value, _describe(outcome, self.membership))
        self.metrics.reports.labels(outcome="accepted", reason="").inc()
        answer: dict[str, Any] = {
            "accepted": True,
            "members": len(self.membership),
            "demand": self.membership.demand(),
        }
        if self.engine_document is not None:  # the gateways show it on their /noctaya/queue
            answer["engine"] = self.engine_document()
        return web.json_response(answer)

    def _refuse(self, refusal: Refused) -> web.Response:
        self.metrics.reports.labels(outcome="refused", reason=refusal.reason).inc()
        headers = {"Retry-After": "1"} if refusal.status in (429, 503) else {}
        body: dict[str, Any] = {
            "error": {"message": str(refusal), "type": "report_refused", "code": refusal.reason}
        }
        return web.json_response(body, status=refusal.status, headers=headers)

    async def handle_health(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = {
            "status": "ok",
            "members": len(self.membership),
            "demand": self.membership.demand(),
        }
        if self.engine_document is not None:  # this scaler reads the engines
            body["engine"] = self.engine_document()
        return web.json_response(body)

    async def handle_metrics(self, request: web.Request) -> web.Response:
        return web.Response(
            body=prometheus_client.generate_latest(self.registry),
            headers={"Content-Type": prometheus_client.CONTENT_TYPE_LATEST},
        )


async def _read_body(request: web.Request, *, limit: int) -> bytes:
    """The body up to ``limit`` bytes (a body may arrive in several chunks)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await request.content.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _describe(outcome: membership_mod.Outcome, membership: membership_mod.Membership) -> str:
    if outcome is membership_mod.Outcome.STALE_SEQUENCE:
        return "sequence is not newer than this member's last report"
    if outcome is membership_mod.Outcome.TOO_MANY_MEMBERS:
        return f"already {membership.max_members} members"
    return f"demand must be from 0 to {membership.max_member_demand}"


async def _expire_forever(membership: membership_mod.Membership) -> None:
    while True:
        wait = membership.next_expiry()
        await asyncio.sleep(min(1.0, membership.ttl) if wait is None else min(wait + 0.01, 1.0))
        membership.expire()


def error_body(status: int, code: str, message: str) -> bytes:
    """The intake's error shape, also for what the HTTP layer refuses (``connections.ErrorBody``)."""
    return json.dumps({"error": {"message": message, "type": "report_refused", "code": code}}).encode()


@web.middleware
async def typed_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """aiohttp's own refusals (404, 405, 417...) in the intake's JSON shape instead of text/plain."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status, "bad_request")
        return web.Response(
            status=exc.status,
            body=error_body(exc.status, code, f"{exc.reason} ({request.method} is not served here)"),
            content_type="application/json",
            headers={"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None,
        )


def make_app(intake: Intake) -> web.Application:
    """The report app; its cleanup context runs the member-expiry loop."""
    app = web.Application(client_max_size=intake.max_body_bytes, middlewares=[typed_errors])
    expect = connections.expect_handler(
        lambda _request: web.Response(
            status=417,
            body=error_body(417, "expectation_failed", "the only Expect this server knows is 100-continue"),
            content_type="application/json",
        )
    )
    app.router.add_post("/v1/reports", intake.handle_report, expect_handler=expect)
    app.router.add_get("/healthz", intake.handle_health, expect_handler=expect)
    app.router.add_get("/metrics", intake.handle_metrics, expect_handler=expect)

    async def expiry(_app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(_expire_forever(intake.membership))
        yield
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    app.cleanup_ctx.append(expiry)
    return app
