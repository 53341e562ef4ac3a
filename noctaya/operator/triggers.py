"""Does the HPA KEDA built for a ScaledObject carry a metric for every trigger? If not, rebuild it.

KEDA builds the ``HorizontalPodAutoscaler`` of a ScaledObject (``keda-hpa-<name>``) from the metric
specs its scalers give at that moment, and leaves out a scaler that does not answer then: a service
with a schedule whose gateway scaler came up after KEDA's first reconcile gets an HPA with only the
cron trigger's metric, and KEDA does not look again until the ScaledObject changes. Demand can then
not scale the backend past the schedule's replicas.

:class:`TriggerCheck` reads that HPA (only for ScaledObjects with more than one trigger, only until it
was found complete once per HPA uid) and, when it holds fewer external metrics than the ScaledObject
has triggers, deletes it (uid precondition): KEDA owns it and builds it again at once, asking every
scaler anew. The next delete waits for a delay that doubles from :data:`RECHECK` up to
:data:`MAX_RECHECK`, however many passes look at the HPA in between (each delete changes the
ScaledObject's status, which marks the service again: without the wait, a scaler that does not
answer would have the HPA deleted on every pass). So a scaler that stays unreachable costs one HPA
rebuild per :data:`MAX_RECHECK` at most, and a scaler that comes up has its metric in the HPA within
:data:`MAX_RECHECK`. Memory: one entry per LLMService with such a ScaledObject.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from noctaya.operator import apiclient

logger = logging.getLogger(__name__)

RECHECK: Final = 15.0
MAX_RECHECK: Final = 60.0
HPA_PREFIX: Final = "keda-hpa-"

ServiceKey = tuple[str, str]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Verdict:
    """What the check found: when to look again (None: complete, or nothing to check)."""

    recheck: float | None = None
    rebuilt: str | None = None  # the HPA deleted for KEDA to rebuild


def hpa_name(scaled_object: Mapping[str, Any]) -> str:
    spec = scaled_object.get("spec") or {}
    config = ((spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig")) or {}
    name = config.get("name")
    return (
        name
        if isinstance(name, str) and name
        else f"{HPA_PREFIX}{(scaled_object.get('metadata') or {}).get('name')}"
    )


def missing(scaled_object: Mapping[str, Any], hpa: Mapping[str, Any]) -> int:
    """How many triggers of the ScaledObject have no external metric in the HPA."""
    triggers = [t for t in (scaled_object.get("spec") or {}).get("triggers") or [] if isinstance(t, Mapping)]
    metrics = [m for m in (hpa.get("spec") or {}).get("metrics") or [] if isinstance(m, Mapping)]
    external = [m for m in metrics if m.get("type") == "External"]
    return max(0, len(triggers) - len(external))


class TriggerCheck:
    def __init__(self, *, client: apiclient.Client, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._clock = clock
        self._complete: dict[ServiceKey, str] = {}  # service -> uid of the HPA found complete
        self._delays: dict[ServiceKey, float] = {}  # service -> the wait after its next delete
        self._due: dict[ServiceKey, float] = {}  # service -> no delete before this clock reading

    def forget(self, key: ServiceKey) -> None:
        self._complete.pop(key, None)
        self._delays.pop(key, None)
        self._due.pop(key, None)

    async def check(self, key: ServiceKey, scaled_object: Mapping[str, Any] | None) -> Verdict:
        triggers = ((scaled_object or {}).get("spec") or {}).get("triggers") or []
        if scaled_object is None or len(triggers) < 2:
            self.forget(key)
            return Verdict()
        hpa = await self._client.get(apiclient.HPA, namespace=key[0], name=hpa_name(scaled_object))
        if hpa is None:  # KEDA has not built it yet: its ScaledObject status change marks the service
            return Verdict()
        meta = hpa.get("metadata") or {}
        uid = str(meta.get("uid"))
        if self._complete.get(key) == uid:
            return Verdict()
        if not missing(scaled_object, hpa):
            self._complete[key] = uid
            self._delays.pop(key, None)
            self._due.pop(key, None)
            return Verdict()
        now = self._clock()
        due = self._due.get(key)
        if due is not None and now < due:  # deleted not long ago: KEDA's rebuild is given its time
            return Verdict(recheck=due - now)
        delay = self._delays.get(key, RECHECK)
        await self._client.delete(apiclient.HPA, namespace=key[0], name=str(meta.get("name")), uid=uid)
        self._due[key] = now + delay
        self._delays[key] = min(MAX_RECHECK, delay * 2)
        logger.info(
            "LLMService %s/%s: HPA %s holds %d of %d trigger metrics; deleted for KEDA to rebuild it",
            key[0],
            key[1],
            meta.get("name"),
            len(triggers) - missing(scaled_object, hpa),
            len(triggers),
        )
        return Verdict(recheck=delay, rebuilt=str(meta.get("name")))
