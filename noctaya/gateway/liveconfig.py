"""The live fields of the gateway's config: applied at start, and again whenever the file changes.

The live fields are ``noctaya.contract.gateway.LIVE_FIELDS`` (only ``warmUntil``). Every other field
is read once, at start; the Pods' config hash leaves the live fields out, so a change of them alone
rolls no gateway, and this poll is how it reaches the running ones.

Kubernetes updates a mounted ConfigMap in place: the kubelet writes the new files into a new
directory and swaps the ``..data`` symlink to it (atomic), within its sync period (typically up to
about a minute after the ConfigMap changed). So every ``configReloadInterval`` the file is stat'ed
(through the symlinks); when what it resolves to changed, it is read with the bounded reader
(``noctaya.contract.documents``: too big or too deep is refused), built with the same model (and the
same command-line flags laid over it) as at start, and then:

- a file that cannot be read or fails validation is logged once (each problem naming its field) and
  ignored: the running config stays (outcome ``invalid``);
- a change of fields that are not live is logged once (naming them) and not applied: it comes with
  the rollout that their hash starts;
- a changed ``warmUntil`` is applied (outcome ``applied``): a later time extends the hold exactly as
  ``POST /noctaya/warm`` does (``Activation.warm``, at most ``maxWarmDuration`` from now), an earlier
  one moves the config's hold to it, and a past or removed one ends the config's hold. The config's
  hold is tracked apart from the one ``POST /noctaya/warm`` asked for (``WarmSource``), so it never
  cuts that one short;
- otherwise nothing live changed (outcome ``unchanged_live``).

``noctaya_gateway_config_reloads_total{outcome}`` counts each change of the file by outcome. File
access runs in the loop's default executor, one look at a time, each waited for at most
``read_timeout`` (``noctaya.contract.files.Reader``), and only a regular file is read (opened
non-blocking: a FIFO or a device at the path is ``invalid``, never waited on), so neither a slow
volume nor an odd file blocks the event loop or the poll. The first
look, as the poll starts, compares the file with the config the gateway started with, so a change
made while the gateway was starting is not missed (and the file as read at start counts nothing).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noctaya.contract import documents, files
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import activation, metrics, readiness

logger = logging.getLogger(__name__)

Stamp = files.Identity | str
"""What the file resolves to (``files.identity``) or why it cannot be stat'ed."""
Loaded = tuple[Stamp, gateway_contract.GatewayConfig | documents.ConfigError]
"""The file's stamp taken before it was read, and the config built from it or why there is none."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConfigSource:
    """The file the running config was read from, and how a document becomes a config (the same
    command-line flags laid over it as at start)."""

    path: Path
    build: Callable[[dict[str, Any]], gateway_contract.GatewayConfig] = gateway_contract.build_config

    def stamp(self) -> Stamp:
        """The file's stamp now (blocking)."""
        try:
            return files.identity(self.path)
        except files.FileProblem as exc:
            return str(exc)

    def load(self) -> Loaded:
        """The file read and built (blocking), with the stamp taken before it was read."""
        stamp = self.stamp()
        if isinstance(stamp, str):
            return stamp, documents.ConfigError(f"{self.path}: {stamp}")
        try:
            return stamp, self.build(documents.read_document(self.path))
        except documents.ConfigError as exc:
            return stamp, exc


