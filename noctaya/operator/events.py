"""Kubernetes Events for LLMService condition transitions.

One core/v1 Event per transition (never for a repeated observation; :func:`noctaya.operator.status.
transitions` decides), ``Warning`` when the new state is bad news, ``Normal`` otherwise. Posting is
best effort: a failed post is logged and counted, it never fails a reconcile.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from noctaya.operator import apiclient, metrics, status

logger = logging.getLogger(__name__)

COMPONENT: Final = "noctaya-operator"
MAX_MESSAGE: Final = 1024


class EventRecorder:
    def __init__(self, *, client: apiclient.Client, instance: str, metrics: metrics.Metrics) -> None:
        self._client = client
        self._instance = instance
        self._metrics = metrics

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
