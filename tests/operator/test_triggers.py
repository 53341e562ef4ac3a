"""The HPA KEDA built carries a metric for every trigger of the ScaledObject, or it is rebuilt.

Aspects: a ScaledObject with one trigger is never checked; an HPA holding every trigger's metric is
left alone and, once found complete, not read again; one that lacks the demand metric is deleted
(for KEDA to build again) with a recheck that doubles up to its bound, and not deleted again before
that recheck however many passes look at it (a scaler that does not answer: each rebuild changes the
ScaledObject's status, which runs a pass); an HPA that does not exist
yet is waited for; the HPA name KEDA uses (``keda-hpa-<name>`` or the configured one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from noctaya.operator import apiclient, triggers
from tests.operator.apiserver import ApiServer
from tests.operator.scenario import NS

HPAS = "autoscaling/v2/horizontalpodautoscalers"
KEY = (NS, "qwen")


def scaled_object(*, schedules: int = 1, hpa_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "triggers": [
            {"type": "external-push", "name": "demand"},
            *({"type": "cron", "name": f"schedule-{i}"} for i in range(schedules)),
        ]
    }
    if hpa_name:
        spec["advanced"] = {"horizontalPodAutoscalerConfig": {"name": hpa_name}}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "qwen"},
        "spec": spec,
    }


def hpa(metrics: int, name: str = "keda-hpa-qwen") -> dict[str, Any]:
    external = {"type": "External", "external": {"metric": {"name": "m"}, "target": {"type": "AverageValue"}}}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"maxReplicas": 2, "metrics": [external] * metrics},
    }


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[apiclient.Client]:
    api = k8s_client.ApiClient(k8s_client.Configuration(host=str(server.url).rstrip("/")))
    yield apiclient.Client(api=api)
    await api.close()


async def test_an_hpa_without_the_demand_metric_is_rebuilt_until_complete(
    server: ApiServer, client: apiclient.Client
) -> None:
    now = [1000.0]
    check = triggers.TriggerCheck(client=client, clock=lambda: now[0])
    so = scaled_object()
    assert await check.check(KEY, so) == triggers.Verdict()  # not built yet: KEDA's status marks us
    server.upsert(HPAS, hpa(1))
    delays = []
    for _ in range(6):
        verdict = await check.check(KEY, so)
        assert verdict.rebuilt == "keda-hpa-qwen" and server.obj(HPAS, NS, "keda-hpa-qwen") is None
        assert verdict.recheck is not None
        delays.append(verdict.recheck)
        server.upsert(HPAS, hpa(1))  # KEDA builds it again, and the scaler still does not answer
        uid = server.must(HPAS, NS, "keda-hpa-qwen")["metadata"]["uid"]
        deleted_at = now[0]
        for waited in (0.0, verdict.recheck / 2, verdict.recheck - 0.5):  # passes before the recheck
            now[0] = deleted_at + waited
            early = await check.check(KEY, so)
            assert early.rebuilt is None and early.recheck == pytest.approx(verdict.recheck - waited)
            assert server.must(HPAS, NS, "keda-hpa-qwen")["metadata"]["uid"] == uid  # left alone
        now[0] = deleted_at + verdict.recheck
    assert delays == [15.0, 30.0, 60.0, 60.0, 60.0, 60.0]  # doubling, bounded
    server.remove(HPAS, NS, "keda-hpa-qwen")
    server.upsert(HPAS, hpa(2))  # the scaler answered this time
    uid = server.must(HPAS, NS, "keda-hpa-qwen")["metadata"]["uid"]
    assert await check.check(KEY, so) == triggers.Verdict()
    assert await check.check(KEY, so) == triggers.Verdict()
    assert server.must(HPAS, NS, "keda-hpa-qwen")["metadata"]["uid"] == uid  # left alone
    server.remove(HPAS, NS, "keda-hpa-qwen")
    server.upsert(HPAS, hpa(1))  # built anew without the metric: the wait starts again from RECHECK
    assert (await check.check(KEY, so)).recheck == triggers.RECHECK


async def test_one_trigger_is_never_checked_and_the_configured_name_is_read(
    server: ApiServer, client: apiclient.Client
) -> None:
    check = triggers.TriggerCheck(client=client)
    server.upsert(HPAS, hpa(0))
    assert await check.check(KEY, scaled_object(schedules=0)) == triggers.Verdict()
    assert server.obj(HPAS, NS, "keda-hpa-qwen") is not None
    assert triggers.hpa_name(scaled_object(hpa_name="custom")) == "custom"
    server.upsert(HPAS, hpa(1, name="custom"))
    verdict = await check.check(KEY, scaled_object(hpa_name="custom"))
    assert verdict.rebuilt == "custom" and server.obj(HPAS, NS, "keda-hpa-qwen") is not None
