"""Kubernetes Events for LLMService condition transitions.

One core/v1 Event per transition (never for a repeated observation; :func:`noctaya.operator.status.
transitions` decides), ``Warning`` when the new state is bad news, ``Normal`` otherwise. Posting is
best effort: a failed post is logged and counted, it never fails a reconcile.

KEDA's own verdict on a ScaledObject (``AutoscalingReady``) can go back and forth while nothing of
the service changes; an Event for an ``AutoscalingReady`` state the same LLMService already had an
Event for within :data:`REPEAT_WINDOW` is not posted again (the status still moves; the suppression is
counted as ``noctaya_events_posted_total{type="suppressed"}``). Memory: at most :data:`REMEMBERED`
entries, the oldest dropped first.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from noctaya.operator import apiclient, metrics, status

logger = logging.getLogger(__name__)

COMPONENT: Final = "noctaya-operator"
MAX_MESSAGE: Final = 1024
#: seconds within which an ``AutoscalingReady`` state seen before gets no second Event
REPEAT_WINDOW: Final = 600.0
REMEMBERED: Final = 4096
#: condition types whose alternation is another controller's (KEDA's), not the service's
DAMPED: Final = frozenset({status.ConditionType.AUTOSCALING_READY})


class EventRecorder:
    def __init__(
        self,
        *,
        client: apiclient.Client,
        instance: str,
        metrics: metrics.Metrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._instance = instance
        self._metrics = metrics
        self._clock = clock
        self._posted: collections.OrderedDict[tuple[str, str, str, str], float] = collections.OrderedDict()

    def _repeated(self, involved: Mapping[str, Any], transition: status.Transition) -> bool:
        """Whether this damped state had an Event for the same object within the window (remembers it)."""
        if transition.type not in DAMPED:
            return False
        uid = str((involved.get("metadata") or {}).get("uid"))
        key = (uid, str(transition.type), transition.status, str(transition.reason))
        now = self._clock()
        last = self._posted.pop(key, None)
        self._posted[key] = now if last is None or now - last >= REPEAT_WINDOW else last
        while len(self._posted) > REMEMBERED:
            self._posted.popitem(last=False)
        return last is not None and now - last < REPEAT_WINDOW

    def body(self, *, involved: Mapping[str, Any], transition: status.Transition) -> dict[str, Any]:
        meta = involved.get("metadata") or {}
        now = status.now_iso()
        kind = "Warning" if transition.warning else "Normal"
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta.get('name')}.", "namespace": meta.get("namespace")},
            "involvedObject": {
                "apiVersion": involved.get("apiVersion"),
                "kind": involved.get("kind"),
                "name": meta.get("name"),
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "type": kind,
            "reason": transition.reason,
            "message": f"{transition.type}={transition.status}: {transition.message}"[:MAX_MESSAGE],
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "reportingInstance": self._instance,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }

    async def post(self, *, involved: Mapping[str, Any], transition: status.Transition) -> None:
        if self._repeated(involved, transition):
            self._metrics.events.labels(type="suppressed").inc()
            return
        event = self.body(involved=involved, transition=transition)
        try:
            await self._client.create(event)
        except apiclient.ApiError as e:
            logger.warning(
                "could not post event %s for %s: %s",
                transition.reason,
                (involved.get("metadata") or {}).get("name"),
                e,
            )
            self._metrics.events.labels(type="failed").inc()
            return
        self._metrics.events.labels(type=event["type"]).inc()
