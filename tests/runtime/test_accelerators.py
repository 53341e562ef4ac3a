"""Accelerator adapters.

Aspects: every built-in vendor translates to its extended resource with the whole-device count (and
the runtime's resource name wins over the default); cpu requests no device; node selectors are copied
(sorted) and tolerations in order; the Volcano queue becomes the queue annotation and is refused with
any other scheduler; unknown vendors, zero devices and a vendor/adapter mismatch are errors naming
the field.
"""

from __future__ import annotations

import pytest

from noctaya.runtime import accelerators


@pytest.mark.parametrize(
    ("vendor", "resource"),
    [
        ("nvidia", "nvidia.com/gpu"),
        ("ascend", "huawei.com/Ascend910"),
        ("amd", "amd.com/gpu"),
        ("intel-gaudi", "habana.ai/gaudi"),
    ],
)
def test_vendor_resources(vendor: str, resource: str) -> None:
    request = accelerators.AcceleratorRequest(vendor=vendor, resource_name="", count=4)
    assert dict(accelerators.translate(request).resources) == {resource: 4}
    named = accelerators.AcceleratorRequest(vendor=vendor, resource_name="example.com/dev", count=1)
    assert dict(accelerators.translate(named).resources) == {"example.com/dev": 1}


def test_cpu_requests_nothing() -> None:
    placement = accelerators.translate(
        accelerators.AcceleratorRequest(vendor="cpu", resource_name="", count=1)
    )
    assert dict(placement.resources) == {} and placement.scheduler_name is None


def test_placement_fields() -> None:
    tolerations = [{"key": "b", "operator": "Exists"}, {"key": "a", "operator": "Equal", "value": "x"}]
    placement = accelerators.translate(
        accelerators.AcceleratorRequest(
            vendor="ascend",
            resource_name="huawei.com/Ascend910",
            node_selector={"z": "1", "a": "2"},
            tolerations=tolerations,
            scheduler_name="volcano",
            queue="inference",
        )
    )
    assert list(placement.node_selector) == ["a", "z"]
    assert [dict(t) for t in placement.tolerations] == tolerations
    assert placement.scheduler_name == "volcano"
    assert dict(placement.pod_annotations) == {accelerators.VOLCANO_QUEUE_ANNOTATION: "inference"}


def test_errors_name_the_field() -> None:
    with pytest.raises(accelerators.AcceleratorError, match=r"scheduler\.queue"):
        accelerators.translate(
            accelerators.AcceleratorRequest(
                vendor="nvidia", resource_name="nvidia.com/gpu", scheduler_name="hami", queue="q"
            )
        )
    with pytest.raises(accelerators.AcceleratorError, match=r"spec\.vendor: unknown vendor 'tpu'"):
        accelerators.adapter_for("tpu")
    with pytest.raises(accelerators.AcceleratorError, match=r"spec\.resources\.accelerators"):
        accelerators.translate(accelerators.AcceleratorRequest(vendor="nvidia", resource_name="", count=0))
    with pytest.raises(accelerators.AcceleratorError, match="cannot translate"):
        accelerators.ADAPTERS["amd"].translate(
            accelerators.AcceleratorRequest(vendor="nvidia", resource_name="")
        )
