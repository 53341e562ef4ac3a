"""Leader election with a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection does it.

One Lease in the operator namespace names the leader (``holderIdentity``) and when it last renewed.
A candidate takes the Lease when it is free (absent, or released with an empty holder) or when its
record has not changed for ``leaseDurationSeconds`` *as observed by the candidate's own monotonic
clock* — never by comparing wall clocks across machines. Every write is a PUT carrying the
``resourceVersion`` just read, so two candidates racing for the same record cannot both win (the loser
gets ``409 Conflict``). The leader renews every ``retry_period``; when it has not managed to renew for
``renew_deadline`` (or sees another holder) it considers leadership lost at once — before the Lease can
expire for the others, because ``renew_deadline < lease_duration`` (written as whole seconds, rounded
up, so the inequality survives). A graceful exit releases the Lease
(empty holder, 1 s duration) so a standby takes over without waiting for expiry.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from noctaya.operator import apiclient

logger = logging.getLogger(__name__)


class LeadershipLostError(Exception):
    """The Lease could not be renewed in time or was taken by another candidate."""


def micro_time() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclasses.dataclass(frozen=True, kw_only=True)
class LeaseConfig:
    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaseElector:
    """Acquire, hold and release one Lease. ``is_leader`` is the fencing flag writers check."""

    def __init__(
        self, *, client: apiclient.Client, config: LeaseConfig, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._client = client
        self._config = config
        self._clock = clock
        self._observed: tuple[Any, ...] | None = None  # (holder, renewTime, transitions) last seen
        self._observed_at = 0.0
        self._renewed_at: float | None = None
        self.transitions = 0  # times this elector became leader

    @property
    def identity(self) -> str:
        return self._config.identity

    @property
    def is_leader(self) -> bool:
        if self._renewed_at is None:
            return False
        return self._clock() - self._renewed_at < self._config.renew_deadline

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the Lease afterwards."""
        cfg = self._config
        now_wall, now = micro_time(), self._clock()
        try:
            lease = await self._client.get(apiclient.LEASE, namespace=cfg.namespace, name=cfg.name)
        except apiclient.ApiError as e:
            logger.warning("reading Lease %s/%s failed: %s", cfg.namespace, cfg.name, e)
            return False
        if lease is None:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": {
                    "holderIdentity": cfg.identity,
                    "leaseDurationSeconds": math.ceil(cfg.lease_duration),
                    "acquireTime": now_wall,
                    "renewTime": now_wall,
                    "leaseTransitions": 0,
                },
            }
            try:
                await self._client.create(body)
            except apiclient.ApiError as e:
                if e.status == 409:  # AlreadyExists: another candidate created it since our read
                    logger.info("another candidate created Lease %s/%s first", cfg.namespace, cfg.name)
                else:
                    logger.info("creating Lease %s/%s failed: %s", cfg.namespace, cfg.name, e)
                return False
            return self._won(now, fresh=True)

        spec = dict(lease.get("spec") or {})
        holder = spec.get("holderIdentity") or ""
        record = (holder, spec.get("renewTime"), spec.get("leaseTransitions"))
        if record != self._observed:
            self._observed, self._observed_at = record, now
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        if holder and holder != cfg.identity and now - self._observed_at < duration:
            self._renewed_at = None
            return False
        was_ours = holder == cfg.identity
        if not was_ours:
            spec["acquireTime"] = now_wall
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if holder else 0)
        spec.update(
            holderIdentity=cfg.identity,
            renewTime=now_wall,
            leaseDurationSeconds=math.ceil(cfg.lease_duration),
        )
        lease["spec"] = spec
        try:
            updated = await self._client.replace(lease)
        except apiclient.ApiError as e:
            if e.status == 409:  # another candidate wrote it since our read: the race is theirs this time
                logger.info("another candidate updated Lease %s/%s first", cfg.namespace, cfg.name)
            else:
                logger.info("updating Lease %s/%s failed: %s", cfg.namespace, cfg.name, e)
            return False
        uspec = updated.get("spec") or {}
        self._observed = (uspec.get("holderIdentity"), uspec.get("renewTime"), uspec.get("leaseTransitions"))
        self._observed_at = now
        return self._won(now, fresh=not was_ours)

    def _won(self, now: float, *, fresh: bool) -> bool:
        if fresh or self._renewed_at is None:
            self.transitions += 1
            logger.info(
                "became the leader as %s (Lease %s/%s)",
                self._config.identity,
                self._config.namespace,
                self._config.name,
            )
        self._renewed_at = now
        return True

    async def acquire(self) -> None:
        """Block until this candidate holds the Lease."""
        while True:
            if await self.try_acquire_or_renew():
                return
            await asyncio.sleep(self._config.retry_period)

    async def hold(self) -> None:
        """Renew until leadership is lost; then raise :class:`LeadershipLostError` (never returns)."""
        cfg = self._config
        while True:
            await asyncio.sleep(cfg.retry_period)
            try:
                async with asyncio.timeout(
                    max(0.1, cfg.renew_deadline - (self._clock() - (self._renewed_at or 0)))
                ):
                    while not await self.try_acquire_or_renew():
                        if self._observed is not None and self._observed[0] not in ("", cfg.identity):
                            break
                        await asyncio.sleep(min(cfg.retry_period, 0.5))
            except TimeoutError:
                pass
            if not self.is_leader:
                self._renewed_at = None
                logger.warning("lost leadership of Lease %s/%s", cfg.namespace, cfg.name)
                raise LeadershipLostError(f"Lease {cfg.namespace}/{cfg.name} could not be renewed")

    async def release(self) -> None:
        """Give the Lease up (graceful exit) so a standby takes over at once."""
        if self._renewed_at is None:
            return
        self._renewed_at = None
        cfg = self._config
        with contextlib.suppress(apiclient.ApiError):
            lease = await self._client.get(apiclient.LEASE, namespace=cfg.namespace, name=cfg.name)
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != cfg.identity:
                return
            lease["spec"].update(holderIdentity="", leaseDurationSeconds=1, renewTime=micro_time())
            await self._client.replace(lease)
            logger.info("released Lease %s/%s", cfg.namespace, cfg.name)
