"""Model delivery plans.

Aspects: each cache strategy maps to its claim access mode, node directory or emptyDir; BakedImage
and unknown strategies are clear errors naming spec.cache.strategy; pvc:// mounts the claim
read-only at /models with no cache and no staging whatever the strategy; hub sources without prewarm
keep a writable cache and hub-client variables; with prewarm (or any oci:// source) there is a staging
step writing a marker inside its directory and the cache is read-only for servers; staging on a None
cache is refused; directories of different sources never collide.
"""

from __future__ import annotations

import pytest

from noctaya.api import sources
from noctaya.runtime import delivery


def _plan(uri: str, strategy: str = "NodeLocalPVC", prewarm: bool = False) -> delivery.DeliveryPlan:
    return delivery.plan(
        source=sources.parse_source(uri),
        strategy=strategy,
        prewarm=prewarm,
        service="qwen",
        namespace="ai",
        claim_name="qwen-cache",
    )


@pytest.mark.parametrize(
    ("strategy", "mode", "host", "empty"),
    [
        ("NodeLocalPVC", "ReadWriteOnce", None, False),
        ("SharedPVC", "ReadWriteMany", None, False),
        ("HostPath", None, "/var/lib/noctaya/cache/ai/qwen", False),
        ("None", None, None, True),
    ],
)
def test_strategies(strategy: str, mode: str | None, host: str | None, empty: bool) -> None:
    plan = _plan("hf://Qwen/Qwen2.5-7B-Instruct", strategy)
    assert plan.cache is not None and plan.cache.access_mode == mode
    assert plan.volume.host_path == host
    assert plan.volume.empty_dir is empty
    assert plan.volume.claim_name == ("qwen-cache" if mode else None)
    assert plan.volume.read_only is False
    assert plan.staging is None
    assert plan.env == {"HF_HOME": "/cache/huggingface", "MODELSCOPE_CACHE": "/cache/modelscope"}


@pytest.mark.parametrize("strategy", ["BakedImage", "Tape"])
def test_unusable_strategies(strategy: str) -> None:
    with pytest.raises(delivery.DeliveryError, match=r"^spec\.cache\.strategy: "):
        _plan("hf://Qwen/Qwen2.5-7B-Instruct", strategy)


@pytest.mark.parametrize("strategy", ["NodeLocalPVC", "SharedPVC", "None", "BakedImage"])
def test_pvc_source_is_read_only_and_needs_nothing(strategy: str) -> None:
    plan = _plan("pvc://store/qwen", strategy, prewarm=True)
    assert plan.cache is None and plan.staging is None
    assert (plan.volume.claim_name, plan.volume.mount_path, plan.volume.read_only) == (
        "store",
        "/models",
        True,
    )


@pytest.mark.parametrize("strategy", ["NodeLocalPVC", "SharedPVC", "HostPath"])
def test_prewarm_stages_and_servers_read_only(strategy: str) -> None:
    plan = _plan("hf://Qwen/Qwen2.5-7B-Instruct@v1", strategy, prewarm=True)
    assert plan.staging is not None and plan.staging.kind == "hub"
    assert plan.staging.marker == plan.staging.target_dir + "/.noctaya-ready"
    assert plan.ready_marker == plan.staging.marker
    assert plan.volume.read_only is True
    assert plan.model_path == plan.staging.target_dir


def test_oci_always_stages() -> None:
    plan = _plan("oci://r.example.com/models/q@sha256:" + "b" * 64, "SharedPVC", prewarm=False)
    assert plan.staging is not None and plan.staging.kind == "oci"
    assert plan.volume.read_only is True
    with pytest.raises(delivery.DeliveryError, match="oci:// source cannot be staged"):
        _plan("oci://r.example.com/models/q@sha256:" + "b" * 64, "None")
    with pytest.raises(delivery.DeliveryError, match=r"spec\.cache\.prewarm cannot be staged"):
        _plan("hf://Qwen/Qwen2.5-7B-Instruct", "None", prewarm=True)


def test_directories_do_not_collide() -> None:
    dirs = {
        _plan(uri, prewarm=True).model_path
        for uri in (
            "hf://Qwen/A",
            "modelscope://Qwen/A",
            "hf://Qwen/B",
            "hf://Other/A",
            "oci://r.example.com/m@sha256:" + "c" * 64,
            "oci://r.example.com/m@sha256:" + "d" * 64,
        )
    }
    assert len(dirs) == 6
