"""The served metric: the gateways' count combined with what the engines report.

Without an engine section the metric is the demand as it always was (queued + in flight at the
gateways, against ``target``). With one, each source is a number of replicas wanted:

- the gateways' count: ``demand / target`` (always a term, so it is the floor);
- the engines' waiting queue: ``sum of waiting / queueTarget`` (with ``queueTarget``);
- the KV-cache use: ``sum of use / kvCacheTarget`` (with ``kvCacheTarget``);

and the largest wins. KEDA gets that number times the served target (``kvCacheTarget`` when set,
else ``target``), against that target with metric type ``AverageValue``: the HPA's
``ceil(value / target)`` is then the replicas wanted. Sums run over the Ready replicas only, so a
Pod still starting neither dilutes nor inflates them (an average against ``Value`` would count it).

The engine terms count only from a complete round (every Ready replica read, valid values) no older
than ``engine.stale_after``; otherwise the value is the gateways' count alone (``fallback``). The
aggregate scaler's gateways' count is the sum of its members' reports and the engine terms are read
once by that process, so nothing is counted twice.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

from noctaya.contract import demand as demand_mod
from noctaya.contract import engines
from noctaya.scaler import enginemetrics


class CombinedSignal:
    """What ``GetMetrics`` serves when an engine section is configured."""

    def __init__(
        self,
        *,
        demand: demand_mod.DemandSource,
        target: float,
        section: engines.EngineSignalSection,
        reader: enginemetrics.EngineReader,
        clock: Callable[[], float] | None = None,  # None: the running loop's clock
    ) -> None:
        if not target > 0:
            raise ValueError("target must be positive")
        self.demand = demand
        self.target = target
        self.section = section
        self.reader = reader
        self._clock = clock
        if reader.metrics is not None:  # read at scrape time, whether KEDA polls or not
            reader.metrics.fallback.set_function(lambda: int(self.falling_back))

    @property
    def served_target(self) -> float:
        """The target GetMetricSpec serves (the unit of :meth:`value`)."""
        kv = self.section.kv_cache_target
        return kv if kv is not None else self.target

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def usable_round(self) -> enginemetrics.Round | None:
        """The newest round, when it is complete and fresh."""
        latest = self.reader.latest
        if latest is None or not latest.complete or self._now() - latest.at > self.section.stale_after:
            return None
        return latest

    def terms(self) -> dict[str, float]:
        """Replicas wanted by each source counted now (``gateway`` always)."""
        terms = {"gateway": self.demand.demand() / self.target}
        latest = self.usable_round()
        if latest is not None:
            if self.section.queue_target is not None:
                terms["engineQueue"] = latest.queue / self.section.queue_target
            if self.section.kv_cache_target is not None:
                terms["kvCache"] = latest.kv_cache / self.section.kv_cache_target
        return terms

    def value(self) -> float:
        """The metric served now, in units of :attr:`served_target`."""
        wanted = max(self.terms().values())
        return wanted * self.served_target if math.isfinite(wanted) else 0.0

    @property
    def falling_back(self) -> bool:
        """Replicas are there but the engine terms do not count (unreadable, invalid or stale);
        not while no replica is Ready (nothing to read) or before the first round."""
        latest = self.reader.latest
        if latest is None or (latest.replicas == 0 and latest.problem is None):
            return False
        return self.usable_round() is None

    def document(self) -> dict[str, object]:
        """The engine signal as ``/noctaya/queue`` and the aggregate scaler's ``/healthz`` show it."""
        latest = self.reader.latest
        terms = self.terms()
        stale = latest is not None and self._now() - latest.at > self.section.stale_after
        if latest is None:
            state = "starting"
        elif latest.replicas == 0 and latest.problem is None:
            state = "noReplicas"
        elif len(terms) == 1:
            state = "fallback"
        else:
            state = "ok"
        return {
            "state": state,
            "stale": stale,
            "value": round(max(terms.values()) * self.served_target, 6),
            "target": self.served_target,
            "replicasWanted": {name: round(v, 6) for name, v in terms.items()},
            "round": None if latest is None else latest.document(),
        }
