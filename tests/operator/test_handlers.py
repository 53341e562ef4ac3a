"""kopf wiring: settings and index keys.

Aspects: owned kinds are watched with a server-side label selector (only labelled objects reach the
operator), LLMServices and runtimes without one; the runtime index keys cover a pinned name, selector
vendors and the runtime resolved before; kopf's own event posting and peering are off.
"""

from __future__ import annotations

from kopf._cogs.structs import references

from noctaya.operator import handlers


def test_label_selectors_only_for_owned_kinds() -> None:
    settings = handlers.kopf_settings()
    pods = references.Resource(group="", version="v1", plural="pods")
    deployments = references.Resource(group="apps", version="v1", plural="deployments")
    services = references.Resource(group="serving.noctaya.io", version="v1alpha1", plural="llmservices")
    assert list(settings.watching.label_selectors.collect(pods)) == [handlers.LABEL]
    assert list(settings.watching.label_selectors.collect(deployments)) == [handlers.LABEL]
    assert list(settings.watching.label_selectors.collect(services)) == []
    assert not settings.posting.enabled and settings.peering.standalone
    assert settings.process.ultimate_exiting_timeout is None


def test_runtime_index_keys() -> None:
    assert handlers.runtime_keys({"runtime": {"name": "vllm"}}, {}) == {("name", "vllm")}
    assert handlers.runtime_keys(
        {"runtime": {"selector": {"vendor": ["nvidia", "amd"]}}}, {"resolvedRuntime": "old"}
    ) == {("vendor", "nvidia"), ("vendor", "amd"), ("name", "old")}
    assert handlers.runtime_keys({"runtime": "garbage"}, {"resolvedRuntime": 5}) == set()
