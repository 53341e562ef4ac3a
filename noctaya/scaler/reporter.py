"""The gateway side of aggregate mode: publish this gateway's complete demand to the scaler.

One ``Reporter`` per gateway process. It names itself with a process-unique member id and numbers
every report with a fresh, increasing sequence (a retry is a new report, never a replay). It sends at
once when demand turns active or idle (the transition KEDA must see within milliseconds), other
changes of the level at most every ``min_gap`` (250 ms, so ``GetMetrics`` stays current without a
report per request), and otherwise every ``interval`` (2 s) as a heartbeat. A failed report is
retried with a backoff that doubles from 100 ms and is capped at ``interval``, so the member never
outlives the scaler's 10 s expiry while the scaler is reachable and never hammers it while it is
not. On shutdown the member withdraws. Outcomes, failures in a row and the retry bound are in the
gateway's metrics (``ReporterMetrics``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import uuid
from typing import Any

import aiohttp

from noctaya.contract import demand as demand_mod
from noctaya.contract import fields
from noctaya.scaler import metrics as metrics_mod
from noctaya.scaler import tokens as tokens_mod

logger = logging.getLogger(__name__)

FIRST_BACKOFF = 0.1
#: the largest answer of the scaler read (it carries the engine signal when the scaler reads it)
MAX_ANSWER_BYTES = 16 * 1024
MIN_GAP = 0.25  # level changes while active are reported at most this often
WITHDRAW_TIMEOUT = 1.0


def new_member_id() -> str:
    """``<host>-<pid>-<random>``: readable in metrics, unique per process even across restarts."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:60].strip(".-") or "gateway"
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:16]}"


class Reporter:
    def __init__(
        self,
        *,
        source: demand_mod.DemandSource,
        url: str,
        token_file: str,
        service: fields.ServiceRef,
        interval: float = 2.0,
        min_gap: float = MIN_GAP,
        member: str | None = None,  # None: a fresh process-unique id
        metrics: metrics_mod.ReporterMetrics | None = None,  # None when nobody scrapes (tests, bench)
    ) -> None:
        if not interval > 0:
            raise ValueError("interval must be > 0")
        self.source = source
        self.endpoint = url.rstrip("/") + "/v1/reports"
        self.tokens = tokens_mod.TokenFile(path=token_file)
        self.service = service
        self.interval = interval
        self.min_gap = min_gap
        self.member = member or new_member_id()
        self.sequence = 0
        self.sent = 0
        self.failures = 0  # consecutive
        #: the engine signal the aggregate scaler last answered with (None: it does not read one)
        self.engine: dict[str, object] | None = None
        self._changed = asyncio.Event()  # demand changed since the last report
        self._transition = asyncio.Event()  # ... and crossed between idle and active
        self._active = source.demand() > 0
        self.metrics = metrics
        if metrics is not None:
            metrics.max_backoff.set(interval)
            metrics.failures.set_function(lambda: self.failures)

    def _on_demand(self, value: int) -> None:
        self._changed.set()
        active = value > 0
        if active != self._active:
            self._active = active
            self._transition.set()

    async def run(self, *, session: aiohttp.ClientSession) -> None:
        """Report until cancelled."""
        unsubscribe = self.source.subscribe(self._on_demand)
        loop = asyncio.get_running_loop()
        try:
            while True:
                self._changed.clear()
                self._transition.clear()
                if await self._send(session, {"demand": self.source.demand()}, limit=min(2.0, self.interval)):
                    await self._pause(sent_at=loop.time())
                else:
                    # the exponent is capped: 2 ** n past ~1000 failures no longer fits a float
                    doubled = FIRST_BACKOFF * 2.0 ** min(self.failures - 1, 32)
                    await asyncio.sleep(min(self.interval, doubled))
        finally:
            unsubscribe()

    async def _pause(self, *, sent_at: float) -> None:
        """Until the next report is due: a transition at once, another change after ``min_gap``,
        otherwise the heartbeat ``interval``."""
        loop = asyncio.get_running_loop()
        while not self._transition.is_set():
            changed = self._changed.is_set()
            due = sent_at + (min(self.min_gap, self.interval) if changed else self.interval)
            remaining = due - loop.time()
            if remaining <= 0:
                return
            try:
                async with asyncio.timeout(remaining):
                    await (self._transition if changed else self._changed).wait()
            except TimeoutError:
                return

    async def withdraw(self, *, session: aiohttp.ClientSession) -> bool:
        """Tell the scaler this member is gone (best effort, bounded by a short timeout)."""
        return await self._send(session, {"withdraw": True}, limit=WITHDRAW_TIMEOUT)

    async def _send(self, session: aiohttp.ClientSession, fields: dict[str, Any], *, limit: float) -> bool:
        self.sequence += 1
        body = {
            "service": {"name": self.service.name, "namespace": self.service.namespace},
            "member": self.member,
            "sequence": self.sequence,
            **fields,
        }
        try:
            token = self.tokens.token().decode("ascii")
            async with session.post(
                self.endpoint,
                json=body,
                headers={"Authorization": f"Bearer {token}"},
                timeout=aiohttp.ClientTimeout(total=limit),
            ) as response:
                if response.status != 200:
                    detail = (await response.content.read(512)).decode("utf-8", "replace")
                    raise RuntimeError(f"HTTP {response.status}: {detail}")
                answer = b""
                while len(answer) <= MAX_ANSWER_BYTES and (
                    chunk := await response.content.read(MAX_ANSWER_BYTES + 1 - len(answer))
                ):
                    answer += chunk
                self.engine = _engine_of(answer) if len(answer) <= MAX_ANSWER_BYTES else None
        except (aiohttp.ClientError, TimeoutError, RuntimeError, tokens_mod.TokenError) as exc:
            if self.failures == 0:
                logger.warning(
                    "demand report to %s failed, retrying with backoff: %s",
                    self.endpoint,
                    str(exc) or type(exc).__name__,
                )
            self.failures += 1
            if self.metrics is not None:
                self.metrics.reports.labels(result="failed").inc()
            return False
        if self.failures:
            logger.info("demand reports to %s recovered after %d failures", self.endpoint, self.failures)
        self.failures = 0
        self.sent += 1
        if self.metrics is not None:
            self.metrics.reports.labels(result="accepted").inc()
        return True


def _engine_of(answer: bytes) -> dict[str, object] | None:
    """The ``engine`` object of an accepted report's answer (anything else: none)."""
    try:
        body = json.loads(answer)
    except (ValueError, RecursionError):
        return None
    engine = body.get("engine") if isinstance(body, dict) else None
    return engine if isinstance(engine, dict) else None