@dataclasses.dataclass(kw_only=True, eq=False)
class LiveConfig:
    """Applies the live fields of ``running`` at start, then those of each changed file."""

    running: gateway_contract.GatewayConfig
    #: the file ``running`` was read from; None: nothing to watch
    source: ConfigSource | None
    activation: activation.Activation
    readiness: readiness.Readiness
    metrics: metrics.Metrics
    #: how long one look at the file (a stat, or a read) is waited for
    read_timeout: float = files.READ_TIMEOUT
    _applied: gateway_contract.GatewayConfig = dataclasses.field(init=False)  # the live fields in effect
    _stamp: Stamp | None = dataclasses.field(default=None, init=False)
    _waiting: dict[str, Any] = dataclasses.field(default_factory=dict, init=False)  # non-live, logged
    _stats: files.Reader[Stamp] | None = dataclasses.field(default=None, init=False)
    _loads: files.Reader[Loaded] | None = dataclasses.field(default=None, init=False)
    _late: bool = dataclasses.field(default=False, init=False)  # a look past its wait, logged

    def __post_init__(self) -> None:
        self._applied = self.running
        if self.source is not None:
            self._stats = files.Reader(self.source.stamp, timeout=self.read_timeout)
            self._loads = files.Reader(self.source.load, timeout=self.read_timeout)

    @property
    def interval(self) -> float:
        return self.running.config_reload_interval

    def start(self) -> None:
        """Apply the live fields the gateway started with."""
        self._warm_until(self.running.warm_until)

    async def run(self) -> None:
        """Poll the file until cancelled (no file: nothing to poll)."""
        if self.source is None:
            return
        while True:
            try:
                await self.check()
            except Exception:  # a bug must not end the poll, nor surface at shutdown
                logger.exception("config file check failed; the running config stays")
            await asyncio.sleep(self.interval)

    async def check(self) -> str | None:
        """Look at the file once; returns the outcome of a change, None when it did not change (or
        could not be looked at within ``read_timeout``: the next poll looks again)."""
        if self._stats is None or self._loads is None:
            return None
        try:
            if await self._stats.read() == self._stamp:
                return None
            stamp, new = await self._loads.read()
        except TimeoutError:
            if not self._late:
                logger.warning(
                    "config file not read within %gs (a slow volume?); the running config stays",
                    self.read_timeout,
                )
                self._late = True
            return None
        self._late = False
        # the stamp from before the read: a change made while reading is seen next time
        first, self._stamp = self._stamp is None, stamp
        if isinstance(new, documents.ConfigError):
            logger.warning("config file changed but is not usable; the running config stays:\n%s", new)
            return self._count("invalid")
        if first and new == self.running:  # the file as it was read at start
            return None
        self._log_waiting(new)
        changed = [
            name
            for name in gateway_contract.LIVE_FIELDS
            if getattr(new, name) != getattr(self._applied, name)
        ]
        if not changed:
            return self._count("unchanged_live")
        self._applied = new
        self._warm_until(new.warm_until)
        return self._count("applied")

    def _count(self, outcome: str) -> str:
        self.metrics.config_reload(outcome)
        return outcome

    def _log_waiting(self, new: gateway_contract.GatewayConfig) -> None:
        """Name the fields that differ from the running config and are not live, once per change."""
        ours, theirs = self.running.rollout_document(), new.rollout_document()
        waiting = {key: value for key, value in theirs.items() if ours.get(key) != value}
        if waiting and waiting != self._waiting:
            logger.warning(
                "config file changed in %s: not live, applied when the gateways roll out (restart)",
                ", ".join(waiting),
            )
        self._waiting = waiting

    def _warm_until(self, value: str | None) -> None:
        """The config's warm hold: until ``value`` (at most ``maxWarmDuration`` from now); none when
        ``value`` is None or past. Holds asked for by ``POST /noctaya/warm`` are left as they are."""
        source = activation.WarmSource.CONFIG
        seconds = None if value is None else gateway_contract.parse_time(value) - time.time()
        if seconds is None or seconds <= 0:
            if value is not None:
                logger.info("warmUntil %s has passed: no warm hold from the config", value)
            elif self.activation.hold(source) is not None:
                logger.info("warmUntil removed: the config's warm hold ends")
            self.activation.release(source)
            return
        longest = self.running.max_warm_duration
        held = min(seconds, longest)
        current = self.activation.hold(source)
        if current is not None and current > asyncio.get_running_loop().time() + held:
            self.activation.release(source)  # moved earlier: the config's hold ends at the new time
        self.activation.warm(seconds=held, backend_ready=self.readiness.ready, source=source)
        self.metrics.warm_requests.inc()
        logger.info("warm hold until %s: %gs (maxWarmDuration %gs)", value, held, longest)
