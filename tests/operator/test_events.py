"""Events for condition transitions: one per transition, KEDA's back-and-forth posted once per window.

Aspects: an ``AutoscalingReady`` state that already had an Event for the same LLMService within
``REPEAT_WINDOW`` gets no second one (counted as suppressed), on a fake clock; other condition types
are never damped; another LLMService has its own memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from kubernetes_asyncio import client as k8s_client

from noctaya.operator import apiclient, events, metrics, status
from tests.operator.apiserver import ApiServer
from tests.operator.scenario import NS

R, T = status.Reason, status.ConditionType
NOT_READY = status.Transition(
    type=T.AUTOSCALING_READY, status="False", reason=R.SCALED_OBJECT_NOT_READY, message="x"
)
APPLIED = status.Transition(
    type=T.AUTOSCALING_READY, status="True", reason=R.SCALED_OBJECT_APPLIED, message="y"
)
SCALED_TO_ZERO = status.Transition(type=T.READY, status="False", reason=R.SCALED_TO_ZERO, message="z")
AVAILABLE = status.Transition(type=T.READY, status="True", reason=R.AVAILABLE, message="w")


def service(uid: str) -> dict[str, object]:
    return {
        "apiVersion": "serving.noctaya.io/v1alpha1",
        "kind": "LLMService",
        "metadata": {"name": f"svc-{uid}", "namespace": NS, "uid": uid},
    }


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[apiclient.Client]:
    api = k8s_client.ApiClient(k8s_client.Configuration(host=str(server.url).rstrip("/")))
    yield apiclient.Client(api=api)
    await api.close()


async def test_keda_flapping_is_posted_once_per_window(server: ApiServer, client: apiclient.Client) -> None:
    now = [1000.0]
    counts = metrics.Metrics()
    recorder = events.EventRecorder(client=client, instance="t", metrics=counts, clock=lambda: now[0])
    a = service("a")
    for transition in (NOT_READY, APPLIED, NOT_READY, APPLIED, NOT_READY):
        await recorder.post(involved=a, transition=transition)
        now[0] += 10
    await recorder.post(involved=service("b"), transition=NOT_READY)  # its own memory
    for transition in (SCALED_TO_ZERO, AVAILABLE, SCALED_TO_ZERO, AVAILABLE):  # never damped
        await recorder.post(involved=a, transition=transition)
    reasons = [(e["involvedObject"]["uid"], e["reason"]) for e in server.items("v1/events", NS)]
    assert (
        reasons.count(("a", "ScaledObjectNotReady")) == 1 and reasons.count(("a", "ScaledObjectApplied")) == 1
    )
    assert reasons.count(("b", "ScaledObjectNotReady")) == 1
    assert reasons.count(("a", "Available")) == 2
    assert 'noctaya_events_posted_total{type="suppressed"} 3.0' in counts.exposition().decode()
    now[0] += events.REPEAT_WINDOW
    await recorder.post(involved=a, transition=APPLIED)  # a new window: posted again
    reasons = [(e["involvedObject"]["uid"], e["reason"]) for e in server.items("v1/events", NS)]
    assert reasons.count(("a", "ScaledObjectApplied")) == 2
